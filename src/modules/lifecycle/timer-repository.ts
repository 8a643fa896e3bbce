/** Durable timers of the booking lifecycle. */
import { sql, type Kysely } from 'kysely';
import type { Database, TimerTable } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import { TIMER_KINDS, type PlannedTimer } from './rules/timer-plan.js';

export type TimerRow = TimerTable;

export const timerWrites = {
  /** Schedules the planned steps of one booking window. */
  async schedule(trx: Kysely<Database>, meetingId: string, window: { start: number; end: number }, timers: PlannedTimer[], now: number): Promise<void> {
    if (!timers.length) return;
    await trx
      .insertInto('timers')
      .values(
        timers.map((t) => ({
          id: newId(now), meeting_id: meetingId, kind: t.kind, due_at: t.dueAt, window_start: window.start, window_end: window.end,
          status: 'pending', created_at: now, fired_at: null,
        })),
      )
      .execute();
  },

  /** Drops every pending step of a booking (it moved, was cancelled or ended). */
  async cancelPending(trx: Kysely<Database>, meetingId: string): Promise<void> {
    await trx.updateTable('timers').set({ status: 'cancelled' }).where('meeting_id', '=', meetingId).where('status', '=', 'pending').execute();
  },

  /** Claims a timer for firing; false when another worker (or instance) already took it. */
  async claim(trx: Kysely<Database>, id: string, firedAt: number): Promise<boolean> {
    const res = await trx.updateTable('timers').set({ status: 'fired', fired_at: firedAt }).where('id', '=', id).where('status', '=', 'pending').executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },
};

/** Position of a timer kind in lifecycle order (TIMER_KINDS), in SQL. */
const KIND_ORDER = sql<number>`case kind ${sql.join(TIMER_KINDS.map((k, i) => sql`when ${sql.lit(k)} then ${sql.lit(i)}`), sql` `)} else ${sql.lit(TIMER_KINDS.length)} end`;

/**
 * Pending timers due by `until`, earliest first; steps of one instant in lifecycle
 * order (e.g. a no-show cancel before the ending-soon notice at the same moment),
 * which the ids alone do not guarantee (their 24-bit counter wraps).
 */
export async function dueTimers(db: Kysely<Database>, until: number, limit: number): Promise<TimerRow[]> {
  return db
    .selectFrom('timers')
    .selectAll()
    .where('status', '=', 'pending')
    .where('due_at', '<=', until)
    .orderBy('due_at')
    .orderBy(KIND_ORDER)
    .orderBy('id')
    .limit(limit)
    .execute();
}
