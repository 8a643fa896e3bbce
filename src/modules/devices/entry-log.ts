/**
 * The entry log: every access event from every transport (ISAPI notifications, ZKTeco uploads, MQTT
 * gateway events, the sandbox badge and visitor scans), once per device event key.
 *
 * `record` names the subject (the event's own; else the member holding the card in the project, the
 * card read in the device's format; else the visitor whose QR code it is; else `unknown`, and then the
 * card number is not stored at all), names the asset (the room, else the desk, whose access devices hold
 * the device) and stores the entry: `pending` for a granted member at an asset, `refused` when not
 * granted, `recorded` otherwise. The `door-entries` job hands each pending entry to the booking module
 * (the DoorPresence port) and stores what it did.
 */
import type { Clock } from '../../platform/clock/clock.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { AccessEntriesQuery, AccessEntry, BadgeBody } from '../../contract/access-entries.js';
import { decodeCard } from '../members/rules/card-codec.js';
import type { DeviceRepository, DeviceRow } from './device-repository.js';
import { cardFormatOf } from './device-sync.js';
import type { EntryRepository, EntryRow } from './entry-repository.js';
import { effectiveAt, entryAsset, initialOutcome, type EntrySubjectKind } from './rules/door-entry.js';
import type { CredentialKind, DoorEvent } from './transport.js';

/** Which member holds a card (decoded UID) in a project: the members module. */
export interface CardHolders {
  memberOfCard(projectId: string, uid: string): Promise<string | null>;
}

/** Which visitor invite a QR code read at a device is (the visitors module). */
export interface VisitorCodes {
  inviteOfCode(projectId: string, code: string): Promise<string | null>;
}

/** A granted member entry at an asset, as the booking module judges it. */
export interface DoorEntered {
  projectId: string;
  assetKind: 'room' | 'desk';
  assetId: string;
  userId: string;
  deviceId: string;
  /** Service time of the entry (the device's time shifted, never after its receipt). */
  at: number;
}

export type PresenceOutcome = 'check-in' | 'booked' | 'walk-in' | 'recorded';

/** What a door entry does to bookings: the booking module (services.ts connects it). */
export interface DoorPresence {
  entered(e: DoorEntered): Promise<{ outcome: PresenceOutcome; meetingId: string | null }>;
}

export interface EntryPorts {
  cards?: CardHolders;
  visitors?: VisitorCodes;
  presence?: DoorPresence;
}

export interface EntryLogDeps {
  repo: EntryRepository;
  devices: DeviceRepository;
  /** Service time. */
  clock: Clock;
  /** Real time: receipt times and claims. */
  realNow: () => number;
  /** Wakes the door-entries job. */
  wake: () => void;
  /** Whether the sandbox badge route is available. */
  sandbox: boolean;
  /** The building-wide transport (the badge is the sandbox devices'). */
  transport: 'sandbox' | 'mqtt';
}

const iso = (ms: number) => new Date(ms).toISOString();

export function entryView(e: EntryRow): AccessEntry {
  return {
    _id: e.id,
    deviceId: e.deviceId,
    assetKind: e.assetKind,
    assetId: e.assetId,
    subject: { kind: e.subjectKind, id: e.subjectId },
    credentialKind: e.credentialKind as CredentialKind,
    granted: e.granted,
    deviceAt: iso(e.deviceAt),
    receivedAt: iso(e.receivedAt),
    outcome: e.outcome,
    meetingId: e.meetingId,
  };
}

export class EntryLog {
  private ports: EntryPorts = {};
  /** Events from devices the service does not know (dropped, counted). */
  dropped = 0;

  constructor(private readonly deps: EntryLogDeps) {}

  /** The other modules' ports (built after devices). */
  connect(ports: EntryPorts): void {
    this.ports = { ...this.ports, ...ports };
  }

  /**
   * Per asset, the latest granted entry at its doors since `since` (service time), in service time: devices keep real
   * time, the service's clock may be offset (the sandbox clock). The console's "occupied by badge".
   */
  async lastGrantedByAsset(assetIds: readonly string[], since: number): Promise<Map<string, number>> {
    const offset = this.deps.clock.now() - this.deps.realNow();
    const found = await this.deps.repo.lastGranted(assetIds, since - offset);
    return new Map([...found].map(([id, at]) => [id, at + offset]));
  }

  /** Records a door event (once per device event key); the stored entry, or null for an unknown device. */
  async record(event: DoorEvent): Promise<EntryRow | null> {
    const { repo, devices } = this.deps;
    const device = await devices.device(event.deviceId);
    if (!device) {
      this.dropped++;
      return null;
    }
    const existing = await repo.byKey(device.id, event.eventKey);
    if (existing) return existing;
    const subject = await this.subjectOf(device, event);
    const assets = await repo.assetsOfDevice(device.projectId, device.id);
    const asset = entryAsset(assets.rooms, assets.desks);
    const outcome = initialOutcome({ granted: event.granted, subjectKind: subject.kind, asset });
    const inserted = await repo.insert({
      id: newId(this.deps.clock.now()),
      projectId: device.projectId,
      deviceId: device.id,
      eventKey: event.eventKey,
      subjectKind: subject.kind,
      subjectId: subject.id,
      credentialKind: event.credentialKind,
      granted: event.granted,
      deviceAt: event.at,
      receivedAt: this.deps.realNow(),
      assetKind: asset?.kind ?? null,
      assetId: asset?.id ?? null,
      outcome,
      meetingId: null,
    });
    if (inserted && outcome === 'pending') this.deps.wake();
    return (await repo.byKey(device.id, event.eventKey)) ?? null;
  }

  /** A visitor scan (POST …/scans) as a door entry: the invite it was about, or unknown. */
  async scanned(e: { deviceId: string; granted: boolean; credentialKind: 'qr' | 'plate'; inviteId: string | null }): Promise<void> {
    await this.record({
      deviceId: e.deviceId,
      eventKey: `scan:${newId(this.deps.clock.now())}`,
      at: this.deps.realNow(),
      granted: e.granted,
      credentialKind: e.credentialKind,
      subject: e.inviteId ? { kind: 'visitor', id: e.inviteId } : null,
      cardNo: null,
    });
  }

  /** Who presented the credential: the event's subject, the card's member, the QR code's visitor, or unknown. */
  private async subjectOf(device: DeviceRow, event: DoorEvent): Promise<{ kind: EntrySubjectKind; id: string | null }> {
    if (event.subject) return { kind: event.subject.kind, id: event.subject.id };
    const cardNo = event.cardNo?.trim();
    if (!cardNo) return { kind: 'unknown', id: null };
    if (event.credentialKind === 'qr') {
      const invite = (await this.ports.visitors?.inviteOfCode(device.projectId, cardNo)) ?? null;
      return invite ? { kind: 'visitor', id: invite } : { kind: 'unknown', id: null };
    }
    const decoded = decodeCard(cardNo, cardFormatOf(device));
    const member = decoded.ok ? ((await this.ports.cards?.memberOfCard(device.projectId, decoded.uid)) ?? null) : null;
    return member ? { kind: 'member', id: member } : { kind: 'unknown', id: null };
  }

  /** Pending entries nobody holds (the job's `due`). */
  due(realNow: number, limit: number): Promise<EntryRow[]> {
    return this.deps.repo.due(realNow, limit);
  }

  backlog() {
    return this.deps.repo.backlog();
  }

  claim(id: string, realNow: number, leaseMs: number): Promise<boolean> {
    return this.deps.repo.claim(id, realNow, leaseMs);
  }

  /** Asks the booking module what a claimed pending entry does and stores it (throws to be retried). */
  async process(entry: EntryRow): Promise<void> {
    const presence = this.ports.presence;
    const realNow = this.deps.realNow();
    if (!presence || entry.subjectKind !== 'member' || !entry.subjectId || !entry.assetKind || !entry.assetId) {
      await this.deps.repo.finish(entry.id, 'recorded', null, realNow);
      return;
    }
    const offset = this.deps.clock.now() - realNow;
    const r = await presence.entered({
      projectId: entry.projectId,
      assetKind: entry.assetKind,
      assetId: entry.assetId,
      userId: entry.subjectId,
      deviceId: entry.deviceId,
      at: effectiveAt(entry.deviceAt, entry.receivedAt, offset),
    });
    await this.deps.repo.finish(entry.id, r.outcome, r.meetingId, this.deps.realNow());
  }

  /** Claims and processes a pending entry at once (the sandbox badge answers with its outcome); false when someone else has it. */
  async processNow(entry: EntryRow, leaseMs = 30_000): Promise<EntryRow> {
    if (entry.outcome !== 'pending' || !(await this.claim(entry.id, this.deps.realNow(), leaseMs))) return entry;
    await this.process(entry);
    return (await this.deps.repo.byId(entry.id)) ?? entry;
  }

  async list(q: AccessEntriesQuery): Promise<AccessEntry[]> {
    const bound = (s: string | undefined) => (s === undefined ? undefined : Date.parse(s));
    let before: { deviceAt: number; id: string } | undefined;
    if (q.before !== undefined) {
      const last = await this.deps.repo.byId(q.before);
      if (!last || last.projectId !== q.project) throw errors.validation(['query.before is not an entry of this project']);
      before = { deviceAt: last.deviceAt, id: last.id };
    }
    const rows = await this.deps.repo.list({
      projectId: q.project,
      from: bound(q.from),
      to: bound(q.to),
      deviceId: q.deviceId,
      assetId: q.assetId,
      outcome: q.outcome,
      before,
      limit: q.limit ?? 100,
    });
    return rows.map(entryView);
  }

  /**
   * The sandbox badge: a card or a member presented at a sandbox device. The device grants what it
   * holds (an enrollment with that card, or of that member, whose window contains now), makes the
   * event (its time: real time, as a device's clock) and records it; the entry is judged at once.
   */
  async badge(deviceId: string, body: BadgeBody): Promise<AccessEntry> {
    if (!this.deps.sandbox) throw errors.notFound('Not found');
    if ((body.cardNo === undefined) === (body.memberId === undefined))
      throw errors.validation(['body must have exactly one of cardNo or memberId']);
    const device = await this.deps.devices.device(deviceId);
    if (!device) throw errors.notFound('Device not found');
    if (device.transportKind || this.deps.transport !== 'sandbox')
      throw errors.conflict('Only a sandbox device takes a badge here; this one reports its own events');
    const holder = await this.holderOf(device, body);
    const entry = await this.record({
      deviceId: device.id,
      eventKey: body.eventId ?? newId(this.deps.clock.now()),
      at: this.deps.realNow(),
      granted: holder !== null,
      credentialKind: body.cardNo !== undefined ? 'card' : 'face',
      subject: holder ?? (body.memberId !== undefined ? { kind: 'member', id: body.memberId } : null),
      cardNo: body.cardNo ?? null,
    });
    return entryView(await this.processNow(entry!));
  }

  /** The member (or visitor) the sandbox device lets in for this badge, or null. */
  private async holderOf(device: DeviceRow, body: BadgeBody): Promise<{ kind: 'member' | 'visitor'; id: string } | null> {
    const now = this.deps.clock.now();
    const held = (await this.deps.devices.sandboxMemory(device.id)) ?? [];
    const decoded = body.cardNo !== undefined ? decodeCard(body.cardNo, cardFormatOf(device)) : null;
    for (const h of held) {
      const s = h.state;
      if ((s.validFrom !== null && now < s.validFrom) || (s.validUntil !== null && now >= s.validUntil)) continue;
      const match = decoded ? decoded.ok && s.cards.includes(decoded.uid) : h.subject_kind === 'member' && h.subject_id === body.memberId;
      if (match) return { kind: h.subject_kind as 'member' | 'visitor', id: h.subject_id };
    }
    return null;
  }
}
