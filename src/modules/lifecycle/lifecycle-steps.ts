/**
 * Applies one due lifecycle step: reminders, no-show warning and auto-cancel,
 * automatic check-in, ending-soon notices, and the end of a booking (or the roll
 * to the next occurrence of a series).
 *
 * Each step runs in its own transaction under the asset's lock: it claims the
 * timer (exactly once, whichever instance gets there first), re-reads the
 * booking, decides with `timerOutcome` against its current state, writes the
 * change, its history and its event together. A step is applied as of its due
 * time, so moving the sandbox clock over many steps replays them in order.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Engine } from '../../platform/db/database.js';
import { withAssetLock } from '../../platform/db/transactions.js';
import { MeetingQueries, meetingWrites, type MeetingRow } from '../booking/meeting-repository.js';
import { timerWrites, type TimerRow } from './timer-repository.js';
import { emitBookingEvent } from '../webhooks/outbox.js';
import { newId } from '../../platform/ids.js';
import { parseOrganizer, parseRecurrence, type StoredOccurrence } from '../booking/meeting-view.js';
import { NO_SHOW_REASON, timerOutcome, type TimerKind } from './rules/timer-plan.js';
import { rescheduleTimers } from './scheduling.js';

export interface LifecycleStepsDeps {
  db: Kysely<Database>;
  engine: Engine;
}

export class LifecycleSteps {
  private readonly queries: MeetingQueries;

  constructor(private readonly deps: LifecycleStepsDeps) {
    this.queries = new MeetingQueries(deps.db);
  }

  /** Fires one timer; false when another worker had already claimed it. */
  async fire(t: TimerRow): Promise<boolean> {
    const m0 = await this.queries.byId(t.meeting_id);
    if (!m0) {
      await this.deps.db.updateTable('timers').set({ status: 'cancelled' }).where('id', '=', t.id).execute();
      return false;
    }
    const table = m0.asset_kind === 'room' ? 'rooms' : 'desks';
    return withAssetLock(this.deps.db, this.deps.engine, { table, id: m0.asset_id }, async (trx) => {
      if (!(await timerWrites.claim(trx, t.id, t.due_at))) return false;
      const m = (await this.queries.byId(t.meeting_id, trx))!;
      await this.apply(trx, t, m);
      return true;
    });
  }

  private async apply(trx: Kysely<Database>, t: TimerRow, m: MeetingRow): Promise<void> {
    const at = t.due_at;
    const series = parseRecurrence(m);
    const occurrence: StoredOccurrence | undefined = series
      ? series.occurrences.find((o) => o.start === t.window_start)
      : { id: m.id, start: m.start_at, end: m.end_at };
    if (!occurrence) return;
    const outcome = timerOutcome(t.kind as TimerKind, { start: t.window_start, end: t.window_end }, { status: m.status, start: occurrence.start, end: occurrence.end });
    const window = { start: occurrence.start, end: occurrence.end };
    const history = (action: string, extra: { reason?: string; sourceDetail?: string } = {}) =>
      meetingWrites.appendHistory(trx, {
        id: newId(at), meeting_id: m.id, action, at, by: 'system', source: 'system', source_detail: extra.sourceDetail ?? null,
        reason: extra.reason ?? null, status_before: m.status, old_start_at: null, old_end_at: null, new_start_at: null, new_end_at: null,
      });

    switch (outcome.action) {
      case 'skip':
        return;
      case 'notify':
        await emitBookingEvent(trx, m, window, outcome.event === 'NO_SHOW_WARNING'
          ? { kind: 'NO_SHOW_WARNING', autoCancelAt: await this.autoCancelAt(trx, m.id, window.start) }
          : { kind: outcome.event }, at);
        return;
      case 'check-in': {
        const organizer = { ...parseOrganizer(m), checkInAt: at };
        await meetingWrites.update(trx, m.id, { status: 'checked-in', organizer: JSON.stringify(organizer), updated_at: at });
        await history('check-in', { sourceDetail: 'check-in not required' });
        return;
      }
      case 'no-show-cancel': {
        await emitBookingEvent(trx, m, window, { kind: 'CANCEL', cancelReason: NO_SHOW_REASON }, at);
        await history('cancel', { reason: NO_SHOW_REASON });
        const next = series?.occurrences.find((o) => o.start > occurrence.start);
        if (next) {
          // A series loses only this occurrence and rolls on to the next one. The occurrence
          // leaves the stored series too, or the booking would go on showing it (and accept a
          // check-in on it) until its end.
          await trx.deleteFrom('meeting_slots').where('id', '=', occurrence.id).execute();
          const remaining = { ...series!, occurrences: series!.occurrences.filter((o) => o.id !== occurrence.id) };
          await meetingWrites.update(trx, m.id, { recurrence: JSON.stringify(remaining) });
          await this.rollTo(trx, m, next, at);
        } else {
          await meetingWrites.update(trx, m.id, { status: 'cancelled', cancel_reason: NO_SHOW_REASON, updated_at: at });
          await meetingWrites.releaseSlots(trx, m.id);
          await timerWrites.cancelPending(trx, m.id);
        }
        return;
      }
      case 'end': {
        const next = series?.occurrences.find((o) => o.start > occurrence.start);
        if (next) await this.rollTo(trx, m, next, at);
        else {
          await meetingWrites.update(trx, m.id, { status: 'done', updated_at: at });
          await timerWrites.cancelPending(trx, m.id);
        }
        return;
      }
    }
  }

  /** A series moves on to its next occurrence: active again, with that occurrence's steps. */
  private async rollTo(trx: Kysely<Database>, m: MeetingRow, next: StoredOccurrence, at: number): Promise<void> {
    const organizer = { ...parseOrganizer(m), checkInAt: null, checkOutAt: null };
    // start_at/end_at keep the first occurrence (list queries span the series); the view shows the current one.
    await meetingWrites.update(trx, m.id, { status: 'active', organizer: JSON.stringify(organizer), updated_at: at });
    await rescheduleTimers(trx, m, next, at);
  }

  private async autoCancelAt(trx: Kysely<Database>, meetingId: string, start: number): Promise<number> {
    const t = await trx
      .selectFrom('timers')
      .select('due_at')
      .where('meeting_id', '=', meetingId)
      .where('kind', '=', 'no-show-cancel')
      .where('window_start', '=', start)
      .executeTakeFirst();
    return t?.due_at ?? start;
  }
}
