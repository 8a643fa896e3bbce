/**
 * The MQTT wire between the service and a building gateway (pure): topic names and
 * the payload checks both ends use. docs/devices.md describes each topic.
 *
 *   {prefix}/devices/{deviceId}/commands   service → gateway  QoS 1, not retained  WireCommand
 *   {prefix}/devices/{deviceId}/acks       gateway → service  QoS 1, not retained  WireAck
 *   {prefix}/devices/{deviceId}/status     gateway → service  QoS 1, retained      {v:1, online}
 *   {prefix}/devices/{deviceId}/inventory  gateway → service  QoS 1, not retained  {v:1, deviceId, lastSeq, holds}
 *   {prefix}/devices/{deviceId}/events     gateway → service  QoS 1, not retained  WireAccessEvent (an access event; resends recognised by eventId)
 *   {prefix}/gateway/status                gateway → service  QoS 1, retained      {v:1, online, bootId?} (last will: online false)
 *   {prefix}/gateway/sync                  service → gateway  QoS 1, not retained  {v:1, deviceIds?}: publish every inventory
 *
 * `bootId` names one run of the gateway (new at every start): a new one means the
 * gateway restarted, maybe without its memory, and the service asks again what its
 * devices hold. `deviceIds` names the devices the service knows: the gateway
 * answers for each, with an empty inventory for one it holds nothing for.
 *
 * A parser answers the payload, or a short reason it was refused (never the payload
 * itself: a command carries a face and a QR code, which must not reach a log).
 */
import type { CredentialKind, DoorEvent, FailureKind, WireAck, WireCommand } from './transport.js';
import type { SubjectKind } from './rules/subject-state.js';

export interface StatusMessage {
  v: 1;
  online: boolean;
  /** Gateway status only: the gateway's run (new at each start). */
  bootId?: string;
}

export interface InventoryMessage {
  v: 1;
  deviceId: string;
  lastSeq: number;
  holds: { subject: { kind: SubjectKind; id: string }; stateHash: string }[];
}

export interface SyncMessage {
  v: 1;
  /** Devices to answer for even when they hold nothing (or are unknown to the gateway). */
  deviceIds?: string[];
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface MqttTopics {
  prefix: string;
  commands(deviceId: string): string;
  acks(deviceId: string): string;
  status(deviceId: string): string;
  inventory(deviceId: string): string;
  events(deviceId: string): string;
  gatewayStatus: string;
  gatewaySync: string;
  /** Subscription filters (`+` for the device id). */
  wildcard: { commands: string; acks: string; status: string; inventory: string; events: string };
  /** What a received topic is about, or null for a topic outside this wire. */
  parse(
    topic: string,
  ):
    | { kind: 'commands' | 'acks' | 'status' | 'inventory' | 'events'; deviceId: string }
    | { kind: 'gateway-status' | 'gateway-sync' }
    | null;
}

/** A topic level may not be empty or hold `/`, `+`, `#` (or NUL). */
export function isTopicLevel(s: string): boolean {
  // eslint-disable-next-line no-control-regex -- NUL is the character refused here
  return s.length > 0 && !/[/+#\u0000]/.test(s);
}

export function mqttTopics(topicPrefix: string): MqttTopics {
  const prefix = topicPrefix.replace(/\/+$/, '');
  // eslint-disable-next-line no-control-regex -- NUL is the character refused here
  if (!prefix || /[+#\u0000]/.test(prefix) || prefix.split('/').some((l) => !l)) {
    throw new Error(`invalid MQTT topic prefix ${JSON.stringify(topicPrefix)}`);
  }
  const device = (leaf: string) => (deviceId: string) => {
    if (!isTopicLevel(deviceId)) throw new Error(`device id ${JSON.stringify(deviceId)} cannot be an MQTT topic level`);
    return `${prefix}/devices/${deviceId}/${leaf}`;
  };
  const depth = prefix.split('/').length;
  return {
    prefix,
    commands: device('commands'),
    acks: device('acks'),
    status: device('status'),
    inventory: device('inventory'),
    events: device('events'),
    gatewayStatus: `${prefix}/gateway/status`,
    gatewaySync: `${prefix}/gateway/sync`,
    wildcard: {
      commands: `${prefix}/devices/+/commands`,
      acks: `${prefix}/devices/+/acks`,
      status: `${prefix}/devices/+/status`,
      inventory: `${prefix}/devices/+/inventory`,
      events: `${prefix}/devices/+/events`,
    },
    parse(topic) {
      if (!topic.startsWith(`${prefix}/`)) return null;
      const rest = topic.split('/').slice(depth);
      if (rest.length === 2 && rest[0] === 'gateway') {
        if (rest[1] === 'status') return { kind: 'gateway-status' };
        if (rest[1] === 'sync') return { kind: 'gateway-sync' };
        return null;
      }
      if (rest.length === 3 && rest[0] === 'devices' && isTopicLevel(rest[1])) {
        const leaf = rest[2];
        if (leaf === 'commands' || leaf === 'acks' || leaf === 'status' || leaf === 'inventory' || leaf === 'events')
          return { kind: leaf, deviceId: rest[1] };
      }
      return null;
    },
  };
}

// ---------------------------------------------------------------------------
// Payload checks

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isSeq = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
const isStr = (x: unknown): x is string => typeof x === 'string';
const isSubjectKind = (x: unknown): x is SubjectKind => x === 'member' || x === 'visitor';
const isFailureKind = (x: unknown): x is FailureKind => x === 'offline' || x === 'temporary' || x === 'bad-input';
const isInstantOrNull = (x: unknown) => x === null || x === undefined || (isStr(x) && !Number.isNaN(Date.parse(x)));

function json(payload: Buffer | string): Parsed<Obj> {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString());
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (!isObj(value)) return { ok: false, reason: 'not a JSON object' };
  if (value.v !== 1) return { ok: false, reason: `unknown version ${JSON.stringify(value.v)}` };
  return { ok: true, value };
}

function isSubject(x: unknown): x is { kind: SubjectKind; id: string } {
  return isObj(x) && isSubjectKind(x.kind) && isStr(x.id) && x.id.length > 0;
}

export function parseAck(payload: Buffer | string): Parsed<WireAck> {
  const j = json(payload);
  if (!j.ok) return j;
  const a = j.value;
  if (!isStr(a.deviceId) || !isSeq(a.seq) || typeof a.ok !== 'boolean') return { ok: false, reason: 'ack without deviceId, seq or ok' };
  if (a.ok) return { ok: true, value: { v: 1, deviceId: a.deviceId, seq: a.seq, ok: true } };
  const e = a.error;
  if (!isObj(e) || !isFailureKind(e.kind)) return { ok: false, reason: 'refusing ack without a known error kind' };
  return {
    ok: true,
    value: { v: 1, deviceId: a.deviceId, seq: a.seq, ok: false, error: { kind: e.kind, message: isStr(e.message) ? e.message : e.kind } },
  };
}

export function parseStatus(payload: Buffer | string): Parsed<StatusMessage> {
  const j = json(payload);
  if (!j.ok) return j;
  if (typeof j.value.online !== 'boolean') return { ok: false, reason: 'status without online' };
  if (j.value.bootId !== undefined && !(isStr(j.value.bootId) && j.value.bootId.length > 0))
    return { ok: false, reason: 'status with a malformed bootId' };
  return {
    ok: true,
    value: { v: 1, online: j.value.online, ...(j.value.bootId !== undefined ? { bootId: j.value.bootId as string } : {}) },
  };
}

export function parseInventory(payload: Buffer | string): Parsed<InventoryMessage> {
  const j = json(payload);
  if (!j.ok) return j;
  const r = j.value;
  if (!isStr(r.deviceId) || !isSeq(r.lastSeq) || !Array.isArray(r.holds))
    return { ok: false, reason: 'inventory without deviceId, lastSeq or holds' };
  const holds: InventoryMessage['holds'] = [];
  for (const h of r.holds) {
    if (!isObj(h) || !isSubject(h.subject) || !isStr(h.stateHash))
      return { ok: false, reason: 'inventory entry without subject or stateHash' };
    holds.push({ subject: { kind: h.subject.kind, id: h.subject.id }, stateHash: h.stateHash });
  }
  return { ok: true, value: { v: 1, deviceId: r.deviceId, lastSeq: r.lastSeq, holds } };
}

const CREDENTIAL_KINDS: readonly string[] = ['card', 'face', 'qr', 'plate', 'pin', 'fingerprint', 'other'];

/** An access event from `{prefix}/devices/{deviceId}/events`, as a DoorEvent (its eventId is the event key). */
export function parseAccessEvent(payload: Buffer | string): Parsed<DoorEvent> {
  const j = json(payload);
  if (!j.ok) return j;
  const e = j.value;
  if (!isStr(e.deviceId) || !isStr(e.eventId) || !e.eventId || e.eventId.length > 256 || typeof e.granted !== 'boolean')
    return { ok: false, reason: 'event without deviceId, eventId or granted' };
  const at = isStr(e.at) ? Date.parse(e.at) : NaN;
  if (Number.isNaN(at)) return { ok: false, reason: 'event without a valid at' };
  if (!isStr(e.credentialKind) || !CREDENTIAL_KINDS.includes(e.credentialKind))
    return { ok: false, reason: 'event with an unknown credentialKind' };
  if (e.subject !== undefined && e.subject !== null && !isSubject(e.subject))
    return { ok: false, reason: 'event with a malformed subject' };
  if (e.cardNo !== undefined && e.cardNo !== null && (!isStr(e.cardNo) || e.cardNo.length > 256))
    return { ok: false, reason: 'event with a malformed cardNo' };
  return {
    ok: true,
    value: {
      deviceId: e.deviceId,
      eventKey: e.eventId,
      at,
      granted: e.granted,
      credentialKind: e.credentialKind as CredentialKind,
      subject: isSubject(e.subject) ? { kind: e.subject.kind, id: e.subject.id } : null,
      cardNo: isStr(e.cardNo) ? e.cardNo : null,
    },
  };
}

export function parseSync(payload: Buffer | string): Parsed<SyncMessage> {
  const j = json(payload);
  if (!j.ok) return j;
  const ids = j.value.deviceIds;
  if (ids === undefined) return { ok: true, value: { v: 1 } };
  if (!Array.isArray(ids) || !ids.every((id) => isStr(id) && isTopicLevel(id)))
    return { ok: false, reason: 'sync request with malformed deviceIds' };
  return { ok: true, value: { v: 1, deviceIds: ids as string[] } };
}

/**
 * A command's shape (what a gateway needs to read it at all). Whether the device can
 * take it is `checkCommand`'s question, answered with a bad-input ack.
 */
export function parseCommand(payload: Buffer | string): Parsed<WireCommand> {
  const j = json(payload);
  if (!j.ok) return j;
  const c = j.value;
  if (!isStr(c.deviceId) || !isSeq(c.seq)) return { ok: false, reason: 'command without deviceId or seq' };
  if (c.op !== 'upsert' && c.op !== 'remove') return { ok: false, reason: 'command with an unknown op' };
  if (!isSubject(c.subject) || !isStr(c.stateHash)) return { ok: false, reason: 'command without subject or stateHash' };
  if (
    c.cards !== undefined &&
    !(Array.isArray(c.cards) && c.cards.every((k) => isObj(k) && isStr(k.uid) && isStr(k.cardNo) && isStr(k.format)))
  ) {
    return { ok: false, reason: 'command with malformed cards' };
  }
  if (c.face !== undefined && c.face !== null && !(isObj(c.face) && isStr(c.face.mime) && isStr(c.face.sha256) && isStr(c.face.data))) {
    return { ok: false, reason: 'command with a malformed face' };
  }
  if (c.qrCode !== undefined && c.qrCode !== null && !isStr(c.qrCode)) return { ok: false, reason: 'command with a malformed qrCode' };
  if (c.plates !== undefined && !(Array.isArray(c.plates) && c.plates.every(isStr)))
    return { ok: false, reason: 'command with malformed plates' };
  if (!isInstantOrNull(c.validFrom) || !isInstantOrNull(c.validUntil))
    return { ok: false, reason: 'command with a malformed validity window' };
  return { ok: true, value: c as unknown as WireCommand };
}

/**
 * Turns off Nagle's algorithm on the client's TCP connection (call on every
 * connect). Commands and acks are small request/response messages; with Nagle on,
 * each waits for the peer's delayed ACK, about 40 ms a round trip on loopback.
 */
export function sendImmediately(client: { stream?: unknown }): void {
  const stream = client.stream as { setNoDelay?: (on: boolean) => void } | undefined;
  stream?.setNoDelay?.(true);
}
