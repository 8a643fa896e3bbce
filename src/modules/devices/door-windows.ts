/**
 * Door access in a booking's window: the booking writer's observer (structurally; the
 * devices module does not depend on booking). For a booking at an asset with door devices
 * it keeps one `door_windows` row per participant user holding the booking's current
 * window, in the booking change's transaction, and records an access change for every
 * user whose window changed (the members' access source then plans the devices in the
 * same transaction). The `door-windows` job drops windows that are over. Visitors invited
 * for the booking (the `MeetingInvites` port) are re-planned in the same transaction
 * whenever the booking's window changes: their pass on its doors follows it.
 */
import type { Kysely } from 'kysely';
import type { Engine } from '../../platform/db/database.js';
import type { Db } from '../../platform/db/db.js';
import type { Database } from '../../platform/db/schema.js';
import { writeTransaction } from '../../platform/db/transactions.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import type { AccessChangeLog } from './access-source.js';
import type { DoorWindowRepository, DoorWindowRow } from './door-window-repository.js';
import { doorWindow, type DoorWindowFacts } from './rules/door-window.js';

/** The booking's door facts as the writer hands them (see booking's DoorAccessFacts). */
export interface DoorFacts extends DoorWindowFacts {
  projectId: string;
  deviceIds: readonly string[];
  userIds: readonly string[];
}

/** A window a user holds on some devices. */
export interface HeldWindow {
  deviceIds: string[];
  from: number;
  until: number;
}

/** Port (filled by the visitors module): the invites naming a booking whose pass may still be on some device. */
export interface MeetingInvites {
  ofMeeting(meetingId: string, trx?: Db): Promise<{ id: string; projectId: string }[]>;
}

/** A booking's door window as visitors' passes follow it. */
export interface MeetingWindow {
  deviceIds: string[];
  from: number;
  until: number;
}

export interface DoorWindowsDeps {
  db: Kysely<Database>;
  engine: Engine;
  repo: DoorWindowRepository;
  access: AccessChangeLog;
  /**
   * Wakes the delivery job a moment after the booking's transaction (still open while the observer runs) has
   * committed in the usual case; if it has not yet, the job's own poll finds the commands.
   */
  deliverSoon?: () => void;
}

const sameRow = (a: DoorWindowRow | undefined, b: DoorWindowRow | undefined): boolean =>
  !!a &&
  !!b &&
  a.validFrom === b.validFrom &&
  a.validUntil === b.validUntil &&
  JSON.stringify([...a.deviceIds].sort()) === JSON.stringify([...b.deviceIds].sort());

export class DoorWindows {
  private invites: MeetingInvites | null = null;

  constructor(private readonly deps: DoorWindowsDeps) {}

  /** Plugs in the visitors' invites (built after the devices module). */
  connectInvites(invites: MeetingInvites): void {
    this.invites = invites;
  }

  /** The booking writer's observer: a booking changed (same transaction). Nothing at all for assets without door devices. */
  async changed(trx: Db, c: { meetingId: string; at: number; door: DoorFacts | null }): Promise<void> {
    const door = c.door;
    if (!door) return;
    const { repo, access } = this.deps;
    const old = await repo.ofMeeting(c.meetingId, trx);
    const w = doorWindow(door, c.at);
    const rows: DoorWindowRow[] = w
      ? door.userIds.map((userId) => ({
          meetingId: c.meetingId,
          userId,
          projectId: door.projectId,
          deviceIds: [...door.deviceIds],
          validFrom: w.from,
          validUntil: w.until,
        }))
      : [];
    const before = new Map(old.map((r) => [r.userId, r]));
    const after = new Map(rows.map((r) => [r.userId, r]));
    const changedUsers = [...new Set([...before.keys(), ...after.keys()])].filter((u) => !sameRow(before.get(u), after.get(u))).sort();
    if (!changedUsers.length) return;
    await repo.replace(c.meetingId, rows, c.at, trx);
    for (const userId of changedUsers) {
      const projectId = (after.get(userId) ?? before.get(userId))!.projectId;
      await access.record(trx, { projectId, subject: { kind: 'member', id: userId }, reason: 'booking', at: c.at });
    }
    if (!sameRow(old[0] && { ...old[0], userId: '' }, rows[0] && { ...rows[0], userId: '' }))
      await this.replanVisitors(trx, c.meetingId, 'booking', c.at);
    // The booking's transaction is still open: the delivery job is woken a moment later, not now.
    this.deps.deliverSoon?.();
  }

  /** Records an access change for each visitor invited for the meeting (their door passes follow its window). */
  private async replanVisitors(trx: Db, meetingId: string, reason: string, at: number): Promise<void> {
    if (!this.invites) return;
    for (const inv of await this.invites.ofMeeting(meetingId, trx))
      await this.deps.access.record(trx, { projectId: inv.projectId, subject: { kind: 'visitor', id: inv.id }, reason, at });
  }

  /** The meeting's door window not over by `now` (every participant holds the same), or null. */
  async forMeeting(meetingId: string, now: number, trx?: Db): Promise<MeetingWindow | null> {
    const row = (await this.deps.repo.ofMeeting(meetingId, trx)).find((r) => r.validUntil > now);
    return row ? { deviceIds: row.deviceIds, from: row.validFrom, until: row.validUntil } : null;
  }

  /** The project's devices named in some room's or desk's accessDevices (they open only in a booking's window). */
  doorDevices(projectId: string, trx?: Db): Promise<string[]> {
    return this.deps.repo.doorDevices(projectId, trx);
  }

  /** The user's windows in the project not over by `now`. */
  async forUser(projectId: string, userId: string, now: number, trx?: Db): Promise<HeldWindow[]> {
    const rows = await this.deps.repo.ofUser(projectId, userId, now, trx);
    return rows.map((r) => ({ deviceIds: r.deviceIds, from: r.validFrom, until: r.validUntil }));
  }

  /** Users of the project with a stored window (reconcile plans them). */
  usersWithWindows(projectId: string, trx?: Db): Promise<string[]> {
    return this.deps.repo.users(projectId, trx);
  }

  /** Windows over by `now` (the door-windows job). */
  due(now: number, limit: number): Promise<DoorWindowRow[]> {
    return this.deps.repo.due(now, limit);
  }

  backlog(now: number): Promise<Backlog> {
    return this.deps.repo.backlog(now);
  }

  /** A window is over: the row goes and the user's devices drop the member or move to the next window. */
  async expire(r: DoorWindowRow): Promise<void> {
    const { repo, access } = this.deps;
    const changed = await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      if (!(await repo.expire(r, trx))) return false;
      await access.record(trx, {
        projectId: r.projectId,
        subject: { kind: 'member', id: r.userId },
        reason: 'booking-ended',
        at: r.validUntil,
      });
      // The meeting's last window gone: its visitors' door passes go too.
      if (!(await repo.ofMeeting(r.meetingId, trx)).length) await this.replanVisitors(trx, r.meetingId, 'booking-ended', r.validUntil);
      return true;
    });
    if (changed) access.poke();
  }
}
