/**
 * Utilisation analytics over a year of a large building, per engine:
 *   1. a throwaway database (SQLite file / PostgreSQL database), migrated by the service's start, and the
 *      site document (bench/lib/analytics-fill.ts: 1,000 rooms, 20 floors, 4 zones, Asia/Bangkok) applied
 *      through POST /ops/v1/apply;
 *   2. 365 local days ending yesterday filled with bookings by bulk SQL (≈ 3 million at BENCH_SCALE=1;
 *      BENCH_SCALE=0.02 fills the last 7 days), then a look through the API that a filled day reads
 *      like real bookings;
 *   3. the rollups rebuilt from the bookings (`rebuildAnalytics`, as `npm run analytics:rebuild` does);
 *   4. GET /ops/v1/analytics/utilisation over the whole filled range for every groupBy, with a floor
 *      filter, a single-room filter and the CSV of the rooms, from the load process (one request at a
 *      time): BENCH_ANALYTICS_ROUNDS (15) rounds, each query once per round in a rotating order, after
 *      one unmeasured round; median and p95 per query against the 300 ms target.
 * The service runs in its own process, without its background workers.
 *
 *   npm run bench:analytics                                   # SQLite
 *   BENCH_ENGINES=sqlite,postgres npm run bench:analytics
 *   BENCH_SCALE=0.02 BENCH_ENGINES=sqlite,postgres npm run bench:analytics
 */
import { DateTime } from 'luxon';
import { openStorage } from '../src/platform/db/database.js';
import { systemClock } from '../src/platform/clock/clock.js';
import { rebuildAnalytics } from '../src/modules/analytics/index.js';
import { SecretBox } from '../src/platform/crypto/secrets.js';
import { BENCH_OPS_TOKEN } from './support.js';
import { modulePath, startChild, type Child } from './lib/children.js';
import { benchEngines, createBenchDatabase, type BenchDatabase, type Engine } from './lib/databases.js';
import { environmentLine, loadAverageNow, median, runBench, type BenchContext } from './lib/harness.js';
import type { LoadResult } from './lib/load-main.js';
import { quantile } from './lib/driver.js';
import { startLoad, type ServiceReady } from './lib/subjects.js';
import {
  APP_ID,
  APP_SECRET,
  ROOMS,
  TZ,
  analyticsSite,
  fillBookings,
  filledDays,
  openWriter,
  type FillCounts,
} from './lib/analytics-fill.js';

const SCALE = Number(process.env.BENCH_SCALE || 1);
if (!(SCALE > 0 && SCALE <= 1)) throw new Error('BENCH_SCALE must be in (0, 1]');
const DAYS = Math.max(1, Math.round(365 * SCALE));
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ANALYTICS_ROUNDS || 15)));
const TARGET_MS = 300;

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

interface Service {
  child: Child<ServiceReady>;
  url: string;
  http(method: string, path: string, o?: { body?: unknown; token?: string; accept?: string }): Promise<{ status: number; text: string }>;
}

async function startAnalyticsService(ctx: BenchContext, db: BenchDatabase): Promise<Service> {
  const child = await startChild<ServiceReady>({
    name: `service:${db.engine}`,
    entry: modulePath('./lib/service-main.ts', import.meta.url),
    env: { BENCH_SERVICE_DATABASE_URL: db.url },
    readyTimeoutMs: 300_000,
  });
  ctx.defer(`stop service:${db.engine}`, () => child.stop());
  console.log(`  service: pid ${child.pid}, ${child.ready.url}`);
  const url = child.ready.url;
  return {
    child,
    url,
    async http(method, path, o = {}) {
      // A keep-alive connection left idle through the fill may have been closed by the service: one more try on a new one.
      const send = () =>
        fetch(url + path, {
          signal: AbortSignal.timeout(120_000),
          method,
          headers: {
            ...(o.body ? { 'content-type': 'application/json' } : {}),
            ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
            ...(o.accept ? { accept: o.accept } : {}),
          },
          body: o.body ? JSON.stringify(o.body) : undefined,
        });
      const res = await send()
        .catch(() => new Promise((resolve) => setTimeout(resolve, 200)).then(send))
        .catch((err: Error) => {
          const running = child.pid && isRunning(child.pid) ? 'running' : 'not running';
          throw new Error(`${method} ${path}: ${err.message} (${String(err.cause)}; the service is ${running})`);
        });
      return { status: res.status, text: await res.text() };
    },
  };
}

interface Applied {
  projectId: string;
  roomIds: string[];
  floorIds: string[];
  organizerIds: string[];
}

async function applySite(svc: Service): Promise<Applied> {
  const applied = await svc.http('POST', '/ops/v1/apply', { body: analyticsSite(), token: BENCH_OPS_TOKEN });
  if (applied.status !== 200) throw new Error(`apply failed (${applied.status}): ${applied.text.slice(0, 1000)}`);
  const ids = (JSON.parse(applied.text) as { data: { idsByKind: Record<string, Record<string, string>> } }).data.idsByKind;
  return {
    projectId: ids.projects!.p!,
    roomIds: Array.from({ length: ROOMS }, (_, i) => ids.rooms![`r${i}`]!),
    floorIds: Object.keys(ids.floors!)
      .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)))
      .map((k) => ids.floors![k]!),
    organizerIds: Object.values(ids.users!),
  };
}

/** A filled weekday of one room through GET /meetings, against what the database holds for it. */
async function lookAtADay(
  svc: Service,
  applied: Applied,
  days: DateTime[],
  count: (roomId: string, from: number, to: number) => Promise<number>,
) {
  const day = [...days].reverse().find((d) => d.weekday <= 5) ?? days.at(-1)!;
  const token = await svc.http('POST', '/auth/accessToken', {
    body: { grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET },
  });
  if (token.status !== 201) throw new Error(`token failed (${token.status}): ${token.text}`);
  const bearer = (JSON.parse(token.text) as { access_token: string }).access_token;
  const roomId = applied.roomIds[7]!;
  const from = day.toUTC().toISO()!;
  const to = day.plus({ days: 1 }).toUTC().toISO()!;
  const res = await svc.http(
    'GET',
    `/meetings?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&meetingRoomId=${roomId}&limit=50`,
    {
      token: bearer,
    },
  );
  if (res.status !== 200) throw new Error(`GET /meetings -> ${res.status}: ${res.text.slice(0, 500)}`);
  const listed = (JSON.parse(res.text) as { data: { status: string; startDateTime: string; endDateTime: string }[] }).data;
  const stored = await count(roomId, day.toMillis(), day.plus({ days: 1 }).toMillis());
  const byStatus = listed.reduce<Record<string, number>>((m, b) => ({ ...m, [b.status]: (m[b.status] ?? 0) + 1 }), {});
  const sample = listed
    .slice(0, 3)
    .map(
      (b) =>
        `${DateTime.fromISO(b.startDateTime, { zone: TZ }).toFormat('HH:mm')}-${DateTime.fromISO(b.endDateTime, { zone: TZ }).toFormat('HH:mm')} ${b.status}`,
    );
  console.log(
    `  GET /meetings for Room 0007 on ${day.toISODate()}: ${listed.length} bookings (${Object.entries(byStatus)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')}); the database holds ${stored}; first: ${sample.join('; ')}`,
  );
  return listed.length === stored && stored > 0;
}

export interface Query {
  label: string;
  path: string;
  accept?: string;
}

function queries(applied: Applied, days: DateTime[]): Query[] {
  const base = `/ops/v1/analytics/utilisation?project=${applied.projectId}&from=${days[0]!.toISODate()}&to=${days.at(-1)!.toISODate()}`;
  return [
    ...['project', 'zone', 'floor', 'asset', 'day', 'week', 'month', 'hourOfWeek'].map((g) => ({
      label: `groupBy=${g}`,
      path: `${base}&groupBy=${g}`,
    })),
    { label: 'groupBy=asset, floor=3F', path: `${base}&groupBy=asset&floor=${applied.floorIds[2]}` },
    { label: 'groupBy=day, one room', path: `${base}&groupBy=day&asset=${applied.roomIds[7]}` },
    { label: 'groupBy=asset, CSV', path: `${base}&groupBy=asset`, accept: 'text/csv' },
  ];
}

interface QueryFigures {
  label: string;
  rows: number;
  bytes: number;
  samples: number[];
  failures: number;
  /** The first row of a JSON answer. */
  first?: Record<string, unknown>;
}

/** Each query once (its answer checked), then ROUNDS rounds of every query in a rotating order, from the load process. */
async function measureQueries(load: Child, svc: Service, list: Query[]): Promise<QueryFigures[]> {
  const figures: QueryFigures[] = [];
  for (const q of list) {
    const r = await svc.http('GET', q.path, { token: BENCH_OPS_TOKEN, accept: q.accept });
    if (r.status !== 200) throw new Error(`${q.label}: ${r.status} ${r.text.slice(0, 500)}`);
    const data = q.accept ? undefined : (JSON.parse(r.text) as { data: Record<string, unknown>[] }).data;
    const rows = data ? data.length : r.text.trimEnd().split('\n').length - 1;
    figures.push({ label: q.label, rows, bytes: Buffer.byteLength(r.text), samples: [], failures: 0, first: data?.[0] });
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < list.length; k++) {
      const i = (k + round) % list.length;
      const q = list[i]!;
      const headers: Record<string, string> = { authorization: `Bearer ${BENCH_OPS_TOKEN}`, ...(q.accept ? { accept: q.accept } : {}) };
      const r = await load.call<LoadResult>('run', { spec: { url: svc.url, path: q.path, headers, connections: 1, amount: 1 } });
      if (r.statuses[200] !== 1) figures[i]!.failures++;
      figures[i]!.samples.push(r.max);
    }
  }
  return figures;
}

interface EngineResult {
  engine: Engine;
  days: number;
  counts: FillCounts;
  fillMs: number;
  rebuildMs: number;
  queries: QueryFigures[];
  dayLooksReal: boolean;
}

async function benchEngine(ctx: BenchContext, load: Child, engine: Engine): Promise<EngineResult> {
  console.log(`\n[${engine}]`);
  const db = await createBenchDatabase(engine);
  ctx.defer(`drop ${db.where}`, () => db.drop());
  console.log(`  ${db.where}`);
  const svc = await startAnalyticsService(ctx, db);
  const applied = await applySite(svc);
  const writer = await openWriter(engine, db.url);
  ctx.defer(`close the ${engine} writer`, () => writer.close());
  const key = (await writer.exec('select value from settings where name = $1', ['dev_secrets_key']))[0]?.value as string;
  const pinEnc = new SecretBox(Buffer.from(key, 'hex')).seal('482913');

  const days = filledDays(DAYS);
  console.log(`  filling ${days.length} days (${days[0]!.toISODate()} … ${days.at(-1)!.toISODate()}), ${ROOMS} rooms`);
  const t0 = performance.now();
  const counts = await fillBookings(writer, engine, { ...applied, pinEnc }, days, (line) => console.log(line));
  if (engine === 'postgres') await writer.exec('analyze');
  const fillMs = performance.now() - t0;
  console.log(
    `  filled ${counts.bookings.toLocaleString('en')} bookings, ${counts.histories.toLocaleString('en')} history entries, ` +
      `${counts.slots.toLocaleString('en')} slots in ${secs(fillMs)}`,
  );
  const dayLooksReal = await lookAtADay(svc, applied, days, async (roomId, from, to) => {
    const rows = await writer.exec('select count(*) as n from meetings where room_id = $1 and start_at >= $2 and start_at < $3', [
      roomId,
      from,
      to,
    ]);
    return Number(rows[0]!.n);
  });

  const rebuildMs = await rebuild(db);
  // PostgreSQL's autovacuum would analyze the fresh rollups within a minute; do it before measuring.
  if (engine === 'postgres') await writer.exec('analyze');
  const status = await svc.http('GET', `/ops/v1/analytics/status?project=${applied.projectId}`, { token: BENCH_OPS_TOKEN });
  console.log(`  GET /ops/v1/analytics/status after the rebuild: ${status.status} ${status.text.slice(0, 200)}`);
  const figures = await measureQueries(load, svc, queries(applied, days));
  return { engine, days: days.length, counts, fillMs, rebuildMs, queries: figures, dayLooksReal };
}

/** The rollups recomputed from the bookings, in this process (as npm run analytics:rebuild does). */
async function rebuild(db: BenchDatabase): Promise<number> {
  const storage = await openStorage(db.url);
  try {
    const t0 = performance.now();
    const report = await rebuildAnalytics({ db: storage.db, engine: storage.engine, clock: systemClock, realClock: systemClock });
    const ms = performance.now() - t0;
    console.log(`  rebuild: ${secs(ms)}${report && typeof report === 'object' ? ` ${JSON.stringify(report)}` : ''}`);
    return ms;
  } finally {
    await storage.close();
  }
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;

function printEngine(r: EngineResult): boolean {
  const c = r.counts;
  let ok = r.dayLooksReal;
  console.log(`\n### ${r.engine}: ${r.days} days × ${ROOMS} rooms, ${c.bookings.toLocaleString('en')} bookings\n`);
  console.log(
    `fill ${secs(r.fillMs)} (${c.histories.toLocaleString('en')} history entries, ${c.slots.toLocaleString('en')} slots; ` +
      `checked in ${pct(c.checkedIn, c.bookings)} of which ${pct(c.checkedOutEarly, c.checkedIn)} checked out early, no-shows ${pct(c.noShows, c.bookings)}, ` +
      `cancelled before the start ${pct(c.cancelledBefore, c.bookings)}, after it ${pct(c.cancelledAfterStart, c.bookings)}); ` +
      `rebuild ${secs(r.rebuildMs)}; a filled day through GET /meetings: ${r.dayLooksReal ? 'as stored' : 'DIFFERS'}\n`,
  );
  const whole = r.queries.find((q) => q.label === 'groupBy=project')?.first;
  if (whole) {
    const f = (k: string) => (typeof whole[k] === 'number' ? Number((whole[k] as number).toFixed(4)) : whole[k]);
    const same = whole.bookings === c.bookings;
    ok &&= same;
    console.log(
      `the whole range (groupBy=project): bookings ${f('bookings')} (filled ${c.bookings}: ${same ? 'same' : 'DIFFERENT'}), checkIns ${f('checkIns')}, ` +
        `noShows ${f('noShows')}, cancellations ${f('cancellations')}, availableMinutes ${f('availableMinutes')}, utilisation ${f('utilisation')}, ` +
        `occupancy ${f('occupancy')}, noShowRate ${f('noShowRate')}\n`,
    );
  }
  console.log(`| query (${ROUNDS} rounds) | rows | bytes | median ms | p95 ms | max ms | failures | < ${TARGET_MS} ms |`);
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const q of r.queries) {
    const p95 = quantile(q.samples, 0.95);
    const meets = p95 < TARGET_MS && q.failures === 0;
    ok &&= meets;
    console.log(
      `| ${q.label} | ${q.rows} | ${q.bytes} | ${median(q.samples).toFixed(1)} | ${p95.toFixed(1)} | ${Math.max(...q.samples).toFixed(1)} | ${q.failures} | ${meets ? 'yes' : 'NO'} |`,
    );
  }
  return ok;
}

await runBench(async (ctx) => {
  const started = performance.now();
  const engines = benchEngines();
  console.log(environmentLine(engines.join(', ')));
  console.log(`BENCH_SCALE ${SCALE}: ${DAYS} days; ${ROUNDS} rounds per query, one request at a time; target p95 < ${TARGET_MS} ms`);
  const load = await startLoad(ctx);
  const results: EngineResult[] = [];
  for (const engine of engines) results.push(await benchEngine(ctx, load, engine));
  let ok = true;
  for (const r of results) ok = printEngine(r) && ok;
  console.log(`\n${environmentLine(engines.join(', '))}`);
  console.log(
    `${loadAverageNow()}; total ${secs(performance.now() - started)} — ${ok ? 'every query under the target' : 'SOME CHECK FAILED'}`,
  );
  return ok;
});
