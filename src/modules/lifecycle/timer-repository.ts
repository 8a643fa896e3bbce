/** Durable timers of the booking lifecycle: one row per planned step of a booking window. */
import { sql, type Kysely } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Database, TimerTable } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import { currentTraceParent } from '../../platform/observability/tracing.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { backlogOf } from '../../platform/db/backlog-row.js';
import { TIMER_KINDS, type PlannedTimer } from './rules/timer-plan.js';
import { insertRows } from '../../platform/db/statements.js';

export type TimerRow = TimerTable;

/** Position of a timer kind in lifecycle order (TIMER_KINDS), in SQL. */
const KIND_ORDER = sql<number>`case kind ${sql.join(
  TIMER_KINDS.map((k, i) => sql`when ${sql.lit(k)} then ${sql.lit(i)}`),
  sql` `,
)} else ${sql.lit(TIMER_KINDS.length)} end`;

export class TimerRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Schedules the planned steps of one booking window. */
  async schedule(
    meetingId: string,
    window: { start: number; end: number },
    timers: PlannedTimer[],
    now: number,
    db: Db = this.db,
  ): Promise<void> {
    if (!timers.length) return;
    // The scheduling request's trace context: the steps' job spans join its trace.
    const traceParent = currentTraceParent();
    await insertRows(
      db,
      'timers',
      timers.map((t) => ({
        id: newId(now),
        meeting_id: meetingId,
        kind: t.kind,
        due_at: t.dueAt,
        window_start: window.start,
        window_end: window.end,
        status: 'pending',
        created_at: now,
        fired_at: null,
        trace_parent: traceParent,
      })),
    );
  }

  /** Drops every pending step of a booking (it moved, was cancelled or ended). */
  async cancelPending(meetingId: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable('timers')
      .set({ status: 'cancelled' })
      .where('meeting_id', '=', meetingId)
      .where('status', '=', 'pending')
      .execute();
  }

  /** Drops one step (its booking no longer exists). */
  async cancel(id: string, db: Db = this.db): Promise<void> {
    await db.updateTable('timers').set({ status: 'cancelled' }).where('id', '=', id).execute();
  }

  /** Claims a timer for firing; false when another worker (or instance) already took it. */
  async claim(id: string, firedAt: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('timers')
      .set({ status: 'fired', fired_at: firedAt })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** When the no-show cancel of the window starting at `start` is (or was) due. */
  async noShowCancelAt(meetingId: string, start: number, db: Db = this.db): Promise<number | undefined> {
    const t = await db
      .selectFrom('timers')
      .select('due_at')
      .where('meeting_id', '=', meetingId)
      .where('kind', '=', 'no-show-cancel')
      .where('window_start', '=', start)
      .executeTakeFirst();
    return t?.due_at;
  }

  /**
   * Pending timers due by `until`, earliest first; steps of one instant in lifecycle
   * order (e.g. a no-show cancel before the ending-soon notice at the same moment),
   * which the ids alone do not guarantee (their 24-bit counter wraps).
   */
  async due(until: number, limit: number, db: Db = this.db): Promise<TimerRow[]> {
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

  /** The earliest due time of a pending timer after `after`, or null (the runner's wake-up; the pending-due index's first entry). */
  async nextDueAfter(after: number, db: Db = this.db): Promise<number | null> {
    const row = await db
      .selectFrom('timers')
      .select('due_at')
      .where('status', '=', 'pending')
      .where('due_at', '>', after)
      .orderBy('due_at')
      .limit(1)
      .executeTakeFirst();
    return row?.due_at ?? null;
  }

  /** Pending timers due by `until`: how many, and the earliest due time (metrics; the pending-due index). */
  async backlog(until: number, db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('timers')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('due_at').as('oldest')])
      .where('status', '=', 'pending')
      .where('due_at', '<=', until)
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }
}
