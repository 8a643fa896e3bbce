/**
 * Large sites: a site document with BENCH_ROOMS rooms (default 25,000, the most
 * one document may hold) applied through POST /ops/v1/apply, then applied again
 * unchanged (nothing to write) and with every room changed, and then
 * BENCH_LIST_CALLS (default 5) concurrent GET /meeting-rooms of the whole site.
 * For each it prints the wall time and how long the event loop stalled: the
 * worst /healthz round trip of a prober running alongside, and the worst lateness
 * of a 10 ms timer in the service's process.
 *
 *   npm run bench:site                     # SQLite
 *   BENCH_ENGINES=sqlite,postgres npm run bench:site
 *
 * The service runs in this process (the stall it shows is the service's own).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../src/platform/config.js';
import { openStorage } from '../src/platform/db/database.js';
import { createServices } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { BENCH_OPS_TOKEN } from './support.js';
import { benchEngines, createBenchDatabase, type Engine } from './lib/databases.js';

const ROOMS = Number(process.env.BENCH_ROOMS || 25_000);
const LIST_CALLS = Number(process.env.BENCH_LIST_CALLS || 5);
const FLOORS = 40;
const APP_ID = 'bench-site-app';
const APP_SECRET = 'bench-site-secret-0123456789abcdef012345';

const WEEK = Object.fromEntries(
  ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => [d, { availableTime: { start: '07:00:00', end: '22:00:00' } }]),
);

/** The site document: one project, FLOORS floors, `rooms` rooms (capacity shifted by `variant`). */
export function largeSite(rooms: number, variant = 0) {
  return {
    brands: [{ key: 'b', name: 'Scale Brand' }],
    projects: [{ key: 'p', brand: 'b', name: 'Scale Tower', timezone: 'Asia/Bangkok', currency: 'THB' }],
    zones: [{ key: 'z', project: 'p', name: 'Tower' }],
    floors: Array.from({ length: FLOORS }, (_, f) => ({ key: `f${f}`, zone: 'z', name: `${f + 1}F` })),
    apps: [{ key: 'app', appId: APP_ID, appSecret: APP_SECRET, name: 'Scale bench', projects: ['p'] }],
    rooms: Array.from({ length: rooms }, (_, i) => ({
      key: `r${i}`,
      floor: `f${i % FLOORS}`,
      name: `Room ${String(i).padStart(5, '0')}`,
      email: `room${i}@rooms.example`,
      capacity: 2 + ((i + variant) % 18),
      facilities: ['whiteboard'],
      pictureUrls: [`https://cdn.example/rooms/${i}.jpg`],
      equipmentsAvailability: { camera: true, display: true, mic: i % 2 === 0, projector: false, speaker: true },
      config: { dayConfig: WEEK, maxAdvanceBookingDays: 90, maxDurationMinutes: 480 },
    })),
  };
}

interface Stall {
  ms: number;
  healthMaxMs: number;
  healthP99Ms: number;
  loopMaxMs: number;
}

/** Runs `work` while probing /healthz back to back and watching the loop's delay. */
async function measured<T>(url: string, work: () => Promise<T>): Promise<{ result: T; stall: Stall }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const latencies: number[] = [];
  let running = true;
  const prober = (async () => {
    while (running) {
      const t0 = performance.now();
      await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const t0 = performance.now();
  const result = await work();
  const ms = performance.now() - t0;
  running = false;
  await prober;
  h.disable();
  latencies.sort((a, b) => a - b);
  return {
    result,
    stall: {
      ms,
      healthMaxMs: latencies.at(-1) ?? 0,
      healthP99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
      loopMaxMs: h.max / 1e6,
    },
  };
}

const fmt = (s: Stall) =>
  `${(s.ms / 1000).toFixed(2)} s; /healthz p99 ${s.healthP99Ms.toFixed(0)} ms, max ${s.healthMaxMs.toFixed(0)} ms; loop stall max ${s.loopMaxMs.toFixed(0)} ms`;

async function benchEngine(engine: Engine): Promise<void> {
  const database = await createBenchDatabase(engine);
  const config = loadConfig({
    BOOKING_ENV: 'development',
    DEMO: '0',
    OPS_TOKEN: BENCH_OPS_TOKEN,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: database.url,
    APPLY_BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
  });
  const storage = await openStorage(config.databaseUrl);
  const services = await createServices(config, storage);
  const app = await buildApp(services);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const call = async (method: string, path: string, body?: unknown, token = BENCH_OPS_TOKEN, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), authorization: `Bearer ${token}`, ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${bytes.toString('utf8').slice(0, 300)}`);
    return { status: res.status, bytes, headers: res.headers };
  };
  try {
    console.log(`\n[${engine}] ${database.where}: ${ROOMS} rooms`);
    const doc = largeSite(ROOMS);
    const first = await measured(url, () => call('POST', '/ops/v1/apply', doc));
    console.log(`  apply (all new)        ${fmt(first.stall)}`);
    const again = await measured(url, () => call('POST', '/ops/v1/apply', doc));
    console.log(`  re-apply (unchanged)   ${fmt(again.stall)}`);
    const changed = await measured(url, () => call('POST', '/ops/v1/apply', largeSite(ROOMS, 1)));
    console.log(`  apply (every room changed) ${fmt(changed.stall)}`);

    const ids = JSON.parse(first.result.bytes.toString('utf8')).data;
    const projectId = ids.idsByKind?.projects?.p ?? ids.ids?.p;
    const tokenRes = await fetch(`${url}/auth/accessToken`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET }),
    });
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    // Warm the room snapshot once (the first read after an apply builds it).
    await call('GET', `/meeting-rooms?projectId=${projectId}`, undefined, token);
    for (const encoding of ['identity', 'gzip']) {
      const list = await measured(url, () =>
        Promise.all(
          Array.from({ length: LIST_CALLS }, () =>
            call('GET', `/meeting-rooms?projectId=${projectId}`, undefined, token, { 'accept-encoding': encoding }),
          ),
        ),
      );
      const size = list.result[0].headers.get('content-length') ?? `${list.result[0].bytes.length} (decoded)`;
      console.log(`  ${LIST_CALLS} concurrent GET /meeting-rooms (${encoding}, ${size} bytes) ${fmt(list.stall)}`);
    }
  } finally {
    await app.close();
    await services.stop();
    await storage.close();
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) for (const engine of benchEngines()) await benchEngine(engine);
