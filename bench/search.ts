/**
 * Search latency on a generated site: 1 project (Asia/Bangkok), 1,000 rooms and
 * 2,000 desks applied through POST /ops/v1/apply, and 100,000 bookings inserted
 * through MeetingRepository.insertHeld, spread over ±45 days around now
 * (bench/search-site.ts; the service process seeds itself before it listens).
 *
 * The service, a bare Fastify baseline and autocannon each run in their own
 * process; this process is the sequential sampling client. Measured:
 *   1. sequential latency (one request at a time, exact percentiles) of the
 *      windowed room search, a windowed desk page (limit 50) and the bare route,
 *      in rounds that alternate the order of the three, with the service's CPU
 *      per request;
 *   2. where the room search time goes: the full route against the same
 *      CatalogueService.searchRooms call made inside the service process (no HTTP),
 *      interleaved;
 *   3. throughput (autocannon) of the room search against the bare route,
 *      interleaved rounds, medians and ratio.
 *
 *   npm run bench:search
 *   BENCH_SAMPLES=300 BENCH_ROUNDS=5 BENCH_SECONDS=10 npm run bench:search
 *   BENCH_ENGINES=postgres npm run bench:search        (a throwaway PostgreSQL database)
 *   BENCH_ROOMS=200 BENCH_DESKS=400 BENCH_BOOKINGS=20000 npm run bench:search   (a smaller site)
 *
 * Targets: p95 of the room search and of the desk page each under 15 ms.
 */
import { requestMix } from './search-site.js';
import { benchEngines } from './lib/databases.js';
import {
  SETTINGS,
  environmentLine,
  interleavedRounds,
  loadAverageNow,
  median,
  printRatios,
  printRuns,
  printSummary,
  ratio,
  round2,
  round3,
  runBench,
  summarize,
  type Subject,
} from './lib/harness.js';
import { startBare, startLoad, startService } from './lib/subjects.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES || 200);
const WARMUP = Number(process.env.BENCH_WARMUP_REQUESTS || 50);
const TARGET_P95_MS = 15;

interface Percentiles {
  min: number;
  p50: number;
  p95: number;
  p99: number;
}

function percentiles(xs: number[]): Percentiles {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => round2(s[Math.min(s.length - 1, Math.floor(q * s.length))]);
  return { min: round2(s[0]), p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

await runBench(async (ctx) => {
  const started = performance.now();
  const engines = benchEngines();
  if (engines.length !== 1) throw new Error('bench:search runs one engine at a time (BENCH_ENGINES=sqlite or postgres)');
  const engine = engines[0];
  console.log(environmentLine(engine));
  console.log('(each party in its own process; the service without background workers; this process samples sequential latency)\n');

  const load = await startLoad(ctx);
  const bare = await startBare(ctx);
  const tSeed = performance.now();
  const svc = await startService(ctx, engine, { seed: 'search' });
  const site = svc.ready.site;
  if (!site) throw new Error('the service did not report its seeded site');
  console.log(`site seeded and service ready in ${((performance.now() - tSeed) / 1000).toFixed(1)} s: ${JSON.stringify(site.counts)}`);
  const { roomPath, deskPath, windowCount } = requestMix(site.projectId, site.today);
  const headers = site.headers;

  const get = async (url: string, h: Record<string, string> = headers) => {
    const res = await fetch(url, { headers: h });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${url} -> ${res.status}: ${text.slice(0, 500)}`);
    return text;
  };

  // Sanity and warm-up of all three routes.
  const stats = { rooms: 0, unbookable: 0, requests: 0, desksTotal: 0, roomBytes: 0 };
  for (let i = 0; i < WARMUP; i++) {
    const text = await get(svc.url + roomPath(i));
    const body = JSON.parse(text);
    stats.roomBytes += Buffer.byteLength(text);
    stats.requests++;
    stats.rooms += body.data.length;
    stats.unbookable += body.data.filter((r: { unavailableReason?: string }) => r.unavailableReason).length;
    stats.desksTotal += JSON.parse(await get(svc.url + deskPath(i))).meta.total;
    await get(`${bare.ready.url}/bare`, {});
  }
  console.log(
    `room search returns on average ${Math.round(stats.rooms / stats.requests)} rooms (${Math.round(stats.unbookable / stats.requests)} of them flagged unbookable); ` +
      `desk search matches on average ${Math.round(stats.desksTotal / stats.requests)} desks (page of 50); ` +
      `room search response ${(stats.roomBytes / stats.requests / 1e6).toFixed(2)} MB`,
  );

  // 1. Sequential latency, in rounds alternating the order of the routes.
  const routes = [
    { key: 'bare', label: 'bare Fastify GET /bare', server: bare, send: () => get(`${bare.ready.url}/bare`, {}) },
    { key: 'rooms', label: 'GET /meeting-rooms (windowed)', server: svc, send: (i: number) => get(svc.url + roomPath(i)) },
    { key: 'desks', label: 'GET /desks (windowed, limit=50)', server: svc, send: (i: number) => get(svc.url + deskPath(i)) },
  ];
  const samples = new Map(routes.map((r) => [r.key, [] as number[]]));
  const perRound: { round: number; key: string; p: Percentiles; cpu: number }[] = [];
  let n = 0;
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    const order = routes.map((_, i) => routes[(i + round - 1) % routes.length]);
    for (const r of order) {
      const xs: number[] = [];
      const cpu0 = await r.server.cpu();
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = performance.now();
        await r.send(n++);
        xs.push(performance.now() - t0);
      }
      const cpu1 = await r.server.cpu();
      samples.get(r.key)!.push(...xs);
      perRound.push({
        round,
        key: r.key,
        p: percentiles(xs),
        cpu: round3((cpu1.user - cpu0.user + cpu1.system - cpu0.system) / 1000 / SAMPLES),
      });
    }
  }
  const labelOf = (key: string) => routes.find((r) => r.key === key)?.label ?? key;
  console.log(`\n1. sequential latency, ${SAMPLES} requests per route and round, ${SETTINGS.rounds} rounds (${engine})\n`);
  console.log('| round | route | min ms | p50 ms | p95 ms | p99 ms | server CPU ms/req |');
  console.log('|---:|---|---:|---:|---:|---:|---:|');
  for (const r of perRound)
    console.log(`| ${r.round} | ${labelOf(r.key)} | ${r.p.min} | ${r.p.p50} | ${r.p.p95} | ${r.p.p99} | ${r.cpu} |`);
  console.log(`\nall rounds together (${SAMPLES * SETTINGS.rounds} requests per route), and the median of the rounds' p95\n`);
  console.log('| route | p50 ms | p95 ms | p99 ms | median p95 of the rounds | median server CPU ms/req | p50 / bare | p95 / bare |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  const pooled = new Map(routes.map((r) => [r.key, percentiles(samples.get(r.key)!)]));
  const bareP = pooled.get('bare')!;
  for (const r of routes) {
    const p = pooled.get(r.key)!;
    const mine = perRound.filter((x) => x.key === r.key);
    console.log(
      `| ${r.label} | ${p.p50} | ${p.p95} | ${p.p99} | ${round2(median(mine.map((x) => x.p.p95)))} | ${round3(median(mine.map((x) => x.cpu)))} | ` +
        `${(p.p50 / bareP.p50).toFixed(1)} | ${(p.p95 / bareP.p95).toFixed(1)} |`,
    );
  }
  for (const key of ['rooms', 'desks']) {
    const p95 = pooled.get(key)!.p95;
    console.log(
      `\n${labelOf(key)} p95 ${p95} ms: ${p95 < TARGET_P95_MS ? 'meets' : 'MISSES'} the ${TARGET_P95_MS} ms target (${engine}; ${loadAverageNow()})`,
    );
  }

  // 2. Where the room search time goes: the full route and the service call alone, interleaved.
  const breakdownRounds = Math.min(SAMPLES, 200);
  const full: number[] = [];
  const inProcess: number[] = [];
  for (let i = 0; i < breakdownRounds + 20; i++) {
    const t0 = performance.now();
    await get(svc.url + roomPath(i));
    const t1 = performance.now();
    const ms = await svc.call<number>('searchRooms', { path: roomPath(i), authorization: headers.authorization }, 60_000);
    if (i >= 20) {
      full.push(t1 - t0);
      inProcess.push(ms);
    }
  }
  console.log(`\n2. room search breakdown, interleaved, ${breakdownRounds} rounds after 20 warm-up\n`);
  console.log('| part | min ms | p50 ms | p95 ms |');
  console.log('|---|---:|---:|---:|');
  for (const [label, xs] of [
    ['GET /meeting-rooms (windowed), full route', full],
    ['CatalogueService.searchRooms in the service process', inProcess],
  ] as const) {
    const p = percentiles(xs);
    console.log(`| ${label} | ${p.min} | ${p.p50} | ${p.p95} |`);
  }

  // 3. Throughput of the room search (cycling through the windows) against the bare route.
  const subjects: Subject[] = [
    {
      key: 'bare',
      label: 'bare Fastify GET /bare',
      server: bare,
      spec: (seconds) => ({ url: bare.ready.url, path: '/bare', connections: SETTINGS.connections, duration: seconds }),
    },
    {
      key: 'rooms',
      label: 'GET /meeting-rooms (windowed)',
      server: svc,
      spec: (seconds) => ({
        url: svc.url,
        paths: Array.from({ length: windowCount }, (_, i) => roomPath(i)),
        headers,
        connections: SETTINGS.connections,
        duration: seconds,
      }),
    },
  ];
  console.log(`\n3. throughput, ${SETTINGS.rounds} interleaved rounds\n`);
  const rows = await interleavedRounds(load, subjects);
  printRuns(
    `3. every measured run (${SETTINGS.connections} connections, ${SETTINGS.seconds} s each)`,
    rows,
    (k) => subjects.find((s) => s.key === k)!.label,
  );
  const sums = summarize(subjects, rows);
  printSummary('3. medians over the rounds', sums);
  printRatios('3. ratio of the medians', [ratio('room search / bare Fastify GET', sums.get('rooms')!, sums.get('bare')!)]);

  const ok = rows.every((r) => r.errors === 0 && Object.keys(r.statuses).every((s) => s === '200'));
  console.log(`\n${environmentLine(engine)}`);
  console.log(
    `${loadAverageNow()}; total ${((performance.now() - started) / 1000).toFixed(1)} s — ${ok ? 'every answer was 200' : 'SOME ANSWERS WERE NOT 200'}`,
  );
  return ok;
});
