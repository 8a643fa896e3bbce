/**
 * Applies one due lifecycle step: reminders, no-show warning and auto-cancel,
 * automatic check-in, ending-soon notices, and the end of a booking (or the roll
 * to the next occurrence of a series).
 *
 * A step is an actor of the booking writer: under the asset's lock it claims the
 * timer (exactly once, whichever instance gets there first), decides with
 * `timerOutcome` against the booking as it is now, and hands the resulting change
 * to the writer, so the change, its history and its event commit together. A step
 * is applied as of its due time, so moving the sandbox clock over many steps
 * replays them in order.
 */
import {
  SYSTEM_ACTOR,
  withoutOccurrence,
  type BookingChange,
  type BookingChanges,
  type MeetingRow,
  type StoredOccurrence,
} from '../booking/index.js';
import type { TimerRepository, TimerRow } from './timer-repository.js';
import { NO_SHOW_REASON, timerOutcome, type TimerKind } from './rules/timer-plan.js';

export interface LifecycleStepsDeps {
  /** The booking module's lock-and-write (only `change` is used). */
  bookings: Pick<BookingChanges, 'change'>;
  timers: TimerRepository;
}

export class LifecycleSteps {
  constructor(private readonly deps: LifecycleStepsDeps) {}

  /** Fires one timer; false when another worker had already claimed it (or its booking is gone). */
  async fire(t: TimerRow): Promise<boolean> {
    const fired = await this.deps.bookings.change(t.meeting_id, async ({ trx, meeting, write }) => {
      if (!(await this.deps.timers.claim(t.id, t.due_at, trx))) return false;
      const autoCancelAt =
        t.kind === 'no-show-warning' ? ((await this.deps.timers.noShowCancelAt(meeting.id, t.window_start, trx)) ?? t.window_start) : 0;
      const change = stepChange(t, meeting, autoCancelAt);
      if (change) await write(change);
      return true;
    });
    if (fired === undefined) {
      await this.deps.timers.cancel(t.id);
      return false;
    }
    return fired;
  }
}

/**
 * What a due step does to a booking as it is now (pure): nothing, a notice, an
 * automatic check-in, a no-show cancel, or the end (a series rolls on instead).
 * `autoCancelAt` is when the no-show cancel of the window is due (warnings only).
 */
export function stepChange(t: TimerRow, m: MeetingRow, autoCancelAt: number): BookingChange | null {
  const at = t.due_at;
  const series = m.recurrence;
  const occurrence: StoredOccurrence | undefined = series
    ? series.occurrences.find((o) => o.start === t.window_start)
    : { id: m.id, start: m.start_at, end: m.end_at };
  if (!occurrence) return null;
  const outcome = timerOutcome(
    t.kind as TimerKind,
    { start: t.window_start, end: t.window_end },
    { status: m.status, start: occurrence.start, end: occurrence.end },
  );
  const window = { start: occurrence.start, end: occurrence.end };
  const next = series?.occurrences.find((o) => o.start > occurrence.start);
  /** A series moves on to its next occurrence: active again, with that occurrence's steps. */
  const rollTo = (n: StoredOccurrence): BookingChange => ({
    at,
    // start_at/end_at keep the first occurrence (list queries span the series); the view shows the current one.
    set: { status: 'active', organizer: { ...m.organizer, checkInAt: null, checkOutAt: null }, updated_at: at },
    timers: { window: n },
  });

  switch (outcome.action) {
    case 'skip':
      return null;
    case 'notify':
      return {
        at,
        event: {
          window,
          detail: outcome.event === 'NO_SHOW_WARNING' ? { kind: 'NO_SHOW_WARNING', autoCancelAt } : { kind: outcome.event },
        },
      };
    case 'check-in':
      return {
        at,
        set: { status: 'checked-in', organizer: { ...m.organizer, checkInAt: at }, updated_at: at },
        history: { action: 'check-in', actor: { ...SYSTEM_ACTOR, sourceDetail: 'check-in not required' } },
      };
    case 'no-show-cancel': {
      const cancelled = {
        history: { action: 'cancel', actor: SYSTEM_ACTOR, reason: NO_SHOW_REASON },
        event: { window, detail: { kind: 'CANCEL' as const, cancelReason: NO_SHOW_REASON } },
      };
      if (next) {
        // A series loses only this occurrence and rolls on to the next one. The occurrence
        // leaves the stored series too, or the booking would go on showing it (and accept a
        // check-in on it) until its end.
        const roll = rollTo(next);
        const remaining = withoutOccurrence(series!, occurrence.id, NO_SHOW_REASON); // still listed, as cancelled
        return { ...roll, ...cancelled, set: { ...roll.set, recurrence: remaining }, slots: { dropSlot: occurrence.id } };
      }
      return {
        at,
        ...cancelled,
        set: { status: 'cancelled', cancel_reason: NO_SHOW_REASON, updated_at: at },
        slots: { release: true },
        timers: { window: null },
      };
    }
    case 'end':
      if (next) return rollTo(next);
      return { at, set: { status: 'done', updated_at: at }, timers: { window: null } };
  }
}
