/**
 * How long background work waits after it falls due (issue 30, section 4): the service in its own process(es)
 * with its workers, a webhook receiver in this one.
 *
 *   delivery: a booking is created (POST /meetings); delay = the ROOM_BOOK delivery's arrival at the receiver
 *             − the create's answer (the commit is just before it).
 *   step:     the sandbox clock is set a few seconds before a booking's reminder would fall due, then the booking
 *             is created; delay = the ROOM_REMINDER delivery's arrival + the clock offset − the step's due time
 *             (the step and its own delivery).
 *
 * Setups: one instance on SQLite, one on PostgreSQL, and two on one PostgreSQL database (A without workers takes
 * the requests, B with workers does the work). Each setup runs against this tree and, with BENCH_BASELINE=<dir of
 * another checkout> (e.g. /work/main), against that tree's service too, in interleaved rounds; p50/p95 per
 * setup and code, over all rounds' samples.
 *
 *   npm run bench:wakeup
 *   BENCH_BASELINE=/work/main BENCH_SAMPLES=20 BENCH_ROUNDS=2 BENCH_SETUPS=sqlite,pg,pg2 npm run bench:wakeup
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { startChild, modulePath, type Child } from './lib/children.js';
import { createBenchDatabase, type Engine } from './lib/databases.js';
import { BENCH_OPS_TOKEN } from './support.js';
import { apiCall } from './lib/driver.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SETUPS = (process.env.BENCH_SETUPS ?? 'sqlite,pg,pg2').split(',');
const BASELINE = process.env.BENCH_BASELINE;
const APP_ID = 'bench-wake-app';
const APP_SECRET = 'bench-wake-secret-0123456789abcdef012345';
const TZ = 'Asia/Bangkok';
/** How far ahead of its reminder the clock is set before the booking is made (ms). */
const STEP_LEAD_MS = 4_000;
/** The reminder falls due this long before the start. */
const PRE_START_MINUTES = 10;

interface Arrival {
  type: string;
  at: number;
}

class Receiver {
  readonly arrivals: Arrival[] = [];
  private waiters: (() => void)[] = [];
  private constructor(private readonly server: http.Server) {}
  static async start(): Promise<Receiver> {
    let self!: Receiver;
    const server = http.createServer((req, res) => {
      const at = Date.now();
      req.resume();
      req.on('end', () => {
        self.arrivals.push({ type: String(req.headers['x-service-event']), at });
        res.end('ok');
        for (const w of self.waiters.splice(0)) w();
      });
    });
    self = new Receiver(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return self;
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  /** The first arrival of `type` after index `from`. */
  async next(type: string, from: number, timeoutMs = 30_000): Promise<Arrival> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.arrivals.slice(from).find((a) => a.type === type);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no ${type} within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

function site(receiverUrl: string) {
  const open = { availableTime: { start: '00:00', end: '23:59' } };
  return {
    brands: [{ key: 'b', name: 'Wake Brand' }],
    projects: [{ key: 'p', brand: 'b', name: 'Wake Tower', timezone: TZ, currency: 'THB', bookingGridMinutes: 15 }],
    zones: [{ key: 'z', project: 'p', name: 'Zone' }],
    floors: [{ key: 'f', zone: 'z', name: '1F' }],
    apps: [
      {
        ...{ key: 'app', appId: APP_ID, appSecret: APP_SECRET, name: 'Wake bench', projects: ['p'] },
        projectRoles: [{ project: 'p', permissions: ['MEETING_UPDATE'] }],
      },
    ],
    rooms: [0, 1].map((i) => ({
      ...{ key: `r${i}`, floor: 'f', name: `Room ${i}`, capacity: 6 },
      config: {
        dayConfig: Object.fromEntries(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => [d, open])),
        maxAdvanceBookingDays: 3650,
        minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
        meetingConfig: { preStartMinutes: PRE_START_MINUTES },
      },
    })),
    webhooks: [
      {
        key: 'h',
        project: 'p',
        url: receiverUrl,
        secret: 'wake-bench-secret-0123456789abcdef01234',
        events: ['ROOM_BOOK', 'ROOM_REMINDER'],
      },
    ],
  };
}

type Service = Child<{ url: string }> & { url: string };

const call = (url: string, method: string, path: string, body?: unknown, token = BENCH_OPS_TOKEN): Promise<any> =>
  apiCall(url, token, method, path, body);

async function startInstance(root: string, dbUrl: string, workers: boolean, name: string): Promise<Service> {
  const child = await startChild<{ url: string }>({
    name,
    entry: modulePath(`${root}/bench/lib/service-main.ts`, import.meta.url),
    env: { BENCH_SERVICE_DATABASE_URL: dbUrl, BENCH_SERVICE_WORKERS: workers ? '1' : '0' },
    readyTimeoutMs: 180_000,
  });
  return Object.assign(child, { url: child.ready.url });
}

interface Figures {
  delivery: number[];
  step: number[];
}

/** One setup on one tree: SAMPLES deliveries and SAMPLES steps, one at a time. */
async function measure(root: string, setup: string, out: Figures): Promise<void> {
  const engine: Engine = setup === 'sqlite' ? 'sqlite' : 'postgres';
  const db = await createBenchDatabase(engine);
  const receiver = await Receiver.start();
  const runner = await startInstance(root, db.url, true, `${setup}:B`);
  const writer = setup === 'pg2' ? await startInstance(root, db.url, false, `${setup}:A`) : runner;
  try {
    const applied = await call(writer.url, 'POST', '/ops/v1/apply', site(receiver.url));
    const room = (i: number) => applied.data.idsByKind.rooms[`r${i}`] as string;
    const token = (
      await call(writer.url, 'POST', '/auth/accessToken', { grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET }, '')
    ).access_token as string;
    const book = (i: number, start: DateTime) =>
      call(
        writer.url,
        'POST',
        '/meetings',
        { meetingRoomId: room(i), title: 'wake', startDateTime: start.toISO(), endDateTime: start.plus({ minutes: 30 }).toISO() },
        token,
      );
    const clock = async () => (await call(writer.url, 'GET', '/ops/v1/clock')).data as { now: string; offsetMs: number };
    const base = DateTime.fromISO((await clock()).now)
      .setZone(TZ)
      .plus({ days: 1 })
      .startOf('hour');
    // The deliveries' bookings lie beyond the steps' ones: the clock moves never pass their reminders.
    let start = base.plus({ days: 10 });
    for (let i = 0; i < SAMPLES; i++) {
      start = start.plus({ hours: 1 });
      const from = receiver.arrivals.length;
      await book(0, start);
      const answered = Date.now();
      out.delivery.push((await receiver.next('ROOM_BOOK', from)).at - answered);
    }
    start = base;
    for (let i = 0; i < SAMPLES; i++) {
      start = start.plus({ hours: 1 });
      const due = start.toMillis() - PRE_START_MINUTES * 60_000;
      await call(writer.url, 'POST', '/ops/v1/clock', { set: new Date(due - STEP_LEAD_MS).toISOString() });
      // The other instance reads the moved clock within its 1 s settings poll.
      if (writer !== runner) await new Promise((r) => setTimeout(r, 1_200));
      const offset = (await clock()).offsetMs;
      const from = receiver.arrivals.length;
      await book(1, start);
      // A create slower than STEP_LEAD_MS (a loaded machine) books after its reminder's moment: none is sent.
      const reminder = await receiver.next('ROOM_REMINDER', from, 15_000).catch(() => null);
      if (reminder) out.step.push(reminder.at + offset - due);
      else console.log(`${setup}: a step sample missed (the create took longer than ${STEP_LEAD_MS} ms)`);
    }
  } finally {
    if (writer !== runner) await writer.stop();
    await runner.stop();
    await receiver.close();
    await db.drop();
  }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};

async function main(): Promise<void> {
  const here = modulePath('..', import.meta.url);
  const trees: [string, string][] = [['this tree', here], ...(BASELINE ? ([['baseline', BASELINE]] as [string, string][]) : [])];
  const results = new Map<string, Figures>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const setup of SETUPS) {
      // Interleaved: the trees alternate within a round, their order flipped every other round.
      const order = round % 2 ? [...trees].reverse() : trees;
      for (const [label, root] of order) {
        const key = `${setup} | ${label}`;
        if (!results.has(key)) results.set(key, { delivery: [], step: [] });
        await measure(root, setup, results.get(key)!);
        console.log(`round ${round + 1} ${key} done; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
        table(results);
      }
    }
  }
}

/** The figures so far (printed after every measurement: a long run that fails late keeps what it had). */
function table(results: Map<string, Figures>): void {
  console.log(`\nms after falling due (${SAMPLES} samples × ${ROUNDS} rounds each); load ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  console.log('| setup | code | first delivery p50 | p95 | lifecycle step p50 | p95 |');
  console.log('|---|---|---|---|---|---|');
  for (const [key, f] of results) {
    const [setup, code] = key.split(' | ');
    const r = (xs: number[], q: number) => Math.round(quantile(xs, q));
    console.log(`| ${setup} | ${code} | ${r(f.delivery, 0.5)} | ${r(f.delivery, 0.95)} | ${r(f.step, 0.5)} | ${r(f.step, 0.95)} |`);
  }
  // The tails themselves: a p95 of a few dozen samples is one or two of them.
  const worst = (xs: number[]) =>
    [...xs]
      .sort((a, b) => b - a)
      .slice(0, 5)
      .map(Math.round)
      .join(', ');
  for (const [key, f] of results) console.log(`worst (${key}): first delivery ${worst(f.delivery)}; step ${worst(f.step)}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
