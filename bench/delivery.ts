/**
 * Webhook delivery throughput and lifecycle-timer lateness, in one run (about a
 * minute on SQLite).
 *
 *   A. Delivery throughput, measured from outside: the receiver, the service and
 *      a bare loop run as separate processes; this one only drives them.
 *      A1 (BENCH_ROUNDS interleaved rounds, default 3; medians): N deliveries to
 *      one listener are queued through the outbox (Outbox.emit, in one
 *      transaction, as a state change would) while the job runner is stopped;
 *      then the service's runner delivers them, timed until the receiver has
 *      every delivery id, with the service process's CPU time
 *      (process.cpuUsage) per delivery, and the receiver's and (PostgreSQL)
 *      the local database server's CPU per delivery (/proc; every process
 *      named postgres). The bare loop signs the same bodies with
 *      the same signing code and POSTs them to the same receiver over a
 *      keep-alive agent, PER_LISTENER_CONCURRENCY at a time: the ceiling for one
 *      listener. A2: four listeners on each event. A3: a hanging listener with a
 *      backlog plus a healthy one (does the healthy listener still get its
 *      deliveries?).
 *   B. lifecycle with 100,000 scheduled bookings, in this process (500,000
 *      timers, inserted in big transactions with the same rows MeetingRepository
 *      and the scheduling helpers write, then ANALYZE): B1 the sandbox clock
 *      (POST /ops/v1/clock) jumps so the next 1,000 and then 5,000 pending steps
 *      are due, timed until the call returns (everything applied); B2 service
 *      time jumps silently over 2,000 steps and the background worker (1 s poll)
 *      applies them; B3 steps fall due one by one while the background worker
 *      polls: lateness = service time when applied − due_at (ms; the sandbox
 *      offset is constant, so these are real milliseconds).
 *
 *   npm run bench:delivery
 *   BENCH_EVENTS=5000 BENCH_BOOKINGS=20000 BENCH_ROUNDS=5 npm run bench:delivery   (BENCH_WARMUP: deliveries sent first, unmeasured; default BENCH_EVENTS)
 *   BENCH_PART=A npm run bench:delivery                 (A only; BENCH_PART=B for B only)
 *   BENCH_STATEMENTS=1 npm run bench:delivery          (also the service's statements per delivery, by SQL text)
 *   BENCH_PROFILE_DIR=/tmp/prof npm run bench:delivery  (CPU profiles of the last A1 round of the service and of the bare loop, and their top self time)
 *   BENCH_DATABASE_URL=postgres://…/empty_db npm run bench:delivery   (an empty database)
 */
import { plainBookingColumns } from '../src/modules/booking/index.js';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { BENCH_OPS_TOKEN, startBenchService } from './support.js';
import type { Database } from '../src/platform/db/schema.js';
import { writeTransaction } from '../src/platform/db/transactions.js';
import { MeetingRepository, storedMeeting, type MeetingRow, type NewMeeting } from '../src/modules/booking/meeting-repository.js';
import { bookingFacts } from '../src/modules/booking/booking-change.js';
import { scopeOf } from '../src/modules/booking/booking-changes.js';
import { LIFECYCLE_JOB } from '../src/modules/lifecycle/jobs.js';
import { planTimers } from '../src/modules/lifecycle/rules/timer-plan.js';
import { resolveMeetingConfig } from '../src/modules/booking/rules/asset-config.js';
import type { TimerRow } from '../src/modules/lifecycle/timer-repository.js';
import { DELIVERY_JOB, PER_LISTENER_CONCURRENCY } from '../src/modules/webhooks/jobs.js';
import { deliveryHeaders } from '../src/modules/webhooks/signing.js';
import { systemClock, type OffsetClock } from '../src/platform/clock/clock.js';
import { loadConfig } from '../src/platform/config.js';
import { openStorage } from '../src/platform/db/database.js';
import { createServices } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { JobRunner } from '../src/platform/jobs/runner.js';
import { newId } from '../src/platform/ids.js';
import type { Services } from '../src/services.js';

const EVENTS = Number(process.env.BENCH_EVENTS || 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
/** Deliveries sent once by both sides before the rounds (JIT, caches, connections), not measured. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? EVENTS);
const BOOKINGS = Number(process.env.BENCH_BOOKINGS || 100_000);
const PART = (process.env.BENCH_PART || 'AB').toUpperCase();
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR || '';
/** Count the service's statements per delivery (Kysely's query log costs CPU, so it is off unless asked for). */
const COUNT_STATEMENTS = process.env.BENCH_STATEMENTS === '1';
const ROOMS = 200;
const TZ = 'Asia/Bangkok';
const SECRET = 'bench-webhook-secret-0123456789abcdef0123';
const MIN = 60_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pct = (xs: number[], q: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

/** Starts V8's CPU profiler in this process; the returned function stops it and writes the profile (a .cpuprofile file). */
async function startProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return async (file) => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    writeFileSync(file, JSON.stringify(profile));
  };
}

// ---------------------------------------------------------------------------
// Child processes: a tiny request/answer protocol over the IPC channel.
// ---------------------------------------------------------------------------
interface Request {
  id: number;
  cmd: string;
  [arg: string]: unknown;
}

/** In a child: answers the parent's requests with `handlers`. */
function serve(handlers: Record<string, (req: any) => unknown>): void {
  process.on('message', (m: Request) => {
    Promise.resolve()
      .then(() => handlers[m.cmd]!(m))
      .then(
        (result) => process.send!({ id: m.id, result }),
        (err) => process.send!({ id: m.id, error: String((err as Error)?.stack ?? err) }),
      );
  });
  process.send!({ ready: true });
}

class Child {
  private seq = 0;
  private readonly waiting = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();

  private constructor(
    readonly role: string,
    private readonly proc: ChildProcess,
  ) {
    proc.on('message', (m: { id?: number; result?: unknown; error?: string }) => {
      const w = m.id === undefined ? undefined : this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id!);
      if (m.error) w.reject(new Error(`${role}: ${m.error}`));
      else w.resolve(m.result);
    });
    proc.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`${role} exited with ${code}`));
      this.waiting.clear();
    });
  }

  static start(role: 'receiver' | 'service' | 'bare', env: Record<string, string> = {}): Promise<Child> {
    const proc = fork(fileURLToPath(import.meta.url), [role], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env } });
    return new Promise((resolve, reject) => {
      proc.once('message', () => resolve(new Child(role, proc)));
      proc.once('exit', (code) => reject(new Error(`${role} exited with ${code} before it was ready`)));
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  call<T = any>(cmd: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.proc.send({ id, cmd, ...args });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) return resolve();
      this.proc.removeAllListeners('exit');
      this.proc.once('exit', () => resolve());
      this.proc.kill('SIGTERM');
    });
  }
}

// ---------------------------------------------------------------------------
// The receiver (its own process): answers 200 at once (or never, on /hang) and
// counts distinct delivery ids per path.
// ---------------------------------------------------------------------------
async function receiverMain(): Promise<void> {
  const ids = new Map<string, Set<string>>();
  const counts = new Map<string, number>();
  const waiters = new Set<{ path: string; n: number; done(): void }>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '';
      counts.set(path, (counts.get(path) ?? 0) + 1);
      if (path === '/hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return; // never answers: the attempt times out
      }
      const set = ids.get(path) ?? ids.set(path, new Set()).get(path)!;
      set.add(String(req.headers['x-service-delivery'] ?? ''));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      for (const w of waiters) if (w.path === path && set.size >= w.n) w.done();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  serve({
    port: () => (server.address() as AddressInfo).port,
    reset: ({ path }: { path: string }) => {
      ids.delete(path);
      counts.delete(path);
    },
    /** Resolves with how many distinct ids `path` has once it has `n`, or at the timeout. */
    waitFor: ({ path, n, timeoutMs }: { path: string; n: number; timeoutMs: number }) =>
      new Promise<number>((resolve) => {
        const w = {
          path,
          n,
          done: () => {
            clearTimeout(timer);
            waiters.delete(w);
            resolve(ids.get(path)?.size ?? 0);
          },
        };
        const timer = setTimeout(w.done, timeoutMs);
        waiters.add(w);
        if ((ids.get(path)?.size ?? 0) >= n) w.done();
      }),
    received: ({ path }: { path: string }) => counts.get(path) ?? 0,
    /** Drops the connections of unanswered requests (the hanging listener's attempts then fail at once). */
    dropHanging: () => {
      for (const res of hanging) res.destroy();
    },
  });
}

// ---------------------------------------------------------------------------
// The bare loop (its own process): the same bodies, signed with the same code,
// POSTed to the same receiver over a keep-alive agent, as many at once as one
// listener's budget.
// ---------------------------------------------------------------------------
interface BenchBody {
  id: string;
  type: string;
  projectId: string;
  body: string;
}

async function bareMain(): Promise<void> {
  const url = new URL(`${process.env.BENCH_RECEIVER_URL}/a1`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: PER_LISTENER_CONCURRENCY });
  const post = (headers: Record<string, string>, body: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  let bodies: BenchBody[] = [];
  serve({
    load: ({ file }: { file: string }) => {
      bodies = JSON.parse(readFileSync(file, 'utf8')) as BenchBody[];
    },
    go: async ({ profileFile }: { profileFile?: string }) => {
      const stop = profileFile ? await startProfile() : null;
      const cpu0 = process.cpuUsage();
      let next = 0;
      let refused = 0;
      await Promise.all(
        Array.from({ length: PER_LISTENER_CONCURRENCY }, async () => {
          while (next < bodies.length) {
            const d = bodies[next++];
            const headers = await deliveryHeaders({
              deliveryId: d.id,
              type: d.type,
              projectId: d.projectId,
              body: d.body,
              secret: SECRET,
              auth: { scheme: 'signature-only' },
              nowMs: Date.now(),
            });
            if ((await post(headers, d.body)) !== 200) refused++;
          }
        }),
      );
      const cpu = cpuMs(process.cpuUsage(cpu0));
      await stop?.(profileFile!);
      return { cpuMs: cpu, refused };
    },
  });
}

// ---------------------------------------------------------------------------
// Site: project pb for the lifecycle (no listeners), projects a1..a3 for deliveries.
// ---------------------------------------------------------------------------
const openAllDay = {
  dayConfig: Object.fromEntries(
    ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => [d, { availableTime: { start: '00:00:00', end: '24:00:00' } }]),
  ),
};

function site(projects: string[], receiverUrl?: string) {
  return {
    brands: [{ key: 'b', name: 'Bench Brand' }],
    projects: projects.map((p) => ({
      key: p,
      brand: 'b',
      name: `Bench ${p}`,
      timezone: TZ,
      currency: 'THB',
      defaultCleanupMinutes: 0,
      bookingGridMinutes: 1,
    })),
    zones: projects.map((p) => ({ key: `z-${p}`, project: p, name: `Zone ${p}` })),
    floors: projects.map((p) => ({ key: `f-${p}`, zone: `z-${p}`, name: `Floor ${p}` })),
    rooms: projects.flatMap((p) =>
      p === 'pb'
        ? Array.from({ length: ROOMS }, (_, i) => ({
            key: `pb-r${i}`,
            floor: 'f-pb',
            name: `Room ${i}`,
            capacity: 8,
            cleanupMinutes: 0,
            config: openAllDay,
          }))
        : [{ key: `${p}-r`, floor: `f-${p}`, name: `Room ${p}`, capacity: 8, cleanupMinutes: 0, config: openAllDay }],
    ),
    users: [
      {
        key: 'u',
        email: 'bench@example.com',
        name: 'Bench Organizer',
        phone: '+66800000000',
        memberships: projects.map((p) => ({ project: p, role: 'member' })),
      },
    ],
    webhooks: receiverUrl
      ? [
          { key: 'a1-h', project: 'a1', url: `${receiverUrl}/a1`, secret: SECRET, events: ['ROOM_REMINDER'] },
          ...[0, 1, 2, 3].map((i) => ({
            key: `a2-h${i}`,
            project: 'a2',
            url: `${receiverUrl}/a2-${i}`,
            secret: SECRET,
            events: ['ROOM_REMINDER'],
          })),
          { key: 'a3-slow', project: 'a3', url: `${receiverUrl}/hang`, secret: SECRET, events: ['ROOM_ENDING_SOON'] },
          { key: 'a3-fast', project: 'a3', url: `${receiverUrl}/a3-fast`, secret: SECRET, events: ['ROOM_REMINDER'] },
        ]
      : [],
  };
}

/** A meetings row as MeetingService.create writes it (no attendees, no payment). */
function meetingRow(p: {
  id: string;
  projectId: string;
  roomId: string;
  organizerId: string;
  start: number;
  end: number;
  now: number;
}): NewMeeting {
  return {
    id: p.id,
    project_id: p.projectId,
    asset_kind: 'room',
    asset_id: p.roomId,
    room_id: p.roomId,
    desk_id: null,
    title: 'bench',
    body: '',
    start_at: p.start,
    end_at: p.end,
    booked_end_at: p.end,
    span_end_at: p.end,
    all_day: false,
    time_period: null,
    status: 'active',
    pin_enc: 'bench',
    pin_failures: 0,
    organizer_user_id: p.organizerId,
    organizer: { email: 'bench@example.com', name: 'Bench Organizer', checkInAt: null, checkOutAt: null } as NewMeeting['organizer'],
    attendees: [],
    ...plainBookingColumns(),
    created_at: p.now,
    updated_at: p.now,
  };
}

/** startBenchService (bench/support.ts), with an optional statement counter on the storage. */
async function startCountedService(onQuery?: (sql: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'booking-bench-'));
  const config = loadConfig({
    BOOKING_ENV: 'development',
    DEMO: '0',
    OPS_TOKEN: BENCH_OPS_TOKEN,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: process.env.BENCH_DATABASE_URL || join(dir, 'bench.sqlite'),
  });
  const storage = await openStorage(config.databaseUrl, { onQuery });
  const services = await createServices(config, storage);
  const app = await buildApp(services);
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    services,
    async call(method: string, path: string, body?: unknown, token?: string) {
      const res = await app.inject({
        method: method as 'POST',
        url: path,
        payload: body as object,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      return { status: res.statusCode, body: res.json() as any };
    },
    async close() {
      await app.close();
      await services.stop();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------
// The service (its own process): the real composition on its own database; the
// parent queues events through the outbox and starts and stops the job runner.
// ---------------------------------------------------------------------------
async function serviceMain(): Promise<void> {
  // Every statement the service runs, by SQL text, between `go` and `stop`.
  let tally: Map<string, number> | null = null;
  const svc = await startCountedService(COUNT_STATEMENTS ? (q) => tally?.set(q, (tally.get(q) ?? 0) + 1) : undefined);
  const { services } = svc;
  const db = services.storage.db as Kysely<Database>;
  const engine = services.storage.engine;
  const applied = await svc.call('POST', '/ops/v1/apply', site(['a1', 'a2', 'a3'], process.env.BENCH_RECEIVER_URL), BENCH_OPS_TOKEN);
  if (applied.status !== 200) throw new Error(`apply failed: ${JSON.stringify(applied.body)}`);
  const ids = applied.body.data.idsByKind;
  const organizerId: string = ids.users.u;
  const meetings = new MeetingRepository(db);

  const meetingIn = async (project: string) => {
    const now = services.clock.now();
    const id = newId(now);
    const start = now + 60 * MIN;
    await writeTransaction(db, engine, (trx) =>
      meetings.insertHeld(
        meetingRow({
          id,
          projectId: ids.projects[project],
          roomId: ids.rooms[`${project}-r`],
          organizerId,
          start,
          end: start + 30 * MIN,
          now,
        }),
        [
          {
            id,
            meeting_id: id,
            project_id: ids.projects[project],
            asset_id: ids.rooms[`${project}-r`],
            occurrence_index: 0,
            start_at: start,
            end_at: start + 30 * MIN,
          },
        ],
        trx,
      ),
    );
    return (await meetings.byId(id))!;
  };

  let cpu0 = process.cpuUsage();
  let stopProfile: ((file: string) => Promise<void>) | null = null;
  serve({
    emit: async ({ project, kind, n }: { project: string; kind: 'REMINDER' | 'ENDING_SOON'; n: number }) => {
      const m: MeetingRow = await meetingIn(project);
      const scope = scopeOf('room', (await services.catalogue.assetInContext('room', m.asset_id))!);
      const facts = bookingFacts(scope, m, { start: m.start_at, end: m.end_at });
      const t0 = performance.now();
      await writeTransaction(db, engine, async (trx) => {
        for (let i = 0; i < n; i++) await services.outbox.emit(trx, { meetingId: m.id, facts, detail: { kind }, at: services.clock.now() });
      });
      return performance.now() - t0;
    },
    /** Writes the pending deliveries of the a1 listener (what the bare loop sends) to `file`. */
    dumpBodies: async ({ file }: { file: string }) => {
      const rows = await db
        .selectFrom('deliveries')
        .select(['id', 'type', 'body'])
        .where('webhook_id', '=', ids.webhooks['a1-h'])
        .where('status', '=', 'pending')
        .execute();
      writeFileSync(file, JSON.stringify(rows.map((r) => ({ ...r, projectId: ids.projects.a1 }))));
      return rows.length;
    },
    go: async ({ profile }: { profile?: boolean }) => {
      if (profile) stopProfile = await startProfile();
      tally = new Map();
      cpu0 = process.cpuUsage();
      services.jobs.start();
      void services.jobs.poke(DELIVERY_JOB);
    },
    stop: async ({ profileFile }: { profileFile?: string }) => {
      await services.jobs.stop();
      const cpu = cpuMs(process.cpuUsage(cpu0));
      const statements = [...(tally ?? [])].sort((a, b) => b[1] - a[1]);
      tally = null;
      if (stopProfile) {
        await stopProfile(profileFile ?? join(tmpdir(), 'delivery-service.cpuprofile'));
        stopProfile = null;
      }
      const left = await db
        .selectFrom('deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('webhook_id', '=', ids.webhooks['a1-h'])
        .where('status', '!=', 'delivered')
        .executeTakeFirstOrThrow();
      return { cpuMs: cpu, undelivered: Number(left.n), statements };
    },
    close: async () => {
      await svc.close();
      setImmediate(() => process.exit(0));
    },
  });
}

/** The engine the service runs on (an empty PostgreSQL database when BENCH_DATABASE_URL is set). */
const ENGINE = process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite';

/**
 * CPU time (user + system, ms) of one process, or of every process of this machine named `postgres` (the
 * local database server, its backends included), from /proc.
 */
function procCpuMs(which: number | 'postgres'): number {
  const ticks = (pid: string) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      if (which === 'postgres' && name !== 'postgres') return 0;
      const f = stat.slice(close + 2).split(' ');
      return Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
    } catch {
      return 0; // exited meanwhile
    }
  };
  const total =
    which === 'postgres'
      ? readdirSync('/proc')
          .filter((d) => /^\d+$/.test(d))
          .reduce((a, d) => a + ticks(d), 0)
      : ticks(String(which));
  return total * 10; // USER_HZ = 100 on Linux
}

/** Top self time of a CPU profile (Chrome .cpuprofile), by function. */
function profileSummary(file: string, top = 20): string[] {
  const p = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    const cf = byId.get(id)!.callFrame;
    const where = cf.url
      ? `${cf.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/')}:${cf.lineNumber + 1}`
      : '';
    const key = `${cf.functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  const busy = total - (self.get('(idle)') ?? 0);
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, ms]) => `${fmt(ms, 0).padStart(6)} ms ${fmt((100 * ms) / busy, 1).padStart(5)} % of busy  ${k}`)
    .concat([`(profile: ${fmt(total)} ms, of which ${fmt(busy)} ms busy)`]);
}

// ---------------------------------------------------------------------------
// A. Delivery throughput (receiver, service and bare loop in their own processes)
// ---------------------------------------------------------------------------
async function partA(rows: string[][]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-delivery-'));
  const children: Child[] = [];
  try {
    const receiver = await Child.start('receiver');
    children.push(receiver);
    const env = { BENCH_RECEIVER_URL: `http://127.0.0.1:${await receiver.call<number>('port')}` };
    const [service, bare] = await Promise.all([Child.start('service', env), Child.start('bare', env)]);
    children.push(service, bare);
    const bodiesFile = join(dir, 'bodies.json');
    if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
    const profileFile = PROFILE_DIR ? join(PROFILE_DIR, `delivery-service-${Date.now()}.cpuprofile`) : '';
    const bareProfileFile = PROFILE_DIR ? join(PROFILE_DIR, `delivery-bare-${Date.now()}.cpuprofile`) : '';

    const timed = async (path: string, n: number, go: () => Promise<unknown>) => {
      await receiver.call('reset', { path });
      const done = receiver.call<number>('waitFor', { path, n, timeoutMs: 120_000 });
      const t0 = performance.now();
      await go();
      const got = await done;
      return { got, ms: performance.now() - t0 };
    };
    const service1 = { rate: [] as number[], cpu: [] as number[], db: [] as number[], rx: [] as number[] };
    const bare1 = { rate: [] as number[], cpu: [] as number[], rx: [] as number[] };
    // The receiver's CPU and (PostgreSQL) the local database server's, per delivery: what else the machine spends on it.
    const others = async <T>(go: () => Promise<T>) => {
      const rx0 = procCpuMs(receiver.pid);
      const db0 = ENGINE === 'postgres' ? procCpuMs('postgres') : 0;
      const r = await go();
      return { r, rxMs: procCpuMs(receiver.pid) - rx0, dbMs: ENGINE === 'postgres' ? procCpuMs('postgres') - db0 : 0 };
    };
    const perRound: string[] = [];
    let statements: [string, number][] = [];
    if (WARMUP > 0) {
      await service.call('emit', { project: 'a1', kind: 'REMINDER', n: WARMUP });
      await service.call('dumpBodies', { file: bodiesFile });
      await bare.call('load', { file: bodiesFile });
      await timed('/a1', WARMUP, () => service.call('go'));
      await service.call('stop');
      await timed('/a1', WARMUP, () => bare.call('go'));
    }
    for (let round = 0; round < ROUNDS; round++) {
      await service.call('emit', { project: 'a1', kind: 'REMINDER', n: EVENTS });
      if (round === 0) {
        await service.call('dumpBodies', { file: bodiesFile });
        await bare.call('load', { file: bodiesFile });
      }
      const last = round === ROUNDS - 1;
      const runService = async () => {
        const { r, rxMs, dbMs } = await others(() => timed('/a1', EVENTS, () => service.call('go', { profile: last && !!PROFILE_DIR })));
        service1.rx.push(rxMs / EVENTS);
        service1.db.push(dbMs / EVENTS);
        const s = await service.call<{ cpuMs: number; undelivered: number; statements: [string, number][] }>('stop', {
          profileFile: last ? profileFile : undefined,
        });
        if (r.got < EVENTS || s.undelivered)
          throw new Error(`service round ${round}: ${r.got}/${EVENTS} received, ${s.undelivered} undelivered`);
        if (last) statements = s.statements;
        service1.rate.push((EVENTS / r.ms) * 1000);
        service1.cpu.push(s.cpuMs / EVENTS);
      };
      const runBare = async () => {
        let b = { cpuMs: 0, refused: 0 };
        const { r, rxMs } = await others(() =>
          timed('/a1', EVENTS, async () => {
            b = await bare.call('go', { profileFile: last && PROFILE_DIR ? bareProfileFile : undefined });
          }),
        );
        bare1.rx.push(rxMs / EVENTS);
        if (r.got < EVENTS || b.refused) throw new Error(`bare round ${round}: ${r.got}/${EVENTS} received, ${b.refused} refused`);
        bare1.rate.push((EVENTS / r.ms) * 1000);
        bare1.cpu.push(b.cpuMs / EVENTS);
      };
      // Interleaved, and alternating which goes first, so drift on a shared machine hits both.
      if (round % 2 === 0) {
        await runService();
        await runBare();
      } else {
        await runBare();
        await runService();
      }
      perRound.push(`${fmt(service1.rate.at(-1)!)} vs ${fmt(bare1.rate.at(-1)!)}`);
    }
    const ratio = median(service1.rate) / median(bare1.rate);
    rows.push([
      `A1 deliveries, 1 listener (median of ${ROUNDS})`,
      `${EVENTS}`,
      fmt((EVENTS / median(service1.rate)) * 1000),
      fmt(median(service1.rate)),
      `service CPU ${fmt(median(service1.cpu), 3)} ms/delivery` +
        (ENGINE === 'postgres' ? `, database server ${fmt(median(service1.db), 3)}` : '') +
        `, receiver ${fmt(median(service1.rx), 3)}; rounds service vs bare: ${perRound.join(', ')}`,
    ]);
    rows.push([
      `A1 bare loop: sign + POST, keep-alive, ${PER_LISTENER_CONCURRENCY} at once (median of ${ROUNDS})`,
      `${EVENTS}`,
      fmt((EVENTS / median(bare1.rate)) * 1000),
      fmt(median(bare1.rate)),
      `bare CPU ${fmt(median(bare1.cpu), 3)} ms/request, receiver ${fmt(median(bare1.rx), 3)}; service/bare ratio ${fmt(ratio, 2)}`,
    ]);

    if (COUNT_STATEMENTS) {
      const total = statements.reduce((a, [, n]) => a + n, 0);
      console.log(`\nstatements of the service in the last A1 round: ${fmt(total / EVENTS, 2)} per delivery`);
      for (const [q, n] of statements.slice(0, 12))
        console.log(`  ${fmt(n / EVENTS, 3).padStart(7)}  ${q.replace(/\s+/g, ' ').slice(0, 150)}`);
    }
    {
      const n = Math.round(EVENTS / 4);
      const paths = [0, 1, 2, 3].map((i) => `/a2-${i}`);
      await service.call('emit', { project: 'a2', kind: 'REMINDER', n });
      for (const path of paths) await receiver.call('reset', { path });
      const done = Promise.all(paths.map((path) => receiver.call<number>('waitFor', { path, n, timeoutMs: 120_000 })));
      const t0 = performance.now();
      await service.call('go');
      const got = (await done).reduce((a, b) => a + b, 0);
      const ms = performance.now() - t0;
      const s = await service.call<{ cpuMs: number }>('stop');
      rows.push([
        'A2 deliveries, 4 listeners × 1 event',
        `${got}/${n * 4}`,
        fmt(ms),
        fmt((got / ms) * 1000),
        `${n} events; service CPU ${fmt(s.cpuMs / (n * 4), 3)} ms/delivery`,
      ]);
    }
    {
      // A listener that never answers (10 s timeout) with a backlog, then a healthy listener's events.
      const backlog = 300;
      const fast = 100;
      await receiver.call('reset', { path: '/a3-fast' });
      await receiver.call('reset', { path: '/hang' });
      await service.call('emit', { project: 'a3', kind: 'ENDING_SOON', n: backlog });
      await service.call('go');
      await sleep(50);
      const done = receiver.call<number>('waitFor', { path: '/a3-fast', n: fast, timeoutMs: 15_000 });
      const t0 = performance.now();
      await service.call('emit', { project: 'a3', kind: 'REMINDER', n: fast });
      const got = await done;
      const ms = performance.now() - t0;
      const hung = await receiver.call<number>('received', { path: '/hang' });
      await receiver.call('dropHanging');
      await service.call('stop');
      rows.push([
        'A3 healthy listener next to a hanging one',
        `${got}/${fast}`,
        fmt(ms),
        fmt((got / ms) * 1000),
        `hanging listener: ${backlog} queued, ${hung} attempts started (budget ${PER_LISTENER_CONCURRENCY}, 10 s timeout)`,
      ]);
    }
    await service.call('close').catch(() => undefined);
    if (profileFile) {
      console.log(`\nservice CPU profile of the last A1 round: ${profileFile}\ntop self time:`);
      for (const line of profileSummary(profileFile)) console.log(`  ${line}`);
      console.log(`\nbare loop CPU profile of the last round: ${bareProfileFile}\ntop self time:`);
      for (const line of profileSummary(bareProfileFile, 10)) console.log(`  ${line}`);
    }
  } finally {
    for (const c of children.reverse()) await c.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// B. Lifecycle with many scheduled bookings (in this process)
// ---------------------------------------------------------------------------
async function partB(rows: string[][]): Promise<void> {
  const svc = await startBenchService();
  const { services } = svc;
  const db = services.storage.db as Kysely<Database>;
  const engine = services.storage.engine;
  const applied = await svc.call('POST', '/ops/v1/apply', site(['pb']), BENCH_OPS_TOKEN);
  if (applied.status !== 200) throw new Error(`apply failed: ${JSON.stringify(applied.body)}`);
  const ids = applied.body.data.idsByKind;
  const organizerId: string = ids.users.u;
  const meetings = new MeetingRepository(db);
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
          slots.push({
            id,
            meeting_id: id,
            project_id: projectId,
            asset_id: roomId,
            occurrence_index: 0,
            start_at: start,
            end_at: window.end,
          });
          // The rows timerWrites.schedule writes for planTimers' plan.
          for (const t of planTimers(window, mc, { allDay: false, now: seedNow })) {
            timers.push({
              id: newId(seedNow),
              meeting_id: id,
              kind: t.kind,
              due_at: t.dueAt,
              window_start: start,
              window_end: window.end,
              status: 'pending',
              created_at: seedNow,
              fired_at: null,
            });
          }
        }
        await trx.insertInto('meetings').values(meetings.map(storedMeeting)).execute();
        await trx.insertInto('meeting_slots').values(slots).execute();
        for (let j = 0; j < timers.length; j += 2500)
          await trx
            .insertInto('timers')
            .values(timers.slice(j, j + 2500))
            .execute();
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
  rows.push([
    `B0 seed ${BOOKINGS} bookings`,
    `${totalTimers} timers`,
    fmt(seedMs),
    fmt((BOOKINGS / seedMs) * 1000),
    'bookings/s, chunks of 500 rows, 5,000 per transaction, then ANALYZE',
  ]);

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
    rows.push([
      label,
      `${fired} applied of ${due} due`,
      fmt(ms),
      fmt((fired / ms) * 1000),
      `steps/s; ${left} left pending; ${fmt(ms / Math.max(1, due), 2)} ms per due row`,
    ]);
  };
  /** The instant by which the next `n` pending rows are due. */
  const slice = async (n: number) => {
    const row = await db
      .selectFrom('timers')
      .select('due_at')
      .where('status', '=', 'pending')
      .orderBy('due_at')
      .offset(n - 1)
      .limit(1)
      .executeTakeFirstOrThrow();
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
    rows.push([
      'B2 background worker catches up a jump (2,000 rows due)',
      `${worker.samples.length} applied of ${due} due`,
      fmt(ms),
      fmt((worker.samples.length / ms) * 1000),
      'steps/s, includes the wait for the first poll (1 s interval)',
    ]);
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
      'B3 lateness, background worker (1 s poll)',
      `${late.length} steps in ${seconds} s`,
      fmt(performance.now() - t0),
      '-',
      `lateness ms p50 ${fmt(pct(late, 0.5))} p95 ${fmt(pct(late, 0.95))} max ${fmt(Math.max(...late))}`,
    ]);
  }

  await svc.close();
}

async function main(): Promise<void> {
  const rows: string[][] = [];
  console.log(`engine: ${ENGINE}; deliveries per run: ${EVENTS}; rounds: ${ROUNDS}; bookings: ${BOOKINGS}`);
  if (PART.includes('A')) await partA(rows);
  if (PART.includes('B')) await partB(rows);
  console.log('\n| scenario | count | ms | per s | notes |');
  console.log('|---|---:|---:|---:|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
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

const role = process.argv[2];
const run = role === 'receiver' ? receiverMain : role === 'service' ? serviceMain : role === 'bare' ? bareMain : main;
run().catch((err) => {
  console.error(err);
  process.exit(1);
});
