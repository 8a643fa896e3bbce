/**
 * Payment deadlines (pure). A self-service checkout must be paid within five
 * minutes of the booking; a back-office hold lasts `paymentDueMinutes`, else the
 * project's default, else 1440 minutes, clamped to 7 days and to the meeting start
 * (clamped, never refused). A hold is reminded of at about 75 % of its length.
 */
export const CHECKOUT_WINDOW_MS = 5 * 60_000;
export const DEFAULT_HOLD_MINUTES = 1440;
export const MAX_HOLD_MINUTES = 10_080;

export function checkoutDeadline(now: number): number {
  return now + CHECKOUT_WINDOW_MS;
}

export function holdDeadline(p: { now: number; start: number; requestedMinutes?: number | null; projectMinutes?: number | null }): number {
  const minutes = Math.min(p.requestedMinutes ?? p.projectMinutes ?? DEFAULT_HOLD_MINUTES, MAX_HOLD_MINUTES);
  return Math.max(p.now, Math.min(p.now + minutes * 60_000, p.start));
}

/** When the second reminder of a hold is due; null when the hold is too short for one (under two minutes). */
export function holdReminderAt(now: number, deadline: number): number | null {
  if (deadline - now < 2 * 60_000) return null;
  return now + Math.round((deadline - now) * 0.75);
}
