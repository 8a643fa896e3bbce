/**
 * Reference building gateway (a simulator): what a gateway writer implements, and a
 * test double for the `mqtt` transport. It plays every device whose commands it
 * receives and keeps each device's memory (optionally in a JSON file, so it
 * survives a restart). docs/devices.md gives the topics and the rules.
 *
 * Per device, commands are taken one at a time in arrival order (= the service's
 * sequence order on one topic):
 * - the device is offline (test hook) → ack `offline`, nothing applied;
 * - `checkCommand` refuses it → ack `bad-input`, nothing applied;
 * - its seq is not above the seq that last wrote its subject → a repeat: acked
 *   again, not applied (idempotent re-delivery);
 * - otherwise applied (a gap in seqs is fine) and acked; `lastSeq` becomes the
 *   highest seq applied.
 * Idempotency is kept per subject rather than by `lastSeq` alone, so a command
 * that was refused for a passing reason and is sent again later is still applied
 * even if a later command for another subject got through in between.
 *
 * Each start is a new run with its own `bootId`, named in the gateway status and
 * its last will, so the service notices a restart (and asks what the devices hold)
 * even when it never saw the gateway offline. A sync request is answered for every
 * device the gateway knows and every device it names, an unknown one with an empty
 * inventory: a gateway that lost its memory holds nothing. A retained status of
 * another run (an old last will, published late) is overwritten with this run's.
 *
 * Logs name devices, seqs and subjects only, never faces or QR codes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { connect, type MqttClient } from 'mqtt';
import { checkCommand } from '../../src/modules/devices/rules/device-command-check.js';
import { subjectKey, type SubjectKind } from '../../src/modules/devices/rules/subject-state.js';
import type { FailureKind, WireAck, WireCommand } from '../../src/modules/devices/transport.js';
import {
  mqttTopics,
  parseCommand,
  parseStatus,
  sendImmediately,
  parseSync,
  type InventoryMessage,
  type MqttTopics,
} from '../../src/modules/devices/mqtt-topics.js';

export interface HeldSubject {
  subject: { kind: SubjectKind; id: string };
  stateHash: string;
  cards: { uid: string; cardNo: string; format: string }[];
  faceSha256: string | null;
  qrCode: string | null;
  plates: string[];
  validFrom: string | null;
  validUntil: string | null;
}

export interface DeviceMemory {
  /** Highest seq applied. */
  lastSeq: number;
  /** What the device holds, by subject key (`member:…`, `visitor:…`). */
  holds: Record<string, HeldSubject>;
  /** The seq that last wrote each subject (removals included): the idempotency guard. */
  subjectSeqs: Record<string, number>;
}

interface SimLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface GatewaySimulatorOptions {
  url: string;
  topicPrefix: string;
  /** JSON file keeping every device's memory across restarts. */
  stateFile?: string;
  /** Device kinds by id (only named in bad-input messages). */
  deviceKinds?: Record<string, string>;
  clientId?: string;
  logger?: SimLogger;
}

const emptyMemory = (): DeviceMemory => ({ lastSeq: 0, holds: {}, subjectSeqs: {} });

export class GatewaySimulator {
  readonly topics: MqttTopics;
  private client: MqttClient | null = null;
  private devices = new Map<string, { memory: DeviceMemory; online: boolean }>();
  /** Messages are handled one at a time, in arrival order. */
  private queue: Promise<void> = Promise.resolve();
  private readonly log: SimLogger;
  /** This run (new at each start). */
  private bootId = '';

  constructor(private readonly opts: GatewaySimulatorOptions) {
    this.topics = mqttTopics(opts.topicPrefix);
    this.log = opts.logger ?? { info() {}, warn() {} };
    if (opts.stateFile) this.load(opts.stateFile);
  }

  /** Connects, announces itself online (last will: offline), subscribes and publishes every known inventory. */
  async start(): Promise<void> {
    if (this.client) throw new Error('gateway simulator already started');
    const t = this.topics;
    this.bootId = randomUUID();
    const client = connect(this.opts.url, {
      clientId: this.opts.clientId ?? `gateway-sim-${randomUUID()}`,
      clean: true,
      resubscribe: false,
      reconnectPeriod: 1000,
      keepalive: 10,
      will: {
        topic: t.gatewayStatus,
        payload: Buffer.from(JSON.stringify({ v: 1, online: false, bootId: this.bootId })),
        qos: 1,
        retain: true,
      },
    });
    this.client = client;
    client.on('message', (topic, payload) => {
      this.queue = this.queue
        .then(() => this.onMessage(client, topic, payload))
        .catch((err: Error) => this.log.warn({ err: err.message, topic }, 'gateway-sim: message failed'));
    });
    client.on('error', (err) => this.log.warn({ err: err.message }, 'gateway-sim: client error'));
    const ready = new Promise<void>((resolve) => {
      client.on('connect', () => {
        sendImmediately(client);
        void this.onConnect(client).then(resolve, (err: Error) => this.log.warn({ err: err.message }, 'gateway-sim: announcing failed'));
      });
    });
    await ready;
  }

  /** Graceful stop: publishes the gateway offline, then disconnects (no last will). */
  async stop(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = null;
    await this.queue;
    if (client.connected)
      await client.publishAsync(this.topics.gatewayStatus, JSON.stringify({ v: 1, online: false, bootId: this.bootId }), {
        qos: 1,
        retain: true,
      });
    await client.endAsync();
    client.removeAllListeners();
    client.on('error', () => {}); // a late error from the ended client must not crash the process
  }

  /** Ends the connection without a DISCONNECT packet, so the broker publishes the last will (gateway offline). */
  async crash(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = null;
    await client.endAsync(true);
    client.removeAllListeners();
    client.on('error', () => {}); // a late error from the ended client must not crash the process
  }

  /** Makes a device unreachable (acks `offline`) or reachable again; its retained status follows. */
  async setDeviceOnline(deviceId: string, online: boolean): Promise<void> {
    this.device(deviceId).online = online;
    if (this.client?.connected) await this.publishStatus(this.client, deviceId);
  }

  /** A copy of what the device holds. */
  memory(deviceId: string): DeviceMemory {
    return structuredClone(this.device(deviceId).memory);
  }

  /** The device lost its memory (replaced, factory reset): its next inventory is empty. */
  clearMemory(deviceId: string): void {
    this.device(deviceId).memory = emptyMemory();
    this.save();
  }

  /** The device lost one entry (a terminal's face library pruned, a record deleted on the device). */
  forget(deviceId: string, subject: { kind: SubjectKind; id: string }): void {
    const mem = this.device(deviceId).memory;
    delete mem.holds[subjectKey(subject)];
    delete mem.subjectSeqs[subjectKey(subject)];
    this.save();
  }

  /**
   * Publishes an access event at a device (`{prefix}/devices/{deviceId}/events`), as a door does when a card
   * or a face is presented: granted or refused, with the subject when the device knows it, else the card read.
   * The same eventId again is a resend (the service records it once). Returns the eventId.
   */
  async publishAccessEvent(
    deviceId: string,
    e: {
      granted: boolean;
      credentialKind?: string;
      subject?: { kind: SubjectKind; id: string };
      cardNo?: string;
      eventId?: string;
      at?: Date;
    },
  ): Promise<string> {
    const eventId = e.eventId ?? randomUUID();
    const event = {
      v: 1,
      deviceId,
      eventId,
      at: (e.at ?? new Date()).toISOString(),
      granted: e.granted,
      credentialKind: e.credentialKind ?? (e.cardNo !== undefined ? 'card' : 'face'),
      ...(e.subject ? { subject: e.subject } : {}),
      ...(e.cardNo !== undefined ? { cardNo: e.cardNo } : {}),
    };
    if (!this.client?.connected) throw new Error('gateway-sim: not connected');
    await this.client.publishAsync(this.topics.events(deviceId), JSON.stringify(event), { qos: 1, retain: false });
    return eventId;
  }

  /** Publishes one device's inventory now. */
  async publishInventory(deviceId: string): Promise<void> {
    if (this.client?.connected) await this.sendInventory(this.client, deviceId);
  }

  // -------------------------------------------------------------------------

  private device(deviceId: string) {
    let d = this.devices.get(deviceId);
    if (!d) {
      d = { memory: emptyMemory(), online: true };
      this.devices.set(deviceId, d);
    }
    return d;
  }

  private async onConnect(client: MqttClient): Promise<void> {
    const t = this.topics;
    // Subscribed before announcing: the service's sync request answers the announcement.
    await client.subscribeAsync({ [t.wildcard.commands]: { qos: 1 }, [t.gatewaySync]: { qos: 1 }, [t.gatewayStatus]: { qos: 1 } });
    await client.publishAsync(t.gatewayStatus, JSON.stringify({ v: 1, online: true, bootId: this.bootId }), { qos: 1, retain: true });
    for (const id of this.devices.keys()) await this.publishStatus(client, id);
    for (const id of this.devices.keys()) await this.sendInventory(client, id);
    this.log.info({ url: this.opts.url, prefix: t.prefix, devices: this.devices.size }, 'gateway-sim: online');
  }

  private async onMessage(client: MqttClient, topic: string, payload: Buffer): Promise<void> {
    const where = this.topics.parse(topic);
    if (!where) return;
    if (where.kind === 'gateway-status') {
      // Another run's status (an old last will published late) must not stand for this run.
      const s = parseStatus(payload);
      if (s.ok && s.value.bootId !== this.bootId && this.client === client) {
        await client.publishAsync(this.topics.gatewayStatus, JSON.stringify({ v: 1, online: true, bootId: this.bootId }), {
          qos: 1,
          retain: true,
        });
      }
      return;
    }
    if (where.kind === 'gateway-sync') {
      const s = parseSync(payload);
      if (!s.ok) return this.log.warn({ topic, reason: s.reason }, 'gateway-sim: ignoring a malformed sync request');
      const ids = new Set([...this.devices.keys(), ...(s.value.deviceIds ?? [])]);
      for (const id of ids) await this.sendInventory(client, id);
      return;
    }
    if (where.kind !== 'commands') return;
    const parsed = parseCommand(payload);
    if (!parsed.ok) return this.log.warn({ topic, reason: parsed.reason }, 'gateway-sim: ignoring a malformed command');
    const cmd = parsed.value;
    if (cmd.deviceId !== where.deviceId)
      return this.log.warn({ topic, reason: 'deviceId does not match its topic' }, 'gateway-sim: ignoring a malformed command');

    const firstSight = !this.devices.has(cmd.deviceId);
    const dev = this.device(cmd.deviceId);
    if (firstSight) await this.publishStatus(client, cmd.deviceId);

    const ack = (error?: { kind: FailureKind; message: string }) => {
      const a: WireAck = error
        ? { v: 1, deviceId: cmd.deviceId, seq: cmd.seq, ok: false, error }
        : { v: 1, deviceId: cmd.deviceId, seq: cmd.seq, ok: true };
      client.publish(this.topics.acks(cmd.deviceId), JSON.stringify(a), { qos: 1, retain: false }, (err) => {
        if (err) this.log.warn({ deviceId: cmd.deviceId, seq: cmd.seq, err: err.message }, 'gateway-sim: ack not sent');
      });
    };
    const ref = { deviceId: cmd.deviceId, seq: cmd.seq, op: cmd.op, subject: subjectKey(cmd.subject) };

    if (!dev.online) return ack({ kind: 'offline', message: 'the device is offline' });
    const check = checkCommand(cmd, this.opts.deviceKinds?.[cmd.deviceId] ?? 'device');
    if (!check.ok) {
      this.log.info(ref, 'gateway-sim: refused (bad input)');
      return ack({ kind: 'bad-input', message: check.message });
    }
    const key = subjectKey(cmd.subject);
    const mem = dev.memory;
    if (cmd.seq <= (mem.subjectSeqs[key] ?? 0)) {
      this.log.info(ref, 'gateway-sim: repeat, acknowledged again');
      return ack();
    }
    apply(mem, cmd);
    this.save();
    this.log.info(ref, 'gateway-sim: applied');
    ack();
  }

  private async publishStatus(client: MqttClient, deviceId: string): Promise<void> {
    const online = this.device(deviceId).online;
    await client.publishAsync(this.topics.status(deviceId), JSON.stringify({ v: 1, online }), { qos: 1, retain: true });
  }

  private async sendInventory(client: MqttClient, deviceId: string): Promise<void> {
    // A device it has never seen holds nothing (and stays unknown until a command comes for it).
    const mem = this.devices.get(deviceId)?.memory ?? emptyMemory();
    const report: InventoryMessage = {
      v: 1,
      deviceId,
      lastSeq: mem.lastSeq,
      holds: Object.values(mem.holds).map((h) => ({ subject: h.subject, stateHash: h.stateHash })),
    };
    await client.publishAsync(this.topics.inventory(deviceId), JSON.stringify(report), { qos: 1, retain: false });
  }

  private load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return; // no file yet
    }
    const data = JSON.parse(text) as { devices: Record<string, { memory: DeviceMemory; online?: boolean }> };
    for (const [id, d] of Object.entries(data.devices ?? {})) this.devices.set(id, { memory: d.memory, online: d.online ?? true });
  }

  private save(): void {
    const file = this.opts.stateFile;
    if (!file) return;
    const devices = Object.fromEntries([...this.devices].map(([id, d]) => [id, { memory: d.memory, online: d.online }]));
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ v: 1, devices }));
    renameSync(tmp, file);
  }
}

/** Applies one command to a device's memory (the seq checks are the caller's). */
function apply(mem: DeviceMemory, cmd: WireCommand): void {
  const key = subjectKey(cmd.subject);
  if (cmd.op === 'remove') delete mem.holds[key];
  else {
    mem.holds[key] = {
      subject: { kind: cmd.subject.kind, id: cmd.subject.id },
      stateHash: cmd.stateHash,
      cards: (cmd.cards ?? []).map((c) => ({ uid: c.uid, cardNo: c.cardNo, format: c.format })),
      // A terminal names the picture it stored by its bytes.
      faceSha256: cmd.face ? createHash('sha256').update(Buffer.from(cmd.face.data, 'base64')).digest('hex') : null,
      qrCode: cmd.qrCode ?? null,
      plates: [...(cmd.plates ?? [])],
      validFrom: cmd.validFrom ?? null,
      validUntil: cmd.validUntil ?? null,
    };
  }
  mem.subjectSeqs[key] = cmd.seq;
  mem.lastSeq = Math.max(mem.lastSeq, cmd.seq);
}
