/**
 * Persistence of bookings: the meeting record, its held slots, its attendees and
 * its history. Reads default to the database; every method takes the caller's
 * transaction as its last argument so a change and what it records commit together.
 */
import { sql, type Kysely, type Insertable, type Updateable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Database, MeetingHistoryTable, MeetingSlotTable, MeetingTable } from '../../platform/db/schema.js';
import type { StoredAttendee, StoredOrganizer, StoredRecurrence } from './meeting-view.js';
import type { BillingEntry, PaymentSnapshot } from './payment-port.js';
import { sealedTable } from '../../platform/db/sealed-table-repository.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';
import { insertRows } from '../../platform/db/statements.js';

/** The meeting columns stored as JSON text or 0/1, as the record carries them (parsed once, here). */
interface TypedMeetingColumns {
  all_day: boolean;
  organizer: StoredOrganizer;
  attendees: StoredAttendee[];
  recurrence: StoredRecurrence | null;
  payment: PaymentSnapshot | null;
  billing_summaries: BillingEntry[];
}
type TypedColumn = keyof TypedMeetingColumns;

export type NewMeeting = Omit<Insertable<MeetingTable>, TypedColumn> & TypedMeetingColumns;
export type NewSlot = Insertable<MeetingSlotTable>;

/** The columns of a new booking made outside the API's create (no app, no payment, no series, not cancelled): a fresh object each call. */
export function plainBookingColumns(): Pick<
  NewMeeting,
  'app_id' | 'booked_via' | 'booked_by_user_id' | 'payment' | 'payment_due_at' | 'billing_summaries' | 'recurrence' | 'cancel_reason'
> {
  return {
    app_id: null,
    booked_via: null,
    booked_by_user_id: null,
    payment: null,
    payment_due_at: null,
    billing_summaries: [],
    recurrence: null,
    cancel_reason: null,
  };
}
export type NewHistory = Omit<Insertable<MeetingHistoryTable>, 'seq'>;
export type MeetingChanges = Omit<Updateable<MeetingTable>, TypedColumn> & Partial<TypedMeetingColumns>;

/** A stored booking: its JSON columns parsed and its all_day flag a boolean. */
export type MeetingRow = Omit<MeetingTable, TypedColumn | 'pin_failures'> & TypedMeetingColumns & { pin_failures: number };
export type HistoryRow = Omit<MeetingHistoryTable, 'analytics_at'>;

type StoredMeeting = Omit<MeetingTable, 'pin_failures'> & { pin_failures: number };

/** A meetings row as read from the database, parsed into the record the services work with. */
function meetingRecord(row: StoredMeeting): MeetingRow {
  return {
    ...row,
    all_day: row.all_day === 1,
    organizer: JSON.parse(row.organizer) as StoredOrganizer,
    attendees: JSON.parse(row.attendees) as StoredAttendee[],
    recurrence: row.recurrence ? (JSON.parse(row.recurrence) as StoredRecurrence) : null,
    payment: row.payment ? (JSON.parse(row.payment) as PaymentSnapshot) : null,
    billing_summaries: JSON.parse(row.billing_summaries) as BillingEntry[],
  };
}

/** A new booking as the meetings table stores it (bulk seeding in benches). */
export function storedMeeting(meeting: NewMeeting): Insertable<MeetingTable> {
  return storedChanges(meeting) as Insertable<MeetingTable>;
}

/** The typed columns of a change, serialized for the meetings table (only those present). */
function storedChanges(c: MeetingChanges): Updateable<MeetingTable> {
  const { all_day, organizer, attendees, recurrence, payment, billing_summaries, ...rest } = c;
  return {
    ...rest,
    ...(all_day !== undefined ? { all_day: all_day ? 1 : 0 } : {}),
    ...(organizer !== undefined ? { organizer: JSON.stringify(organizer) } : {}),
    ...(attendees !== undefined ? { attendees: JSON.stringify(attendees) } : {}),
    ...(recurrence !== undefined ? { recurrence: recurrence ? JSON.stringify(recurrence) : null } : {}),
    ...(payment !== undefined ? { payment: payment ? JSON.stringify(payment) : null } : {}),
    ...(billing_summaries !== undefined ? { billing_summaries: JSON.stringify(billing_summaries) } : {}),
  };
}

export interface MeetingListFilter {
  from: number;
  to: number;
  projectIds: string[];
  /** Every project (the ops console); projectIds is then ignored. */
  anyProject?: boolean;
  /** Restrict to meetings this user organizes or attends (delegated callers)… */
  participantUserId?: string;
  /** …except in these projects, where the caller sees everything (project admins). */
  unrestrictedProjectIds?: string[];
  assetIds?: string[];
  organizerIds?: string[];
  organizerEmails?: string[];
  attendeeEmails?: string[];
  statuses?: string[];
}

/** A room's booking as the calendar feed reads it: no PIN, organizer or attendees. */
export interface FeedBookingRow {
  id: string;
  title: string;
  status: string;
  start_at: number;
  end_at: number;
  /** A recurring series (parsed), or null. */
  recurrence: StoredRecurrence | null;
  updated_at: number;
  /** History entries that moved the booking or changed its status (the iCalendar SEQUENCE). */
  changes: number;
}

/** History actions that change a booking's status (moves are recognized by their old and new times). */
export const STATUS_CHANGING_ACTIONS = ['cancel', 'cancel-updating', 'check-in', 'check-out', 'end', 'pay', 'payment-timeout'] as const;

export class MeetingRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async byId(id: string, db: Db = this.db): Promise<MeetingRow | undefined> {
    const row = await db.selectFrom('meetings').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? meetingRecord(row) : undefined;
  }

  /** Bookings changed after `after` (updated_at, service time), oldest change first: the console's change feed. */
  async changedSince(after: number, limit: number, db: Db = this.db): Promise<{ id: string; projectId: string; at: number }[]> {
    const rows = await db
      .selectFrom('meetings')
      .select(['id', 'project_id', 'updated_at'])
      .where('updated_at', '>', after)
      .orderBy('updated_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, projectId: r.project_id, at: Number(r.updated_at) }));
  }

  /** The latest booking change time (0 when none). */
  async lastChangeAt(db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('meetings')
      .select((eb) => eb.fn.max('updated_at').as('at'))
      .executeTakeFirst();
    return Number(row?.at ?? 0);
  }

  async histories(meetingIds: string[], db: Db = this.db): Promise<Map<string, HistoryRow[]>> {
    const out = new Map<string, HistoryRow[]>();
    if (!meetingIds.length) return out;
    const rows = await db
      .selectFrom('meeting_histories')
      .selectAll()
      .where('meeting_id', 'in', meetingIds)
      .orderBy('meeting_id')
      .orderBy('seq')
      .execute();
    for (const r of rows) {
      const list = out.get(r.meeting_id);
      if (list) list.push(r);
      else out.set(r.meeting_id, [r]);
    }
    return out;
  }

  /**
   * Meetings whose span overlaps [from, to) and match the filter, ordered by start (then id).
   *
   * Read in two disjoint parts so that neither walks the project's history: a single booking
   * is no longer than its project's longest hold (projects.max_hold_ms, kept by every booking
   * change), so its start lies in (from - longest, to): a two-sided range of the start-time
   * index. A series row (its span runs to its last occurrence) is found by its span's end
   * through the partial index meetings_series_span_idx (migration 022); its start is checked
   * here, since a second range term in SQL would let SQLite's planner pick the start-time index.
   */
  async list(f: MeetingListFilter, db: Db = this.db): Promise<MeetingRow[]> {
    if (!f.anyProject && !f.projectIds.length) return [];
    const longest = db.selectFrom('projects').select((eb) => eb.fn.max('max_hold_ms').as('m'));
    const single = this.listFiltered(db, f)
      .where('recurrence', 'is', null)
      .where('start_at', '<', f.to)
      .where('start_at', '>', (eb) => eb(eb.val(f.from), '-', f.anyProject ? longest : longest.where('id', 'in', f.projectIds)))
      .where('span_end_at', '>', f.from);
    const series = this.listFiltered(db, f).where('recurrence', 'is not', null).where('span_end_at', '>', f.from);
    const rows = await single.unionAll(series).orderBy('start_at').orderBy('id').execute();
    return rows.filter((r) => Number(r.start_at) < f.to).map(meetingRecord);
  }

  /** The caller's and the query's filters of `list`, common to both of its parts. */
  private listFiltered(db: Db, f: MeetingListFilter) {
    let q = db.selectFrom('meetings').selectAll();
    if (!f.anyProject) q = q.where('project_id', 'in', f.projectIds);
    if (f.participantUserId) {
      const uid = f.participantUserId;
      const open = f.unrestrictedProjectIds ?? [];
      q = q.where((eb) =>
        eb.or([
          eb('organizer_user_id', '=', uid),
          eb('id', 'in', eb.selectFrom('meeting_attendees').select('meeting_id').where('user_id', '=', uid)),
          ...(open.length ? [eb('project_id', 'in', open)] : []),
        ]),
      );
    }
    if (f.assetIds) q = f.assetIds.length ? q.where('asset_id', 'in', f.assetIds) : q.where((eb) => eb.val(1), '=', 0);
    if (f.organizerIds?.length) q = q.where('organizer_user_id', 'in', f.organizerIds);
    if (f.organizerEmails?.length) {
      const emails = f.organizerEmails.map((e) => e.toLowerCase());
      q = q.where('organizer_user_id', 'in', db.selectFrom('users').select('id').where('email_lower', 'in', emails));
    }
    if (f.attendeeEmails?.length) {
      const emails = f.attendeeEmails.map((e) => e.toLowerCase());
      q = q.where('id', 'in', db.selectFrom('meeting_attendees').select('meeting_id').where('email_lower', 'in', emails));
    }
    // A series row is kept whatever its status: each occurrence has its own, filtered once expanded.
    if (f.statuses?.length) {
      const statuses = f.statuses;
      q = q.where((eb) => eb.or([eb('status', 'in', statuses), eb('recurrence', 'is not', null)]));
    }
    return q;
  }

  /**
   * One room's bookings (in its project) whose span overlaps [from, to): `statuses`, plus cancelled
   * ones last updated (cancelled) at or after `cancelledSince`. Each row counts the
   * history entries after the first that moved it or changed its status.
   */
  async roomFeed(
    roomId: string,
    f: { projectId: string; from: number; to: number; statuses: string[]; cancelledSince: number },
    db: Db = this.db,
  ): Promise<FeedBookingRow[]> {
    const rows = await db
      .selectFrom('meetings as m')
      .select(['m.id', 'm.title', 'm.status', 'm.start_at', 'm.end_at', 'm.recurrence', 'm.updated_at'])
      .select((eb) =>
        eb
          .selectFrom('meeting_histories as h')
          .select(sql<number>`count(*)`.as('n'))
          .whereRef('h.meeting_id', '=', 'm.id')
          .where('h.seq', '>', 1)
          .where((w) =>
            w.or([
              w('h.action', 'in', [...STATUS_CHANGING_ACTIONS]),
              w.and([
                w('h.old_start_at', 'is not', null),
                w('h.new_start_at', 'is not', null),
                w('h.old_start_at', '<>', w.ref('h.new_start_at')),
              ]),
              w.and([w('h.old_end_at', 'is not', null), w('h.new_end_at', 'is not', null), w('h.old_end_at', '<>', w.ref('h.new_end_at'))]),
            ]),
          )
          .as('changes'),
      )
      // room_id + project_id + span_end_at: meetings_room_span_idx (migration 019) bounds the read to the window's
      // bookings, however long the room's history.
      .where('m.project_id', '=', f.projectId)
      .where('m.room_id', '=', roomId)
      .where('m.start_at', '<', f.to)
      .where('m.span_end_at', '>', f.from)
      .where((eb) =>
        eb.or([
          ...(f.statuses.length ? [eb('m.status', 'in', f.statuses)] : []),
          eb.and([eb('m.status', '=', 'cancelled'), eb('m.updated_at', '>=', f.cancelledSince)]),
        ]),
      )
      // Sorted here, not in SQL: an ORDER BY start_at makes SQLite's planner walk meetings_project_start_idx instead.
      .execute();
    return rows
      .map((r) => ({
        ...r,
        start_at: Number(r.start_at),
        end_at: Number(r.end_at),
        updated_at: Number(r.updated_at),
        changes: Number(r.changes ?? 0),
        recurrence: r.recurrence ? (JSON.parse(r.recurrence) as StoredRecurrence) : null,
      }))
      .sort((a, b) => a.start_at - b.start_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async insert(meeting: NewMeeting, db: Db = this.db): Promise<void> {
    await insertRows(db, 'meetings', [storedMeeting(meeting)]);
  }

  /** A booking with its held slots, keeping the project's longest hold (bulk imports, fixtures and benches). */
  async insertHeld(meeting: NewMeeting, slots: NewSlot[], db: Db = this.db): Promise<void> {
    await this.insert(meeting, db);
    await this.insertSlots(slots, db);
    const longest = Math.max(0, ...slots.map((s) => s.end_at - s.start_at));
    if (longest > 0) await this.raiseLongestHold(meeting.project_id, longest, db);
  }

  async update(id: string, changes: MeetingChanges, db: Db = this.db): Promise<void> {
    await db.updateTable('meetings').set(storedChanges(changes)).where('id', '=', id).execute();
  }

  /** A wrong PIN was presented: counted outside the refused change's transaction. */
  async countWrongPin(id: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable('meetings')
      .set((eb) => ({ pin_failures: eb('pin_failures', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  /** History entries of a booking that has none yet, numbered from 1. */
  async insertFirstHistories(entries: NewHistory[], db: Db = this.db): Promise<HistoryRow[]> {
    const rows = entries.map((h, i) => ({ ...h, seq: i + 1 }));
    await insertRows(db, 'meeting_histories', rows);
    return rows as HistoryRow[];
  }

  /** Appends one history entry after the booking's last (numbered in the same statement). */
  async appendHistory(h: NewHistory, db: Db = this.db): Promise<void> {
    const next = db
      .selectFrom('meeting_histories')
      .select(sql<number>`coalesce(max(seq), 0) + 1`.as('seq'))
      .where('meeting_id', '=', h.meeting_id);
    await db
      .insertInto('meeting_histories')
      .columns([
        'id',
        'meeting_id',
        'action',
        'at',
        'by',
        'source',
        'source_detail',
        'reason',
        'status_before',
        'old_start_at',
        'old_end_at',
        'new_start_at',
        'new_end_at',
        'seq',
      ])
      .expression(
        db.selectNoFrom([
          sql.val(h.id).as('id'),
          sql.val(h.meeting_id).as('meeting_id'),
          sql.val(h.action).as('action'),
          sql.val(h.at).as('at'),
          sql.val(h.by).as('by'),
          sql.val(h.source).as('source'),
          sql.val(h.source_detail ?? null).as('source_detail'),
          sql.val(h.reason ?? null).as('reason'),
          sql.val(h.status_before ?? null).as('status_before'),
          sql.val(h.old_start_at ?? null).as('old_start_at'),
          sql.val(h.old_end_at ?? null).as('old_end_at'),
          sql.val(h.new_start_at ?? null).as('new_start_at'),
          sql.val(h.new_end_at ?? null).as('new_end_at'),
          next.as('seq'),
        ]),
      )
      .execute();
  }

  async insertSlots(slots: NewSlot[], db: Db = this.db): Promise<void> {
    await insertRows(db, 'meeting_slots', slots);
  }

  async replaceSlots(meetingId: string, slots: NewSlot[], db: Db = this.db): Promise<void> {
    await this.releaseSlots(meetingId, db);
    await this.insertSlots(slots, db);
  }

  async updateSlotEnd(slotId: string, end: number, db: Db = this.db): Promise<void> {
    await db.updateTable('meeting_slots').set({ end_at: end }).where('id', '=', slotId).execute();
  }

  async moveSlot(id: string, start: number, end: number, db: Db = this.db): Promise<void> {
    await db.updateTable('meeting_slots').set({ start_at: start, end_at: end }).where('id', '=', id).execute();
  }

  async deleteSlot(slotId: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom('meeting_slots').where('id', '=', slotId).execute();
  }

  async releaseSlots(meetingId: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom('meeting_slots').where('meeting_id', '=', meetingId).execute();
  }

  /** Keeps projects.max_hold_ms at least `longest` (bounds overlap look-ups). */
  async raiseLongestHold(projectId: string, longest: number, db: Db = this.db): Promise<void> {
    await db.updateTable('projects').set({ max_hold_ms: longest }).where('id', '=', projectId).where('max_hold_ms', '<', longest).execute();
  }

  async insertAttendees(meetingId: string, attendees: { userId: string | null; email: string }[], db: Db = this.db): Promise<void> {
    if (!attendees.length) return;
    await insertRows(
      db,
      'meeting_attendees',
      attendees.map((a, i) => ({ meeting_id: meetingId, position: i, user_id: a.userId, email_lower: a.email.toLowerCase() })),
    );
  }

  async replaceAttendees(meetingId: string, attendees: { userId: string | null; email: string }[], db: Db = this.db): Promise<void> {
    await db.deleteFrom('meeting_attendees').where('meeting_id', '=', meetingId).execute();
    await this.insertAttendees(meetingId, attendees, db);
  }
}

/** Booking's sealed columns (SECRETS_KEY rotation: platform/crypto/reseal.ts): each booking's PIN. */
export function sealedBookingColumns(db: Kysely<Database>): SealedTable[] {
  return [sealedTable(db, { table: 'meetings', key: ['id'], sealed: ['pin_enc'] })];
}
