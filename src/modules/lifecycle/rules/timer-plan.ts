/**
 * Which clock-driven steps a booking window gets, and when (meetingConfig of the
 * asset; -1 disables a step). Pure.
 *
 *   reminder          start - preStartMinutes            (check-in window opens)
 *   auto-check-in     start, when postStartExpireMinutes is 0 (check-in not required)
 *   no-show-warning   start + postStartWarnMinutes       (not for all-day bookings)
 *   no-show-cancel    start + postStartExpireMinutes     (not for all-day bookings)
 *   ending-soon       end - preEndMinutes (never before the start)
 *   end               end                                 (active/checked-in → done)
 */
import type { ResolvedMeetingConfig } from '../../booking/rules/asset-config.js';

export const TIMER_KINDS = ['reminder', 'auto-check-in', 'no-show-warning', 'no-show-cancel', 'ending-soon', 'end'] as const;
export type TimerKind = (typeof TIMER_KINDS)[number];

export interface PlannedTimer {
  kind: TimerKind;
  dueAt: number;
}

const MINUTE = 60_000;

export function planTimers(
  window: { start: number; end: number },
  mc: ResolvedMeetingConfig,
  opts: { allDay: boolean; now: number },
): PlannedTimer[] {
  const { start, end } = window;
  const out: PlannedTimer[] = [];
  // A reminder whose moment has already passed when the booking is made is not sent.
  if (mc.preStartMinutes >= 0 && start - mc.preStartMinutes * MINUTE >= opts.now) {
    out.push({ kind: 'reminder', dueAt: start - mc.preStartMinutes * MINUTE });
  }
  if (mc.postStartExpireMinutes === 0) {
    out.push({ kind: 'auto-check-in', dueAt: start });
  } else if (mc.postStartExpireMinutes > 0 && !opts.allDay) {
    if (mc.postStartWarnMinutes >= 0 && mc.postStartWarnMinutes < mc.postStartExpireMinutes) {
      out.push({ kind: 'no-show-warning', dueAt: start + mc.postStartWarnMinutes * MINUTE });
    }
    out.push({ kind: 'no-show-cancel', dueAt: start + mc.postStartExpireMinutes * MINUTE });
  }
  if (mc.preEndMinutes >= 0) out.push({ kind: 'ending-soon', dueAt: Math.max(start, end - mc.preEndMinutes * MINUTE) });
  out.push({ kind: 'end', dueAt: end });
  // Steps at the same instant run in lifecycle order (TIMER_KINDS), e.g. auto-check-in before end.
  return out.sort((a, b) => a.dueAt - b.dueAt || TIMER_KINDS.indexOf(a.kind) - TIMER_KINDS.indexOf(b.kind));
}

/** What a due step does to a booking in its current state. */
export type TimerOutcome =
  | { action: 'skip'; why: string }
  | { action: 'notify'; event: 'REMINDER' | 'NO_SHOW_WARNING' | 'ENDING_SOON' }
  | { action: 'check-in' }
  | { action: 'no-show-cancel' }
  | { action: 'end' };

export const NO_SHOW_REASON = 'No-show — auto-cancelled by system';

/**
 * Decides a due step against the booking as it is now: a step planned for
 * another window (the booking moved) or for a state the booking has left
 * (checked in, cancelled, ended) does nothing.
 */
export function timerOutcome(
  kind: TimerKind,
  planned: { start: number; end: number },
  current: { status: string; start: number; end: number },
): TimerOutcome {
  if (planned.start !== current.start || (kind !== 'end' && planned.end !== current.end)) return { action: 'skip', why: 'booking moved' };
  const live = current.status === 'active' || current.status === 'checked-in';
  switch (kind) {
    case 'reminder':
      return live ? { action: 'notify', event: 'REMINDER' } : { action: 'skip', why: current.status };
    case 'auto-check-in':
      return current.status === 'active' ? { action: 'check-in' } : { action: 'skip', why: current.status };
    case 'no-show-warning':
      return current.status === 'active' ? { action: 'notify', event: 'NO_SHOW_WARNING' } : { action: 'skip', why: current.status };
    case 'no-show-cancel':
      return current.status === 'active' ? { action: 'no-show-cancel' } : { action: 'skip', why: current.status };
    case 'ending-soon':
      return live ? { action: 'notify', event: 'ENDING_SOON' } : { action: 'skip', why: current.status };
    case 'end':
      // A checked-out booking ended earlier; its stored end moved, so compare the planned end loosely.
      return live && planned.end === current.end ? { action: 'end' } : { action: 'skip', why: live ? 'end moved' : current.status };
  }
}
