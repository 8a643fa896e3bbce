/**
 * Persistence of bookings: the meeting record, its held slots and its history.
 * Writes take a transaction so a state change and what it records commit together.
 */
import { sql, type Kysely, type Transaction, type Insertable, type Updateable } from 'kysely';
import type { Database, MeetingHistoryTable, MeetingSlotTable, MeetingTable } from '../../platform/db/schema.js';

export type Db = Kysely<Database> | Transaction<Database>;
export type NewMeeting = Insertable<MeetingTable>;
export type NewSlot = Insertable<MeetingSlotTable>;
export type NewHistory = Omit<Insertable<MeetingHistoryTable>, 'seq'>;

export type MeetingRow = MeetingTable & { pin_failures: number };
export type HistoryRow = MeetingHistoryTable;

export interface MeetingListFilter {
  from: number;
  to: number;
  projectIds: string[];
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

export class MeetingQueries {
  constructor(private readonly db: Kysely<Database>) {}

  async byId(id: string, db: Db = this.db): Promise<MeetingRow | undefined> {
    return (await db.selectFrom('meetings').selectAll().where('id', '=', id).executeTakeFirst()) as MeetingRow | undefined;
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

  /** Meetings whose span overlaps [from, to) and match the filter, ordered by start. */
  async list(f: MeetingListFilter): Promise<MeetingRow[]> {
    if (!f.projectIds.length) return [];
    let q = this.db
      .selectFrom('meetings')
      .selectAll()
      .where('project_id', 'in', f.projectIds)
      .where('start_at', '<', f.to)
      .where('span_end_at', '>', f.from);
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
      q = q.where('organizer_user_id', 'in', this.db.selectFrom('users').select('id').where('email_lower', 'in', emails));
    }
    if (f.attendeeEmails?.length) {
      const emails = f.attendeeEmails.map((e) => e.toLowerCase());
      q = q.where('id', 'in', this.db.selectFrom('meeting_attendees').select('meeting_id').where('email_lower', 'in', emails));
    }
    if (f.statuses?.length) q = q.where('status', 'in', f.statuses);
    return (await q.orderBy('start_at').orderBy('id').execute()) as MeetingRow[];
  }
}

/** Writes of bookings; every call takes the caller's transaction. */
export const meetingWrites = {
  /** Inserts a meeting with its slots and its first history entries (in `trx`). */
  async insert(trx: Db, meeting: NewMeeting, slots: NewSlot[], histories: NewHistory[]): Promise<void> {
    await trx.insertInto('meetings').values(meeting).execute();
    if (slots.length) await trx.insertInto('meeting_slots').values(slots).execute();
    await meetingWrites.recordLongestHold(trx, meeting.project_id, slots);
    for (const h of histories) await meetingWrites.appendHistory(trx, h);
  },

  /** Keeps projects.max_hold_ms at least as long as the longest slot (bounds overlap look-ups). */
  async recordLongestHold(trx: Db, projectId: string, slots: Pick<NewSlot, 'start_at' | 'end_at'>[]): Promise<void> {
    const longest = Math.max(0, ...slots.map((s) => s.end_at - s.start_at));
    if (longest === 0) return;
    await trx
      .updateTable('projects')
      .set({ max_hold_ms: longest })
      .where('id', '=', projectId)
      .where('max_hold_ms', '<', longest)
      .execute();
  },

  async appendHistory(trx: Db, h: NewHistory): Promise<void> {
    const next = await trx
      .selectFrom('meeting_histories')
      .select(sql<number>`coalesce(max(seq), 0) + 1`.as('seq'))
      .where('meeting_id', '=', h.meeting_id)
      .executeTakeFirstOrThrow();
    await trx.insertInto('meeting_histories').values({ ...h, seq: Number(next.seq) }).execute();
  },

  async update(trx: Db, id: string, changes: Updateable<MeetingTable>): Promise<void> {
    await trx.updateTable('meetings').set(changes).where('id', '=', id).execute();
  },

  async replaceSlots(trx: Db, meetingId: string, slots: NewSlot[]): Promise<void> {
    await trx.deleteFrom('meeting_slots').where('meeting_id', '=', meetingId).execute();
    if (slots.length) await trx.insertInto('meeting_slots').values(slots).execute();
  },

  async updateSlotEnd(trx: Db, slotId: string, end: number): Promise<void> {
    await trx.updateTable('meeting_slots').set({ end_at: end }).where('id', '=', slotId).execute();
  },

  async releaseSlots(trx: Db, meetingId: string): Promise<void> {
    await trx.deleteFrom('meeting_slots').where('meeting_id', '=', meetingId).execute();
  },

  async replaceAttendees(trx: Db, meetingId: string, attendees: { userId: string | null; email: string }[]): Promise<void> {
    await trx.deleteFrom('meeting_attendees').where('meeting_id', '=', meetingId).execute();
    if (!attendees.length) return;
    await trx
      .insertInto('meeting_attendees')
      .values(attendees.map((a, i) => ({ meeting_id: meetingId, position: i, user_id: a.userId, email_lower: a.email.toLowerCase() })))
      .execute();
  },
};
