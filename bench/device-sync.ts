/**
 * Device sync, measured from outside: the service, the load driver (this process)
 * and, for the MQTT transport, the reference gateway run as separate processes.
 *
 *   A. From scratch: MEMBERS partner members with two cards and a face each are
 *      provisioned (devices not yet declared), then one site apply adds DEVICES
 *      face-card readers to their access group. Timed from the apply until every
 *      device reports pendingChanges 0 and holds every member (MEMBERS × DEVICES
 *      enrollments planned, queued, delivered and acknowledged). The driver polls the
 *      device list (pending changes) every 250 ms and reads a device's full view only
 *      once its queue is empty (at most every 2 s), so the polling barely loads the
 *      service; a device counts as done at the list poll that showed its queue empty. The service's CPU time over the phase is printed per enrollment.
 *   B. Latency: ROUNDS credentials PUTs, one at a time; each is timed from the PUT
 *      until the last of the DEVICES devices holds the new card. With MQTT the
 *      driver watches the broker: the last device's acknowledgement of the member's
 *      command ends the round. With the sandbox it polls the device list every 5 ms until no
 *      device has a pending change (the PUT returned after committing its commands),
 *      and checks after the last round that every device holds the last card. Median and p95.
 *
 *   npm run bench:devices                                   (sandbox transport, SQLite)
 *   BENCH_TRANSPORT=mqtt npm run bench:devices              (MQTT: Mosquitto on 127.0.0.1:1883 + npm run gateway:sim)
 *   BENCH_TRANSPORT=sandbox,mqtt BENCH_ENGINES=sqlite,postgres npm run bench:devices   (each pair in turn)
 *   BENCH_MEMBERS=10000 BENCH_DEVICES=50 npm run bench:devices                         (building scale)
 *   BENCH_PROFILE_DIR=/tmp/prof npm run bench:devices       (the service under --cpu-prof; then npm run bench:profile-top)
 * PostgreSQL: a throwaway database on BENCH_PG_ADMIN_URL (see bench/lib/databases.ts), or BENCH_DATABASE_URL.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { connectAsync, type MqttClient } from 'mqtt';
import { startScript, stopScript } from './lib/scripts.js';
import { apiCall, pool, quantile } from './lib/driver.js';
import { benchEngines, createBenchDatabase, type Engine } from './lib/databases.js';

const MEMBERS = Number(process.env.BENCH_MEMBERS || 1000);
const DEVICES = Number(process.env.BENCH_DEVICES || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 20);
const TRANSPORTS = (process.env.BENCH_TRANSPORT || 'sandbox').split(',').map((t) => (t.trim() === 'mqtt' ? 'mqtt' : 'sandbox')) as (
  'sandbox' | 'mqtt'
)[];
const MQTT_URL = process.env.MQTT_URL || 'mqtt://127.0.0.1:1883';
const OPS = 'bench-ops-token-0123456789abcdef0123456789';
const APP_ID = 'bench-partner';
const APP_SECRET = 'bench-partner-secret-0123456789abcdef0123';
const CONCURRENCY = 8;

let base = '';

const call = (method: string, path: string, body?: unknown, token = OPS): Promise<any> => apiCall(base, token, method, path, body);

function site(devices: number) {
  return {
    brands: [{ key: 'b', name: 'Bench' }],
    projects: [{ key: 'p', brand: 'b', name: 'Bench Tower', timezone: 'Asia/Bangkok', currency: 'THB' }],
    zones: [{ key: 'z', project: 'p', name: 'Z' }],
    floors: [{ key: 'f', zone: 'z', name: '1F' }],
    accessGroups: [
      {
        key: 'g',
        project: 'p',
        name: 'All doors',
        devices: Array.from({ length: devices }, (_, i) => ({ key: `d${i}`, name: `Reader ${i}`, kind: 'face-card-reader' })),
      },
    ],
    apps: [{ key: 'a', appId: APP_ID, appSecret: APP_SECRET, name: 'Bench partner', projects: ['p'], accessGroups: ['g'] }],
  };
}

const face = (i: number) =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(4096, i % 251)]).toString('base64');
const card = (n: number) => String(n).padStart(10, '0');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** utime + stime of a process in ms (Linux /proc, 10 ms ticks). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function provision(token: string): Promise<number> {
  const t = performance.now();
  await pool(
    Array.from({ length: MEMBERS }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      await call('PUT', `/partner/members/m${i}`, { firstName: `M${i}`, lastName: 'Bench' }, token);
      const cards = [{ cardNo: card(1_000_000 + 2 * i) }, { cardNo: card(1_000_001 + 2 * i) }];
      await call('PUT', `/partner/members/m${i}/credentials`, { cards, face: face(i), faceConsentAt: '2026-01-01T00:00:00Z' }, token);
    },
  );
  return performance.now() - t;
}

/** A. Apply the devices; resolves once every device has an empty queue and holds every member. */
async function fromScratch(): Promise<{ ms: number; deviceIds: string[] }> {
  const t = performance.now();
  const applied = await call('POST', '/ops/v1/apply', site(DEVICES));
  const deviceIds = Array.from({ length: DEVICES }, (_, i) => applied.data.ids[`d${i}`] as string);
  const unverified = new Set(deviceIds);
  let viewedAt = 0;
  let doneAt = t;
  while (unverified.size) {
    await sleep(250);
    const listedAt = performance.now();
    const list = (await call('GET', '/ops/v1/devices')).data as { _id: string; pendingChanges: number }[];
    const idle = list.filter((d) => unverified.has(d._id) && d.pendingChanges === 0);
    if (!idle.length || performance.now() - viewedAt < 2_000) continue;
    viewedAt = performance.now();
    for (const d of idle) {
      const v = (await call('GET', `/ops/v1/devices/${d._id}`)).data;
      if (v.pendingChanges !== 0 || v.enrollments.length !== MEMBERS) continue;
      // Done when the list showed its queue empty: reading the full views afterwards is not the service's sync time.
      unverified.delete(d._id);
      doneAt = Math.max(doneAt, listedAt);
    }
  }
  return { ms: doneAt - t, deviceIds };
}

type Round = { memberId: string | null; seqs: Map<string, number>; acked: Map<string, number>; done: () => void };

/** MQTT: watches the broker for the member's commands and their acknowledgements. */
async function watchBroker(prefix: string, current: () => Round | null): Promise<MqttClient> {
  const watcher = await connectAsync(MQTT_URL);
  await watcher.subscribeAsync({ [`${prefix}/devices/+/commands`]: { qos: 1 }, [`${prefix}/devices/+/acks`]: { qos: 1 } });
  watcher.on('message', (topic, payload) => {
    const round = current();
    if (!round) return;
    const msg = JSON.parse(payload.toString()) as { deviceId: string; seq: number; subject?: { id: string }; ok?: boolean };
    if (topic.endsWith('/commands') && msg.subject?.id === round.memberId) round.seqs.set(msg.deviceId, msg.seq);
    if (topic.endsWith('/acks') && msg.ok && round.seqs.get(msg.deviceId) === msg.seq && !round.acked.has(msg.deviceId)) {
      round.acked.set(msg.deviceId, performance.now());
      if (round.acked.size === DEVICES) round.done();
    }
  });
  return watcher;
}

/** After the rounds (untimed): every device holds the last round's card, as the empty queues said. */
async function holdsLastCard(token: string, deviceIds: string[], r: number): Promise<void> {
  const memberId = (await call('GET', `/partner/members/m${r % MEMBERS}`, undefined, token)).data.memberId as string;
  for (const id of deviceIds) {
    const e = (await call('GET', `/ops/v1/devices/${id}`)).data.enrollments.find((x: any) => x.memberId === memberId);
    if (!e || e.cardNos.length !== 1 || e.cardNos[0] !== card(3_000_000_000 + r)) throw new Error(`device ${id} lacks the last card`);
  }
}

/** B. One credentials PUT at a time, each timed until the last device holds the new card. */
async function latency(token: string, deviceIds: string[], prefix: string | null): Promise<number[]> {
  const latencies: number[] = [];
  let round: Round | null = null;
  const watcher = prefix ? await watchBroker(prefix, () => round) : null;
  for (let r = 0; r < ROUNDS; r++) {
    const i = r % MEMBERS;
    const cardNo = card(3_000_000_000 + r);
    const memberId = (await call('GET', `/partner/members/m${i}`, undefined, token)).data.memberId as string;
    const t0 = performance.now();
    if (watcher) {
      const acked = new Promise<void>((done) => (round = { memberId, seqs: new Map(), acked: new Map(), done }));
      await call('PUT', `/partner/members/m${i}/credentials`, { cards: [{ cardNo }] }, token);
      await acked;
      latencies.push(Math.max(...round!.acked.values()) - t0);
      round = null;
      continue;
    }
    await call('PUT', `/partner/members/m${i}/credentials`, { cards: [{ cardNo }] }, token);
    // The PUT committed its commands: once no device has a pending change, every device acknowledged them.
    for (;;) {
      const list = (await call('GET', '/ops/v1/devices')).data as { pendingChanges: number }[];
      if (list.every((d) => d.pendingChanges === 0)) break;
      await sleep(5);
    }
    latencies.push(performance.now() - t0);
  }
  await watcher?.endAsync();
  if (!watcher) await holdsLastCard(token, deviceIds, ROUNDS - 1);
  return latencies;
}

async function run(engine: Engine, transport: 'sandbox' | 'mqtt'): Promise<void> {
  const db = await createBenchDatabase(engine);
  const prefix = `bench/${randomUUID()}`;
  const procs: ChildProcess[] = [];
  try {
    if (transport === 'mqtt') {
      const gw = await startScript(
        ['scripts/gateway-sim.ts'],
        { MQTT_URL, MQTT_TOPIC_PREFIX: prefix, LOG_LEVEL: 'info' },
        /gateway-sim: online/,
      );
      procs.push(gw.child);
    }
    const svc = await startScript(
      ['src/main.ts'],
      {
        ...{ PORT: '0', HOST: '127.0.0.1', DEMO: '0', OPS_TOKEN: OPS, DATABASE_URL: db.url, DEVICE_TRANSPORT: transport },
        ...{ MQTT_URL, MQTT_TOPIC_PREFIX: prefix, PARTNER_RATE_LIMIT_PER_MINUTE: '10000000', LOG_LEVEL: 'warn' },
      },
      /listening on (http:\/\/\S+)/,
    );
    procs.push(svc.child);
    base = svc.match[1]!;

    await call('POST', '/ops/v1/apply', site(0));
    const grant = { grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET };
    const token = (await call('POST', '/auth/accessToken', grant, '')).access_token as string;
    const provisionMs = await provision(token);
    const cpu0 = cpuMs(svc.child.pid!);
    const load0 = readFileSync('/proc/loadavg', 'utf8').trim();
    const scratch = await fromScratch();
    const scratchCpuMs = cpuMs(svc.child.pid!) - cpu0;
    const latencies = await latency(token, scratch.deviceIds, transport === 'mqtt' ? prefix : null);

    const enrollments = MEMBERS * DEVICES;
    const s = scratch.ms / 1000;
    console.log(`device sync, ${engine}, ${transport} transport, ${MEMBERS} members × ${DEVICES} devices (${db.where})`);
    console.log(
      `  provisioning (2 PUTs per member, ${CONCURRENCY} at a time): ${(provisionMs / 1000).toFixed(1)} s, ${(MEMBERS / (provisionMs / 1000)).toFixed(0)} members/s`,
    );
    console.log(
      `  A. from scratch, apply → every device holds every member: ${s.toFixed(1)} s (${(enrollments / s).toFixed(0)} enrollments/s)`,
    );
    console.log(
      `     service CPU ${(scratchCpuMs / 1000).toFixed(1)} s, ${((scratchCpuMs * 1000) / enrollments).toFixed(0)} µs per enrollment`,
    );
    console.log(
      `  B. credentials PUT → acknowledged by the last of ${DEVICES} devices, ${ROUNDS} rounds: median ${quantile(latencies, 0.5).toFixed(0)} ms, p95 ${quantile(latencies, 0.95).toFixed(0)} ms`,
    );
    console.log(`  load average at A's start: ${load0}; at the end: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  } finally {
    for (const p of procs.reverse()) await stopScript(p);
    await db.drop();
  }
}

async function main(): Promise<void> {
  for (const engine of benchEngines()) for (const transport of TRANSPORTS) await run(engine, transport);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
