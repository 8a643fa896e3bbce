/**
 * Visitor management (operator-api.md "Visitors"): a host invites a visitor, the
 * visitor enters by showing the invite's QR code at a reader or by driving up to
 * a licence-plate camera, the host may cancel, and an invite's code is withdrawn
 * from the devices when its window is over (the `visitor-expiry` job).
 *
 * Every change is one transaction: the invite or entry, the access change the
 * devices module consumes (through the `AccessChangeLog` port), and the event
 * (through the outbox). Reads of other modules (project, host, unit, device) are
 * made through their services before the transaction.
 *
 * Decisions (docs/decisions.md, "Visitors"):
 * - A host who is not an active member of the project is 400 KS001 (a bad
 *   reference in the body); an unknown project is 404 KS005.
 * - An invite whose window is already over may be created; it is `expired` at once.
 * - An invite may name a booking (`meetingId`) of the project the host organizes or
 *   attends, active, checked-in or unpaid (rules/door-pass.ts); else 400 KS001. The
 *   doors of its room or desk then hold the visitor in the booking's window.
 * - Every granted scan is an entry and emits VMS_VISITOR_CHECKED_IN.
 * - A refusal names the invite (`inviteId`) when the scan matched one of the
 *   device's project; an unknown code or plate names none.
 */
import type { Backlog } from '../../platform/jobs/handler.js';
import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Engine } from '../../platform/db/database.js';
import type { Db } from '../../platform/db/db.js';
import type { Database } from '../../platform/db/schema.js';
import { writeTransaction } from '../../platform/db/transactions.js';
import { errors } from '../../platform/errors.js';
import { isObjectId, newId } from '../../platform/ids.js';
import type { CreateInviteBody, InviteView, ScanBody, ScanResult, VisitorEntry } from '../../contract/visitors.js';
import type { AccessChangeLog } from '../devices/index.js';
import { CODE_BYTES, codeFromBytes, normalizeCode, plateKey } from './rules/plates.js';
import { inviteStatus, pickInvite, scanDecision, validUntil } from './rules/window.js';
import { doorScanRefusal, invitedBookingProblem, passWindow, type InvitedBooking } from './rules/door-pass.js';
import {
  checkedInData,
  hostCancelledData,
  inviteSentData,
  VMS_HOST_CANCELLED,
  VMS_INVITE_SENT,
  VMS_VISITOR_CHECKED_IN,
  type Host,
} from './visitor-events.js';
import { VISITOR_QR_TAG_PURPOSE, type EntryRow, type InviteRow, type VisitorRepository } from './visitor-repository.js';
import type { VisitorDoors } from './visitor-access.js';
import { parseInstant } from '../../platform/time/instant.js';

/** The SecretBox tag purpose of QR card codes. */

/** A device as the visitors module needs it; the devices module provides it. */
export interface VisitorDevice {
  id: string;
  projectId: string;
  name: string;
  kind: string;
  location: { en: string; th: string } | null;
}

/** The devices module, as visitors use it: device look-up and a nudge to sync access changes now. */
export interface DeviceDirectory {
  device(id: string): Promise<VisitorDevice | undefined>;
  /** Called after a committed access change, so the devices hear of it without waiting for a poll. */
  poke(): void;
}

/** Projects and their members (the site module). */
export interface VisitorSite {
  project(id: string): Promise<{ id: string; name: string; timezone: string } | undefined>;
  projectMember(projectId: string, userId: string): Promise<Host | undefined>;
  /** A user's name and email, whatever their memberships (a host who has left still names the invite). */
  user(id: string): Promise<Host | undefined>;
}

/** Residential units (the members module). */
export interface VisitorUnits {
  unitName(projectId: string, userId: string): Promise<string | undefined>;
}

/** Bookings (the booking module), as an invite naming one checks it. */
export interface VisitorBookings {
  booking(meetingId: string): Promise<InvitedBooking | undefined>;
}

/** A VMS_* event as the outbox records it. */
export interface VisitorEvent {
  projectId: string;
  type: string;
  data: unknown;
  /** When it occurred (service time). */
  at: number;
  /** Visitor events are about no booking. */
  meetingId: null;
}

/** Where VMS_* events go, in the caller's transaction (the webhooks module's outbox). */
export interface VisitorEvents {
  emitEvent(trx: Db, e: VisitorEvent): Promise<void>;
}

/** The devices' entry log, as scans go into it (granted and refused): the invite, or null for an unknown code or plate. */
export interface ScanEntries {
  scanned(e: { deviceId: string; granted: boolean; credentialKind: 'qr' | 'plate'; inviteId: string | null }): Promise<void>;
}

export interface VisitorServiceDeps {
  db: Kysely<Database>;
  engine: Engine;
  repo: VisitorRepository;
  site: VisitorSite;
  units: VisitorUnits;
  devices: DeviceDirectory;
  accessLog: AccessChangeLog;
  outbox: VisitorEvents;
  secretBox: SecretBox;
  clock: Clock;
  /** Where scans are logged as door entries (optional). */
  entries?: ScanEntries;
  /** Bookings an invite may name (without it, no invite may name one). */
  bookings?: VisitorBookings;
  /** The doors of rooms and desks, and bookings' door windows: a scan at a door holds only for its booking. */
  doors?: VisitorDoors;
}

const iso = (ms: number) => new Date(ms).toISOString();
const notFound = () => errors.notFound('Visitor invite not found');
/** Attempts at drawing a code not in use in the project (80 random bits: a second draw is already unheard of). */
const CODE_ATTEMPTS = 5;

export class VisitorService {
  constructor(private readonly deps: VisitorServiceDeps) {}

  /** POST /ops/v1/visitors/invites. */
  async create(body: CreateInviteBody): Promise<InviteView> {
    const { repo, site, clock } = this.deps;
    const startAt = parseInstant(body.startDateTime, 'body.startDateTime');
    const endAt = body.endDateTime === null ? null : parseInstant(body.endDateTime, 'body.endDateTime');
    const problems: string[] = [];
    if (endAt !== null && !(startAt < endAt)) problems.push('body.endDateTime must be after body.startDateTime');
    const plate = body.licensePlate?.trim();
    const key = plate === undefined ? null : plateKey(plate);
    if (key === '') problems.push('body.licensePlate must contain letters or digits');
    if (problems.length) throw errors.validation(problems);

    const project = await site.project(body.projectId);
    if (!project) throw errors.notFound('Project not found');
    const host = await site.projectMember(project.id, body.hostUserId);
    if (!host) throw errors.validation(['body.hostUserId must name an active member of the project']);
    if (body.meetingId !== undefined) await this.checkBooking(body.meetingId, project.id, host.id);

    const now = clock.now();
    const id = newId(now);
    const row: InviteRow = {
      id,
      project_id: project.id,
      host_user_id: host.id,
      visitor_name: body.visitorName,
      visitor_email: body.visitorEmail ?? null,
      start_at: startAt,
      end_at: validUntil(startAt, endAt, project.timezone),
      end_given: endAt !== null,
      license_plate: plate ?? null,
      plate_key: key,
      visit_purpose: body.visitPurpose ?? null,
      qr_enc: '',
      qr_tag: '',
      cancelled_at: null,
      withdrawn_at: null,
      created_at: now,
      meeting_id: body.meetingId ?? null,
    };
    const code = await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      for (let attempt = 0; attempt < CODE_ATTEMPTS; attempt++) {
        const candidate = codeFromBytes(randomBytes(CODE_BYTES));
        const tag = this.tagOf(candidate);
        if (await repo.tagInUse(project.id, this.deps.secretBox.tags(VISITOR_QR_TAG_PURPOSE, candidate), now, trx)) continue;
        row.qr_enc = this.deps.secretBox.seal(candidate);
        row.qr_tag = tag;
        await repo.insertInvite(row, trx);
        await this.deps.accessLog.record(trx, { projectId: project.id, subject: { kind: 'visitor', id }, reason: 'invited', at: now });
        await this.deps.outbox.emitEvent(trx, {
          projectId: project.id,
          type: VMS_INVITE_SENT,
          data: inviteSentData(row, host, candidate, project.timezone, now),
          at: now,
          meetingId: null,
        });
        return candidate;
      }
      throw errors.internal('Could not draw an unused visitor code');
    });
    this.deps.devices.poke();
    return this.view(row, [], code, now);
  }

  /** An invite may name the booking only when it is the project's, the host's, and holds (or will hold) a door window. */
  private async checkBooking(meetingId: string, projectId: string, hostUserId: string): Promise<void> {
    const booking = this.deps.bookings ? await this.deps.bookings.booking(meetingId) : undefined;
    const problem = invitedBookingProblem(booking, projectId, hostUserId);
    if (problem) throw errors.validation([problem]);
  }

  /** POST /ops/v1/visitors/invites/{id}/cancel: idempotent; the first cancel emits VMS_HOST_CANCELLED. */
  async cancel(inviteId: string): Promise<InviteView> {
    const { repo, site, clock } = this.deps;
    const found = isObjectId(inviteId) ? await repo.invite(inviteId) : undefined;
    if (!found) throw notFound();
    if (found.cancelled_at === null) {
      const [project, host] = await Promise.all([site.project(found.project_id), site.user(found.host_user_id)]);
      if (!project) throw notFound();
      const now = clock.now();
      const changed = await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
        // The conditional update decides between concurrent cancels: only one sees it change.
        if (!(await repo.cancel(found.id, now, trx))) return false;
        await this.deps.accessLog.record(trx, {
          projectId: found.project_id,
          subject: { kind: 'visitor', id: found.id },
          reason: 'cancelled',
          at: now,
        });
        const data = hostCancelledData(found, host ?? { id: found.host_user_id, name: '', email: null }, project.timezone, now);
        await this.deps.outbox.emitEvent(trx, { projectId: found.project_id, type: VMS_HOST_CANCELLED, data, at: now, meetingId: null });
        return true;
      });
      if (changed) this.deps.devices.poke();
    }
    return this.get(inviteId);
  }

  /** GET /ops/v1/visitors/invites/{id}: the invite, its status now and its entries. */
  async get(inviteId: string): Promise<InviteView> {
    const { repo } = this.deps;
    const row = isObjectId(inviteId) ? await repo.invite(inviteId) : undefined;
    if (!row) throw notFound();
    const entries = await repo.entries(row.id);
    return this.view(row, entries, this.deps.secretBox.open(row.qr_enc), this.deps.clock.now());
  }

  /** POST /ops/v1/devices/{deviceId}/scans: a code or a plate read at a device; logged as a door entry, granted or refused. */
  async scan(deviceId: string, body: ScanBody): Promise<ScanResult> {
    const result = await this.scanOnce(deviceId, body);
    await this.deps.entries?.scanned({
      deviceId,
      granted: result.granted,
      credentialKind: body.cardCode !== undefined ? 'qr' : 'plate',
      inviteId: result.inviteId ?? null,
    });
    return result;
  }

  /** Which invite of the project a QR code read at a door is (the one a scan now would be about), or null. */
  async inviteOfCode(projectId: string, cardCode: string): Promise<string | null> {
    const code = normalizeCode(cardCode);
    if (!code) return null;
    const rows = await this.deps.repo.byTag(projectId, this.deps.secretBox.tags(VISITOR_QR_TAG_PURPOSE, code));
    return pickInvite(rows.map(facts), this.deps.clock.now())?.row.id ?? null;
  }

  /**
   * At a room's or desk's door the pass holds only for the booking the invite names, in that booking's door
   * window (what the door itself holds, rules/door-pass.ts); null elsewhere, or when it holds now.
   */
  private async doorRefusal(device: { id: string; projectId: string }, invite: InviteRow, now: number) {
    const doors = this.deps.doors;
    if (!doors) return null;
    const doorIds = new Set(await doors.doorDevices(device.projectId));
    if (!doorIds.has(device.id)) return null;
    const booking = invite.meeting_id ? await doors.forMeeting(invite.meeting_id, now) : null;
    return doorScanRefusal(passWindow(device.id, doorIds, booking, { from: invite.start_at, until: invite.end_at }), now);
  }

  private async scanOnce(deviceId: string, body: ScanBody): Promise<ScanResult> {
    const { repo, clock } = this.deps;
    const given = [body.cardCode, body.licensePlate].filter((v) => v !== undefined).length;
    if (given !== 1) throw errors.validation(['body must have exactly one of cardCode or licensePlate']);
    const device = isObjectId(deviceId) ? await this.deps.devices.device(deviceId) : undefined;
    if (!device) throw errors.notFound('Device not found');

    const entryType: VisitorEntry['entryType'] = body.cardCode !== undefined ? 'card' : 'license-plate';
    const find = async (db?: Db): Promise<InviteRow[]> => {
      if (body.cardCode !== undefined) {
        const code = normalizeCode(body.cardCode);
        return code ? repo.byTag(device.projectId, this.deps.secretBox.tags(VISITOR_QR_TAG_PURPOSE, code), db) : [];
      }
      const key = plateKey(body.licensePlate!);
      return key ? repo.byPlate(device.projectId, key, db) : [];
    };
    const now = clock.now();
    const invite = pickInvite((await find()).map(facts), now)?.row;
    if (!invite) return { granted: false, reason: 'unknown' };
    const decision = scanDecision(facts(invite), now);
    if (!decision.granted) return { granted: false, reason: decision.reason, inviteId: invite.id };
    const atDoor = await this.doorRefusal(device, invite, now);
    if (atDoor) return { granted: false, reason: atDoor, inviteId: invite.id };

    const [project, unit] = await Promise.all([
      this.deps.site.project(invite.project_id),
      this.deps.units.unitName(invite.project_id, invite.host_user_id),
    ]);
    if (!project) return { granted: false, reason: 'unknown' };
    const location = device.location ?? { en: device.name, th: device.name };
    return writeTransaction(this.deps.db, this.deps.engine, async (trx): Promise<ScanResult> => {
      // Decided again inside the transaction: a cancel may have come in between.
      const current = await repo.invite(invite.id, trx);
      const again = current ? scanDecision(facts(current), now) : undefined;
      if (!current || !again) return { granted: false, reason: 'unknown' };
      if (!again.granted) return { granted: false, reason: again.reason, inviteId: current.id };
      await repo.insertEntry({ id: newId(now), invite_id: current.id, device_id: device.id, entry_type: entryType, at: now }, trx);
      const data = checkedInData(current, { entryType, hostAssetTitle: unit ?? project.name, location }, project.timezone, now);
      await this.deps.outbox.emitEvent(trx, {
        projectId: current.project_id,
        type: VMS_VISITOR_CHECKED_IN,
        data,
        at: now,
        meetingId: null,
      });
      return { granted: true, inviteId: current.id };
    });
  }

  /**
   * Withdraws an invite's code from the devices once its window is over: records
   * the access change (`expired`) and marks it withdrawn, in one transaction.
   */
  async withdraw(invite: InviteRow): Promise<void> {
    const at = invite.end_at;
    const changed = await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      if (!(await this.deps.repo.withdraw(invite.id, at, trx))) return false;
      await this.deps.accessLog.record(trx, {
        projectId: invite.project_id,
        subject: { kind: 'visitor', id: invite.id },
        reason: 'expired',
        at,
      });
      return true;
    });
    if (changed) this.deps.devices.poke();
  }

  /** Invites whose window is over by `now` and whose code is not yet withdrawn, earliest first (the visitor-expiry job). */
  /** What the expiry job has due by `now` (metrics). */
  withdrawalsBacklog(now: number): Promise<Backlog> {
    return this.deps.repo.withdrawalsBacklog(now);
  }

  withdrawalsDue(now: number, limit: number): Promise<InviteRow[]> {
    return this.deps.repo.withdrawalsDue(now, limit);
  }

  /** The lookup tag of a code (keyed hash; the code itself is stored sealed). */
  tagOf(code: string): string {
    return this.deps.secretBox.tag(VISITOR_QR_TAG_PURPOSE, code);
  }

  /** The invites of a property-local day (`date` YYYY-MM-DD, default today) without their QR card codes (the console). */
  async invitesOfDay(projectId: string, date: string | undefined): Promise<Omit<InviteView, 'qrCardCode'>[]> {
    const project = await this.deps.site.project(projectId);
    if (!project) throw errors.notFound('Project not found');
    const now = this.deps.clock.now();
    const day = date ? DateTime.fromISO(date, { zone: project.timezone }) : DateTime.fromMillis(now, { zone: project.timezone });
    if (!day.isValid) throw errors.validation([`query.date is not a calendar date: ${date}`]);
    const from = day.startOf('day');
    const rows = await this.deps.repo.invitesBetween(projectId, from.toMillis(), from.plus({ days: 1 }).startOf('day').toMillis());
    const entries = await this.deps.repo.entriesOf(rows.map((r) => r.id));
    return rows.map((r) => {
      const { qrCardCode: _code, ...rest } = this.view(
        r,
        entries.filter((e) => e.invite_id === r.id),
        '',
        now,
      );
      return rest;
    });
  }

  private view(row: InviteRow, entries: EntryRow[], qrCardCode: string, now: number): InviteView {
    return {
      _id: row.id,
      projectId: row.project_id,
      hostUserId: row.host_user_id,
      status: inviteStatus({ ...factsOf(row), entries: entries.length }, now),
      visitorName: row.visitor_name,
      visitorEmail: row.visitor_email,
      startDateTime: iso(row.start_at),
      endDateTime: row.end_given ? iso(row.end_at) : null,
      validUntil: iso(row.end_at),
      licensePlate: row.license_plate,
      visitPurpose: row.visit_purpose,
      meetingId: row.meeting_id ?? null,
      qrCardCode,
      cancelledAt: row.cancelled_at === null ? null : iso(row.cancelled_at),
      entries: entries.map((e) => ({
        at: iso(e.at),
        deviceId: e.device_id,
        entryType: e.entry_type === 'license-plate' ? 'license-plate' : 'card',
        licensePlate: e.entry_type === 'license-plate' ? row.license_plate : null,
      })),
      createdAt: iso(row.created_at),
    };
  }
}

function factsOf(row: InviteRow) {
  return { startAt: row.start_at, endAt: row.end_at, cancelledAt: row.cancelled_at };
}

/** An invite with the facts the pure rules decide on. */
function facts(row: InviteRow) {
  return { ...factsOf(row), row };
}
