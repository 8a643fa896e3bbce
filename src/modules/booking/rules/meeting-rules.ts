/**
 * The meeting state machine and the refusal rules of the booking actions
 * (check-in, cancel, check-out, update), as pure functions of the meeting, the
 * caller's relation to it and the current time. Each returns the refusal to
 * answer with, or null when the action may proceed.
 */
import { DateTime } from 'luxon';
import { ServiceError } from '../../../platform/errors.js';
import { truncateToMinute } from './availability.js';
import { MEETING_STATUSES, type MeetingStatus } from '../../../contract/meetings.js';

export { MEETING_STATUSES, type MeetingStatus };

export const TERMINAL_STATUSES: ReadonlySet<MeetingStatus> = new Set(['done', 'cancelled', 'rejected']);

/**
 * The state machine's first rule: `done`, `cancelled` and `rejected` are final.
 * No actor (API, lifecycle step, payment, calendar message, console) may change a
 * booking in one of them; the writer refuses such a change with 409 KS006.
 */
export function finalStateRefusal(status: string): ServiceError | null {
  if (!TERMINAL_STATUSES.has(status as MeetingStatus)) return null;
  return refuse(409, 'KS006', `This booking is ${status}, which is final: it can no longer change`);
}

/** Wrong PINs in a row after which PIN use is locked until the organizer sets a new PIN. */
export const PIN_LOCK_THRESHOLD = 5;

export interface MeetingFacts {
  status: MeetingStatus;
  start: number;
  end: number;
  pinFailures: number;
}

/** How the caller relates to the meeting, and what PIN (if any) they sent. */
export interface Caller {
  isOrganizer: boolean;
  isAttendee: boolean;
  /** Project admin, or an app acting with MEETING_UPDATE on the project. */
  isProjectAdmin: boolean;
  /** undefined: no PIN sent. */
  pinMatches?: boolean;
}

const refuse = (status: number, code: string, message: string) => new ServiceError(status, code, message);

export const pinLocked = (m: MeetingFacts) => m.pinFailures >= PIN_LOCK_THRESHOLD;

type Action = 'check in' | 'cancel' | 'check out' | 'edit';

/**
 * MEETING_003's message: who may take `action` without a PIN, and why this caller
 * is not one of them (an attendee may check in, but not cancel, check out or edit).
 */
export function noPinMessage(action: Action, caller: Caller): string {
  if (action === 'check in') return 'You are neither the organizer nor an attendee of this booking; send its pinCode to check in';
  const who = 'only its organizer or a project admin may, or a caller who sends its pinCode';
  return caller.isAttendee
    ? `As an attendee you may not ${action} this booking: ${who}`
    : `You are neither the organizer of this booking nor a project admin: send its pinCode to ${action} it`;
}

/**
 * Authorization by PIN for a caller the role rules did not already admit.
 * A locked PIN refuses every PIN attempt, right or wrong, so a locked booking
 * cannot be brute-forced.
 */
function pinRefusal(m: MeetingFacts, caller: Caller, action: Action): ServiceError | null {
  if (caller.pinMatches === undefined) return refuse(404, 'MEETING_003', noPinMessage(action, caller));
  if (pinLocked(m))
    return refuse(429, 'MEETING_039', 'The pinCode is locked after repeated wrong attempts until the organizer sets a new one');
  if (!caller.pinMatches) return refuse(404, 'MEETING_042', 'Wrong pinCode');
  return null;
}

function localDate(ms: number, timeZone: string): string {
  return DateTime.fromMillis(ms, { zone: timeZone }).toISODate()!;
}

/** Refusals of POST /meetings/{id}/check-in, in the spec's order. */
export function checkInRefusal(
  m: MeetingFacts,
  caller: Caller,
  ctx: { now: number; preStartMinutes: number; timeZone: string },
): ServiceError | null {
  if (m.status === 'cancelled' || m.status === 'rejected') return refuse(404, 'MEETING_043', 'This booking was cancelled');
  if (m.status === 'done' || ctx.now >= m.end) return refuse(409, 'MEETING_004', 'This booking has already ended');
  if (m.status === 'unpaid') return refuse(422, 'MEETING_005', 'This booking is still unpaid');
  if (m.status === 'checked-in') return refuse(409, 'KS006', 'This booking is already checked in');
  if (ctx.preStartMinutes >= 0) {
    const opensAt = m.start - ctx.preStartMinutes * 60_000;
    if (ctx.now < opensAt) {
      const minutes = Math.ceil((opensAt - ctx.now) / 60_000);
      return refuse(
        409,
        'MEETING_040',
        `Check-in opens in ${minutes} minute${minutes === 1 ? '' : 's'}, ${ctx.preStartMinutes} minutes before the start`,
      );
    }
  } else if (localDate(ctx.now, ctx.timeZone) !== localDate(m.start, ctx.timeZone)) {
    return refuse(409, 'MEETING_041', `Check-in is open only on the day of the booking (${localDate(m.start, ctx.timeZone)})`);
  }
  if (caller.isOrganizer || caller.isAttendee) return null;
  return pinRefusal(m, caller, 'check in');
}

/** Refusals of POST /meetings/{id}/cancel: only unpaid or active bookings, by organizer, admin or PIN holder. */
export function cancelRefusal(m: MeetingFacts, caller: Caller, now: number): ServiceError | null {
  if (m.status !== 'active' && m.status !== 'unpaid') {
    return refuse(
      409,
      'MEETING_011',
      `A ${m.status} booking cannot be cancelled${m.status === 'checked-in' ? '; check out to end it' : ''}`,
    );
  }
  if (now >= m.end) return refuse(409, 'MEETING_011', 'This booking has already ended');
  if (caller.isOrganizer || caller.isProjectAdmin) return null;
  return pinRefusal(m, caller, 'cancel');
}

/**
 * Refusals of POST /meetings/{id}/check-out: only checked-in bookings (409 from any
 * other state, cancelled included), by the organizer, a project admin or a PIN holder.
 */
export function checkOutRefusal(m: MeetingFacts, caller: Caller): ServiceError | null {
  if (m.status !== 'checked-in') return refuse(409, 'KS006', `Only a checked-in booking can be checked out; this one is ${m.status}`);
  if (caller.isOrganizer || caller.isProjectAdmin) return null;
  return pinRefusal(m, caller, 'check out');
}

/** The end a check-out writes: now, to the minute, never before the start nor after the booked end. */
export function checkOutEnd(m: { start: number; end: number }, now: number): number {
  return Math.min(m.end, Math.max(m.start, truncateToMinute(now)));
}

/** Refusals of PATCH /meetings/{id} that depend on state and caller (time rules are checked afterwards). */
export function updateRefusal(
  m: MeetingFacts,
  caller: Caller,
  change: { movesStart: boolean; changesTimes: boolean; organizerBlocked: boolean },
): ServiceError | null {
  if (m.status === 'cancelled') return refuse(409, 'KS072', 'This booking is already cancelled');
  if (m.status === 'unpaid') return refuse(422, 'MEETING_005', 'An unpaid booking cannot be edited; pay or cancel it first');
  if (m.status !== 'active' && m.status !== 'checked-in') return refuse(409, 'KS006', `A ${m.status} booking cannot be edited`);
  if (!caller.isOrganizer && !caller.isProjectAdmin) {
    const pin = pinRefusal(m, caller, 'edit');
    if (pin) return pin;
  }
  if (m.status === 'checked-in' && change.movesStart) {
    return refuse(409, 'KS006', 'The start time of a checked-in booking cannot be modified; only its end can be extended');
  }
  if (change.changesTimes && change.organizerBlocked) {
    return refuse(403, 'MEETING_049', 'The organizer has been blocked from booking by an administrator');
  }
  return null;
}
