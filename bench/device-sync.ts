/**
 * Device sync, measured from outside: the service, the load driver (this process)
 * and, for the MQTT transport, the reference gateway run as separate processes.
 *
 *   A. From scratch: MEMBERS partner members with two cards and a face each are
 *      provisioned (devices not yet declared), then one site apply adds DEVICES
 *      face-card readers to their access group. Timed from the apply until every
 *      device reports pendingChanges 0 and holds every member (MEMBERS × DEVICES
 *      enrollments planned, queued, delivered and acknowledged).
 *   B. Latency: ROUNDS credentials PUTs, one at a time; each is timed from the PUT
 *      until the last of the DEVICES devices holds the new card. With MQTT the
 *      driver watches the broker: the last device's acknowledgement of the member's
 *      command ends the round. With the sandbox it polls the device views (
 *      polled every 10 ms; the polling itself loads the service). Median and p95.
 *
 *   npm run bench:devices                          (sandbox transport)
 *   BENCH_TRANSPORT=mqtt npm run bench:devices     (MQTT: Mosquitto on 127.0.0.1:1883 + npm run gateway:sim)
 *   BENCH_MEMBERS=200 BENCH_DEVICES=5 npm run bench:devices
 */
import type { ChildProcess } from 'node:child_process';
import { startScript, stopScript } from './lib/scripts.js';
import { pool, quantile } from './lib/driver.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { connectAsync, type MqttClient } from 'mqtt';

const MEMBERS = Number(process.env.BENCH_MEMBERS || 1000);
const DEVICES = Number(process.env.BENCH_DEVICES || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 20);
const TRANSPORT = process.env.BENCH_TRANSPORT === 'mqtt' ? 'mqtt' : 'sandbox';
const MQTT_URL = process.env.MQTT_URL || 'mqtt://127.0.0.1:1883';
const OPS = 'bench-ops-token-0123456789abcdef0123456789';
const APP_ID = 'bench-partner';
const APP_SECRET = 'bench-partner-secret-0123456789abcdef0123';
const CONCURRENCY = 8;

let base = '';
async function call(method: string, path: string, body?: unknown, token = OPS): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

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

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-devices-'));
  const prefix = `bench/${randomUUID()}`;
  const procs: ChildProcess[] = [];
  try {
    if (TRANSPORT === 'mqtt') {
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
        PORT: '0',
        HOST: '127.0.0.1',
        DEMO: '0',
        OPS_TOKEN: OPS,
        DATABASE_URL: process.env.BENCH_DATABASE_URL || join(dir, 'bench.sqlite'),
        DEVICE_TRANSPORT: TRANSPORT,
        MQTT_URL,
        MQTT_TOPIC_PREFIX: prefix,
        PARTNER_RATE_LIMIT_PER_MINUTE: '10000000',
        LOG_LEVEL: 'warn',
      },
      /listening on (http:\/\/\S+)/,
    );
    procs.push(svc.child);
    base = svc.match[1]!;

    await call('POST', '/ops/v1/apply', site(0));
    const token = (await call('POST', '/auth/accessToken', { grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET }, ''))
      .access_token as string;

    // A. from scratch
    let t = performance.now();
    await pool(
      Array.from({ length: MEMBERS }, (_, i) => i),
      CONCURRENCY,
      async (i) => {
        await call('PUT', `/partner/members/m${i}`, { firstName: `M${i}`, lastName: 'Bench' }, token);
        await call(
          'PUT',
          `/partner/members/m${i}/credentials`,
          {
            cards: [{ cardNo: card(1_000_000 + 2 * i) }, { cardNo: card(1_000_001 + 2 * i) }],
            face: face(i),
            faceConsentAt: '2026-01-01T00:00:00Z',
          },
          token,
        );
      },
    );
    const provisionMs = performance.now() - t;

    t = performance.now();
    const applied = await call('POST', '/ops/v1/apply', site(DEVICES));
    const deviceIds = Array.from({ length: DEVICES }, (_, i) => applied.data.ids[`d${i}`] as string);
    for (;;) {
      const views = await Promise.all(deviceIds.map((id) => call('GET', `/ops/v1/devices/${id}`)));
      if (views.every((v) => v.data.pendingChanges === 0 && v.data.enrollments.length === MEMBERS)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const scratchMs = performance.now() - t;

    // B. latency of one change to the last device
    const latencies: number[] = [];
    let watcher: MqttClient | null = null;
    /** Per round: the member, and per device the seq of its command and when its ack came. */
    let round: { memberId: string | null; seqs: Map<string, number>; acked: Map<string, number>; done: () => void } | null = null;
    if (TRANSPORT === 'mqtt') {
      watcher = await connectAsync(MQTT_URL);
      await watcher.subscribeAsync({ [`${prefix}/devices/+/commands`]: { qos: 1 }, [`${prefix}/devices/+/acks`]: { qos: 1 } });
      watcher.on('message', (topic, payload) => {
        if (!round) return;
        const msg = JSON.parse(payload.toString()) as { deviceId: string; seq: number; subject?: { id: string }; ok?: boolean };
        if (topic.endsWith('/commands') && msg.subject?.id === round.memberId) round.seqs.set(msg.deviceId, msg.seq);
        if (topic.endsWith('/acks') && msg.ok && round.seqs.get(msg.deviceId) === msg.seq && !round.acked.has(msg.deviceId)) {
          round.acked.set(msg.deviceId, performance.now());
          if (round.acked.size === DEVICES) round.done();
        }
      });
    }
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
      const pendingDevices = new Set(deviceIds);
      while (pendingDevices.size) {
        await Promise.all(
          [...pendingDevices].map(async (id) => {
            const v = await call('GET', `/ops/v1/devices/${id}`);
            const e = v.data.enrollments.find((x: any) => x.memberId === memberId);
            if (e && e.cardNos.length === 1 && e.cardNos[0] === cardNo) pendingDevices.delete(id);
          }),
        );
        if (pendingDevices.size) await new Promise((r) => setTimeout(r, 10));
      }
      latencies.push(performance.now() - t0);
    }
    await watcher?.endAsync();

    const enrollments = MEMBERS * DEVICES;
    console.log(`device sync, ${TRANSPORT} transport, ${MEMBERS} members × ${DEVICES} devices`);
    console.log(
      `  provisioning (2 PUTs per member, ${CONCURRENCY} at a time): ${(provisionMs / 1000).toFixed(1)} s, ${(MEMBERS / (provisionMs / 1000)).toFixed(0)} members/s`,
    );
    console.log(
      `  A. from scratch, apply → every device holds every member: ${(scratchMs / 1000).toFixed(2)} s (${(enrollments / (scratchMs / 1000)).toFixed(0)} enrollments/s)`,
    );
    console.log(
      `  B. credentials PUT → acknowledged by the last of ${DEVICES} devices, ${ROUNDS} rounds: median ${quantile(latencies, 0.5).toFixed(0)} ms, p95 ${quantile(latencies, 0.95).toFixed(0)} ms`,
    );
  } finally {
    for (const p of procs.reverse()) await stopScript(p);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
