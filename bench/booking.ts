/**
 * Booking create throughput and contention, in one run (about 30 s by default):
 *   (a) concurrent POST /meetings on distinct slots — every request books another
 *       room/slot (200 rooms open all week, rotating room, then hour, then day);
 *   (b) 50 concurrent POST /meetings for one contended room and slot, repeated
 *       over a few slots: exactly one 201 per round, the rest 409 KS012;
 *   (c) a bare Fastify JSON POST (POST /bare) measured the same way as (a).
 * Latency percentiles are exact (every response's time, sorted), not autocannon's
 * histogram buckets, so p95 is reported.
 *
 *   npm run bench:booking
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=32 npm run bench:booking
 *   BENCH_DATABASE_URL=postgres://…/empty_db npm run bench:booking   (an empty database)
 */
import os from 'node:os';
import autocannon from 'autocannon';
import { DateTime } from 'luxon';
import { BENCH_OPS_TOKEN, startBareFastify, startBenchService } from './support.js';

const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 20);
const ROOMS = 200;
const CONTENDERS = 50;
const CONTENDED_ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TZ = 'Asia/Bangkok';
/** Meetings start on the hour, 06:00-21:00, last 45 minutes; with 15 minutes of cleaning they never clash. */
const FIRST_HOUR = 6;
const HOURS_PER_DAY = 16;
const APP_SECRET = 'bench-secret-0123456789abcdef0123456789';

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
  projects: [{ key: 'p', brand: 'b', name: 'Bench Tower', timezone: TZ, currency: 'THB', defaultCleanupMinutes: 10, bookingGridMinutes: 15 }],
  zones: [{ key: 'z', project: 'p', name: 'Main' }],
  floors: Array.from({ length: FLOORS }, (_, f) => ({ key: `f${f}`, zone: 'z', name: `${f + 1}F` })),
  rooms: [
    ...Array.from({ length: ROOMS }, (_, i) => ({
      key: `r${i}`, floor: `f${i % FLOORS}`, name: `Room ${i}`, capacity: 8, isPublic: true, cleanupMinutes: 15, config: openAllWeek,
    })),
    { key: 'contended', floor: 'f0', name: 'Contended', capacity: 8, isPublic: true, cleanupMinutes: 15, config: openAllWeek },
  ],
  apps: [{
    key: 'app', appId: 'bench-app', appSecret: APP_SECRET, name: 'Bench',
    projects: ['p'], projectRoles: [{ project: 'p', permissions: ['MEETING_UPDATE'] }],
  }],
};

interface Measured {
  label: string;
  requests: number;
  requestsPerSec: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** CPU time of this process (service and autocannon client together) per request. */
  cpuMsPerRequest: number;
  statuses: Record<number, number>;
  errors: number;
}

const round2 = (x: number) => Number(x.toFixed(2));

/** An autocannon run that records every response's status and latency (exact percentiles). */
async function measure(label: string, opts: autocannon.Options): Promise<Measured> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  // Without a callback autocannon returns its event emitter, made thenable.
  const options = opts.amount ? { connections: CONNECTIONS, ...opts } : { connections: CONNECTIONS, duration: SECONDS, ...opts };
  const instance = autocannon(options) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
  instance.on('response', (_client, status, _bytes, ms) => {
    latencies.push(ms);
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  const cpu0 = process.cpuUsage();
  const result = await instance;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? round2(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]) : NaN);
  const seconds = result.duration || SECONDS;
  return {
    label,
    requests: latencies.length,
    requestsPerSec: Math.round(latencies.length / seconds),
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: latencies.length ? round2(latencies[latencies.length - 1]) : NaN,
    cpuMsPerRequest: latencies.length ? round2((cpu.user + cpu.system) / 1000 / latencies.length) : NaN,
    statuses,
    errors: result.errors + result.timeouts,
  };
}

const fmtStatuses = (s: Record<number, number>) => Object.entries(s).map(([k, v]) => `${k}×${v}`).join(' ');

function printTable(rows: Measured[]): void {
  console.log('\n| scenario | requests | req/s | p50 ms | p95 ms | p99 ms | max ms | CPU ms/req | statuses | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|---:|');
  for (const r of rows) {
    console.log(`| ${r.label} | ${r.requests} | ${r.requestsPerSec} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} | ${r.cpuMsPerRequest} | ${fmtStatuses(r.statuses)} | ${r.errors} |`);
  }
}

const started = performance.now();
const svc = await startBenchService();
const bare = await startBareFastify();
try {
  const applied = await svc.call('POST', '/ops/v1/apply', site, BENCH_OPS_TOKEN);
  if (applied.status !== 200) throw new Error(`apply failed: ${JSON.stringify(applied.body).slice(0, 1000)}`);
  const rooms = applied.body.data.idsByKind.rooms as Record<string, string>;
  const roomIds = Array.from({ length: ROOMS }, (_, i) => rooms[`r${i}`]);
  const token = await svc.call('POST', '/auth/accessToken', { grant_type: 'app_credentials', app_id: 'bench-app', app_secret: APP_SECRET });
  if (token.status !== 201) throw new Error(`token failed: ${JSON.stringify(token.body)}`);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token.body.access_token}` };

  // Tomorrow (property time) onwards; the contended room uses the day after the last distinct-slot day.
  const firstDay = DateTime.fromMillis(svc.services.clock.now(), { zone: TZ }).startOf('day').plus({ days: 1 });
  const slotBody = (i: number, roomId = roomIds[i % ROOMS]) => {
    const hour = FIRST_HOUR + (Math.floor(i / ROOMS) % HOURS_PER_DAY);
    const day = firstDay.plus({ days: Math.floor(i / (ROOMS * HOURS_PER_DAY)) });
    const start = day.set({ hour, minute: 0 });
    return JSON.stringify({ meetingRoomId: roomId, title: `Bench ${i}`, startDateTime: start.toISO(), endDateTime: start.plus({ minutes: 45 }).toISO() });
  };

  // Warm-up: a few creates (distinct slots) and bare posts, sequentially.
  let next = 0;
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${svc.url}/meetings`, { method: 'POST', headers, body: slotBody(next++) });
    if (r.status !== 201) throw new Error(`warm-up create -> ${r.status}: ${await r.text()}`);
    await fetch(`${bare.url}/bare`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: slotBody(0) });
  }

  // (c) bare Fastify JSON POST, with a booking-sized body.
  const bareRow = await measure('bare Fastify POST /bare', {
    url: `${bare.url}/bare`, method: 'POST', headers: { 'content-type': 'application/json' }, body: slotBody(0),
  });

  // (a) concurrent creates, each on its own room/slot.
  const createRow = await measure(`POST /meetings, distinct slots (${ROOMS} rooms)`, {
    url: svc.url,
    requests: [{ method: 'POST', path: '/meetings', headers, setupRequest: (req) => ({ ...req, body: slotBody(next++) }) }],
  });
  const distinctSlotsUsed = next;

  // (b) 50 concurrent creates for one slot of the contended room, several rounds (one slot per round).
  const contendedRoom = rooms.contended;
  const contendedDay = Math.floor(distinctSlotsUsed / (ROOMS * HOURS_PER_DAY)) + 2;
  const rounds: Measured[] = [];
  for (let round = 0; round < CONTENDED_ROUNDS; round++) {
    const i = (contendedDay * HOURS_PER_DAY + round) * ROOMS; // maps to hour FIRST_HOUR+round on contendedDay
    rounds.push(await measure(`50 concurrent POST /meetings, one slot (round ${round + 1})`, {
      url: `${svc.url}/meetings`, method: 'POST', headers, body: slotBody(i, contendedRoom),
      connections: CONTENDERS, amount: CONTENDERS,
    }));
  }

  const stored = await svc.services.storage.db
    .selectFrom('meeting_slots').select((eb) => eb.fn.countAll<number>().as('n')).where('asset_id', '=', contendedRoom).executeTakeFirstOrThrow();

  printTable([bareRow, createRow, ...rounds]);
  const engine = svc.services.storage.engine;
  console.log(`\nengine: ${engine}; ${CONNECTIONS} connections, ${SECONDS} s per throughput run; Node ${process.version}; ${os.availableParallelism()} CPUs, load average ${os.loadavg()[0].toFixed(1)}`);
  console.log('CPU ms/req is this process (service + autocannon client) per response: less sensitive to other load on the machine than req/s.');
  console.log(`(a) distinct-slot creates: ${createRow.requestsPerSec} req/s, p95 ${createRow.p95} ms, statuses ${fmtStatuses(createRow.statuses)} (${distinctSlotsUsed} bodies generated incl. warm-up)`);
  console.log(`ratio create / bare throughput: ${(createRow.requestsPerSec / bareRow.requestsPerSec).toFixed(3)}` +
    `  (bare ${bareRow.requestsPerSec} req/s; p95 ${createRow.p95} ms vs ${bareRow.p95} ms = ${(createRow.p95 / bareRow.p95).toFixed(1)}×)`);
  let ok = createRow.errors === 0 && Object.keys(createRow.statuses).every((s) => s === '201');
  for (const [k, r] of rounds.entries()) {
    const winners = r.statuses[201] ?? 0;
    const conflicts = r.statuses[409] ?? 0;
    const good = winners === 1 && conflicts === CONTENDERS - 1 && r.requests === CONTENDERS && r.errors === 0;
    ok &&= good;
    console.log(`(b) round ${k + 1}: ${winners} × 201, ${conflicts} × 409 of ${r.requests} (${good ? 'OK: exactly one winner' : 'FAIL'}), burst max ${r.max} ms`);
  }
  const slotsOk = Number(stored.n) === CONTENDED_ROUNDS;
  ok &&= slotsOk;
  console.log(`(b) stored slots on the contended room: ${stored.n} (expected ${CONTENDED_ROUNDS})`);
  console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s — ${ok ? 'all checks passed' : 'CHECKS FAILED'}`);
  if (!ok) process.exitCode = 1;
} finally {
  await bare.close();
  await svc.close();
}
