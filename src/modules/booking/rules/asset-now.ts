/**
 * What the console shows of an asset: its state at an instant (free, booked,
 * checked-in, cleaning, closed) with the current and next booking, and its
 * schedule on a property-local day (operating hours and breaks as instants).
 * Pure: the instant, the asset's config and status, its bookings and cleaning
 * time are handed in; the hours come from `dayHours` (asset-config.ts), the same
 * interpretation the availability rules book against.
 */
import { DateTime } from 'luxon';
import type { AssetState } from '../../../contract/ops-console.js';
import { WEEKDAYS, dayHours, isClosedStatus, type AssetConfig } from './asset-config.js';
import { insideHours } from './availability.js';
import { nextLocalDayStart } from '../../../platform/time/local-day.js';

/** A booking (or one occurrence of a series) on the asset. */
export interface AssetBooking {
  id: string;
  status: string;
  start: number;
  end: number;
}

/** Statuses whose booking holds the asset (an unpaid one waits for its payment, holding the slot). */
const HOLDING = new Set(['active', 'checked-in', 'unpaid']);
/** Statuses whose booking is followed by cleaning time (a checked-out booking ends early; cleaning follows). */
const CLEANED_AFTER = new Set(['active', 'checked-in', 'unpaid', 'done']);

export interface AssetNowInput<B extends AssetBooking> {
  now: number;
  kind: 'room' | 'desk';
  /** The asset's status (active, inactive, suspended). */
  status: string;
  config: AssetConfig | null | undefined;
  timeZone: string;
  cleanupMinutes: number;
  bookings: readonly B[];
}

export interface AssetNowResult<B extends AssetBooking> {
  state: AssetState;
  current: B | null;
  next: B | null;
}

/**
 * The asset's state at `now`. A booking holding it wins (`checked-in` when its
 * status says so, else `booked`); then an inactive or suspended asset is `closed`;
 * then the cleaning time after a booking (`cleaning`); then outside the day's hours
 * or inside a break is `closed`; otherwise `free`. `next` is the earliest holding
 * booking that starts after `now`.
 */
export function assetNow<B extends AssetBooking>(input: AssetNowInput<B>): AssetNowResult<B> {
  const { now } = input;
  const holding = input.bookings.filter((b) => HOLDING.has(b.status));
  const current = holding.filter((b) => b.start <= now && now < b.end).sort((a, b) => a.start - b.start)[0] ?? null;
  const next = holding.filter((b) => b.start > now).sort((a, b) => a.start - b.start)[0] ?? null;
  const state = ((): AssetState => {
    if (current) return current.status === 'checked-in' ? 'checked-in' : 'booked';
    if (isClosedStatus(input.kind, input.status)) return 'closed';
    const cleaning = input.cleanupMinutes * 60_000;
    if (cleaning > 0 && input.bookings.some((b) => CLEANED_AFTER.has(b.status) && b.end <= now && now < b.end + cleaning))
      return 'cleaning';
    return isOpenAt(input.config, input.timeZone, now) ? 'free' : 'closed';
  })();
  return { state, current, next };
}

/** How long a granted entry at the doors of an asset nobody booked counts as someone being there (a walk-in). */
export const WALK_IN_PRESENCE_MS = 30 * 60_000;

/**
 * Whether a badge says someone is in the asset now (the console's "occupied by badge"): a granted entry at its
 * doors since the current booking's check-in window opened (`preStartMinutes` before its start; a negative value
 * counts from the start), or, with no booking now, within the last WALK_IN_PRESENCE_MS. `lastEntryAt` is the latest
 * granted entry there (null: none); an entry dated after `now` (a device clock ahead) counts as now.
 */
export function occupiedByBadge(p: {
  now: number;
  current: { start: number; end: number } | null;
  preStartMinutes: number;
  lastEntryAt: number | null;
}): boolean {
  if (p.lastEntryAt === null) return false;
  const at = Math.min(p.lastEntryAt, p.now);
  if (p.current) return at >= p.current.start - Math.max(0, p.preStartMinutes) * 60_000;
  return at > p.now - WALK_IN_PRESENCE_MS;
}

/** Whether the asset's hours include `now` (property-local) and no break covers it. */
export function isOpenAt(config: AssetConfig | null | undefined, timeZone: string, now: number): boolean {
  const local = DateTime.fromMillis(now, { zone: timeZone });
  const hours = dayHours(config, WEEKDAYS[local.weekday - 1]!);
  const minute = local.hour * 60 + local.minute;
  return insideHours(hours, minute) && !hours!.breaks.some((b) => minute >= b.start && minute < b.end);
}

export interface Span {
  start: number;
  end: number;
}

/**
 * The asset's schedule on the property-local `date` (YYYY-MM-DD): its operating
 * hours (one span; none when it is closed that day) and its breaks, as instants.
 * A wall-clock time a DST change skips resolves to the instant after the jump.
 */
export function daySchedule(config: AssetConfig | null | undefined, timeZone: string, date: string): { open: Span[]; breaks: Span[] } {
  const day = DateTime.fromISO(date, { zone: timeZone }).startOf('day');
  if (!day.isValid) throw new RangeError(`Not a date in ${timeZone}: ${date}`);
  const hours = dayHours(config, WEEKDAYS[day.weekday - 1]!);
  if (!hours) return { open: [], breaks: [] };
  const at = (minutes: number) =>
    minutes >= 1440
      ? nextLocalDayStart(day.toMillis(), timeZone)
      : day.set({ hour: Math.floor(minutes / 60), minute: minutes % 60 }).toMillis();
  return {
    open: [{ start: at(hours.open), end: at(hours.close) }],
    breaks: hours.breaks.map((b) => ({ start: at(b.start), end: at(b.end) })),
  };
}

/** The property-local date (YYYY-MM-DD) of an instant. */
export function localDate(ms: number, timeZone: string): string {
  return DateTime.fromMillis(ms, { zone: timeZone }).toISODate()!;
}

/** The instants [start, end) of the property-local `date`. */
export function localDayBounds(date: string, timeZone: string): Span {
  const day = DateTime.fromISO(date, { zone: timeZone }).startOf('day');
  if (!day.isValid) throw new RangeError(`Not a date in ${timeZone}: ${date}`);
  return { start: day.toMillis(), end: nextLocalDayStart(day.toMillis(), timeZone) };
}
