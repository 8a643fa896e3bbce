/**
 * Persistence of bookings: the meeting record, its held slots and its history.
 * Writes take a transaction so a state change and what it records commit together.
 */
import { sql, type Kysely, type Transaction, type Insertable } from 'kysely';
import type { Database, MeetingHistoryTable, MeetingSlotTable, MeetingTable } from '../schema.js';

export type Db = Kysely<Database> | Transaction<Database>;
export type NewMeeting = Insertable<MeetingTable>;
export type NewSlot = Insertable<MeetingSlotTable>;
export type NewHistory = Omit<Insertable<MeetingHistoryTable>, 'seq'>;

export class MeetingRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts a meeting with its slots and its first history entries (in `trx`). */
  async insert(trx: Db, meeting: NewMeeting, slots: NewSlot[], histories: NewHistory[]): Promise<void> {
    await trx.insertInto('meetings').values(meeting).execute();
    if (slots.length) await trx.insertInto('meeting_slots').values(slots).execute();
    await this.recordLongestHold(trx, meeting.project_id, slots);
    for (const h of histories) await this.appendHistory(trx, h);
  }

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
  }

  async appendHistory(trx: Db, h: NewHistory): Promise<void> {
    const next = await trx
      .selectFrom('meeting_histories')
      .select(sql<number>`coalesce(max(seq), 0) + 1`.as('seq'))
      .where('meeting_id', '=', h.meeting_id)
      .executeTakeFirstOrThrow();
    await trx.insertInto('meeting_histories').values({ ...h, seq: Number(next.seq) }).execute();
  }
}
