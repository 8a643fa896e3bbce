/**
 * HikVision access terminals over ISAPI (the service is the HTTP client; docs/devices.md). A subject is a
 * device user whose employeeNo is `m<id>` (member) or `v<id>` (visitor); its name is that same neutral
 * label. An upsert creates or modifies the user with its validity window (`Valid`, in the device's local
 * time), makes its cards exactly the command's (a visitor's QR code is written as a card: the terminals
 * read a QR code as a card number) and uploads or deletes its face (face library "1", blackFD, FPID =
 * employeeNo). A remove deletes the user (the device deletes its cards and face with it). Sending the same
 * command twice leaves the same device state.
 *
 * Delivery stops at the first passing failure (unreachable: `offline`; busy, 5xx, wrong credentials:
 * `temporary`, retried with backoff); data the device refuses and a full device are answered `ok: false`
 * and the next command goes on.
 */
import { DateTime } from 'luxon';
import type { DeliveryReport, DeviceTarget, DeviceTransport, InventoryReport, TransportEvents, WireCommand } from '../transport.js';
import type { SubjectKind } from '../rules/subject-state.js';
import { IsapiClient, type IsapiConnection, type IsapiOutcome, type IsapiUser } from './isapi-client.js';

export interface IsapiTransportOptions {
  /** The service's public base URL: devices post their events to `{publicBaseUrl}/devices/isapi/{deviceId}/events/{token}`. */
  publicBaseUrl: string | (() => string);
  /** Per-request timeout (ms), 5 s by default. */
  timeoutMs?: number;
  /** The secret path token of a device's event URL. */
  hostToken(deviceId: string): string;
  /** Real time (ms), for the capacity cache only. */
  now?: () => number;
}

/** ISAPI's local date-time form (no offset: `Valid.timeType` is `local`). */
export const ISAPI_TIME = "yyyy-MM-dd'T'HH:mm:ss";
/** The window written when a subject may enter at any time (the validity period disabled, the widest range ISAPI documents). */
const ALWAYS = { enable: false, beginTime: '2000-01-01T00:00:00', endTime: '2037-12-31T23:59:59', timeType: 'local' } as const;
const CAPACITY_CACHE_MS = 60_000;
const PAGE = 30;

class Stop extends Error {
  constructor(
    readonly kind: 'offline' | 'temporary',
    message: string,
  ) {
    super(message);
  }
}

class Refused extends Error {}

/** The device's employeeNo of a subject. */
export function employeeNoOf(subject: { kind: SubjectKind; id: string }): string {
  return `${subject.kind === 'member' ? 'm' : 'v'}${subject.id}`;
}

/** The subject of an employeeNo the service wrote, or null (an installer's own user). */
export function subjectOfEmployeeNo(employeeNo: string | null | undefined): { kind: SubjectKind; id: string } | null {
  const m = /^([mv])([0-9a-f]{24})$/.exec(employeeNo ?? '');
  return m ? { kind: m[1] === 'm' ? 'member' : 'visitor', id: m[2]! } : null;
}

/** An epoch-ms instant (or ISO string) as the device's local time, to the second. */
export function toLocal(at: string | number, zone: string): string {
  const dt = typeof at === 'number' ? DateTime.fromMillis(at, { zone }) : DateTime.fromISO(at, { zone });
  return dt.set({ millisecond: 0 }).toFormat(ISAPI_TIME);
}

/** A device's local time back to epoch ms. */
export function fromLocal(local: string, zone: string): number | null {
  const dt = DateTime.fromFormat(local.slice(0, 19), ISAPI_TIME, { zone });
  return dt.isValid ? dt.toMillis() : null;
}

/** The `Valid` block of a command. */
export function validOf(cmd: Pick<WireCommand, 'validFrom' | 'validUntil'>, zone: string): NonNullable<IsapiUser['Valid']> {
  if (!cmd.validFrom && !cmd.validUntil) return { ...ALWAYS };
  return {
    enable: true,
    beginTime: cmd.validFrom ? toLocal(cmd.validFrom, zone) : ALWAYS.beginTime,
    endTime: cmd.validUntil ? toLocal(cmd.validUntil, zone) : ALWAYS.endTime,
    timeType: 'local',
  };
}

/** What a device's `Valid` block means as a window (epoch ms; null for an open end). */
export function windowOf(valid: IsapiUser['Valid'], zone: string): { validFrom: number | null; validUntil: number | null } {
  if (!valid?.enable) return { validFrom: null, validUntil: null };
  const from = valid.beginTime && valid.beginTime !== ALWAYS.beginTime ? fromLocal(valid.beginTime, zone) : null;
  const until = valid.endTime && valid.endTime !== ALWAYS.endTime ? fromLocal(valid.endTime, zone) : null;
  return { validFrom: from, validUntil: until };
}

function must<T>(outcome: IsapiOutcome<T>): T {
  if (outcome.kind === 'ok') return outcome.body;
  if (outcome.kind === 'bad-input' || outcome.kind === 'capacity') throw new Refused(outcome.message);
  if (outcome.kind === 'auth') throw new Stop('temporary', 'the device refused the username/password (check the site document)');
  throw new Stop(outcome.offline ? 'offline' : 'temporary', outcome.message);
}

export class IsapiTransport implements DeviceTransport {
  readonly name = 'isapi' as const;
  private events: TransportEvents | null = null;
  private readonly capacity = new Map<string, { max: number | null; at: number }>();

  constructor(private readonly options: IsapiTransportOptions) {}

  async start(events: TransportEvents): Promise<void> {
    this.events = events;
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.events = null;
    return Promise.resolve();
  }

  private client(target: DeviceTarget): IsapiClient {
    if (target.connection?.kind !== 'isapi') throw new Stop('temporary', 'the device has no ISAPI connection in the site document');
    return new IsapiClient(target.connection satisfies IsapiConnection, this.options.timeoutMs ?? 5000);
  }

  /** The URL a device posts its events to. */
  eventsUrl(deviceId: string): string {
    const { publicBaseUrl } = this.options;
    const base = (typeof publicBaseUrl === 'function' ? publicBaseUrl() : publicBaseUrl).replace(/\/+$/, '');
    return `${base}/devices/isapi/${encodeURIComponent(deviceId)}/events/${encodeURIComponent(this.options.hostToken(deviceId))}`;
  }

  async deliver(target: DeviceTarget, commands: WireCommand[]): Promise<DeliveryReport> {
    const answered: DeliveryReport['answered'] = [];
    let client: IsapiClient;
    try {
      client = this.client(target);
    } catch (err) {
      return { answered, stopped: { kind: 'temporary', message: (err as Error).message } };
    }
    for (const cmd of commands) {
      try {
        if (cmd.op === 'remove') must(await client.deleteUser(employeeNoOf(cmd.subject)));
        else await this.upsert(client, target, cmd);
        answered.push({ seq: cmd.seq, ok: true });
      } catch (err) {
        if (err instanceof Refused) answered.push({ seq: cmd.seq, ok: false, message: err.message });
        else if (err instanceof Stop) return { answered, stopped: { kind: err.kind, message: err.message } };
        // An answer of a shape the client does not know: retried like a busy device, never lost.
        else return { answered, stopped: { kind: 'temporary', message: 'unexpected answer from the device' } };
      }
    }
    return { answered };
  }

  private async upsert(client: IsapiClient, target: DeviceTarget, cmd: WireCommand): Promise<void> {
    const employeeNo = employeeNoOf(cmd.subject);
    const user: IsapiUser = { employeeNo, name: employeeNo, userType: 'normal', Valid: validOf(cmd, target.timeZone) };
    const found = must(await client.searchUsers(0, 1, [employeeNo]));
    const existing = (found?.UserInfoSearch?.UserInfo ?? []).find((u) => u.employeeNo === employeeNo);
    if (existing) must(await client.modifyUser(user));
    else {
      await this.checkCapacity(client, target.id);
      const added = await client.addUser(user);
      if (added.kind !== 'ok' && /AlreadyExist/i.test(added.subStatusCode ?? '')) must(await client.modifyUser(user));
      else must(added);
    }
    await this.syncCards(client, cmd, employeeNo);
    if (cmd.face) {
      const jpeg = Buffer.from(cmd.face.data, 'base64');
      if ((existing?.numOfFace ?? 0) > 0) must(await client.deleteFace(employeeNo));
      const up = await client.uploadFace(employeeNo, jpeg);
      if (up.kind !== 'ok' && /AlreadyExistFace/i.test(up.subStatusCode ?? '')) {
        must(await client.deleteFace(employeeNo));
        must(await client.uploadFace(employeeNo, jpeg));
      } else must(up);
    } else if (cmd.face === null && (existing?.numOfFace ?? 0) > 0) {
      must(await client.deleteFace(employeeNo));
    }
  }

  private async syncCards(client: IsapiClient, cmd: WireCommand, employeeNo: string): Promise<void> {
    const want = new Set((cmd.cards ?? []).map((c) => c.cardNo).filter((c) => c !== ''));
    if (cmd.qrCode) want.add(cmd.qrCode);
    const held = must(await client.cardsOf(employeeNo)).map((c) => c.cardNo);
    const extra = held.filter((c) => !want.has(c));
    if (extra.length) must(await client.deleteCards(extra));
    for (const cardNo of want) if (!held.includes(cardNo)) must(await client.addCard({ employeeNo, cardNo, cardType: 'normalCard' }));
  }

  /** Refuses a new user on a device that holds its maximum (the maximum is read at most once a minute). */
  private async checkCapacity(client: IsapiClient, deviceId: string): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    let cached = this.capacity.get(deviceId);
    if (!cached || now - cached.at > CAPACITY_CACHE_MS) {
      const caps = await client.capabilities();
      const max = caps.kind === 'ok' ? Number(caps.body?.UserInfo?.maxRecordNum ?? NaN) : NaN;
      cached = { max: Number.isFinite(max) && max > 0 ? max : null, at: now };
      this.capacity.set(deviceId, cached);
    }
    if (cached.max === null) return;
    const count = must(await client.count());
    const users = Number(count?.UserInfoCount?.userNumber ?? 0);
    if (users >= cached.max) throw new Refused(`the device holds its maximum of ${cached.max} users`);
  }

  /** Points the device's HTTP host notification at the service's events URL (idempotent). */
  async registerHost(target: DeviceTarget, url = this.eventsUrl(target.id)): Promise<boolean> {
    try {
      const res = await this.client(target).registerHost(url);
      return res.kind === 'ok';
    } catch {
      return false;
    }
  }

  async requestInventory(targets: DeviceTarget[]): Promise<number> {
    let queued = 0;
    for (const target of targets) {
      if (target.connection?.kind !== 'isapi') continue;
      let report: InventoryReport;
      try {
        report = await this.readInventory(this.client(target), target.timeZone);
      } catch {
        continue; // unreachable or answering oddly now: the next pass asks again
      }
      if (this.events) queued += await this.events.inventory(target.id, report);
      await this.registerHost(target);
    }
    return queued;
  }

  /** Every user the service wrote, with its cards, face and window. */
  async readInventory(client: IsapiClient, zone: string): Promise<InventoryReport> {
    const holds: InventoryReport['holds'] = [];
    for (let position = 0; ;) {
      const page = must(await client.searchUsers(position, PAGE))?.UserInfoSearch;
      const users = page?.UserInfo ?? [];
      for (const u of users) {
        const subject = subjectOfEmployeeNo(u.employeeNo);
        if (!subject) continue;
        const cards = must(await client.cardsOf(u.employeeNo)).map((c) => c.cardNo);
        const face = u.numOfFace !== undefined ? u.numOfFace > 0 : must(await client.hasFace(u.employeeNo));
        // A visitor's only card is its QR code, which the service compares by tag, not by number.
        holds.push({ subject, observed: { cardNos: subject.kind === 'member' ? cards : [], face, ...windowOf(u.Valid, zone) } });
      }
      position += users.length;
      if (page?.responseStatusStrg !== 'MORE' || !users.length) break;
    }
    return { lastSeq: 0, holds };
  }
}
