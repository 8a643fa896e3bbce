/**
 * The `mqtt` transport against a real broker (Mosquitto on 127.0.0.1:1883, or
 * MQTT_URL) and the reference gateway simulator. Each test has its own random topic
 * prefix, so tests never see each other's messages. No database.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MqttTransport, type TransportLogger } from '../../src/modules/devices/mqtt-transport.js';
import type { SubjectState } from '../../src/modules/devices/rules/subject-state.js';
import { stateHash } from '../../src/modules/devices/state-hash.js';
import type { DeviceTarget, TransportEvents, WireAck, WireCommand } from '../../src/modules/devices/transport.js';
import { GatewaySimulator } from '../../tools/gateway-sim/gateway-sim.js';

const URL = process.env.MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const QR = 'QR-SECRET-7f3a9c';

// --- fixtures -----------------------------------------------------------------

/** `size` bytes that start as a baseline JPEG of 480x640 (the header a terminal checks), then filler. */
function jpeg(size: number, seed = 1): Buffer {
  const b = Buffer.alloc(size, seed);
  b.set([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x02, 0x80, 0x01, 0xe0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return b;
}
const FACE = jpeg(4096, 7);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function hashOf(partial: Partial<SubjectState>): string {
  return stateHash({ cards: [], face: null, qr: null, plates: [], validFrom: null, validUntil: null, ...partial });
}

function member(
  deviceId: string,
  seq: number,
  id: string,
  opts: { cardNo?: string; face?: { mime: string; data: Buffer } | null } = {},
): WireCommand {
  const cardNo = opts.cardNo ?? '0123456789';
  const face = opts.face === undefined ? { mime: 'image/jpeg', data: FACE } : opts.face;
  return {
    v: 1,
    deviceId,
    seq,
    op: 'upsert',
    subject: { kind: 'member', id },
    stateHash: hashOf({ cards: [`UID-${cardNo}`], face: face ? sha(face.data) : null }),
    cards: [{ uid: `UID-${cardNo}`, cardNo, format: 'decimal-reversed' }],
    face: face ? { mime: face.mime, sha256: sha(face.data), data: face.data.toString('base64') } : null,
    validFrom: null,
    validUntil: null,
  };
}

function visitor(deviceId: string, seq: number, id: string): WireCommand {
  return {
    v: 1,
    deviceId,
    seq,
    op: 'upsert',
    subject: { kind: 'visitor', id },
    stateHash: hashOf({ qr: 'tag', plates: ['1กข1234'] }),
    qrCode: QR,
    plates: ['1กข1234'],
    validFrom: '2026-11-25T02:00:00.000Z',
    validUntil: '2026-11-25T11:00:00.000Z',
  };
}

function remove(deviceId: string, seq: number, id: string): WireCommand {
  return { v: 1, deviceId, seq, op: 'remove', subject: { kind: 'member', id }, stateHash: hashOf({}) };
}

const target = (id: string): DeviceTarget => ({ id, kind: 'face-card-reader', online: true, timeZone: 'UTC', connection: null });

// --- harness ------------------------------------------------------------------

/** Every log call, to check what reaches logs. */
function recordingLogger() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const logger: TransportLogger = {
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
  return { logger, lines };
}

/** Records what the transport reports; when the gateway comes online it asks for the inventories of `devices`, as the sync service does. */
function recordingEvents() {
  const reachability: { deviceId: string; online: boolean }[] = [];
  const inventories: { deviceId: string; lastSeq: number; holds: { subject: { kind: string; id: string }; stateHash?: string }[] }[] = [];
  const devices: string[] = [];
  const ref: { transport?: MqttTransport } = {};
  let gatewayOnline = 0;
  const events: TransportEvents = {
    reachability: (deviceId, online) => reachability.push({ deviceId, online }),
    inventory: async (deviceId, report) => (inventories.push({ deviceId, ...report }), 0),
    access: async () => undefined,
    gatewayOnline: () => {
      gatewayOnline++;
      void ref.transport?.requestInventory(devices.map(target));
    },
  };
  return { events, reachability, inventories, devices, ref, onlineCount: () => gatewayOnline };
}

async function waitFor<T>(probe: () => T | undefined | false, what: string, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let raw: MqttClient;
beforeAll(async () => {
  try {
    raw = await connectAsync(URL, { connectTimeout: 3000, reconnectPeriod: 0 }, false);
  } catch (err) {
    throw new Error(`no MQTT broker at ${URL} (start one: mosquitto -d -c /etc/mosquitto/mosquitto.conf): ${(err as Error).message}`, {
      cause: err,
    });
  }
  return async () => {
    await raw.endAsync();
  };
});

/** A fresh prefix with a started simulator and transport; retained topics are cleared afterwards. */
async function setup(opts: { ackTimeoutMs?: number; statusGraceMs?: number; gateway?: boolean; stateFile?: string } = {}) {
  const prefix = `test/${randomUUID()}`;
  const log = recordingLogger();
  const simLog = recordingLogger();
  const rec = recordingEvents();
  cleanups.push(() => clearRetained(prefix)); // runs last: after the gateways' last wills
  let sim: GatewaySimulator | null = null;
  if (opts.gateway !== false) {
    sim = new GatewaySimulator({ url: URL, topicPrefix: prefix, stateFile: opts.stateFile, logger: simLog.logger });
    await sim.start();
    const s = sim;
    cleanups.push(() => s.crash());
  }
  const transport = new MqttTransport({
    url: URL,
    topicPrefix: prefix,
    ackTimeoutMs: opts.ackTimeoutMs ?? 3000,
    statusGraceMs: opts.statusGraceMs ?? 1000,
    logger: log.logger,
  });
  rec.ref.transport = transport;
  await transport.start(rec.events);
  cleanups.push(() => transport.stop());
  return { prefix, sim: sim!, transport, log, simLog, ...rec };
}

/** Removes every retained message under a prefix (the broker persists them). */
async function clearRetained(prefix: string) {
  const c = await connectAsync(URL, { reconnectPeriod: 0 }, false);
  const topics = new Set<string>();
  c.on('message', (t, p, packet) => {
    if (packet.retain && p.length > 0) topics.add(t);
  });
  await c.subscribeAsync(`${prefix}/#`);
  await new Promise((r) => setTimeout(r, 100));
  for (const t of topics) await c.publishAsync(t, '', { retain: true, qos: 1 });
  await c.endAsync();
}

/** A hand-written gateway: announces itself online and answers commands with `answer`. */
async function fakeGateway(prefix: string, answer: (cmds: WireCommand[], publish: (a: WireAck) => void) => void, batch: number) {
  const c = await connectAsync(URL, { reconnectPeriod: 0 }, false);
  cleanups.push(() => c.endAsync(true));
  const seen: WireCommand[] = [];
  c.on('message', (topic, payload) => {
    if (!topic.endsWith('/commands')) return;
    seen.push(JSON.parse(payload.toString()) as WireCommand);
    if (seen.length === batch) answer(seen, (a) => c.publish(`${prefix}/devices/${a.deviceId}/acks`, JSON.stringify(a), { qos: 1 }));
  });
  await c.subscribeAsync(`${prefix}/devices/+/commands`, { qos: 1 });
  await c.publishAsync(`${prefix}/gateway/status`, JSON.stringify({ v: 1, online: true }), { qos: 1, retain: true });
  return { client: c, seen };
}

const ok = (cmd: WireCommand): WireAck => ({ v: 1, deviceId: cmd.deviceId, seq: cmd.seq, ok: true });

// --- tests --------------------------------------------------------------------

describe('MqttTransport with the reference gateway', () => {
  it('enrolls members and a visitor: every command answered in order, the device memory matches', async () => {
    const { sim, transport, reachability } = await setup();
    const d = 'dev-a';
    const cmds = [
      member(d, 1, 'm1', { cardNo: '1111111111' }),
      member(d, 2, 'm2', { cardNo: '2222222222', face: null }),
      visitor(d, 3, 'v1'),
    ];

    const report = await transport.deliver(target(d), cmds);

    expect(report).toEqual({
      answered: [
        { seq: 1, ok: true },
        { seq: 2, ok: true },
        { seq: 3, ok: true },
      ],
    });
    const mem = sim.memory(d);
    expect(mem.lastSeq).toBe(3);
    expect(Object.keys(mem.holds).sort()).toEqual(['member:m1', 'member:m2', 'visitor:v1']);
    expect(mem.holds['member:m1']).toEqual({
      subject: { kind: 'member', id: 'm1' },
      stateHash: cmds[0].stateHash,
      cards: [{ uid: 'UID-1111111111', cardNo: '1111111111', format: 'decimal-reversed' }],
      faceSha256: sha(FACE),
      qrCode: null,
      plates: [],
      validFrom: null,
      validUntil: null,
    });
    expect(mem.holds['member:m2'].faceSha256).toBeNull();
    expect(mem.holds['visitor:v1']).toMatchObject({
      qrCode: QR,
      plates: ['1กข1234'],
      validFrom: '2026-11-25T02:00:00.000Z',
      validUntil: '2026-11-25T11:00:00.000Z',
    });
    // The gateway announced the device on first sight.
    await waitFor(() => reachability.find((r) => r.deviceId === d && r.online), 'the device online');

    // A removal takes the subject off the device.
    expect(await transport.deliver(target(d), [remove(d, 4, 'm1')])).toEqual({ answered: [{ seq: 4, ok: true }] });
    expect(Object.keys(sim.memory(d).holds).sort()).toEqual(['member:m2', 'visitor:v1']);
  });

  it('answers a bad-input command ok:false and still applies the next one', async () => {
    const { sim, transport } = await setup();
    const d = 'dev-bad';
    const tooBig = member(d, 1, 'm1', { face: { mime: 'image/jpeg', data: jpeg(210 * 1024) } });
    const wrongMime = member(d, 2, 'm2', { face: { mime: 'image/png', data: FACE } });
    const fine = member(d, 3, 'm3');

    const report = await transport.deliver(target(d), [tooBig, wrongMime, fine]);

    expect(report.stopped).toBeUndefined();
    expect(report.answered.map((a) => [a.seq, a.ok])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(report.answered[0].message).toMatch(/210 KB; the device takes at most 200 KB/);
    expect(report.answered[1].message).toMatch(/not a JPEG or PNG/);
    expect(Object.keys(sim.memory(d).holds)).toEqual(['member:m3']);
  });

  it('an offline device: stopped offline without publishing, nothing applied; back online it takes the commands', async () => {
    const { prefix, sim, transport, reachability } = await setup();
    const d = 'dev-off';
    await transport.deliver(target(d), [member(d, 1, 'm1')]);
    await sim.setDeviceOnline(d, false);
    await waitFor(() => reachability.find((r) => r.deviceId === d && !r.online), 'the device offline');
    const published: number[] = [];
    const spy = await connectAsync(URL, { reconnectPeriod: 0 }, false);
    cleanups.push(() => spy.endAsync());
    spy.on('message', (_t, p) => published.push((JSON.parse(p.toString()) as WireCommand).seq));
    await spy.subscribeAsync(`${prefix}/devices/${d}/commands`, { qos: 1 });

    const report = await transport.deliver(target(d), [member(d, 2, 'm2'), member(d, 3, 'm3')]);

    await new Promise((r) => setTimeout(r, 100));
    expect(published).toEqual([]);
    expect(report.answered).toEqual([]);
    expect(report.stopped).toEqual({ kind: 'offline', message: expect.stringMatching(/device is offline/) });
    expect(Object.keys(sim.memory(d).holds)).toEqual(['member:m1']);

    await sim.setDeviceOnline(d, true);
    await waitFor(() => reachability.filter((r) => r.deviceId === d).at(-1)?.online, 'the device online again');
    expect(await transport.deliver(target(d), [member(d, 2, 'm2'), member(d, 3, 'm3')])).toEqual({
      answered: [
        { seq: 2, ok: true },
        { seq: 3, ok: true },
      ],
    });
  });

  it('a device refusing for a passing reason mid-delivery: the answered prefix, then stopped offline', async () => {
    const { prefix, transport } = await setup({ gateway: false });
    const d = 'dev-mid';
    await fakeGateway(
      prefix,
      (cmds, publish) => {
        publish(ok(cmds[0]));
        publish({ v: 1, deviceId: d, seq: cmds[1].seq, ok: false, error: { kind: 'offline', message: 'terminal unreachable' } });
        publish(ok(cmds[2])); // after the stop: not answered
      },
      3,
    );
    const report = await transport.deliver(target(d), [member(d, 1, 'a'), member(d, 2, 'b'), member(d, 3, 'c')]);
    expect(report).toEqual({ answered: [{ seq: 1, ok: true }], stopped: { kind: 'offline', message: 'terminal unreachable' } });
  });

  it('the gateway crashes: its last will marks it offline and deliveries answer offline; a graceful stop does too', async () => {
    const { prefix, sim, transport } = await setup();
    const d = 'dev-crash';
    expect((await transport.deliver(target(d), [member(d, 1, 'm1')])).answered).toHaveLength(1);

    // Watch the broker: the will (online:false) must be published on the crash.
    const watcher = await connectAsync(URL, { reconnectPeriod: 0 }, false);
    cleanups.push(() => watcher.endAsync());
    const statuses: boolean[] = [];
    watcher.on('message', (_t, p) => p.length && statuses.push((JSON.parse(p.toString()) as { online: boolean }).online));
    await watcher.subscribeAsync(`${prefix}/gateway/status`, { qos: 1 });
    await waitFor(() => statuses[0] === true, 'the retained gateway status');

    await sim.crash();
    await waitFor(() => statuses.at(-1) === false, 'the last will');
    const report = await transport.deliver(target(d), [member(d, 2, 'm2')]);
    expect(report).toEqual({ answered: [], stopped: { kind: 'offline', message: 'the gateway is offline' } });

    // Graceful: a second gateway comes and leaves cleanly.
    const again = new GatewaySimulator({ url: URL, topicPrefix: prefix });
    await again.start();
    await waitFor(() => statuses.at(-1) === true, 'the gateway back online');
    expect((await transport.deliver(target(d), [member(d, 2, 'm2')])).answered).toEqual([{ seq: 2, ok: true }]);
    await again.stop();
    await waitFor(() => statuses.at(-1) === false, 'the graceful offline status');
    expect((await transport.deliver(target(d), [member(d, 3, 'm3')])).stopped?.kind).toBe('offline');
  });

  it('the gateway coming back publishes its memory as inventories (kept in its state file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-sim-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const stateFile = join(dir, 'state.json');
    const { prefix, sim, transport, inventories } = await setup({ stateFile });
    const d = 'dev-inv';
    const cmds = [member(d, 1, 'm1'), visitor(d, 2, 'v1')];
    await transport.deliver(target(d), cmds);
    await sim.crash();

    const back = new GatewaySimulator({ url: URL, topicPrefix: prefix, stateFile });
    await back.start();
    cleanups.push(() => back.crash());
    const inv = await waitFor(() => inventories.find((i) => i.deviceId === d), 'an inventory');
    expect(inv.lastSeq).toBe(2);
    expect(inv.holds.sort((a, b) => a.subject.id.localeCompare(b.subject.id))).toEqual([
      { subject: { kind: 'member', id: 'm1' }, stateHash: cmds[0].stateHash },
      { subject: { kind: 'visitor', id: 'v1' }, stateHash: cmds[1].stateHash },
    ]);
    expect(back.memory(d)).toEqual(sim.memory(d));

    // A device that lost its memory reports an empty inventory when the service asks (sync on connect).
    back.clearMemory(d);
    const second = recordingEvents();
    const t2 = new MqttTransport({ url: URL, topicPrefix: prefix });
    second.devices.push(d);
    second.ref.transport = t2;
    await t2.start(second.events);
    cleanups.push(() => t2.stop());
    const empty = await waitFor(() => second.inventories.find((i) => i.deviceId === d), 'the inventory after the sync request');
    expect(empty).toEqual({ deviceId: d, lastSeq: 0, holds: [] });
  });

  it('a gateway restarted without its memory is noticed by its new bootId; asked, it answers for every named device, empty ones too', async () => {
    const { prefix, sim, transport, inventories, devices, onlineCount } = await setup();
    const d = 'dev-boot';
    devices.push(d, 'dev-never-seen');
    await transport.deliver(target(d), [member(d, 1, 'm1')]);
    expect(Object.keys(sim.memory(d).holds)).toEqual(['member:m1']);
    await waitFor(() => onlineCount() >= 1, 'the first gateway online');
    const before = onlineCount();
    inventories.length = 0;

    // A fresh process, no state file: it knows no device, and says so only when asked.
    await sim.stop();
    const fresh = new GatewaySimulator({ url: URL, topicPrefix: prefix });
    await fresh.start();
    cleanups.push(() => fresh.crash());
    await waitFor(() => onlineCount() > before, 'the restarted gateway noticed');
    const inv = await waitFor(() => inventories.find((i) => i.deviceId === d), "the restarted device's inventory");
    expect(inv).toEqual({ deviceId: d, lastSeq: 0, holds: [] });
    expect(await waitFor(() => inventories.find((i) => i.deviceId === 'dev-never-seen'), "an unknown device's inventory")).toEqual({
      deviceId: 'dev-never-seen',
      lastSeq: 0,
      holds: [],
    });
    // The new run takes commands at once.
    expect((await transport.deliver(target(d), [member(d, 2, 'm1')])).answered).toEqual([{ seq: 2, ok: true }]);
  });

  it('a stale last will of an earlier run does not take the new run offline', async () => {
    const { prefix, sim, transport } = await setup();
    const d = 'dev-will';
    await transport.deliver(target(d), [member(d, 1, 'm1')]);
    const fresh = new GatewaySimulator({ url: URL, topicPrefix: prefix });
    await fresh.start();
    cleanups.push(() => fresh.crash());
    await new Promise((r) => setTimeout(r, 200));
    await sim.crash(); // the old run's last will (online false, its bootId) arrives after the new run's status
    await new Promise((r) => setTimeout(r, 300));
    expect((await transport.deliver(target(d), [member(d, 2, 'm1')])).answered).toEqual([{ seq: 2, ok: true }]);
  });

  it('re-delivery of applied seqs is idempotent; a command refused for a passing reason is applied when sent again', async () => {
    const { sim, transport, reachability } = await setup();
    const d = 'dev-idem';
    await transport.deliver(target(d), [member(d, 1, 'm1', { cardNo: '1111111111' }), member(d, 2, 'm2')]);
    const before = sim.memory(d);

    // The same seqs again (an ack was lost): acknowledged, not applied twice — even with other content.
    const again = await transport.deliver(target(d), [member(d, 1, 'm1', { cardNo: '9999999999' }), member(d, 2, 'm2')]);
    expect(again).toEqual({
      answered: [
        { seq: 1, ok: true },
        { seq: 2, ok: true },
      ],
    });
    expect(sim.memory(d)).toEqual(before);

    // A newer seq for the same subject applies.
    await transport.deliver(target(d), [member(d, 3, 'm1', { cardNo: '3333333333' })]);
    expect(sim.memory(d).holds['member:m1'].cards[0].cardNo).toBe('3333333333');

    // Seq 4 is refused (device offline), seq 5 for another subject gets through later; seq 4 sent again still applies.
    await sim.setDeviceOnline(d, false);
    await waitFor(() => reachability.filter((r) => r.deviceId === d).at(-1)?.online === false, 'offline');
    expect((await transport.deliver(target(d), [remove(d, 4, 'm2')])).stopped?.kind).toBe('offline');
    await sim.setDeviceOnline(d, true);
    await waitFor(() => reachability.filter((r) => r.deviceId === d).at(-1)?.online, 'online');
    await transport.deliver(target(d), [member(d, 5, 'm5')]);
    expect(await transport.deliver(target(d), [remove(d, 4, 'm2')])).toEqual({ answered: [{ seq: 4, ok: true }] });
    expect(Object.keys(sim.memory(d).holds).sort()).toEqual(['member:m1', 'member:m5']);
    expect(sim.memory(d).lastSeq).toBe(5);
  });

  it('ignores malformed messages on every topic and keeps working; logs carry no face or QR code', async () => {
    const { prefix, sim, transport, log, simLog, inventories, reachability } = await setup();
    const d = 'dev-junk';
    const junk: [string, string][] = [
      [`${prefix}/gateway/status`, 'not json'],
      [`${prefix}/devices/${d}/status`, JSON.stringify({ v: 2, online: false })],
      [`${prefix}/devices/${d}/status`, JSON.stringify({ v: 1, online: 'no' })],
      [`${prefix}/devices/${d}/acks`, JSON.stringify({ v: 1, deviceId: d, seq: 'x', ok: true })],
      [`${prefix}/devices/${d}/acks`, JSON.stringify({ v: 1, deviceId: 'other', seq: 1, ok: true })],
      [`${prefix}/devices/${d}/acks`, JSON.stringify({ v: 1, deviceId: d, seq: 1, ok: false })],
      [
        `${prefix}/devices/${d}/inventory`,
        JSON.stringify({ v: 1, deviceId: d, lastSeq: 1, holds: [{ subject: { kind: 'robot', id: 'x' }, stateHash: 'h' }] }),
      ],
      [`${prefix}/devices/${d}/inventory`, '[]'],
      [`${prefix}/devices/${d}/commands`, '{"v":1,'],
      [
        `${prefix}/devices/${d}/commands`,
        JSON.stringify({ v: 1, deviceId: d, seq: 1, op: 'explode', subject: { kind: 'member', id: 'm' }, stateHash: 'h' }),
      ],
      [`${prefix}/gateway/sync`, 'nope'],
    ];
    for (const [t, p] of junk) await raw.publishAsync(t, p, { qos: 1 });
    await waitFor(() => log.lines.filter((l) => l.level === 'warn').length >= 8, 'the transport warnings');
    await waitFor(() => simLog.lines.filter((l) => l.level === 'warn').length >= 3, 'the simulator warnings');
    expect(inventories).toEqual([]);
    expect(reachability).toEqual([]);
    expect(log.lines.filter((l) => l.level === 'warn').every((l) => (l.obj as { reason?: string }).reason)).toBe(true);

    const cmds = [member(d, 1, 'm1'), visitor(d, 2, 'v1')];
    expect(await transport.deliver(target(d), cmds)).toEqual({
      answered: [
        { seq: 1, ok: true },
        { seq: 2, ok: true },
      ],
    });
    expect(Object.keys(sim.memory(d).holds).sort()).toEqual(['member:m1', 'visitor:v1']);

    const logged = JSON.stringify([...log.lines, ...simLog.lines]);
    expect(logged).not.toContain(QR);
    expect(logged).not.toContain(FACE.toString('base64').slice(0, 40));
  });
});

describe('MqttTransport acknowledgements', () => {
  it('applies acks in seq order whatever order they arrive in; ignores duplicate and stale acks', async () => {
    const { prefix, transport } = await setup({ gateway: false });
    const d = 'dev-order';
    const cmds = [member(d, 10, 'a'), member(d, 11, 'b'), member(d, 12, 'c'), member(d, 13, 'd')];
    const gw = await fakeGateway(
      prefix,
      (seen, publish) => {
        publish({ v: 1, deviceId: d, seq: 9, ok: false, error: { kind: 'offline', message: 'stale' } }); // not in this delivery
        publish(ok(seen[3]));
        publish({ v: 1, deviceId: d, seq: 12, ok: false, error: { kind: 'bad-input', message: 'card format' } });
        publish({ v: 1, deviceId: d, seq: 12, ok: true }); // duplicate: the first answer stands
        publish(ok(seen[1]));
        publish(ok(seen[0]));
      },
      4,
    );

    const report = await transport.deliver(target(d), cmds);

    expect(gw.seen.map((c) => c.seq)).toEqual([10, 11, 12, 13]); // published in order
    expect(report).toEqual({
      answered: [
        { seq: 10, ok: true },
        { seq: 11, ok: true },
        { seq: 12, ok: false, message: 'card format' },
        { seq: 13, ok: true },
      ],
    });
  });

  it('acks missing after ackTimeoutMs: the acknowledged prefix, then stopped temporary', async () => {
    const { prefix, transport } = await setup({ gateway: false, ackTimeoutMs: 400 });
    const d = 'dev-slow';
    await fakeGateway(
      prefix,
      (seen, publish) => {
        publish(ok(seen[0]));
        publish(ok(seen[2])); // seq 2 never acknowledged
      },
      3,
    );
    const started = Date.now();
    const report = await transport.deliver(target(d), [member(d, 1, 'a'), member(d, 2, 'b'), member(d, 3, 'c')]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(report).toEqual({
      answered: [{ seq: 1, ok: true }],
      stopped: { kind: 'temporary', message: 'no acknowledgement within 400 ms' },
    });

    // A gateway that is online but never answers.
    const silent = await setup({ gateway: false, ackTimeoutMs: 300 });
    await raw.publishAsync(`${silent.prefix}/gateway/status`, JSON.stringify({ v: 1, online: true }), { qos: 1, retain: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(await silent.transport.deliver(target(d), [member(d, 1, 'a')])).toEqual({
      answered: [],
      stopped: { kind: 'temporary', message: 'no acknowledgement within 300 ms' },
    });
  });

  it('no gateway status ever received: offline after the grace, nothing published', async () => {
    const { prefix, transport } = await setup({ gateway: false, statusGraceMs: 300 });
    const seen: string[] = [];
    const spy = await connectAsync(URL, { reconnectPeriod: 0 }, false);
    cleanups.push(() => spy.endAsync());
    spy.on('message', (t) => seen.push(t));
    await spy.subscribeAsync(`${prefix}/devices/+/commands`, { qos: 1 });
    const report = await transport.deliver(target('dev-none'), [member('dev-none', 1, 'a')]);
    expect(report).toEqual({ answered: [], stopped: { kind: 'offline', message: expect.stringMatching(/no gateway status/) } });
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual([]);
  });

  it('the gateway going offline while acks are awaited ends the delivery at once', async () => {
    const { prefix, transport } = await setup({ gateway: false, ackTimeoutMs: 10_000 });
    const d = 'dev-drop';
    await fakeGateway(
      prefix,
      (seen, publish) => {
        publish(ok(seen[0]));
        setTimeout(
          () => void raw.publishAsync(`${prefix}/gateway/status`, JSON.stringify({ v: 1, online: false }), { qos: 1, retain: true }),
          50,
        );
      },
      2,
    );
    const started = Date.now();
    const report = await transport.deliver(target(d), [member(d, 1, 'a'), member(d, 2, 'b')]);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(report).toEqual({ answered: [{ seq: 1, ok: true }], stopped: { kind: 'offline', message: 'the gateway went offline' } });
  });
});
