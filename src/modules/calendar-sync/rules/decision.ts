/**
 * What a calendar message does to a booking (docs/calendar-sync.md "Inbound invitations"),
 * as pure rules. The actor (`CalendarSync` in calendar-service.ts) gathers the facts, asks
 * these rules, computes the refusals that need the database (clashes) when a rule asks
 * for a window check, and applies the decision through the booking-change writer.
 *
 * - `decide`: the decision table: REQUEST/CANCEL/REPLY × the booking before → the step.
 * - `newInvitation`, `bookingRefusal`, `organizerRefusal`: a new invitation's verdict.
 * - `planMove`, `afterWindowCheck`: a known invitation with (maybe) new times.
 * - `planDropOccurrence`, `planMoveOccurrence`: one occurrence of a series.
 */
import { mayBookPrivately } from '../../booking/rules/private-access.js';
import { describeWindow, REASONS } from './sync-rules.js';

export type Outcome = 'booked' | 'rejected' | 'moved' | 'unchanged' | 'refused' | 'cancelled' | 'ended' | 'stale' | 'duplicate' | 'ignored';

export interface Span {
  start: number;
  end: number;
}

/** What the message says, for the room the actor is applying it to. */
export interface MessageFacts {
  method: 'REQUEST' | 'CANCEL' | 'REPLY';
  /** The room is among the attendees of the master event. */
  roomInvited: boolean;
  /** The master event has STATUS:CANCELLED. */
  cancelled: boolean;
  /** The RECURRENCE-ID of the first event that carries one (one occurrence of a series), or null. */
  occurrence: number | null;
  /** The room's own PARTSTAT, from the first event that names the room (REPLY), or null. */
  roomPartstat: string | null;
}

/** The booking the UID already holds, if any. */
export interface BookingFacts {
  status: string;
  /** A recurring series. */
  series: boolean;
}

/** What the actor does next. */
export type Step =
  /** No change: the answer as given (the booking, if any, is answered as it is). */
  | { kind: 'answer'; outcome: Outcome; accepted: boolean; reason: string | null }
  /** A new invitation: booked under every rule, or rejected (see `newInvitation`). */
  | { kind: 'book' }
  /** The invitation is gone for the room: cancelled before check-in, ended once checked in. `reason` null: deleted by the organizer. */
  | { kind: 'withdraw'; reason: string | null }
  /** A known invitation with (maybe) new times (see `planMove`). */
  | { kind: 'move' }
  /** One occurrence of the series moved in the calendar (the override event). */
  | { kind: 'moveOccurrence' }
  /** One occurrence of the series deleted in the calendar. */
  | { kind: 'dropOccurrence'; originalStart: number };

const TERMINAL = new Set(['done', 'cancelled', 'rejected']);

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

/** The decision table: what a message does to the booking its UID holds (null: none). */
export function decide(m: MessageFacts, booking: BookingFacts | null): Step {
  switch (m.method) {
    case 'REQUEST': {
      if (!booking || booking.status === 'rejected' || booking.status === 'cancelled') {
        if (!m.roomInvited) return { kind: 'answer', outcome: 'ignored', accepted: false, reason: REASONS.removed };
        return { kind: 'book' };
      }
      // A done booking is final: no later message cancels, moves or withdraws it.
      if (booking.status === 'done') return { kind: 'answer', outcome: 'unchanged', accepted: false, reason: REASONS.ended };
      if (!m.roomInvited) return { kind: 'withdraw', reason: REASONS.removed };
      if (m.cancelled) return { kind: 'withdraw', reason: null };
      if (m.occurrence !== null && booking.series) return { kind: 'moveOccurrence' };
      return { kind: 'move' };
    }
    case 'CANCEL': {
      if (!booking || isTerminal(booking.status)) return { kind: 'answer', outcome: 'unchanged', accepted: false, reason: REASONS.deleted };
      if (m.occurrence !== null && booking.series) return { kind: 'dropOccurrence', originalStart: m.occurrence };
      return { kind: 'withdraw', reason: null };
    }
    default: {
      // REPLY: only the room declining its own copy changes anything.
      if (m.roomPartstat === 'DECLINED' && booking && !isTerminal(booking.status))
        return { kind: 'withdraw', reason: REASONS.roomDeclined };
      return {
        kind: 'answer',
        outcome: 'ignored',
        accepted: booking !== null && !isTerminal(booking.status),
        reason: booking ? null : REASONS.deleted,
      };
    }
  }
}

/** The organizer of a new invitation, as the project knows them (null: not a user of the project). */
export interface OrganizerFacts {
  /** The ORGANIZER's email in the invitation (null: it names none). */
  invitedBy: string | null;
  account: { email: string | null; blocked: boolean; member: 'member' | 'visitor' | null; brandStaff: boolean } | null;
  projectName: string;
  roomName: string;
  roomIsPublic: boolean;
}

/** Why the organizer may not book this room, or null. */
export function organizerRefusal(f: OrganizerFacts): string | null {
  const o = f.account;
  if (f.invitedBy === null) return REASONS.noOrganizer;
  if (!o) return `${f.invitedBy} is not a user of ${f.projectName}`;
  if (!o.member && !o.brandStaff) return `${o.email ?? f.invitedBy} is not a member of ${f.projectName}`;
  if (!mayBookPrivately({ assetIsPublic: f.roomIsPublic, membership: o.member, brandStaff: o.brandStaff }))
    return `${f.roomName} is private to the members of ${f.projectName}`;
  if (o.blocked) return 'The organizer has been blocked from booking by an administrator';
  return null;
}

/** The refusals of a new invitation that need no database, in the order they are answered. */
export interface BookingRefusals {
  organizer: string | null;
  roomName: string;
  /** The room's status when it is closed for booking (e.g. `maintenance`), else null. */
  closedStatus: string | null;
  /** The room has a price (paid rooms are booked in the app). */
  paid: boolean;
  /** Why the invitation's times cannot be booked (a bad or unsupported repeat rule, an empty window), or null. */
  times: string | null;
}

/** The first refusal that needs no database, or null (then the actor checks the windows against the room). */
export function bookingRefusal(r: BookingRefusals): string | null {
  if (r.organizer) return r.organizer;
  if (r.closedStatus !== null) return `${r.roomName} is ${r.closedStatus} and cannot be booked`;
  if (r.paid) return `${r.roomName} is a paid room: book it in the app, where it can be paid`;
  return r.times;
}

/**
 * A new invitation's verdict given its refusal (null: none): booked; or rejected and kept
 * as a `rejected` meeting for its organizer; or, with no organizer to hold it, only declined.
 */
export function newInvitation(
  refusal: string | null,
  hasOrganizer: boolean,
): { kind: 'book' } | { kind: 'reject'; store: boolean; reason: string } {
  if (refusal === null) return { kind: 'book' };
  return { kind: 'reject', store: hasOrganizer, reason: refusal };
}

/** A known invitation: the booking as it stands and the times the message asks for. */
export interface MoveFacts {
  status: string;
  /** The booking's window. */
  booked: Span;
  /** The booking is a series. */
  series: boolean;
  /** The message asks for the times (and repeat rule) the booking has. */
  sameTimes: boolean;
  /** The message's times, truncated to the minute. */
  to: Span;
}

export type MovePlan =
  /** No time changes (details may). */
  | { kind: 'unchanged' }
  /** Nothing changes; declined with `reason`. */
  | { kind: 'refuse'; reason: string }
  /** The booking is cancelled with `reason`. */
  | { kind: 'cancel'; reason: string }
  /** Checked in: only the end moves; `check` when the longer window must be checked against the room first. */
  | { kind: 'moveEnd'; end: number; check: boolean }
  /** The booking moves to `to`, once the window check passes (`ignoreLeadTime` when the start stays). */
  | { kind: 'move'; to: Span; ignoreLeadTime: boolean };

/** What new times do to a known booking, before any window check. */
export function planMove(f: MoveFacts): MovePlan {
  if (f.sameTimes) return { kind: 'unchanged' };
  if (f.series) return { kind: 'refuse', reason: REASONS.seriesChange };
  if (f.to.end <= f.to.start) return { kind: 'cancel', reason: 'The event ends before it starts' };
  if (f.status === 'checked-in') {
    // The start cannot move once people are in; only the end follows the calendar.
    const end = Math.max(f.to.end, f.booked.start + 60_000);
    if (end === f.booked.end) return { kind: 'unchanged' };
    return { kind: 'moveEnd', end, check: end > f.booked.end };
  }
  return { kind: 'move', to: f.to, ignoreLeadTime: f.to.start === f.booked.start };
}

/**
 * A plan after its window check (`refusal`: the broken rule or clash, or null): a refused
 * longer end changes nothing; a refused move cancels the booking with the rule as reason.
 */
export function afterWindowCheck(plan: MovePlan, booked: Span, refusal: string | null, timeZone: string): MovePlan {
  if (refusal === null) return plan.kind === 'moveEnd' ? { ...plan, check: false } : plan;
  if (plan.kind === 'moveEnd')
    return {
      kind: 'refuse',
      reason: `The end cannot move to ${describeWindow({ start: booked.start, end: plan.end }, timeZone)}: ${refusal}`,
    };
  if (plan.kind === 'move') return { kind: 'cancel', reason: refusal };
  return plan;
}

/** An occurrence of a stored series. */
export interface Occurrence extends Span {
  id: string;
}

/** The occurrence in progress or next (the first not ended at `now`). */
export function currentOccurrence<T extends Span>(occurrences: T[], now: number): T | undefined {
  return occurrences.find((o) => o.end > now);
}

export type DropPlan =
  | { kind: 'answer'; outcome: Outcome; accepted: boolean; reason: string | null }
  | { kind: 'withdraw' }
  | { kind: 'drop'; occurrence: Occurrence; isCurrent: boolean };

/**
 * One occurrence deleted in the calendar (`originalStart` truncated to the minute):
 * unknown → unchanged; the last one left → the whole booking goes; the one in progress
 * of a checked-in series → refused; otherwise it alone goes.
 */
export function planDropOccurrence(f: { occurrences: Occurrence[]; originalStart: number; status: string; now: number }): DropPlan {
  const occ = f.occurrences.find((o) => o.start === f.originalStart);
  if (!occ) return { kind: 'answer', outcome: 'unchanged', accepted: true, reason: null };
  if (f.occurrences.every((o) => o.id === occ.id)) return { kind: 'withdraw' };
  const isCurrent = currentOccurrence(f.occurrences, f.now)?.id === occ.id;
  if (isCurrent && f.status === 'checked-in')
    return { kind: 'answer', outcome: 'refused', accepted: false, reason: 'The occurrence is in progress; end it at the room' };
  return { kind: 'drop', occurrence: occ, isCurrent };
}

export type OccurrenceMovePlan =
  | { kind: 'answer'; outcome: Outcome; accepted: boolean; reason: string | null; window?: Span }
  | { kind: 'drop' }
  | { kind: 'move'; occurrence: Occurrence; to: Span; isCurrent: boolean };

/**
 * One occurrence moved in the calendar (an override; `originalStart` and `to` truncated to
 * the minute), before the window check: unknown → refused; cancelled → dropped; same times →
 * unchanged; the one in progress of a checked-in series → refused; overlapping another
 * occurrence of the series → refused.
 */
export function planMoveOccurrence(f: {
  occurrences: Occurrence[];
  originalStart: number;
  cancelled: boolean;
  to: Span;
  status: string;
  now: number;
}): OccurrenceMovePlan {
  const occ = f.occurrences.find((o) => o.start === f.originalStart);
  if (!occ) return { kind: 'answer', outcome: 'refused', accepted: false, reason: 'That occurrence is not part of the booked series' };
  if (f.cancelled) return { kind: 'drop' };
  const { to } = f;
  if (to.start === occ.start && to.end === occ.end)
    return { kind: 'answer', outcome: 'unchanged', accepted: true, reason: null, window: occ };
  const isCurrent = currentOccurrence(f.occurrences, f.now)?.id === occ.id;
  if (isCurrent && f.status === 'checked-in')
    return { kind: 'answer', outcome: 'refused', accepted: false, reason: 'The occurrence is in progress; its start cannot move' };
  const overlapsOwn = f.occurrences.some((o) => o.id !== occ.id && o.start < to.end && to.start < o.end);
  if (overlapsOwn)
    return {
      kind: 'answer',
      outcome: 'refused',
      accepted: false,
      reason: 'The moved occurrence would overlap another occurrence of the series',
      window: to,
    };
  return { kind: 'move', occurrence: occ, to, isCurrent };
}
