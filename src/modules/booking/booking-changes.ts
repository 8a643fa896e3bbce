/**
 * The booking module's exported service for actors: it loads a booking and what
 * it is booked on, takes the asset's lock (serializing every change of that
 * asset, across instances), re-reads the booking inside the lock and hands the
 * actor a `write` that applies its decision through the one writer.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Engine } from '../../platform/db/database.js';
import { assetTable, oneConnection, withAssetLock } from '../../platform/db/transactions.js';
import { MAX_CLEANUP_MS, cleanupFor, type AssetInContext, type CatalogueService } from '../catalogue/index.js';
import { findConflict, type BusyInterval } from './rules/availability.js';
import { type BookingChange, type BookingChangeWriter, type BookingScope } from './booking-change.js';
import type { MeetingRepository, MeetingRow } from './meeting-repository.js';
import { SlotRepository } from './slot-repository.js';

export type { MeetingRow } from './meeting-repository.js';

export interface LockedBooking {
  trx: Kysely<Database>;
  /** The booking as read inside the lock. */
  meeting: MeetingRow;
  scope: BookingScope;
  /** Whether the booking's own window is free again (cleaning included), read inside the lock. */
  windowIsFree(): Promise<boolean>;
  /** Applies a change to `meeting` through the writer; returns the booking after it. */
  write(change: BookingChange): Promise<MeetingRow>;
}

/**
 * A room's booking as a published calendar feed may show it: times, title, status
 * and change counters only (no PIN, organizer, attendees or payment).
 */
export interface FeedBooking {
  meetingId: string;
  title: string;
  status: string;
  /** The booking's last change (DTSTAMP). */
  updatedAt: number;
  /** History entries after the first that moved it or changed its status; only grows. */
  changes: number;
  /** Whether it is a recurring series (then `windows` are its remaining occurrences). */
  series: boolean;
  /** A single booking's one window (id = the meeting id), or a series' occurrences by their stable ids. */
  windows: { id: string; start: number; end: number }[];
}

export function scopeOf(kind: 'room' | 'desk', ctx: AssetInContext): BookingScope {
  return {
    asset: {
      kind,
      id: ctx.asset.id,
      name: ctx.asset.name,
      floorName: ctx.floorName,
      config: ctx.asset.config,
      calendarEmail: kind === 'room' && ctx.asset.email ? ctx.asset.email : null,
      accessDevices: ctx.asset.access_devices ? (JSON.parse(ctx.asset.access_devices) as string[]) : [],
    },
    project: { id: ctx.project.id, timezone: ctx.project.timezone, maxHoldMs: ctx.project.max_hold_ms },
  };
}

export class BookingChanges {
  /** The conflict reads (over the same database). */
  private readonly slots: SlotRepository;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      engine: Engine;
      meetings: MeetingRepository;
      writer: BookingChangeWriter;
      catalogue: CatalogueService;
    },
  ) {
    this.slots = new SlotRepository(deps.db);
  }

  get writer(): BookingChangeWriter {
    return this.deps.writer;
  }

  /**
   * Runs an actor's reads before the lock on one connection: on PostgreSQL a read started
   * ahead (`*Ahead`) goes out in one message with the next (platform/db/transactions.ts).
   */
  readTogether<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return oneConnection(this.deps.db, this.deps.engine, work);
  }

  /** Runs `work` in a transaction holding the lock of asset `kind`/`assetId`. */
  withLock<T>(kind: string, assetId: string, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return withAssetLock(this.deps.db, this.deps.engine, { table: assetTable(kind), id: assetId }, work);
  }

  /**
   * Runs `work` under the lock of the booking's asset, with the booking re-read
   * inside it. `ctx` is the asset as the caller already read it (read before the
   * lock: inside it only the transaction may be used).
   */
  async underLock<T>(meetingId: string, kind: 'room' | 'desk', ctx: AssetInContext, work: (b: LockedBooking) => Promise<T>): Promise<T> {
    const scope = scopeOf(kind, ctx);
    return this.withLock(kind, ctx.asset.id, async (trx) => {
      const meeting = (await this.deps.meetings.byId(meetingId, trx))!;
      let current = meeting;
      const write = async (change: BookingChange) => {
        current = await this.deps.writer.apply(trx, scope, current, change);
        return current;
      };
      const windowIsFree = async () =>
        (await this.clashes(trx, kind, ctx, [{ start: meeting.start_at, end: meeting.end_at }], meeting.id))[0] === null;
      return work({ trx, meeting, scope, write, windowIsFree });
    });
  }

  /**
   * The slot-and-cleaning clash of each window on the asset (null where it is free),
   * read inside the asset lock, ignoring the booking `excludeMeetingId`. The one
   * place a booking's window is checked against the others.
   */
  async clashes(
    trx: Kysely<Database>,
    kind: 'room' | 'desk',
    ctx: AssetInContext,
    windows: { start: number; end: number }[],
    excludeMeetingId: string | null,
  ): Promise<(BusyInterval | null)[]> {
    const cleanupMinutes = cleanupFor(ctx.project, ctx.asset, kind === 'desk');
    const from = Math.min(...windows.map((w) => w.start)) - MAX_CLEANUP_MS;
    const to = Math.max(...windows.map((w) => w.end)) + MAX_CLEANUP_MS;
    const holds = await this.slots.lockedAssetSlots(ctx.asset.id, ctx.project.id, from, to, trx);
    const bookings = holds.map((h) => ({ id: h.meeting_id, start: h.start_at, end: h.end_at }));
    return windows.map((w) =>
      findConflict({ start: w.start, end: w.end, cleanupMinutes, bookings, excludeBookingId: excludeMeetingId ?? undefined }),
    );
  }

  /** A booking as read inside a transaction the caller holds (e.g. under `withLock` of its asset). */
  async meetingIn(trx: Kysely<Database>, meetingId: string): Promise<MeetingRow | undefined> {
    return this.deps.meetings.byId(meetingId, trx);
  }

  /** A booking and what it is booked on, without a lock (pages and reads of other modules). */
  async read(meetingId: string): Promise<{ meeting: MeetingRow; scope: BookingScope } | undefined> {
    const meeting = await this.deps.meetings.byId(meetingId);
    if (!meeting) return undefined;
    const kind = meeting.asset_kind as 'room' | 'desk';
    const ctx = await this.deps.catalogue.assetInContext(kind, meeting.asset_id);
    return ctx ? { meeting, scope: scopeOf(kind, ctx) } : undefined;
  }

  /**
   * The bookings of a room (in project `projectId`) overlapping [from, to) for its
   * calendar feed: `statuses`, plus bookings cancelled at or after `cancelledSince`.
   * Occurrences of a series outside [from, to) are left out.
   */
  async roomFeedBookings(
    room: { id: string; projectId: string },
    from: number,
    to: number,
    o: { statuses: string[]; cancelledSince: number },
  ): Promise<FeedBooking[]> {
    const rows = await this.deps.meetings.roomFeed(room.id, {
      projectId: room.projectId,
      from,
      to,
      statuses: o.statuses,
      cancelledSince: o.cancelledSince,
    });
    return rows.flatMap((r) => {
      const series = r.recurrence;
      const windows = (series ? series.occurrences : [{ id: r.id, start: r.start_at, end: r.end_at }]).filter(
        (w) => w.start < to && w.end > from,
      );
      if (!windows.length) return [];
      return [
        {
          meetingId: r.id,
          title: r.title,
          status: r.status,
          updatedAt: r.updated_at,
          changes: r.changes,
          series: series !== null,
          windows,
        },
      ];
    });
  }

  /** Loads a booking and its asset, then runs `work` under the lock; undefined when the booking or its asset is gone. */
  async change<T>(meetingId: string, work: (b: LockedBooking) => Promise<T>): Promise<T | undefined> {
    const m0 = await this.deps.meetings.byId(meetingId);
    if (!m0) return undefined;
    const kind = m0.asset_kind as 'room' | 'desk';
    const ctx = await this.deps.catalogue.assetInContext(kind, m0.asset_id);
    if (!ctx) return undefined;
    return this.underLock(meetingId, kind, ctx, work);
  }
}
