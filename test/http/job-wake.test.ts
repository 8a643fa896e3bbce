/**
 * Background work starts without waiting for a poll: with JOB_POLL_MS at an hour, a committed delivery is sent
 * (the commit wakes the delivery job: in-process on SQLite, LISTEN/NOTIFY on PostgreSQL) and a lifecycle step that
 * falls due a few seconds later runs (the lifecycle job wakes itself at its next due time). On PostgreSQL, the same
 * with the work committed on instance A (no workers) and run by instance B.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, siteDocument } from '../support/fixtures.js';
import { everyDay } from '../support/catalogue.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from '../support/delivery-audit.js';

const HOUR_MS = 3_600_000;
const LONG_POLL = { JOB_POLL_MS: String(HOUR_MS) };
const SECRET = 'wake-secret-0123456789abcdef0123456789abcd';

interface Setup {
  room: (i: number) => string;
  token: string;
}

async function applySite(svc: TestService, receiver: WebhookReceiver): Promise<Setup> {
  const doc = siteDocument() as any;
  doc.zones = [{ key: 'z', project: 'tower', name: 'Tower' }];
  doc.floors = [{ key: 'f', zone: 'z', name: '12F' }];
  const config = everyDay('00:00:00', '24:00:00', [], { minimumLeadTime: { minutes: 0, hours: 0, days: 0 }, maxAdvanceBookingDays: 60 });
  doc.rooms = [0, 1].map((i) => ({ key: `r${i}`, floor: 'f', name: `Room ${i}`, capacity: 6, config }));
  doc.webhooks = [{ key: 'h', project: 'tower', url: receiver.url('/w'), secret: SECRET, events: ['ROOM_BOOK'] }];
  const applied = await svc.ops('POST', '/ops/v1/apply', doc);
  expect(applied.status, applied.text).toBe(200);
  return { room: (i) => applied.body.data.idsByKind.rooms[`r${i}`] as string, token: (await appToken(svc)).access_token };
}

async function book(svc: TestService, s: Setup, room: number, start: DateTime): Promise<string> {
  const res = await svc.request('POST', '/meetings', {
    token: s.token,
    body: { meetingRoomId: s.room(room), title: 'wake', startDateTime: start.toISO(), endDateTime: start.plus({ minutes: 30 }).toISO() },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id as string;
}

const timersOf = (svc: TestService, meetingId: string) =>
  svc.services.storage.db
    .selectFrom('timers')
    .select(['id', 'status', 'due_at'])
    .where('meeting_id', '=', meetingId)
    .orderBy('due_at')
    .execute();

/**
 * Books on `writer`: the ROOM_BOOK delivery must reach the receiver; then the clock is moved to a few seconds before
 * the booking's first step, and another booking committed (so `runner`'s instance has heard of the move), and that
 * step must run. Returns the meeting whose step ran.
 */
async function scenario(writer: TestService, runner: TestService, s: Setup, receiver: WebhookReceiver): Promise<string> {
  const now = DateTime.fromISO((await writer.ops('GET', '/ops/v1/clock')).body.data.now);
  const start = now.plus({ days: 1 }).startOf('hour');
  const before = receiver.on('/w').length;
  const id = await book(writer, s, 0, start);
  await until('the ROOM_BOOK delivery arrives', () => receiver.on('/w').length > before, 20_000);
  const first = (await timersOf(writer, id)).find((t) => t.status === 'pending')!;
  expect(first).toBeDefined();
  const target = first.due_at - 4_000;
  expect((await writer.ops('POST', '/ops/v1/clock', { set: new Date(target).toISOString() })).status).toBe(200);
  await until('the running instance has the moved clock', () => runner.services.clock.now() >= target, 20_000);
  await book(writer, s, 1, start.plus({ hours: 2 }));
  await until(
    'the first step has run',
    async () => (await timersOf(writer, id)).find((t) => t.id === first.id)!.status !== 'pending',
    20_000,
  );
  return id;
}

describe('background work wakes without a poll (JOB_POLL_MS of an hour)', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let setup: Setup;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.respond('/w', 200);
    svc = await startTestService({ env: LONG_POLL });
    setup = await applySite(svc, receiver);
  });

  afterAll(async () => {
    await svc?.close();
    await receiver?.close();
  });

  it('a committed delivery is sent and a step falling due shortly runs', async () => {
    await scenario(svc, svc, setup, receiver);
    // Only the wake-ups ran the job: its poll is an hour away.
    expect(svc.services.jobs.pollStats().lifecycle.polls).toBeGreaterThan(0);
  });
});

describe.skipIf(process.env.TEST_DATABASE !== 'postgres')('two instances: committed on A, run by B (LISTEN/NOTIFY)', () => {
  let a: TestService;
  let b: TestService;
  let receiver: WebhookReceiver;
  let setup: Setup;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.respond('/w', 200);
    a = await startTestService({ env: LONG_POLL, noWorkers: true });
    b = await startTestService({ env: LONG_POLL, database: a.database, keepDatabase: true });
    setup = await applySite(a, receiver);
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await receiver?.close();
  });

  it('B sends the delivery and runs the step that A committed', async () => {
    const fired: string[] = [];
    const lifecycle = b.services.lifecycle;
    const fire = lifecycle.fire.bind(lifecycle);
    lifecycle.fire = async (t) => {
      const ok = await fire(t);
      if (ok) fired.push(t.meeting_id);
      return ok;
    };
    const id = await scenario(a, b, setup, receiver);
    expect(fired).toContain(id);
    expect(a.services.jobs.pollStats().lifecycle.polls).toBe(0);
  });
});
