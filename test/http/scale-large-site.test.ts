/**
 * A large site does not stall the service. The service and the prober each run in
 * their own process (so the latencies measured are the service's, not this test's,
 * which receives the large answers), and the prober asks /healthz back to back while:
 * - a 10,000-room site document is applied (set-based writes, the event loop
 *   getting a turn between batches), and applied again unchanged: nothing
 *   changes (the rooms read back byte for byte the same, `updatedAt` included);
 * - 5 concurrent GET /meeting-rooms of every room run, with and without a
 *   window, identity and gzip.
 * /healthz p99 stays under 100 ms throughout (during an apply, apart from the
 * up-front passes over the request body: see UP_FRONT_PASSES).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { OPS_TOKEN } from '../support/test-service.js';
import { startHealthProber } from '../support/health-prober.js';

const ROOMS = Number(process.env.SCALE_ROOMS ?? 10_000);
const FLOORS = 40;
const APP_ID = 'scale-test-app';
const APP_SECRET = 'scale-test-secret-0123456789abcdef0123456';
const WEEK = Object.fromEntries(
  ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => [d, { availableTime: { start: '07:00:00', end: '22:00:00' } }]),
);

function largeSite(rooms: number) {
  return {
    brands: [{ key: 'b', name: 'Scale Brand' }],
    projects: [{ key: 'p', brand: 'b', name: 'Scale Tower', timezone: 'Asia/Bangkok', currency: 'THB' }],
    zones: [{ key: 'z', project: 'p', name: 'Tower' }],
    floors: Array.from({ length: FLOORS }, (_, f) => ({ key: `f${f}`, zone: 'z', name: `${f + 1}F` })),
    apps: [{ key: 'app', appId: APP_ID, appSecret: APP_SECRET, name: 'Scale test', projects: ['p'] }],
    rooms: Array.from({ length: rooms }, (_, i) => ({
      key: `r${i}`,
      floor: `f${i % FLOORS}`,
      name: `Room ${String(i).padStart(5, '0')}`,
      email: `room${i}@rooms.example`,
      capacity: 2 + (i % 18),
      facilities: ['whiteboard'],
      pictureUrls: [`https://cdn.example/rooms/${i}.jpg`],
      config: { dayConfig: WEEK, maxAdvanceBookingDays: 90, maxDurationMinutes: 480 },
    })),
  };
}

/** A GET whose body is counted (or kept), not parsed: this process stays out of the measurement. */
function get(
  url: string,
  headers: Record<string, string>,
  keep = false,
): Promise<{ status: number; bytes: number; body?: Buffer; encoding?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let bytes = 0;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (keep) chunks.push(c);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            bytes,
            body: keep ? Buffer.concat(chunks) : undefined,
            encoding: res.headers['content-encoding'],
          }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * Runs `work` while a prober in its own process (health-prober.ts) asks /healthz one request after another, 10 ms
 * apart. When the work ends before `minProbes` probes (a fast machine), it runs again (at most 5 times in all), so
 * the figures always rest on enough probes.
 */
async function whileProbing<T>(svc: ServiceProcess, work: () => Promise<T>, minProbes = 0): Promise<{ result: T; latencies: number[] }> {
  const latencies: number[] = [];
  let result: T | undefined;
  for (let run = 0; run < 5 && (run === 0 || latencies.length < minProbes); run++) {
    const prober = await startHealthProber(svc.url);
    try {
      result = await work();
    } finally {
      latencies.push(...(await prober.stop()));
    }
  }
  return { result: result as T, latencies };
}

/**
 * The apply's own work must keep the loop free. Before it begins, the 4 MB body is
 * parsed, guarded and schema-validated, each one synchronous pass over the
 * document (the body-limit and guard work of the request pipeline, not the
 * apply): those may each hold one probe. Every other probe stays under 100 ms.
 */
const UP_FRONT_PASSES = 3;
const worstBut = (xs: number[], n: number) => [...xs].sort((a, b) => b - a)[n] ?? 0;

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];
const summary = (xs: number[]) =>
  `${xs.length} probes, p99 ${p99(xs).toFixed(0)} ms; worst ${[...xs]
    .sort((a, b) => b - a)
    .slice(0, 5)
    .map((x) => x.toFixed(0))
    .join(', ')} ms`;

describe(`a ${ROOMS}-room site`, () => {
  let database: TestDatabase;
  let svc: ServiceProcess;
  let projectId: string;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    svc = await startServiceProcess(database);
  }, 60_000);

  afterAll(async () => {
    await svc?.close();
    await database?.drop();
  });

  const apply = (doc: unknown) => svc.request('POST', '/ops/v1/apply', { token: OPS_TOKEN, body: doc });

  it("applies without stalling /healthz (under 100 ms but for the body's up-front passes); applying it again changes nothing", async () => {
    const doc = largeSite(ROOMS);
    const first = await whileProbing(svc, () => apply(doc));
    console.log(`[apply ${ROOMS} rooms] ${summary(first.latencies)}`);
    expect(first.result.status, first.result.text.slice(0, 300)).toBe(200);
    expect(Object.keys(first.result.body.data.idsByKind.rooms)).toHaveLength(ROOMS);
    expect(first.latencies.length).toBeGreaterThan(20);
    expect(worstBut(first.latencies, UP_FRONT_PASSES)).toBeLessThan(100);
    projectId = first.result.body.data.idsByKind.projects.p;

    const t = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET },
    });
    expect(t.status, t.text).toBe(201);
    token = t.body.access_token;
    const before = await get(`${svc.url}/meeting-rooms?projectId=${projectId}`, { authorization: `Bearer ${token}` }, true);
    expect(before.status).toBe(200);

    const again = await whileProbing(svc, () => apply(doc));
    console.log(`[re-apply ${ROOMS} rooms] ${summary(again.latencies)}`);
    expect(again.result.status).toBe(200);
    expect(again.result.body.data).toEqual(first.result.body.data);
    expect(worstBut(again.latencies, UP_FRONT_PASSES)).toBeLessThan(100);
    const after = await get(`${svc.url}/meeting-rooms?projectId=${projectId}`, { authorization: `Bearer ${token}` }, true);
    expect(after.body!.equals(before.body!), 'the re-apply changed a room').toBe(true);
    const rooms = JSON.parse(after.body!.toString('utf8')).data;
    expect(rooms).toHaveLength(ROOMS);
  }, 240_000);

  it('5 concurrent GET /meeting-rooms of every room (with and without a window, identity and gzip) keep /healthz p99 < 100 ms', async () => {
    expect(token, 'the apply test ran first').toBeDefined();
    const day = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    const window = `&startDateTime=${day}T03:00:00Z&endDateTime=${day}T04:00:00Z`;
    const calls = [
      () => get(`${svc.url}/meeting-rooms?projectId=${projectId}`, { authorization: `Bearer ${token}` }),
      () => get(`${svc.url}/meeting-rooms?projectId=${projectId}`, { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip' }),
      () => get(`${svc.url}/meeting-rooms?projectId=${projectId}${window}`, { authorization: `Bearer ${token}` }),
    ];
    for (const call of calls) {
      const run = await whileProbing(svc, () => Promise.all(Array.from({ length: 5 }, () => call())), 4);
      console.log(
        `[5 x GET /meeting-rooms: ${run.result[0].bytes} bytes${run.result[0].encoding ? ` ${run.result[0].encoding}` : ''}] ${summary(run.latencies)}`,
      );
      for (const r of run.result) expect(r.status).toBe(200);
      expect(run.latencies.length).toBeGreaterThan(3);
      expect(p99(run.latencies)).toBeLessThan(100);
    }
  }, 240_000);
});
