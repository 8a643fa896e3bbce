/**
 * Webhook delivery throughput and lifecycle-timer lateness, in one run (about a
 * minute on SQLite):
 *
 *   A. delivery throughput to a loopback receiver: N events are emitted through
 *      the outbox (Outbox.emit, in one transaction, as a state change would),
 *      then the job runner's delivery handler (250 ms poll) runs until the receiver has
 *      every delivery id. A1: one listener; A2: four listeners on each event;
 *      A3: a hanging listener with a backlog plus a healthy one (does the
 *      healthy listener still get its deliveries?).
 *   B. lifecycle with 100,000 scheduled bookings (500,000 timers, inserted in big
 *      transactions with the same rows MeetingRepository and the scheduling
 *      helpers write, then ANALYZE): B1 the sandbox clock (POST /ops/v1/clock)
 *      jumps so the next 1,000 and then 5,000 pending steps are due, timed until
 *      the call returns (everything applied); B2 service time jumps silently over
 *      2,000 steps and the background worker (1 s poll) applies them; B3 steps
 *      fall due one by one while the background worker polls: lateness = service
 *      time when applied − due_at (ms; the sandbox offset is constant, so these
 *      are real milliseconds).
 *
 *   npm run bench:delivery
 *   BENCH_EVENTS=5000 BENCH_BOOKINGS=20000 npm run bench:delivery
 *   BENCH_DATABASE_URL=postgres://…/empty_db npm run bench:delivery   (an empty database)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, type Kysely } from 'kysely';
import { BENCH_OPS_TOKEN, startBenchService } from './support.js';
import type { Database } from '../src/platform/db/schema.js';
import { writeTransaction } from '../src/platform/db/transactions.js';
import { MeetingRepository, type MeetingRow } from '../src/modules/booking/meeting-repository.js';
import { bookingFacts } from '../src/modules/booking/booking-change.js';
import { scopeOf } from '../src/modules/booking/booking-changes.js';
import { LIFECYCLE_JOB } from '../src/modules/lifecycle/jobs.js';
import { planTimers } from '../src/modules/lifecycle/rules/timer-plan.js';
import { resolveMeetingConfig } from '../src/modules/booking/rules/asset-config.js';
import type { TimerRow } from '../src/modules/lifecycle/timer-repository.js';
import { systemClock, type OffsetClock } from '../src/platform/clock/clock.js';
import { JobRunner } from '../src/platform/jobs/runner.js';
import { newId } from '../src/platform/ids.js';
import type { Services } from '../src/services.js';

const EVENTS = Number(process.env.BENCH_EVENTS || 2000);
const BOOKINGS = Number(process.env.BENCH_BOOKINGS || 100_000);
const ROOMS = 200;
const TZ = 'Asia/Bangkok';
const SECRET = 'bench-webhook-secret-0123456789abcdef0123';
const MIN = 60_000;

// ---------------------------------------------------------------------------
// A loopback receiver: answers 200 at once (or never, on /hang), counts distinct delivery ids per path.
// ---------------------------------------------------------------------------
interface Receiver {
  url(path: string): string;
  ids(path: string): Set<string>;
  received(path: string): number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const ids = new Map<string, Set<string>>();
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '';
      const id = String(req.headers['x-service-delivery'] ?? '');
      counts.set(path, (counts.get(path) ?? 0) + 1);
      if (path === '/hang') return; // never answers: the attempt times out
      (ids.get(path) ?? ids.set(path, new Set()).get(path)!).add(id);
      res.writeHead(200).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    ids: (path) => ids.get(path) ?? new Set(),
    received: (path) => counts.get(path) ?? 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

// ---------------------------------------------------------------------------
// Site: project pb for the lifecycle (no listeners), projects a1..a3 for deliveries.
// ---------------------------------------------------------------------------
const openAllDay = {
  dayConfig: Object.fromEntries(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => [d, { availableTime: { start: '00:00:00', end: '24:00:00' } }])),
};

function site(receiver: Receiver) {
  const projects = ['pb', 'a1', 'a2', 'a3'];
  return {
    brands: [{ key: 'b', name: 'Bench Brand' }],
    projects: projects.map((p) => ({ key: p, brand: 'b', name: `Bench ${p}`, timezone: TZ, currency: 'THB', defaultCleanupMinutes: 0, bookingGridMinutes: 1 })),
    zones: projects.map((p) => ({ key: `z-${p}`, project: p, name: `Zone ${p}` })),
    floors: projects.map((p) => ({ key: `f-${p}`, zone: `z-${p}`, name: `Floor ${p}` })),
    rooms: [
      ...Array.from({ length: ROOMS }, (_, i) => ({ key: `pb-r${i}`, floor: 'f-pb', name: `Room ${i}`, capacity: 8, cleanupMinutes: 0, config: openAllDay })),
      ...['a1', 'a2', 'a3'].map((p) => ({ key: `${p}-r`, floor: `f-${p}`, name: `Room ${p}`, capacity: 8, cleanupMinutes: 0, config: openAllDay })),
    ],
    users: [{
      key: 'u', email: 'bench@example.com', name: 'Bench Organizer', phone: '+66800000000',
      memberships: projects.map((p) => ({ project: p, role: 'member' })),
    }],
    webhooks: [
      { key: 'a1-h', project: 'a1', url: receiver.url('/a1'), secret: SECRET, events: ['ROOM_REMINDER'] },
      ...[0, 1, 2, 3].map((i) => ({ key: `a2-h${i}`, project: 'a2', url: receiver.url(`/a2-${i}`), secret: SECRET, events: ['ROOM_REMINDER'] })),
      { key: 'a3-slow', project: 'a3', url: receiver.url('/hang'), secret: SECRET, events: ['ROOM_ENDING_SOON'] },
      { key: 'a3-fast', project: 'a3', url: receiver.url('/a3-fast'), secret: SECRET, events: ['ROOM_REMINDER'] },
    ],
  };
}

/** A meetings row as MeetingService.create writes it (no attendees, no payment). */
function meetingRow(p: { id: string; projectId: string; roomId: string; organizerId: string; start: number; end: number; now: number }) {
  return {
    id: p.id, project_id: p.projectId, asset_kind: 'room', asset_id: p.roomId, room_id: p.roomId, desk_id: null,
    title: 'bench', body: '', start_at: p.start, end_at: p.end, booked_end_at: p.end, span_end_at: p.end,
    all_day: 0, time_period: null, status: 'active', pin_enc: 'bench', pin_failures: 0, organizer_user_id: p.organizerId,
    organizer: JSON.stringify({ email: 'bench@example.com', name: 'Bench Organizer', checkInAt: null, checkOutAt: null }),
    attendees: '[]', app_id: null, booked_via: null, booked_by_user_id: null, payment: null, payment_due_at: null,
    billing_summaries: '[]', recurrence: null, cancel_reason: null, created_at: p.now, updated_at: p.now,
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pct = (xs: number[], q: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const fmt = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '-');

async function main(): Promise<void> {
  const receiver = await startReceiver();
  const svc = await startBenchService();
  const { services } = svc;
  const db = services.storage.db as Kysely<Database>;
  const engine = services.storage.engine;
  const applied = await svc.call('POST', '/ops/v1/apply', site(receiver), BENCH_OPS_TOKEN);
  if (applied.status !== 200) throw new Error(`apply failed: ${JSON.stringify(applied.body)}`);
  const ids = applied.body.data.idsByKind;
  const organizerId: string = ids.users.u;
  const rows: string[][] = [];
  console.log(`engine: ${engine}; events per scenario: ${EVENTS}; bookings: ${BOOKINGS}`);

  // =========================================================================
  // A. Delivery throughput
  // =========================================================================
  const meetings = new MeetingRepository(db);
  const meetingIn = async (project: string) => {
    const now = services.clock.now();
    const id = newId(now);
    const start = now + 60 * MIN;
    await writeTransaction(db, engine, (trx) =>
      meetings.insertHeld(meetingRow({ id, projectId: ids.projects[project], roomId: ids.rooms[`${project}-r`], organizerId, start, end: start + 30 * MIN, now }), [
        { id, meeting_id: id, project_id: ids.projects[project], asset_id: ids.rooms[`${project}-r`], occurrence_index: 0, start_at: start, end_at: start + 30 * MIN },
      ], trx),
    );
    return (await meetings.byId(id))!;
  };
  const emit = async (project: string, kind: 'REMINDER' | 'ENDING_SOON', n: number) => {
    const m: MeetingRow = await meetingIn(project);
    const scope = scopeOf('room', (await services.catalogue.assetInContext('room', m.asset_id))!);
    const facts = bookingFacts(scope, m, { start: m.start_at, end: m.end_at });
    const t0 = performance.now();
    await writeTransaction(db, engine, async (trx) => {
      for (let i = 0; i < n; i++) await services.outbox.emit(trx, { meetingId: m.id, facts, detail: { kind }, at: services.clock.now() });
    });
    return performance.now() - t0;
  };
  const waitFor = async (paths: string[], want: number, maxMs: number) => {
    const t0 = performance.now();
    while (performance.now() - t0 < maxMs) {
      if (paths.every((p) => receiver.ids(p).size >= want)) break;
      await sleep(5);
    }
    return { ms: performance.now() - t0, got: paths.reduce((s, p) => s + receiver.ids(p).size, 0) };
  };

  // The job runner runs the deliveries (the lifecycle and purge handlers find nothing due yet).
  services.jobs.start();

  {
    const emitMs = await emit('a1', 'REMINDER', EVENTS);
    const r = await waitFor(['/a1'], EVENTS, 120_000);
    rows.push(['A1 deliveries, 1 listener', `${r.got}/${EVENTS}`, fmt(r.ms), fmt((r.got / r.ms) * 1000), `outbox write ${fmt(emitMs)} ms (${fmt((EVENTS / emitMs) * 1000)} events/s)`]);
  }
  {
    const n = Math.round(EVENTS / 4);
    const paths = [0, 1, 2, 3].map((i) => `/a2-${i}`);
    const emitMs = await emit('a2', 'REMINDER', n);
    const r = await waitFor(paths, n, 120_000);
    rows.push(['A2 deliveries, 4 listeners × 1 event', `${r.got}/${n * 4}`, fmt(r.ms), fmt((r.got / r.ms) * 1000), `${n} events, outbox write ${fmt(emitMs)} ms`]);
  }
  {
    // A listener that never answers (10 s timeout) with a backlog, then a healthy listener's events.
    const backlog = 300;
    const fast = 100;
    await emit('a3', 'ENDING_SOON', backlog);
    await sleep(50);
    await emit('a3', 'REMINDER', fast);
    const r = await waitFor(['/a3-fast'], fast, 15_000);
    rows.push([
      'A3 healthy listener next to a hanging one', `${r.got}/${fast}`, fmt(r.ms), fmt((r.got / r.ms) * 1000),
      `hanging listener: ${backlog} queued, ${receiver.received('/hang')} attempts started (budget 4, 10 s timeout)`,
    ]);
  }
  await services.jobs.stop();

  // =========================================================================
  // B. Lifecycle with many scheduled bookings
  // =========================================================================
  const mc = resolveMeetingConfig({});
  const projectId: string = ids.projects.pb;
  const roomIds: string[] = Array.from({ length: ROOMS }, (_, i) => ids.rooms[`pb-r${i}`]);
  const seedNow = services.clock.now();
  /** Booking i starts at base + i seconds and lasts 30 minutes: 5 steps each, about 3 applied per second of service time. */
  const base = Math.ceil((seedNow + 2 * 60 * MIN) / MIN) * MIN;
  const CHUNK = 500;
  const tSeed = performance.now();
  for (let c = 0; c < BOOKINGS; c += CHUNK * 10) {
    await writeTransaction(db, engine, async (trx) => {
      for (let k = c; k < Math.min(BOOKINGS, c + CHUNK * 10); k += CHUNK) {
        const meetings = [];
        const slots = [];
        const timers = [];
        for (let i = k; i < Math.min(BOOKINGS, k + CHUNK); i++) {
          const id = newId(seedNow);
          const roomId = roomIds[i % ROOMS];
          // Spread inside the second too, so due times do not all share the poller's phase.
          const start = base + i * 1000 + ((i * 7919) % 1000);
          const window = { start, end: start + 30 * MIN };
          meetings.push(meetingRow({ id, projectId, roomId, organizerId, start, end: window.end, now: seedNow }));
          slots.push({ id, meeting_id: id, project_id: projectId, asset_id: roomId, occurrence_index: 0, start_at: start, end_at: window.end });
          // The rows timerWrites.schedule writes for planTimers' plan.
          for (const t of planTimers(window, mc, { allDay: false, now: seedNow })) {
            timers.push({ id: newId(seedNow), meeting_id: id, kind: t.kind, due_at: t.dueAt, window_start: start, window_end: window.end, status: 'pending', created_at: seedNow, fired_at: null });
          }
        }
        await trx.insertInto('meetings').values(meetings).execute();
        await trx.insertInto('meeting_slots').values(slots).execute();
        for (let j = 0; j < timers.length; j += 2500) await trx.insertInto('timers').values(timers.slice(j, j + 2500)).execute();
      }
    });
  }
  await meetings.raiseLongestHold(projectId, 30 * MIN);
  // Planner statistics, as autovacuum would have them for tables this size (without them
  // PostgreSQL plans TimerRepository.cancelPending as a bitmap AND over every pending timer).
  await sql`analyze`.execute(db);
  const seedMs = performance.now() - tSeed;
  const timerCount = async (where: { status?: string; dueBy?: number; dueAfter?: number }) => {
    let q = db.selectFrom('timers').select((eb) => eb.fn.countAll<number>().as('n'));
    if (where.status) q = q.where('status', '=', where.status);
    if (where.dueBy !== undefined) q = q.where('due_at', '<=', where.dueBy);
    if (where.dueAfter !== undefined) q = q.where('due_at', '>', where.dueAfter);
    return Number((await q.executeTakeFirstOrThrow()).n);
  };
  const totalTimers = await timerCount({});
  rows.push([`B0 seed ${BOOKINGS} bookings`, `${totalTimers} timers`, fmt(seedMs), fmt((BOOKINGS / seedMs) * 1000), 'bookings/s, chunks of 500 rows, 5,000 per transaction, then ANALYZE']);

  // B1: the sandbox clock jumps; POST /ops/v1/clock answers once every step due by then is applied.
  const jump = async (label: string, to: number) => {
    const due = await timerCount({ status: 'pending', dueBy: to });
    const firedBefore = await timerCount({ status: 'fired' });
    const t0 = performance.now();
    const res = await svc.call('POST', '/ops/v1/clock', { set: new Date(to).toISOString() }, BENCH_OPS_TOKEN);
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`clock move failed: ${JSON.stringify(res.body)}`);
    const fired = (await timerCount({ status: 'fired' })) - firedBefore;
    const left = await timerCount({ status: 'pending', dueBy: to });
    rows.push([label, `${fired} applied of ${due} due`, fmt(ms), fmt((fired / ms) * 1000), `steps/s; ${left} left pending; ${fmt(ms / Math.max(1, due), 2)} ms per due row`]);
  };
  /** The instant by which the next `n` pending rows are due. */
  const slice = async (n: number) => {
    const row = await db.selectFrom('timers').select('due_at').where('status', '=', 'pending').orderBy('due_at').offset(n - 1).limit(1).executeTakeFirstOrThrow();
    return Number(row.due_at);
  };
  await jump('B1 POST /ops/v1/clock, 1,000 rows due', await slice(1000));
  await jump('B1 POST /ops/v1/clock, 5,000 rows due', await slice(5000));

  // B2: service time jumps without running the steps (as after a restart, or another
  // instance moving the clock); the background worker (1 s poll) catches up.
  const worker = timeSteps(services);
  // A runner of its own with the lifecycle handler only (the service's would also retry the hanging listener of A3).
  const lifecycleRunner = new JobRunner({ clock: services.clock, realClock: systemClock });
  lifecycleRunner.register(services.lifecycle.job());
  {
    const to = await slice(2000);
    const due = await timerCount({ status: 'pending', dueBy: to });
    const clock = services.clock as OffsetClock;
    clock.setOffset(clock.offsetMs + (to - clock.now()));
    const t0 = performance.now();
    lifecycleRunner.start();
    while ((await timerCount({ status: 'pending', dueBy: to })) > 0 && performance.now() - t0 < 60_000) await sleep(20);
    const ms = performance.now() - t0;
    await lifecycleRunner.stop();
    rows.push(['B2 background worker catches up a jump (2,000 rows due)', `${worker.samples.length} applied of ${due} due`, fmt(ms), fmt((worker.samples.length / ms) * 1000), 'steps/s, includes the wait for the first poll (1 s interval)']);
  }

  // B3: steps fall due one by one (about 3 per second) while the worker polls every second.
  {
    worker.samples.length = 0;
    const seconds = Number(process.env.BENCH_LATENESS_SECONDS || 10);
    // Catch up first, so only steps falling due while the worker polls are measured.
    await lifecycleRunner.drain(LIFECYCLE_JOB, 120_000);
    const from = services.clock.now();
    worker.samples.length = 0;
    const t0 = performance.now();
    lifecycleRunner.start();
    await sleep(seconds * 1000);
    await lifecycleRunner.stop();
    const late = worker.samples.filter((s) => s.dueAt > from).map((s) => s.appliedAt - s.dueAt);
    rows.push([
      'B3 lateness, background worker (1 s poll)', `${late.length} steps in ${seconds} s`, fmt(performance.now() - t0),
      '-', `lateness ms p50 ${fmt(pct(late, 0.5))} p95 ${fmt(pct(late, 0.95))} max ${fmt(Math.max(...late))}`,
    ]);
  }

  console.log('\n| scenario | count | ms | per s | notes |');
  console.log('|---|---:|---:|---:|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  await svc.close();
  await receiver.close();
}

/** Records when (service time) each step the lifecycle job claimed was applied, by wrapping `lifecycle.fire`. */
function timeSteps(services: Services) {
  const samples: { dueAt: number; appliedAt: number }[] = [];
  const lifecycle = services.lifecycle;
  const fire = lifecycle.fire.bind(lifecycle);
  lifecycle.fire = async (t: TimerRow) => {
    const ok = await fire(t);
    if (ok) samples.push({ dueAt: t.due_at, appliedAt: services.clock.now() });
    return ok;
  };
  return { samples };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
