/**
 * Costs that stay flat as data grows (issue 30, section 3), per engine and per size N (bookings):
 *   1. a throwaway database, migrated by the service's start (its own process, no background workers), the
 *      site of bench:analytics (1,000 rooms) and a webhook listener applied through POST /ops/v1/apply;
 *   2. N bookings with their history, slots, timers, events and deliveries by bulk SQL on the bench's own
 *      connection (bench/lib/scale-fill.ts: what grows is the history older than 31 days; the last 30 days,
 *      the next 14 and the due work are the same at every size), then a look through GET /meetings that a
 *      filled day reads as stored;
 *   3. two phases: without migration 019's indexes (reverted by the probe) and with them (its `up` timed:
 *      what the migration costs on a table of that size). In each, one request at a time from the load
 *      process: POST /meetings (distinct free slots), GET /meeting-rooms (windows over the next 7 days),
 *      GET /meetings (a day of the project, limit 100), a room's calendar feed; and from the probe process
 *      (bench/lib/scale-probe.ts, the service's repositories): the job runner's due timers and due
 *      deliveries, the console change stream's booking and delivery polls and its start (latest change);
 *      then the service's RSS. Plans (EXPLAIN) of the probed reads and the feed's read are printed.
 * Prints per engine and phase a table figure × size with the ratio largest / smallest (target ≤ 1.5).
 *
 *   npm run bench:scale                                                 # sqlite, 10k 100k 1M
 *   BENCH_ENGINES=sqlite,postgres BENCH_SIZES=10000,100000 npm run bench:scale
 *   BENCH_SCALE_REPS=200 (requests per figure and phase; the default: a p95 of 30 is the second-worst sample) BENCH_SCALE_CREATES=100
 */
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { SecretBox } from '../src/platform/crypto/secrets.js';
import { BENCH_OPS_TOKEN } from './support.js';
import { modulePath, startChild, type Child } from './lib/children.js';
import { benchEngines, createBenchDatabase, type Engine } from './lib/databases.js';
import { environmentLine, loadAverageNow, runBench, type BenchContext } from './lib/harness.js';
import type { LoadResult, LoadSpec } from './lib/load-main.js';
import { quantile } from './lib/driver.js';
import { startLoad, type ServiceReady } from './lib/subjects.js';
import { APP_ID, APP_SECRET, ROOMS, TZ, analyticsSite, openWriter, type BulkWriter } from './lib/analytics-fill.js';
import { RECENT, SCALE_WEBHOOK, fillScale, type ScaleCounts, type ScaleIds } from './lib/scale-fill.js';
import { PROBES } from './lib/scale-names.js';

const SIZES = (process.env.BENCH_SIZES || '10000,100000,1000000').split(',').map((s) => Math.round(Number(s)));
if (SIZES.some((n) => !(n >= 5000))) throw new Error('BENCH_SIZES: sizes of at least 5000 bookings');
const REPS = Math.max(5, Math.round(Number(process.env.BENCH_SCALE_REPS || 200)));
const CREATES = Math.max(5, Math.round(Number(process.env.BENCH_SCALE_CREATES || 100)));
const PHASES = (process.env.BENCH_SCALE_PHASES || 'before,after').split(',') as Phase[];
const TARGET = 1.5;
type Phase = 'before' | 'after';

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Http {
  url: string;
  call(method: string, path: string, o?: { body?: unknown; token?: string }): Promise<{ status: number; text: string }>;
}

const httpOf = (url: string): Http => ({
  url,
  async call(method, path, o = {}) {
    const send = () =>
      fetch(url + path, {
        method,
        signal: AbortSignal.timeout(120_000),
        headers: { ...(o.body ? { 'content-type': 'application/json' } : {}), ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) },
        body: o.body ? JSON.stringify(o.body) : undefined,
      });
    // A keep-alive connection left idle through the fill may have been closed by the service: one more try on a new one.
    const res = await send().catch(() => new Promise((resolve) => setTimeout(resolve, 200)).then(send));
    return { status: res.status, text: await res.text() };
  },
});

async function must(r: Promise<{ status: number; text: string }>, status: number, what: string): Promise<any> {
  const res = await r;
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 800)}`);
  return JSON.parse(res.text);
}

/** Site, app token, the ids the fill needs and the room feed's path. */
async function prepare(svc: Http, writer: BulkWriter) {
  const site = { ...analyticsSite(), webhooks: [SCALE_WEBHOOK] };
  const applied = await must(svc.call('POST', '/ops/v1/apply', { body: site, token: BENCH_OPS_TOKEN }), 200, 'apply');
  const ids = applied.data.idsByKind as Record<string, Record<string, string>>;
  const key = (await writer.exec('select value from settings where name = $1', ['dev_secrets_key']))[0]?.value as string;
  const scaleIds: ScaleIds = {
    projectId: ids.projects!.p!,
    roomIds: Array.from({ length: ROOMS }, (_, i) => ids.rooms![`r${i}`]!),
    organizerIds: Object.values(ids.users!),
    webhookId: ids.webhooks!.hook!,
    pinEnc: new SecretBox(Buffer.from(key, 'hex')).seal('482913'),
  };
  const body = { grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET };
  const bearer = (await must(svc.call('POST', '/auth/accessToken', { body }), 201, 'token')).access_token as string;
  const feedRoom = scaleIds.roomIds[7]!;
  const feed = await must(svc.call('GET', `/ops/v1/calendar-sync/rooms/${feedRoom}/feed`, { token: BENCH_OPS_TOKEN }), 200, 'feed');
  return { ids: scaleIds, bearer, feedRoom, feedPath: new URL(feed.data.url as string).pathname };
}

type Prepared = Awaited<ReturnType<typeof prepare>>;

/** A filled day (31 days ago, else 9 days ago) of the project through GET /meetings, against the database. */
async function lookAtADay(svc: Http, writer: BulkWriter, p: Prepared, now: number, n: number): Promise<string> {
  const day = DateTime.fromMillis(now, { zone: TZ })
    .startOf('day')
    .minus({ days: n > RECENT ? 31 : 9 });
  const [from, to] = [day.toMillis(), day.plus({ days: 1 }).toMillis()];
  const q = `from=${encodeURIComponent(new Date(from).toISOString())}&to=${encodeURIComponent(new Date(to).toISOString())}`;
  const res = await must(
    svc.call('GET', `/meetings?${q}&projectId=${p.ids.projectId}&limit=1000`, { token: p.bearer }),
    200,
    'GET /meetings',
  );
  const listed = res.data as { status: string }[];
  const total = Number(res.meta.total);
  const stored = Number(
    (
      await writer.exec('select count(*) as n from meetings where project_id = $1 and start_at >= $2 and start_at < $3', [
        p.ids.projectId,
        from,
        to,
      ])
    )[0]!.n,
  );
  const statuses = [...new Set(listed.map((b) => b.status))].join('/');
  if (total !== stored || stored === 0)
    throw new Error(`GET /meetings counted ${total} bookings on ${day.toISODate()}, the database holds ${stored}`);
  return `GET /meetings of a filled day (${day.toISODate()}): ${total} bookings (${statuses}; ${listed.length} on the first page), as stored`;
}

/** Figure name → samples (ms) or a single value. */
type Figures = Map<string, number>;

interface Measurement {
  phase: Phase;
  figures: Figures;
  migrationMs?: number;
  plans: string[];
}

function requestPaths(p: Prepared, now: number) {
  const today = DateTime.fromMillis(now, { zone: TZ }).startOf('day');
  const iso = (d: DateTime) => encodeURIComponent(d.toUTC().toISO()!);
  const searches = Array.from({ length: 21 }, (_, i) => {
    const from = today.plus({ days: 1 + (i % 7) }).set({ hour: 8 + ((i * 5) % 4), minute: (i % 2) * 30 });
    return `/meeting-rooms?projectId=${p.ids.projectId}&startDateTime=${iso(from)}&endDateTime=${iso(from.plus({ minutes: [30, 60, 90][i % 3]! }))}`;
  });
  const pages = Array.from({ length: 5 }, (_, i) => {
    const from = today.minus({ days: 1 + i });
    return `/meetings?projectId=${p.ids.projectId}&from=${iso(from)}&to=${iso(from.plus({ days: 1 }))}&limit=100`;
  });
  return { searches, pages };
}

/** The first weekday at least 20 days ahead (past the filled part), local. */
const createDay = (now: number) => {
  let d = DateTime.fromMillis(now, { zone: TZ }).startOf('day').plus({ days: 20 });
  while (d.weekday > 5) d = d.plus({ days: 1 });
  return d;
};

async function loadRun(load: Child, spec: LoadSpec, what: string): Promise<LoadResult> {
  const r = await load.call<LoadResult>('run', { spec });
  const good = Object.entries(r.statuses).every(([s]) => s.startsWith('2'));
  if (!good || r.errors) throw new Error(`${what}: statuses ${JSON.stringify(r.statuses)}, ${r.errors} errors`);
  return r;
}

interface Ctx {
  load: Child;
  probe: Child;
  service: Child<ServiceReady>;
  p: Prepared;
  now: number;
  /** Distinct slots used so far by creates (running across phases). */
  next: { i: number };
}

async function measureRequests(c: Ctx, f: Figures): Promise<void> {
  const url = c.service.ready.url;
  const headers = { authorization: `Bearer ${c.p.bearer}` };
  const { searches, pages } = requestPaths(c.p, c.now);
  const slots = {
    roomIds: c.p.ids.roomIds,
    firstDay: createDay(c.now).toISODate()!,
    zone: TZ,
    firstHour: 13,
    hoursPerDay: 6,
    minutes: 45,
    start: c.next.i,
  };
  const created = await loadRun(
    c.load,
    { url, method: 'POST', path: '/meetings', headers, slots, connections: 1, amount: CREATES },
    'create',
  );
  c.next.i += CREATES;
  f.set('create p50 ms', created.p50).set('create p95 ms', created.p95);
  const search = await loadRun(c.load, { url, paths: searches, headers, connections: 1, amount: REPS }, 'room search');
  f.set('room search p50 ms', search.p50).set('room search p95 ms', search.p95);
  const page = await loadRun(c.load, { url, paths: pages, headers, connections: 1, amount: REPS }, 'GET /meetings');
  f.set('GET /meetings page p50 ms', page.p50).set('GET /meetings page p95 ms', page.p95);
  const feed = await loadRun(c.load, { url, path: c.p.feedPath, connections: 1, amount: REPS }, 'room feed');
  f.set('room feed p50 ms', feed.p50).set('room feed p95 ms', feed.p95);
}

async function measureProbes(c: Ctx, f: Figures, plans: string[]): Promise<void> {
  for (const name of PROBES) {
    const projectId = c.p.ids.projectId;
    const samples = await c.probe.call<number[]>('time', { name, reps: REPS, now: Date.now(), projectId });
    f.set(`${name} p50 ms`, quantile(samples, 0.5)).set(`${name} p95 ms`, quantile(samples, 0.95));
    const plan = await c.probe.call<string[]>('plan', { name, now: Date.now(), projectId });
    plans.push(`${name}: ${plan.join(' | ')}`);
  }
  const feedPlan = await c.probe.call<string[]>('feedPlan', { roomId: c.p.feedRoom, projectId: c.p.ids.projectId, now: Date.now() });
  plans.push(`room feed: ${feedPlan.join(' | ')}`);
}

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

async function measurePhase(c: Ctx, phase: Phase): Promise<Measurement> {
  const migrationMs = await c.probe.call<number>('migration', { up: phase === 'after' });
  const figures: Figures = new Map();
  const plans: string[] = [];
  await measureRequests(c, figures);
  await measureProbes(c, figures, plans);
  figures.set('service RSS MB', rssMb(c.service.pid));
  return { phase, figures, plans, ...(phase === 'after' ? { migrationMs } : {}) };
}

interface SizeResult {
  n: number;
  counts: ScaleCounts;
  fillMs: number;
  phases: Measurement[];
}

async function startScaleService(ctx: BenchContext, engine: Engine, url: string) {
  const child = await startChild<ServiceReady>({
    name: `service:${engine}`,
    entry: modulePath('./lib/service-main.ts', import.meta.url),
    env: { BENCH_SERVICE_DATABASE_URL: url },
    readyTimeoutMs: 300_000,
  });
  ctx.defer(`stop service:${engine}`, () => child.stop());
  return child;
}

async function benchSize(ctx: BenchContext, load: Child, engine: Engine, n: number): Promise<SizeResult> {
  console.log(`\n[${engine}, ${n.toLocaleString('en')} bookings]`);
  const db = await createBenchDatabase(engine);
  ctx.defer(`drop ${db.where}`, () => db.drop());
  const service = await startScaleService(ctx, engine, db.url);
  const svc = httpOf(service.ready.url);
  const writer = await openWriter(engine, db.url);
  try {
    const p = await prepare(svc, writer);
    const now = Date.now();
    const t0 = performance.now();
    const counts = await fillScale(writer, engine, p.ids, n, now, (l) => console.log(l));
    // As a database that has lived with these rows: autovacuum has set the visibility map (index-only scans)
    // and gathered statistics. Without it, autovacuum works through the million new rows while the figures are taken.
    const fillMs = performance.now() - t0;
    if (engine === 'postgres') {
      const v0 = performance.now();
      await writer.exec('vacuum analyze');
      console.log(`  vacuum analyze: ${secs(performance.now() - v0)}`);
    }
    console.log(
      `  filled ${counts.bookings.toLocaleString('en')} bookings back to ${counts.oldest}: ${counts.histories.toLocaleString('en')} history entries, ` +
        `${counts.timers.toLocaleString('en')} timers, ${counts.events.toLocaleString('en')} events, ${counts.deliveries.toLocaleString('en')} deliveries in ${secs(fillMs)}`,
    );
    console.log(`  ${await lookAtADay(svc, writer, p, now, n)}`);
    const probe = await startChild({
      name: `probe:${engine}`,
      entry: modulePath('./lib/scale-probe.ts', import.meta.url),
      env: { BENCH_SCALE_DATABASE_URL: db.url },
    });
    try {
      const c: Ctx = { load, probe, service, p, now, next: { i: 0 } };
      const phases: Measurement[] = [];
      for (const phase of PHASES) {
        phases.push(await measurePhase(c, phase));
        console.log(`  ${phase}: measured; ${loadAverageNow()}`);
      }
      return { n, counts, fillMs, phases };
    } finally {
      await probe.stop();
    }
  } finally {
    await writer.close();
    await service.stop();
    await db.drop();
  }
}

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

function printPhase(engine: Engine, phase: Phase, results: SizeResult[]): boolean {
  const sizes = results.map((r) => r.n.toLocaleString('en'));
  const of = (r: SizeResult) => r.phases.find((m) => m.phase === phase)!;
  const names = [...of(results[0]!).figures.keys()];
  const label = phase === 'before' ? 'without migration 019' : 'with migration 019';
  console.log(`\n### ${engine}, ${label}\n`);
  console.log(`| figure | ${sizes.join(' | ')} | ${sizes.at(-1)} / ${sizes[0]} |`);
  console.log(`|---|${sizes.map(() => '---:|').join('')}---:|`);
  let ok = true;
  for (const name of names) {
    const values = results.map((r) => of(r).figures.get(name)!);
    const ratio = values.at(-1)! / values[0]!;
    const meets = ratio <= TARGET || (name.endsWith('ms') && values.at(-1)! < 1);
    ok &&= meets;
    console.log(`| ${name} | ${values.map(fmt).join(' | ')} | ${ratio.toFixed(2)}${meets ? '' : ' (over 1.5)'} |`);
  }
  if (phase === 'after')
    console.log(
      `\nmigration 019 (its up, in a transaction): ${results.map((r) => `${secs(of(r).migrationMs ?? 0)} at ${r.n.toLocaleString('en')}`).join(', ')}`,
    );
  console.log(`\nplans at ${sizes.at(-1)}:`);
  for (const line of of(results.at(-1)!).plans) console.log(`  ${line}`);
  return ok;
}

await runBench(async (ctx) => {
  const engines = benchEngines();
  console.log(environmentLine(engines.join(', ')));
  console.log(
    `sizes ${SIZES.join(', ')}; ${CREATES} creates and ${REPS} of each read per phase, one at a time; phases ${PHASES.join(', ')}`,
  );
  const load = await startLoad(ctx);
  let ok = true;
  for (const engine of engines) {
    const results: SizeResult[] = [];
    for (const n of SIZES) {
      results.push(await benchSize(ctx, load, engine, n));
      // The figures so far (a long run stopped early keeps them).
      if (results.length < SIZES.length) for (const phase of PHASES) printPhase(engine, phase, results);
    }
    for (const phase of PHASES) {
      const met = printPhase(engine, phase, results);
      if (phase === 'after') ok &&= met;
    }
  }
  console.log(`\n${loadAverageNow()}`);
  return ok;
});
