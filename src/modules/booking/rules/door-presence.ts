/**
 * What a granted member entry at a room's or desk's door does to its bookings (pure). The booking is
 * judged at the entry's time `at` with the API check-in's own rule (`checkInRefusal`), the PIN part
 * left out (the door knows the person):
 * - a booking the member takes part in (organizer or attendee) whose check-in window holds `at` and
 *   which may be checked in → `check-in`;
 * - such a booking already checked in (or unpaid) in its window, or one later the same local day
 *   (before its window opens) → `booked`: recorded only;
 * - someone else's booking holding the asset at `at` (its check-in window included) → `recorded`;
 * - no booking there at all (the member's own have ended) → `walk-in` (never a booking made on the member's behalf).
 */
import { DateTime } from 'luxon';
import { checkInRefusal, type MeetingStatus } from './meeting-rules.js';

export interface DoorBooking {
  id: string;
  status: string;
  /** The occurrence's window (a series: the occurrence held at that time). */
  start: number;
  end: number;
  organizerUserId: string;
  attendeeUserIds: readonly string[];
}

export type DoorDecision =
  | { outcome: 'check-in'; meetingId: string; asOrganizer: boolean }
  | { outcome: 'booked' | 'recorded'; meetingId: string }
  | { outcome: 'walk-in'; meetingId: null };

const LIVE = new Set(['active', 'unpaid', 'checked-in']);

const localDate = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone }).toISODate();

/** Whether `at` is in the booking's check-in window: from start − preStartMinutes (or its local day) to its end. */
export function inCheckInWindow(b: Pick<DoorBooking, 'start' | 'end'>, at: number, ctx: { preStartMinutes: number; timeZone: string }) {
  if (at >= b.end) return false;
  if (ctx.preStartMinutes >= 0) return at >= b.start - ctx.preStartMinutes * 60_000;
  return localDate(at, ctx.timeZone) === localDate(b.start, ctx.timeZone);
}

export function doorDecision(
  bookings: readonly DoorBooking[],
  userId: string,
  at: number,
  ctx: { preStartMinutes: number; timeZone: string },
): DoorDecision {
  const live = bookings.filter((b) => LIVE.has(b.status)).sort((a, b) => a.start - b.start || (a.id < b.id ? -1 : 1));
  const isOrganizer = (b: DoorBooking) => b.organizerUserId === userId;
  const takesPart = (b: DoorBooking) => isOrganizer(b) || b.attendeeUserIds.includes(userId);
  const mine = live.filter(takesPart);
  for (const b of mine) {
    const caller = { isOrganizer: isOrganizer(b), isAttendee: !isOrganizer(b), isProjectAdmin: false };
    const facts = { status: b.status as MeetingStatus, start: b.start, end: b.end, pinFailures: 0 };
    if (checkInRefusal(facts, caller, { now: at, ...ctx }) === null)
      return { outcome: 'check-in', meetingId: b.id, asOrganizer: isOrganizer(b) };
  }
  const mineNow = mine.find((b) => inCheckInWindow(b, at, ctx));
  if (mineNow) return { outcome: 'booked', meetingId: mineNow.id };
  const othersNow = live.find((b) => !takesPart(b) && inCheckInWindow(b, at, ctx));
  if (othersNow) return { outcome: 'recorded', meetingId: othersNow.id };
  const sameDay = mine.find((b) => at < b.end && localDate(b.start, ctx.timeZone) === localDate(at, ctx.timeZone));
  if (sameDay) return { outcome: 'booked', meetingId: sameDay.id };
  return { outcome: 'walk-in', meetingId: null };
}
