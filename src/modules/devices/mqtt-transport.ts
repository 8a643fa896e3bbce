/**
 * The `mqtt` transport: commands reach the devices through a building gateway over
 * an MQTT broker. Topics and payloads are in `mqtt-topics.ts` and docs/devices.md.
 *
 * Connection. One client, clean session, automatic reconnect. Nothing the service
 * needs lives in a broker session: statuses are retained (re-read on every
 * subscribe), the service asks for every inventory on every (re)connect and
 * whenever the gateway comes online or restarts (a new `bootId`), and a
 * command whose ack was lost is simply not answered, so the sync service sends it
 * again (the gateway acknowledges a repeat without applying it twice). A clean
 * session also leaves no queue behind on the broker for an instance that is gone.
 *
 * Delivery. `deliver` refuses to publish when the broker is not connected, the
 * gateway is known offline (its retained status says so, or none arrived within
 * `statusGraceMs` of connecting) or the device's retained status says offline.
 * Otherwise it publishes all commands in order (QoS 1) and then waits for their
 * acks, which it applies in sequence order: the answer is the longest in-order
 * prefix of acknowledged commands, cut at the first offline/temporary refusal, or
 * at the first missing ack when `ackTimeoutMs` runs out. A gateway or device going
 * offline while acks are awaited ends the wait at once (offline).
 *
 * Logs name topics, devices, sequence numbers and subjects only: never a payload,
 * since commands carry faces and QR codes.
 */
import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import type { DeliveryReport, DeviceTarget, DeviceTransport, TransportEvents, WireAck, WireCommand } from './transport.js';
import {
  isTopicLevel,
  mqttTopics,
  sendImmediately,
  parseAccessEvent,
  parseAck,
  parseInventory,
  parseStatus,
  type MqttTopics,
} from './mqtt-topics.js';

/** pino-compatible. */
export interface TransportLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface MqttTransportOptions {
  /** Broker address, e.g. `mqtt://127.0.0.1:1883`. */
  url: string;
  /** First topic levels, e.g. `booking` (see docs/devices.md). */
  topicPrefix: string;
  /** How long a delivery waits for all its acks. Default 5000. */
  ackTimeoutMs?: number;
  /** How long after connecting an unknown gateway status is waited for before a delivery counts the gateway offline. Default 2000. */
  statusGraceMs?: number;
  /** How long `start` waits for the first connection; the client keeps trying afterwards. Default 10000. */
  connectWaitMs?: number;
  /** Broker reconnect interval. Default 1000. */
  reconnectPeriodMs?: number;
  clientId?: string;
  logger?: TransportLogger;
}

const SILENT: TransportLogger = { info() {}, warn() {}, error() {} };

type Answer = DeliveryReport['answered'][number];

/** One delivery in flight: its commands' seqs in order and the acks received for them. */
class PendingDelivery {
  private readonly acks = new Map<number, WireAck>();
  private readonly wanted: Set<number>;
  private settle!: (r: DeliveryReport) => void;
  readonly done: Promise<DeliveryReport>;
  finished = false;

  constructor(
    readonly deviceId: string,
    private readonly seqs: number[],
  ) {
    this.wanted = new Set(seqs);
    this.done = new Promise((resolve) => (this.settle = resolve));
  }

  /** The in-order prefix of answers, and where it stops (if it stops on a refusal). */
  private prefix(): { answered: Answer[]; stopped?: DeliveryReport['stopped']; complete: boolean } {
    const answered: Answer[] = [];
    for (const seq of this.seqs) {
      const ack = this.acks.get(seq);
      if (!ack) return { answered, complete: false };
      if (ack.ok) answered.push({ seq, ok: true });
      else if (ack.error?.kind === 'bad-input') answered.push({ seq, ok: false, message: ack.error.message });
      else
        return {
          answered,
          stopped: { kind: ack.error?.kind === 'offline' ? 'offline' : 'temporary', message: ack.error?.message ?? 'refused' },
          complete: true,
        };
    }
    return { answered, complete: true };
  }

  /** Records an ack; duplicates and acks for other seqs are ignored. */
  ack(a: WireAck): void {
    if (this.finished || !this.wanted.has(a.seq) || this.acks.has(a.seq)) return;
    this.acks.set(a.seq, a);
    const p = this.prefix();
    if (p.complete) this.finish(p.stopped ? { answered: p.answered, stopped: p.stopped } : { answered: p.answered });
  }

  /** Ends the wait: what is acknowledged in order so far, then the stop. */
  stop(kind: 'offline' | 'temporary', message: string): void {
    const p = this.prefix();
    this.finish({ answered: p.answered, stopped: p.stopped ?? { kind, message } });
  }

  private finish(r: DeliveryReport): void {
    if (this.finished) return;
    this.finished = true;
    this.settle(r);
  }
}

export class MqttTransport implements DeviceTransport {
  readonly name = 'mqtt' as const;
  readonly topics: MqttTopics;
  private readonly ackTimeoutMs: number;
  private readonly statusGraceMs: number;
  private readonly connectWaitMs: number;
  private readonly log: TransportLogger;
  private client: MqttClient | null = null;
  private events: TransportEvents | null = null;
  private connectedAt = 0;
  /** Last retained gateway status; undefined until one arrives. */
  private gatewayOnline: boolean | undefined;
  /** The run of the gateway its last online status named. */
  private gatewayBootId: string | undefined;
  private readonly deviceOnline = new Map<string, boolean>();
  private readonly pending = new Set<PendingDelivery>();
  private statusWaiters: (() => void)[] = [];
  /** Resolves `start` once the first connection has subscribed. */
  private onReady: (() => void) | null = null;

  constructor(private readonly opts: MqttTransportOptions) {
    this.topics = mqttTopics(opts.topicPrefix);
    this.ackTimeoutMs = opts.ackTimeoutMs ?? 5000;
    this.statusGraceMs = opts.statusGraceMs ?? 2000;
    this.connectWaitMs = opts.connectWaitMs ?? 10_000;
    this.log = opts.logger ?? SILENT;
  }

  async start(events: TransportEvents): Promise<void> {
    if (this.client) throw new Error('MqttTransport already started');
    this.events = events;
    // Loaded on first use: a service on the sandbox transport never holds the MQTT client library.
    const { connect } = await import('mqtt');
    const client = connect(this.opts.url, {
      clientId: this.opts.clientId ?? `booking-service-${randomUUID()}`,
      clean: true,
      resubscribe: false, // subscribed again on every connect, below, before the sync request
      reconnectPeriod: this.opts.reconnectPeriodMs ?? 1000,
      connectTimeout: 10_000,
      keepalive: 30,
    });
    this.client = client;
    client.on('connect', () => {
      sendImmediately(client);
      void this.onConnect(client);
    });
    client.on('message', (topic, payload) => this.onMessage(topic, payload));
    client.on('error', (err) => this.log.error({ err: err.message, url: this.opts.url }, 'mqtt transport: client error'));
    client.on('close', () => {
      if (this.connectedAt === 0) return;
      this.connectedAt = 0;
      this.log.warn({ url: this.opts.url }, 'mqtt transport: connection lost, reconnecting');
      // Acks published while we are away are lost (clean session): stop waiting.
      for (const p of this.pending) p.stop('temporary', 'connection to the MQTT broker lost');
    });

    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.log.warn(
          { url: this.opts.url, waitedMs: this.connectWaitMs },
          'mqtt transport: broker not reachable yet; deliveries answer offline until it is',
        );
        resolve();
      }, this.connectWaitMs);
      this.onReady = () => {
        clearTimeout(timer);
        this.onReady = null;
        resolve();
      };
    });
  }

  async stop(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = null;
    this.connectedAt = 0;
    for (const p of this.pending) p.stop('temporary', 'transport stopped');
    this.releaseStatusWaiters();
    this.onReady?.();
    await client.endAsync();
    client.removeAllListeners();
    client.on('error', () => {}); // a late error from the ended client must not crash the process
    this.events = null;
  }

  async deliver(device: DeviceTarget, commands: WireCommand[]): Promise<DeliveryReport> {
    if (!isTopicLevel(device.id)) throw new Error(`device id ${JSON.stringify(device.id)} cannot be an MQTT topic level`);
    if (commands.length === 0) return { answered: [] };
    const unreachable = await this.unreachable(device.id);
    if (unreachable) return { answered: [], stopped: { kind: 'offline', message: unreachable } };
    const client = this.client!;

    const ordered = [...commands].sort((a, b) => a.seq - b.seq);
    const delivery = new PendingDelivery(
      device.id,
      ordered.map((c) => c.seq),
    );
    this.pending.add(delivery);
    const timer = setTimeout(() => delivery.stop('temporary', `no acknowledgement within ${this.ackTimeoutMs} ms`), this.ackTimeoutMs);
    try {
      const topic = this.topics.commands(device.id);
      for (const cmd of ordered) {
        client.publish(topic, JSON.stringify(cmd), { qos: 1, retain: false }, (err) => {
          if (!err) return;
          this.log.warn({ deviceId: device.id, seq: cmd.seq, err: err.message }, 'mqtt transport: publish failed');
          delivery.stop('temporary', `publish failed: ${err.message}`);
        });
      }
      const report = await delivery.done;
      if (report.stopped) {
        this.log.info(
          { deviceId: device.id, answered: report.answered.length, of: ordered.length, stopped: report.stopped.kind },
          'mqtt transport: delivery stopped',
        );
      }
      return report;
    } finally {
      clearTimeout(timer);
      this.pending.delete(delivery);
    }
  }

  /** Why a device cannot be reached now, or null. Waits out the status grace after connecting. */
  private async unreachable(deviceId: string): Promise<string | null> {
    if (!this.client) return 'the MQTT transport is not started';
    if (!this.client.connected || this.connectedAt === 0) return `not connected to the MQTT broker at ${this.opts.url}`;
    if (this.gatewayOnline === undefined) {
      const left = this.connectedAt + this.statusGraceMs - Date.now();
      if (left > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, left);
          function done() {
            clearTimeout(timer);
            resolve();
          }
          this.statusWaiters.push(done);
        });
      }
      if (!this.client?.connected) return `not connected to the MQTT broker at ${this.opts.url}`;
      if (this.gatewayOnline === undefined) return 'no gateway status received: the gateway has not connected to the broker';
    }
    if (!this.gatewayOnline) return 'the gateway is offline';
    if (this.deviceOnline.get(deviceId) === false) return 'the device is offline (as its gateway reports)';
    return null;
  }

  async requestInventory(devices: DeviceTarget[]): Promise<number> {
    const deviceIds = devices.map((d) => d.id);
    const client = this.client;
    if (!client?.connected) return 0;
    const ids = deviceIds.filter(isTopicLevel);
    await client.publishAsync(this.topics.gatewaySync, JSON.stringify({ v: 1, deviceIds: ids }), { qos: 1, retain: false });
    return 0;
  }

  private releaseStatusWaiters(): void {
    const waiters = this.statusWaiters;
    this.statusWaiters = [];
    for (const w of waiters) w();
  }

  private async onConnect(client: MqttClient): Promise<void> {
    const t = this.topics;
    try {
      await client.subscribeAsync({
        [t.wildcard.acks]: { qos: 1 },
        [t.wildcard.status]: { qos: 1 },
        [t.wildcard.inventory]: { qos: 1 },
        [t.wildcard.events]: { qos: 1 },
        [t.gatewayStatus]: { qos: 1 },
      });
      this.connectedAt = Date.now();
      this.onReady?.();
      this.log.info({ url: this.opts.url, prefix: t.prefix }, 'mqtt transport: connected; asking the gateway for inventories');
      this.emit('gateway-online', () => this.events?.gatewayOnline());
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'mqtt transport: subscribing or the sync request failed');
    }
  }

  private onMessage(topic: string, payload: Buffer): void {
    const where = this.topics.parse(topic);
    if (!where) return;
    switch (where.kind) {
      case 'gateway-status': {
        const s = parseStatus(payload);
        if (!s.ok) return this.malformed(topic, s.reason);
        const { online, bootId } = s.value;
        // The last will of an earlier run arriving after the new run announced itself is stale.
        if (!online && bootId !== undefined && this.gatewayOnline && this.gatewayBootId !== undefined && bootId !== this.gatewayBootId)
          return;
        const cameOnline = online && (this.gatewayOnline !== true || (bootId !== undefined && bootId !== this.gatewayBootId));
        if (this.gatewayOnline !== online) this.log.info({ online }, 'mqtt transport: gateway status');
        this.gatewayOnline = online;
        if (online) this.gatewayBootId = bootId;
        this.releaseStatusWaiters();
        if (!online) for (const p of this.pending) p.stop('offline', 'the gateway went offline');
        // Back, or restarted: what its devices hold may have changed (a gateway that lost its memory holds nothing).
        if (cameOnline) {
          this.log.info({ bootId }, 'mqtt transport: gateway online; asking for inventories');
          this.emit('gateway-online', () => this.events?.gatewayOnline());
        }
        return;
      }
      case 'status': {
        const s = parseStatus(payload);
        if (!s.ok) return this.malformed(topic, s.reason);
        const before = this.deviceOnline.get(where.deviceId);
        this.deviceOnline.set(where.deviceId, s.value.online);
        if (!s.value.online) for (const p of this.pending) if (p.deviceId === where.deviceId) p.stop('offline', 'the device went offline');
        if (before !== s.value.online) this.emit('reachability', () => this.events?.reachability(where.deviceId, s.value.online));
        return;
      }
      case 'acks': {
        const a = parseAck(payload);
        if (!a.ok) return this.malformed(topic, a.reason);
        if (a.value.deviceId !== where.deviceId) return this.malformed(topic, 'ack deviceId does not match its topic');
        for (const p of this.pending) if (p.deviceId === where.deviceId) p.ack(a.value);
        return;
      }
      case 'inventory': {
        const r = parseInventory(payload);
        if (!r.ok) return this.malformed(topic, r.reason);
        if (r.value.deviceId !== where.deviceId) return this.malformed(topic, 'inventory deviceId does not match its topic');
        const { lastSeq, holds } = r.value;
        this.emit('inventory', () => void this.events?.inventory(where.deviceId, { lastSeq, holds }));
        return;
      }
      case 'events': {
        const e = parseAccessEvent(payload);
        if (!e.ok) return this.malformed(topic, e.reason);
        if (e.value.deviceId !== where.deviceId) return this.malformed(topic, 'event deviceId does not match its topic');
        const event = e.value;
        this.emit('access', () => void this.events?.access(event).catch((err: unknown) => this.accessFailed(err)));
        return;
      }
      default:
        return;
    }
  }

  private accessFailed(err: unknown): void {
    this.log.error({ err: (err as Error).message, event: 'access' }, 'mqtt transport: recording an access event failed');
  }

  private emit(what: string, call: () => void): void {
    try {
      call();
    } catch (err) {
      this.log.error({ err: (err as Error).message, event: what }, 'mqtt transport: event handler failed');
    }
  }

  private malformed(topic: string, reason: string): void {
    this.log.warn({ topic, reason }, 'mqtt transport: ignoring a malformed message');
  }
}
