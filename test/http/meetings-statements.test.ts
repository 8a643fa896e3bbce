/**
 * How much SQL one request costs, counted with a statement counter on the real
 * service (background work off, so every statement seen belongs to the request):
 * a create stays within its budget, and reads never write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { quietService, statementCounter } from '../support/statements.js';
import { TEST_ENGINE } from '../support/test-database.js';
import { actAsToken, appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { webhookSite, ROOM_EVENTS } from '../support/webhook-site.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { type DateTime } from 'luxon';

/** Statements a room booking may take, the token check included (see docs/architecture.md). */
const CREATE_BUDGET = 16;
/**
 * Round trips of the same booking on PostgreSQL: the organizer and asset reads in one message,
 * `begin`, the lock, the listeners' read and the conflict read in the next, the inserts with the commit.
 */
const PG_ROUND_TRIPS = 3;
const WRITE = /^\s*(insert|update|delete|replace)\b/i;

describe('SQL per request', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  const { record, counted } = statementCounter();
  const trips = statementCounter();

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true, onQuery: record, onRoundTrip: trips.record });
    ids = await applySite(
      svc,
      webhookSite({
        rooms: [
          { key: 'ra', name: 'Room A' },
          { key: 'rb', name: 'Room B' },
        ],
        hooks: [{ key: 'all', url: 'http://127.0.0.1:9/hook', events: ROOM_EVENTS }],
      }),
    );
    D = await dayAhead(svc, 'Asia/Bangkok', 2);
    await setClock(svc, at(D, '06:00'));
    await quietService(svc);
  });
  afterAll(async () => {
    await svc?.close();
  });

  it(`a room booking by an app runs at most ${CREATE_BUDGET} statements`, async () => {
    const token = (await appToken(svc)).access_token;
    // The app's first booking creates the user it books as: warm that up first.
    const first = await svc.request('POST', '/meetings', {
      token,
      body: { meetingRoomId: idOf(ids, 'ra'), title: 'warm-up', startDateTime: at(D, '08:00'), endDateTime: at(D, '09:00') },
    });
    expect(first.status, first.text).toBe(201);
    const { result, statements } = await counted(() =>
      svc.request('POST', '/meetings', {
        token,
        body: {
          meetingRoomId: idOf(ids, 'ra'),
          title: 'counted',
          startDateTime: at(D, '10:00'),
          endDateTime: at(D, '11:00'),
          attendees: [{ email: 'guest@example.com' }],
        },
      }),
    );
    expect(result.status, result.text).toBe(201);
    console.log(`POST /meetings: ${statements.length} statements\n  ${statements.map((s) => s.slice(0, 110)).join('\n  ')}`);
    expect(statements.length).toBeGreaterThan(5); // the counter sees the work
    expect(statements.length).toBeLessThanOrEqual(CREATE_BUDGET);
  });

  it.runIf(TEST_ENGINE === 'postgres')(
    `on PostgreSQL a room booking takes at most ${PG_ROUND_TRIPS} round trips (inserts go out together)`,
    async () => {
      const token = (await appToken(svc)).access_token;
      const body = {
        meetingRoomId: idOf(ids, 'ra'),
        title: 'trips',
        startDateTime: at(D, '13:00'),
        endDateTime: at(D, '14:00'),
        attendees: [{ email: 'guest@example.com' }],
      };
      await svc.request('GET', '/auth/whoami', { token }); // the caller is resolved once, as any later call finds it
      const { result, statements } = await trips.counted(() => counted(() => svc.request('POST', '/meetings', { token, body })));
      expect(result.result.status, result.result.text).toBe(201);
      console.log(
        `POST /meetings on PostgreSQL: ${result.statements.length} statements in ${statements.length} round trips\n  ${statements.map((s) => s.slice(0, 110)).join('\n  ')}`,
      );
      expect(statements.length).toBeLessThan(result.statements.length);
      expect(statements.length).toBeLessThanOrEqual(PG_ROUND_TRIPS);
      // The reads before the lock share a message; the listeners' read rides with the lock and the conflict read.
      expect(statements[0]).toMatch(/^select \* from "users" where .*;\nselect "a"\.\*/s);
      expect(statements[1]).toMatch(
        /^begin;\nselect id from "rooms" .* for update;\nselect "id", "events" from "webhooks" .*;\nselect .* from "meeting_slots"/s,
      );
      // Every insert of the booking went out in one statement with the commit.
      expect(statements[2]).toMatch(/^with w0 as \(insert into "meetings" .*insert into "deliveries" .*;\ncommit$/s);
      const stored = await svc.request('GET', `/meetings/${result.result.body.data._id}`, { token });
      expect(stored.status, stored.text).toBe(200);
      expect(stored.body.data.attendees).toHaveLength(1);
    },
  );

  it('a delegated booking by a member stays within the same budget', async () => {
    const token = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
    const { result, statements } = await counted(() =>
      svc.request('POST', '/meetings', {
        token,
        body: { meetingRoomId: idOf(ids, 'rb'), title: 'alice', startDateTime: at(D, '10:00'), endDateTime: at(D, '11:00') },
      }),
    );
    expect(result.status, result.text).toBe(201);
    console.log(`POST /meetings (act_as): ${statements.length} statements\n  ${statements.map((s) => s.slice(0, 110)).join('\n  ')}`);
    expect(statements.length).toBeLessThanOrEqual(CREATE_BUDGET);
  });

  it('GET /meetings and GET /meetings/{id} write nothing, even for an app that never booked', async () => {
    const token = (await appToken(svc, 'hub-dev', 'hub-secret-0123456789abcdef-0123456789abc')).access_token;
    const list = await counted(() =>
      svc.request('GET', `/meetings?from=${encodeURIComponent(at(D, '00:00'))}&to=${encodeURIComponent(at(D, '23:00'))}`, { token }),
    );
    expect(list.result.status, list.result.text).toBe(200);
    expect(list.result.body.data.length).toBeGreaterThan(0);
    expect(list.statements.filter((s) => WRITE.test(s))).toEqual([]);
    const id = list.result.body.data[0]._id;
    const one = await counted(() => svc.request('GET', `/meetings/${id}`, { token }));
    expect(one.result.status, one.result.text).toBe(200);
    expect(one.statements.filter((s) => WRITE.test(s))).toEqual([]);
  });

  it('the catalogue reads and whoami write nothing either', async () => {
    const token = (await appToken(svc)).access_token;
    const project = idOf(ids, 'tower');
    const window = `startDateTime=${encodeURIComponent(at(D, '10:00'))}&endDateTime=${encodeURIComponent(at(D, '11:00'))}`;
    for (const path of [
      `/meeting-rooms?projectId=${project}&${window}`,
      `/meeting-rooms/${idOf(ids, 'ra')}`,
      `/desks?projectId=${project}`,
      '/auth/whoami',
    ]) {
      // Emptied first, so the caller is resolved from the store rather than the caller cache.
      svc.services.tokens.forgetCallers();
      const read = await counted(() => svc.request('GET', path, { token }));
      expect(read.result.status, `${path}: ${read.result.text}`).toBe(200);
      expect(read.statements.length, path).toBeGreaterThan(0);
      expect(
        read.statements.filter((s) => WRITE.test(s)),
        path,
      ).toEqual([]);
    }
  });
});
