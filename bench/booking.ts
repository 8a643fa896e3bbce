/**
 * Booking create throughput against references, and contention. Every party runs
 * in its own process (bench/lib): the service (one per engine), the reference
 * server (bench/reference-server.ts: Fastify + better-sqlite3 doing the essential
 * work of a create by hand), a bare Fastify JSON POST, and autocannon.
 *
 *   (a) concurrent POST /meetings on distinct slots (200 rooms open all week;
 *       rotating room, then hour, then day), on the service and on the reference
 *       server, and a bare Fastify POST of the same body; interleaved rounds,
 *       medians and their ratios (targets: service ≥ 0.8 × the reference on SQLite;
 *       with PostgreSQL, the service on PostgreSQL ≥ 0.7 × the PostgreSQL reference,
 *       bench/lib/pg-reference.ts, on a throwaway database of the same server,
 *       and ≥ 0.7 × the service on SQLite). The bench site has one webhook
 *       listener subscribed to ROOM_BOOK, so each create queues one delivery as
 *       on the reference (the background workers are off: nothing is sent);
 *   (b) 50 concurrent POST /meetings for one slot of a dedicated room, repeated
 *       over a few slots: exactly one 201 per round and 49 × 409 (KS012), then the
 *       room's stored bookings are counted through the API;
 *   every stored booking is counted against the 201 answers.
 *
 *   npm run bench:booking
 *   BENCH_SECONDS=10 BENCH_ROUNDS=5 BENCH_CONNECTIONS=32 npm run bench:booking
 *   npm run bench:booking:pg                  (BENCH_ENGINES=sqlite,postgres: both, interleaved)
 *   BENCH_PROFILE=1 npm run bench:booking     (the service under --cpu-prof; prints where the profile went)
 *   BENCH_CONTENDED_ROUNDS=10                 (contention rounds per subject, default 5)
 *   BENCH_PREVIOUS_REFERENCE=bench/prev.ts    (another reference server file run beside, e.g. `git show <commit>:bench/reference-server.ts`)
 */
import { DateTime } from 'luxon';
import { BENCH_OPS_TOKEN } from './support.js';
import type { Child } from './lib/children.js';
import { benchEngines } from './lib/databases.js';
import {
  SETTINGS,
  environmentLine,
  fmtStatuses,
  interleavedRounds,
  loadAverageNow,
  measure,
  printRatios,
  printRuns,
  printSummary,
  ratio,
  runBench,
  summarize,
  type CpuSource,
  type Measured,
  type Ratio,
  type Subject,
} from './lib/harness.js';
import type { LoadSpec } from './lib/load-main.js';
import { slotBodies, type SlotPlan } from './lib/slots.js';
import { startBare, startLoad, startPgReference, startReference, startService, type ServiceProcess } from './lib/subjects.js';

const ROOMS = 200;
const CONTENDERS = 50;
const CONTENDED_ROUNDS = Number(process.env.BENCH_CONTENDED_ROUNDS || 5);
const TZ = 'Asia/Bangkok';
/** Meetings start on the hour, 06:00-21:00, last 45 minutes; with 15 minutes of cleaning they never clash. */
const FIRST_HOUR = 6;
const HOURS_PER_DAY = 16;
const MINUTES = 45;
const APP_SECRET = 'bench-secret-0123456789abcdef0123456789';
/** BENCH_PREVIOUS_REFERENCE=<file>: another reference server (e.g. an earlier version of reference-server.ts) run beside, to compare. */
const PREVIOUS_REFERENCE = process.env.BENCH_PREVIOUS_REFERENCE;

const weekdays = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const openAllWeek = {
  dayConfig: Object.fromEntries(weekdays.map((d) => [d, { availableTime: { start: '06:00:00', end: '23:00:00' } }])),
  minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
  maxAdvanceBookingDays: 365,
  maxDurationMinutes: 480,
};

const FLOORS = 10;
const site = {
  brands: [{ key: 'b', name: 'Bench Brand' }],
  projects: [
    { key: 'p', brand: 'b', name: 'Bench Tower', timezone: TZ, currency: 'THB', defaultCleanupMinutes: 10, bookingGridMinutes: 15 },
  ],
  zones: [{ key: 'z', project: 'p', name: 'Main' }],
  floors: Array.from({ length: FLOORS }, (_, f) => ({ key: `f${f}`, zone: 'z', name: `${f + 1}F` })),
  rooms: [
    ...Array.from({ length: ROOMS }, (_, i) => ({
      key: `r${i}`,
      floor: `f${i % FLOORS}`,
      name: `Room ${i}`,
      capacity: 8,
      isPublic: true,
      cleanupMinutes: 15,
      config: openAllWeek,
    })),
    { key: 'contended', floor: 'f0', name: 'Contended', capacity: 8, isPublic: true, cleanupMinutes: 15, config: openAllWeek },
  ],
  apps: [
    {
      key: 'app',
      appId: 'bench-app',
      appSecret: APP_SECRET,
      name: 'Bench',
      projects: ['p'],
      projectRoles: [{ project: 'p', permissions: ['MEETING_UPDATE'] }],
    },
  ],
  // Queued, never sent: the bench service runs without its background workers.
  webhooks: [
    {
      key: 'hook',
      project: 'p',
      url: 'http://127.0.0.1:9/bench-hook',
      secret: 'bench-webhook-secret-0123456789abcdef',
      events: ['ROOM_BOOK'],
    },
  ],
};

/** A subject that books: where, as whom, which rooms, and how it counts stored bookings. */
interface Booker {
  key: string;
  label: string;
  server: Child<{ url: string }> & CpuSource;
  url: string;
  token: string;
  roomIds: string[];
  contendedRoomId: string;
  /** Next distinct-slot index. */
  next: number;
  /** 201 answers received. */
  created: number;
  /** Requests sent but not answered before their timed run stopped (the service may have stored them). */
  unanswered: number;
  storedOn(roomId: string, from: string, to: string): Promise<number>;
  storedAll?(from: string, to: string): Promise<number>;
}

async function serviceBooker(svc: ServiceProcess): Promise<Booker> {
  const applied = await svc.http('POST', '/ops/v1/apply', site, BENCH_OPS_TOKEN);
  if (applied.status !== 200) throw new Error(`apply failed: ${JSON.stringify(applied.body).slice(0, 1000)}`);
  const rooms = applied.body.data.idsByKind.rooms as Record<string, string>;
  const token = await svc.http('POST', '/auth/accessToken', { grant_type: 'app_credentials', app_id: 'bench-app', app_secret: APP_SECRET });
  if (token.status !== 201) throw new Error(`token failed: ${JSON.stringify(token.body)}`);
  const bearer = token.body.access_token as string;
  const total = async (query: string) => {
    const r = await svc.http('GET', `/meetings?${query}&limit=0`, undefined, bearer);
    if (r.status !== 200) throw new Error(`GET /meetings -> ${r.status}: ${JSON.stringify(r.body)}`);
    return Number(r.body.meta.total);
  };
  return {
    key: `service:${svc.engine}`,
    label: `service POST /meetings (${svc.engine})`,
    server: svc,
    url: svc.url,
    token: bearer,
    roomIds: Array.from({ length: ROOMS }, (_, i) => rooms[`r${i}`]),
    contendedRoomId: rooms.contended,
    next: 0,
    created: 0,
    unanswered: 0,
    storedOn: (roomId, from, to) => total(`from=${from}&to=${to}&meetingRoomId=${roomId}`),
    storedAll: (from, to) => total(`from=${from}&to=${to}`),
  };
}

function referenceBooker(ref: Awaited<ReturnType<typeof startPgReference>>, key: string, label: string): Booker {
  return {
    key,
    label,
    server: ref,
    url: ref.ready.url,
    token: ref.ready.token,
    roomIds: ref.ready.roomIds,
    contendedRoomId: ref.ready.contendedRoomId,
    next: 0,
    created: 0,
    unanswered: 0,
    async storedOn(roomId) {
      const res = await fetch(`${ref.ready.url}/meeting-rooms/${roomId}/slot-count`, {
        headers: { authorization: `Bearer ${ref.ready.token}` },
      });
      return ((await res.json()) as { data: { count: number } }).data.count;
    },
  };
}

await runBench(async (ctx) => {
  const started = performance.now();
  const engines = benchEngines();
  console.log(environmentLine(engines.join(', ')));
  console.log('(each party in its own process; the service without background workers)\n');

  const load = await startLoad(ctx);
  const bare = await startBare(ctx);
  const ref = await startReference(ctx, { rooms: ROOMS, timezone: TZ });
  const bookers: Booker[] = [referenceBooker(ref, 'reference', 'reference server POST /meetings (SQLite)')];
  if (engines.includes('postgres')) {
    const pgRef = await startPgReference(ctx, { rooms: ROOMS, timezone: TZ });
    bookers.push(referenceBooker(pgRef, 'reference:postgres', 'PostgreSQL reference server POST /meetings'));
  }
  if (PREVIOUS_REFERENCE) {
    const prev = await startReference(ctx, { rooms: ROOMS, timezone: TZ, entry: PREVIOUS_REFERENCE, name: 'previous-reference' });
    bookers.push(referenceBooker(prev, 'previous-reference', `previous reference POST /meetings (${PREVIOUS_REFERENCE})`));
  }
  for (const engine of engines) bookers.push(await serviceBooker(await startService(ctx, engine)));

  // Tomorrow on the project's wall clock onwards; the contended room has its own day.
  const firstDay = DateTime.now().setZone(TZ).startOf('day').plus({ days: 1 });
  const plan = (b: Booker): SlotPlan => ({
    roomIds: b.roomIds,
    firstDay: firstDay.toISODate()!,
    zone: TZ,
    firstHour: FIRST_HOUR,
    hoursPerDay: HOURS_PER_DAY,
    minutes: MINUTES,
    start: b.next,
  });
  const sampleBody = slotBodies(plan(bookers[0]))(0);

  const subjects: Subject[] = [
    {
      key: 'bare',
      label: 'bare Fastify POST /bare',
      server: bare,
      spec: (seconds) => ({
        url: bare.ready.url,
        method: 'POST',
        path: '/bare',
        body: sampleBody,
        connections: SETTINGS.connections,
        duration: seconds,
      }),
    },
    ...bookers.map((b): Subject => ({
      key: b.key,
      label: b.label,
      server: b.server,
      spec: (seconds) => ({
        url: b.url,
        method: 'POST',
        path: '/meetings',
        headers: { authorization: `Bearer ${b.token}` },
        slots: plan(b),
        connections: SETTINGS.connections,
        duration: seconds,
      }),
      after: (r) => {
        b.next = r.next!;
        b.created += r.statuses[201] ?? 0;
        b.unanswered += r.sent - r.requests;
      },
    })),
  ];
  const labelOf = (key: string) => subjects.find((s) => s.key === key)?.label ?? key;

  console.log(`\n(a) distinct-slot creates, ${SETTINGS.rounds} interleaved rounds\n`);
  const rows = await interleavedRounds(load, subjects);
  printRuns(
    `(a) every measured run (${SETTINGS.connections} connections, ${SETTINGS.seconds} s each; server CPU = the subject's process)`,
    rows,
    labelOf,
  );
  const sums = summarize(subjects, rows);
  printSummary('(a) medians over the rounds', sums);
  const get = (k: string) => sums.get(k)!;
  const ratios: Ratio[] = [];
  for (const engine of engines) {
    if (engine === 'sqlite') ratios.push(ratio('service (sqlite) / reference server', get('service:sqlite'), get('reference'), 0.8));
    else ratios.push(ratio('service (postgres) / PostgreSQL reference', get('service:postgres'), get('reference:postgres'), 0.7));
    ratios.push(ratio(`service (${engine}) / bare Fastify POST`, get(`service:${engine}`), get('bare')));
  }
  ratios.push(ratio('reference server / bare Fastify POST', get('reference'), get('bare')));
  if (engines.includes('postgres'))
    ratios.push(ratio('PostgreSQL reference / SQLite reference', get('reference:postgres'), get('reference')));
  if (PREVIOUS_REFERENCE) ratios.push(ratio('previous reference / reference server', get('previous-reference'), get('reference')));
  if (engines.includes('postgres') && engines.includes('sqlite'))
    ratios.push(ratio('service PostgreSQL / service SQLite', get('service:postgres'), get('service:sqlite'), 0.7));
  printRatios('(a) ratios of the medians', ratios);
  if (engines.includes('postgres')) {
    console.log(
      "(PostgreSQL: server CPU is the service process; PostgreSQL CPU is the database's backend processes, read from /proc; " +
        'the shared WAL writer and checkpointer are not counted.)',
    );
  }

  let ok = true;
  const failedRuns = rows.filter((r) => r.subject !== 'bare' && (r.errors > 0 || Object.keys(r.statuses).some((s) => s !== '201')));
  if (failedRuns.length) {
    ok = false;
    for (const r of failedRuns)
      console.log(
        `FAIL: round ${r.round} ${labelOf(r.subject)}: statuses ${fmtStatuses(r.statuses)}, ${r.errors} errors (every distinct-slot create must be 201)`,
      );
  }

  // (b) contention: 50 concurrent creates of one slot, per round a new slot (hour) of the dedicated room.
  const contendedDay = firstDay.plus({ days: 2 + Math.max(...bookers.map((b) => Math.floor(b.next / (ROOMS * HOURS_PER_DAY)))) });
  const contention: (Measured & { label: string; good: boolean })[] = [];
  for (let round = 0; round < CONTENDED_ROUNDS; round++) {
    const start = contendedDay.set({ hour: FIRST_HOUR + round });
    for (const b of bookers) {
      const body = JSON.stringify({
        meetingRoomId: b.contendedRoomId,
        title: `Contended ${round}`,
        startDateTime: start.toISO(),
        endDateTime: start.plus({ minutes: MINUTES }).toISO(),
      });
      const spec: LoadSpec = {
        url: b.url,
        method: 'POST',
        path: '/meetings',
        headers: { authorization: `Bearer ${b.token}` },
        body,
        connections: CONTENDERS,
        amount: CONTENDERS,
      };
      const m = await measure(load, b.server, spec, b.key, round + 1);
      b.created += m.statuses[201] ?? 0;
      // The losers' answer, once more, to show its code.
      const again = await fetch(`${b.url}/meetings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${b.token}` },
        body,
      });
      const code = ((await again.json()) as { code: string }).code;
      const good =
        m.statuses[201] === 1 &&
        m.statuses[409] === CONTENDERS - 1 &&
        m.requests === CONTENDERS &&
        m.errors === 0 &&
        again.status === 409 &&
        code === 'KS012';
      ok &&= good;
      contention.push({ ...m, label: `${b.label}: round ${round + 1} (409 code ${code})`, good });
    }
  }
  console.log(`\n(b) ${CONTENDERS} concurrent POST /meetings on one slot, ${CONTENDED_ROUNDS} rounds per subject\n`);
  console.log('| subject and round | responses | statuses | p50 ms | max ms | server CPU ms/req | check |');
  console.log('|---|---:|---|---:|---:|---:|---|');
  for (const c of contention) {
    console.log(
      `| ${c.label} | ${c.requests} | ${fmtStatuses(c.statuses)} | ${c.p50} | ${c.max} | ${c.serverCpuMsPerRequest} | ${c.good ? 'OK: one 201, 49 × 409 KS012' : 'FAIL'} |`,
    );
  }

  // Stored bookings, through each subject's own API.
  const from = firstDay.minus({ days: 1 }).toUTC().toISO()!;
  const to = contendedDay.plus({ days: 2 }).toUTC().toISO()!;
  console.log('\nstored bookings\n');
  console.log('| subject | on the contended room | expected | all bookings | 201 answers | unanswered at the end of a timed run | check |');
  console.log('|---|---:|---:|---:|---:|---:|---|');
  for (const b of bookers) {
    const onRoom = await b.storedOn(b.contendedRoomId, from, to);
    const all = b.storedAll ? await b.storedAll(from, to) : undefined;
    // Every 201 is stored; a request cut off by the end of a timed run may be stored too (its answer was not awaited).
    const good = onRoom === CONTENDED_ROUNDS && (all === undefined || (all >= b.created && all <= b.created + b.unanswered));
    ok &&= good;
    console.log(
      `| ${b.label} | ${onRoom} | ${CONTENDED_ROUNDS} | ${all ?? '—'} | ${b.created} | ${b.unanswered} | ${good ? 'OK' : 'FAIL'} |`,
    );
  }

  console.log(`\n${environmentLine(engines.join(', '))}`);
  console.log(
    `${loadAverageNow()}; total ${((performance.now() - started) / 1000).toFixed(1)} s — ${ok ? 'all checks passed' : 'CHECKS FAILED'}`,
  );
  return ok;
});
