/**
 * Search latency on a generated site: 1 project (Asia/Bangkok), 1,000 rooms and
 * 2,000 desks applied through POST /ops/v1/apply, and 100,000 bookings inserted
 * through MeetingRepository.insertHeld, spread over ±45 days around the service's now.
 * Measures, in one run, the windowed room search, a windowed desk page and a bare
 * Fastify route (sequential p50/p95/p99 after a warm-up), then autocannon
 * throughput of the room search.
 *
 *   npm run bench:search
 *   BENCH_SAMPLES=500 BENCH_SECONDS=10 npm run bench:search
 *   BENCH_DATABASE_URL=postgres://…/empty_db npm run bench:search   (an empty database)
 *
 * Target: p95 of the room search under 20 ms on SQLite.
 */
import { cpus, loadavg } from 'node:os';
import { load, printTable, sampleLatency, startBareFastify, startBenchService } from './support.js';
import { seedSearchSite } from './search-site.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES || 300);
const WARMUP = Number(process.env.BENCH_WARMUP || 50);

const fmtMs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Like sampleLatency, for several senders taking turns (round i calls each with i). */
async function sampleInterleaved(n: number, warmup: number, senders: Record<string, (i: number) => Promise<unknown>>) {
  const samples = Object.fromEntries(Object.keys(senders).map((k) => [k, [] as number[]]));
  for (let i = 0; i < warmup + n; i++) {
    for (const [k, send] of Object.entries(senders)) {
      const t = performance.now();
      await send(i);
      if (i >= warmup) samples[k].push(performance.now() - t);
    }
  }
  const at = (xs: number[], q: number) => Number(xs[Math.min(xs.length - 1, Math.floor(q * xs.length))].toFixed(2));
  return Object.fromEntries(
    Object.entries(samples).map(([k, xs]) => {
      xs.sort((a, b) => a - b);
      return [k, { min: Number(xs[0].toFixed(2)), p50: at(xs, 0.5), p95: at(xs, 0.95) }];
    }),
  );
}
const t0 = performance.now();
const svc = await startBenchService();
const bare = await startBareFastify();
try {
  const load1 = () => loadavg().map((x) => x.toFixed(1)).join(' ');
  console.log(`machine: ${cpus().length} CPUs, load average ${load1()} (latencies below scale with it)`);
  const site = await seedSearchSite(svc);
  const { headers, roomPath, deskPath } = site;
  const engine = svc.services.storage.engine;

  const stats = { rooms: 0, unbookable: 0, requests: 0, desksTotal: 0, roomBytes: 0 };
  const get = async (url: string, h: Record<string, string> = headers) => {
    const res = await fetch(url, { headers: h });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${url} -> ${res.status}: ${text.slice(0, 500)}`);
    return text;
  };
  // Sanity and warm-up of all three routes.
  for (let i = 0; i < WARMUP; i++) {
    const text = await get(svc.url + roomPath(i));
    const body = JSON.parse(text);
    stats.roomBytes += Buffer.byteLength(text);
    stats.requests++;
    stats.rooms += body.data.length;
    stats.unbookable += body.data.filter((r: { unavailableReason?: string }) => r.unavailableReason).length;
    stats.desksTotal += JSON.parse(await get(svc.url + deskPath(i))).meta.total;
    await get(`${bare.url}/bare`, {});
  }
  console.log(
    `room search returns on average ${Math.round(stats.rooms / stats.requests)} rooms (${Math.round(stats.unbookable / stats.requests)} of them flagged unbookable); ` +
    `desk search matches on average ${Math.round(stats.desksTotal / stats.requests)} desks (page of 50); ` +
    `room search response ${(stats.roomBytes / stats.requests / 1e6).toFixed(2)} MB`,
  );

  let n = 0;
  const roomLat = await sampleLatency(SAMPLES, () => get(svc.url + roomPath(n++)));
  n = 0;
  const deskLat = await sampleLatency(SAMPLES, () => get(svc.url + deskPath(n++)));
  const bareLat = await sampleLatency(SAMPLES, () => get(`${bare.url}/bare`, {}));

  console.log(`\nsequential latency, ${SAMPLES} requests each after ${WARMUP} warm-up (${engine}; load average now ${load1()})`);
  console.log('| scenario | p50 ms | p95 ms | p99 ms | p50 / bare | p95 / bare |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [label, l] of [
    ['bare Fastify GET /bare', bareLat],
    ['GET /meeting-rooms (windowed)', roomLat],
    ['GET /desks (windowed, limit=50)', deskLat],
  ] as const) {
    console.log(`| ${label} | ${l.p50} | ${l.p95} | ${l.p99} | ${(l.p50 / bareLat.p50).toFixed(1)} | ${(l.p95 / bareLat.p95).toFixed(1)} |`);
  }
  const target = 20;
  console.log(`\nroom search p95 ${roomLat.p95} ms: ${roomLat.p95 < target ? 'meets' : 'MISSES'} the ${target} ms target (${engine})`);

  // Where the room search time goes, sampled interleaved (so load swings and GC hit
  // both alike): the full route and the service call alone (no HTTP).
  const principal = await svc.services.tokens.authenticate(headers.authorization);
  type RoomQuery = Parameters<typeof svc.services.catalogue.searchRooms>[1];
  const roomQuery = (i: number) => Object.fromEntries(new URL(svc.url + roomPath(i)).searchParams) as unknown as RoomQuery;
  const rounds = Math.min(SAMPLES, 200);
  const parts = await sampleInterleaved(rounds, 20, {
    'GET /meeting-rooms (windowed), full route': (i) => get(svc.url + roomPath(i)),
    'CatalogueService.searchRooms in-process': (i) => svc.services.catalogue.searchRooms(principal, roomQuery(i)),
  });
  console.log(`\nroom search breakdown, interleaved, ${rounds} rounds after 20 warm-up`);
  console.log('| part | min ms | p50 ms | p95 ms |');
  console.log('|---|---:|---:|---:|');
  for (const [label, l] of Object.entries(parts)) console.log(`| ${label} | ${l.min} | ${l.p50} | ${l.p95} |`);

  // Throughput (autocannon) of the room search, cycling through the windows.
  const seconds = Number(process.env.BENCH_SECONDS || 5);
  const requests = Array.from({ length: site.windowCount }, (_, i) => ({ method: 'GET' as const, path: roomPath(i) }));
  const bareLoad = await load('bare Fastify GET', { url: `${bare.url}/bare`, duration: seconds });
  const roomLoad = await load('GET /meeting-rooms (windowed)', { url: svc.url, headers, requests, duration: seconds });
  printTable([bareLoad, roomLoad]);
  console.log(`\nratio room search / bare throughput: ${(roomLoad.requestsPerSec / bareLoad.requestsPerSec).toFixed(3)}`);
  console.log(`\ntotal run time: ${fmtMs(performance.now() - t0)}`);
} finally {
  await bare.close();
  await svc.close();
}
