/**
 * Steps of one booking due at the same instant run in lifecycle order, whatever
 * their ids: for a 30-minute booking the no-show cancel and the ending-soon
 * notice are both due at start + 15 minutes; the cancel comes first and the
 * notice is dropped. (The order used to follow the timer ids alone, whose 24-bit
 * counter can wrap between the steps of one booking; the test swaps the two ids
 * to stand for that.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, siteDocument } from '../support/fixtures.js';
import { everyDay } from '../support/catalogue.js';

const TZ = 'Asia/Bangkok';

describe('steps due at the same instant', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
  });

  afterAll(async () => {
    await svc?.close();
  });

  it('a no-show cancel runs before the ending-soon notice of the same instant, even when its id sorts after', async () => {
    const doc = siteDocument() as any;
    doc.zones = [{ key: 'z', project: 'tower', name: 'Tower' }];
    doc.floors = [{ key: 'f', zone: 'z', name: '12F' }];
    doc.rooms = [
      {
        key: 'r',
        floor: 'f',
        name: 'Orchid',
        capacity: 6,
        cleanupMinutes: 0,
        config: everyDay('00:00:00', '24:00:00', [], { minimumLeadTime: { minutes: 0, hours: 0, days: 0 }, maxAdvanceBookingDays: 60 }),
      },
    ];
    const applied = await svc.ops('POST', '/ops/v1/apply', doc);
    expect(applied.status, applied.text).toBe(200);
    const now = DateTime.fromISO((await svc.ops('GET', '/ops/v1/clock')).body.data.now).setZone(TZ);
    const start = now.startOf('day').plus({ days: 2, hours: 10 });
    expect((await svc.ops('POST', '/ops/v1/clock', { set: start.minus({ hours: 2 }).toISO() })).status).toBe(200);
    const token = (await appToken(svc)).access_token;
    const res = await svc.request('POST', '/meetings', {
      token,
      body: {
        meetingRoomId: applied.body.data.idsByKind.rooms.r,
        title: 'same instant',
        startDateTime: start.toISO(),
        endDateTime: start.plus({ minutes: 30 }).toISO(),
      },
    });
    expect(res.status, res.text).toBe(201);
    const meetingId: string = res.body.data._id;

    const db = svc.services.storage.db;
    const timers = await db.selectFrom('timers').select(['id', 'kind', 'due_at']).where('meeting_id', '=', meetingId).execute();
    const cancel = timers.find((t) => t.kind === 'no-show-cancel')!;
    const endingSoon = timers.find((t) => t.kind === 'ending-soon')!;
    expect(cancel.due_at).toBe(endingSoon.due_at);
    // Make the ending-soon id sort first.
    const [low, high] = [cancel.id, endingSoon.id].sort();
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('timers').set({ id: 'swap' }).where('id', '=', low).execute();
      await trx.updateTable('timers').set({ id: low }).where('id', '=', high).execute();
      await trx.updateTable('timers').set({ id: high }).where('id', '=', 'swap').execute();
    });
    const swapped = await db
      .selectFrom('timers')
      .select(['id', 'kind'])
      .where('meeting_id', '=', meetingId)
      .where('kind', 'in', ['no-show-cancel', 'ending-soon'])
      .orderBy('id')
      .execute();
    expect(swapped.map((t) => t.kind)).toEqual(['ending-soon', 'no-show-cancel']);

    expect((await svc.ops('POST', '/ops/v1/clock', { set: start.plus({ minutes: 20 }).toISO() })).status).toBe(200);
    const events = await db
      .selectFrom('events')
      .select('type')
      .where('meeting_id', '=', meetingId)
      .orderBy('occurred_at')
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_REMINDER', 'ROOM_NO_SHOW_WARNING', 'ROOM_CANCEL']);
    const after = await db.selectFrom('timers').select(['kind', 'status']).where('meeting_id', '=', meetingId).execute();
    expect(Object.fromEntries(after.map((t) => [t.kind, t.status]))).toEqual({
      reminder: 'fired',
      'no-show-warning': 'fired',
      'no-show-cancel': 'fired',
      'ending-soon': 'cancelled',
      end: 'cancelled',
    });
  });
});
