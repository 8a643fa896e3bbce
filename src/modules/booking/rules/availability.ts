/**
 * Availability engine: may this [start, end) window be booked on this asset?
 *
 * Pure: no HTTP, no SQL, no clock (callers pass `now`). Instants are epoch milliseconds (UTC).
 * Wall-clock rules (operating hours, breaks, legacy hours, advance days, weekday) are evaluated
 * in the property's IANA time zone. A minute belongs to the local date and time-of-day that the
 * wall clock shows at that instant, so DST-change days are 23 or 25 hours long and a
 * configured time that the clock skips (spring forward) takes effect at the first instant after
 * the jump; a time that repeats (fall back) takes effect at its first occurrence.
 *
 * Order of evaluation in checkBookingWindow (the first failing rule is returned):
 *   1. INVALID_WINDOW   end <= start after truncating both to the minute
 *   2. MULTI_DAY        spans several local dates while bookMultipleDayRoom is not true
 *   3. OPERATING_HOURS  closed weekday, or outside the day's hours
 *   4. BREAK_TIME       overlaps a break (not checked for allDay windows)
 *   5. MAX_DURATION     longer than maxDurationMinutes
 *   6. LEAD_TIME        starts before now + minimumLeadTime (or in the past)
 *   7. ADVANCE_DAYS     starts more than maxAdvanceBookingDays local dates after today
 *   8. CONFLICT         overlaps another booking's slot or cleaning time
 * Rules 1-7 depend only on the request and the asset config (checkConfigRules); CONFLICT depends
 * on other people's bookings (findConflict) and is reported last, so a window that could never
 * be booked gets the same answer whatever else is booked, and a search can tell "booked" apart
 * from "free but not bookable".
 */
import type { IANAZone } from 'luxon';
import {
  DAY,
  MINUTE,
  instantAtLocalTime,
  isoDate,
  localDayOf,
  offsetAt,
  offsetChangeBefore,
  weekdayIndex,
  zoneOf,
} from '../../../platform/time/wall-clock.js';
import { dayHours, WEEKDAYS, type AssetConfig, type DayHours, type TimeRange, type Weekday } from './asset-config.js';

const NOON = 12 * 60;

export function truncateToMinute(ms: number): number {
  return Math.floor(ms / MINUTE) * MINUTE;
}

// ---------------------------------------------------------------------------
// Result types
// ---------------------------------------------------------------------------

export type RuleReason = 'INVALID_WINDOW' | 'MULTI_DAY' | 'OPERATING_HOURS' | 'BREAK_TIME' | 'MAX_DURATION' | 'LEAD_TIME' | 'ADVANCE_DAYS';
export type RefusalReason = RuleReason | 'CONFLICT';

/** The (minute-truncated) window that was accepted. */
export interface WindowOk {
  ok: true;
  start: number;
  end: number;
}

interface Refused {
  ok: false;
  /** The window as evaluated (truncated to the minute). */
  start: number;
  end: number;
}

export type RuleViolation =
  | (Refused & { reason: 'INVALID_WINDOW' | 'MULTI_DAY' })
  /** `date`: the local date (YYYY-MM-DD) that is closed or whose hours the window leaves. */
  | (Refused & { reason: 'OPERATING_HOURS'; date: string })
  | (Refused & { reason: 'BREAK_TIME'; date: string; breakTime: TimeRange })
  | (Refused & { reason: 'MAX_DURATION'; maxDurationMinutes: number })
  /** `earliestStart`: the first instant the rule would accept. */
  | (Refused & { reason: 'LEAD_TIME'; earliestStart: number })
  /** `lastBookableDate`: the last local date (YYYY-MM-DD) a booking may start on. */
  | (Refused & { reason: 'ADVANCE_DAYS'; lastBookableDate: string });

/** An existing hold on the asset: [start, end) plus cleaning until cleaningEndsAt. */
export interface BusyInterval {
  id?: string;
  start: number;
  end: number;
  cleaningEndsAt: number;
}

export interface ConflictRefusal extends Refused {
  reason: 'CONFLICT';
  conflictWith: BusyInterval;
}

export type ConfigRulesResult = WindowOk | RuleViolation;
export type BookingWindowResult = WindowOk | RuleViolation | ConflictRefusal;

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

export interface ExistingBooking {
  id?: string;
  start: number;
  end: number;
}

export interface ConfigRulesInput {
  start: number;
  end: number;
  now: number;
  timeZone: string;
  config: AssetConfig;
  /** Whole-day holds (timePeriod allDay) are not refused for break times. */
  allDay?: boolean;
}

export interface ConflictInput {
  start: number;
  end: number;
  /** Effective cleaning time, already resolved (see cleaning-time.ts). */
  cleanupMinutes: number;
  /** Existing holds on this asset; each holds [start, end + cleanupMinutes). */
  bookings: readonly ExistingBooking[];
  /** Ignored booking, e.g. the one being moved. */
  excludeBookingId?: string;
}

export type BookingWindowInput = ConfigRulesInput & ConflictInput;

// ---------------------------------------------------------------------------
// Local clock helpers (luxon supplies the zone's UTC offsets)
// ---------------------------------------------------------------------------

function weekdayOf(day: number): Weekday {
  return WEEKDAYS[weekdayIndex(day)];
}

/** A piece of a window on one local date with one UTC offset, in minutes of that date: [from, to). */
interface LocalPart {
  day: number;
  from: number;
  to: number;
}

/** Splits a minute-aligned window into local-date / constant-offset pieces. */
function localParts(zone: IANAZone, start: number, end: number): LocalPart[] {
  const parts: LocalPart[] = [];
  for (let a = start; a < end;) {
    const offset = offsetAt(zone, a);
    const wall = a + offset;
    const day = Math.floor(wall / DAY);
    const nextMidnight = a + ((day + 1) * DAY - wall);
    const limit = offsetChangeBefore(zone, a, Math.min(end, nextMidnight), offset);
    const from = (wall - day * DAY) / MINUTE;
    parts.push({ day, from, to: from + (limit - a) / MINUTE });
    a = limit;
  }
  return parts;
}

// ---------------------------------------------------------------------------
// Wall-clock rules: MULTI_DAY, OPERATING_HOURS, BREAK_TIME
// ---------------------------------------------------------------------------

type WallClockViolation =
  { reason: 'MULTI_DAY' } | { reason: 'OPERATING_HOURS'; date: string } | { reason: 'BREAK_TIME'; date: string; breakTime: TimeRange };

interface WallClockContext {
  zone: IANAZone;
  allDay: boolean;
  hoursOf: (day: number) => DayHours | null;
}

const closed = (day: number): WallClockViolation => ({ reason: 'OPERATING_HOURS', date: isoDate(day) });

/** Whether a property-local minute of the day lies within the day's operating hours (breaks aside). */
export function insideHours(h: DayHours | null, minute: number): boolean {
  return h !== null && minute >= h.open && minute < h.close;
}

/**
 * Break overlapped by the part of `p` that lies inside the day's hours, if any. On a DST-change
 * day a multi-day window's first or last day splits into several parts, and one of them may lie
 * wholly outside the hours (e.g. 00:00-01:59 before a 02:00 opening that takes effect at 03:00);
 * its clipped range is then empty and overlaps no break.
 */
function breakHit(ctx: WallClockContext, p: LocalPart): WallClockViolation | null {
  const h = ctx.hoursOf(p.day);
  if (ctx.allDay || !h) return null;
  const from = Math.max(p.from, h.open);
  const to = Math.min(p.to, h.close);
  if (from >= to) return null;
  const hit = h.breaks.find((b) => from < b.end && b.start < to);
  return hit ? { reason: 'BREAK_TIME', date: isoDate(p.day), breakTime: hit.source } : null;
}

function firstBreakHit(ctx: WallClockContext, parts: LocalPart[]): WallClockViolation | null {
  for (const p of parts) {
    const hit = breakHit(ctx, p);
    if (hit) return hit;
  }
  return null;
}

/** Window within one local date: every minute inside the hours and outside the breaks. */
function singleDayViolation(ctx: WallClockContext, start: number, end: number): WallClockViolation | null {
  const parts = localParts(ctx.zone, start, end);
  for (const p of parts) {
    const h = ctx.hoursOf(p.day);
    if (!h || p.from < h.open || p.to > h.close) return closed(p.day);
  }
  return firstBreakHit(ctx, parts);
}

/**
 * Window over several local dates (bookMultipleDayRoom): every date is an operating day, the
 * first and the last minute are inside their day's hours, and breaks are checked on the first
 * day's part (start..close) and the last day's part (open..end) only.
 */
function multiDayViolation(
  ctx: WallClockContext,
  start: number,
  end: number,
  firstDay: number,
  lastDay: number,
): WallClockViolation | null {
  // Weekdays repeat, so the first 7 dates reveal the earliest closed date.
  for (let d = firstDay; d <= Math.min(lastDay, firstDay + 6); d++) {
    if (!ctx.hoursOf(d)) return closed(d);
  }
  const head = localParts(ctx.zone, start, Math.min(end, instantAtLocalTime(ctx.zone, firstDay + 1, 0)));
  const tail = localParts(ctx.zone, Math.max(start, instantAtLocalTime(ctx.zone, lastDay, 0)), end);
  const first = head[0];
  const last = tail[tail.length - 1];
  if (!insideHours(ctx.hoursOf(first.day), first.from)) return closed(first.day);
  if (!insideHours(ctx.hoursOf(last.day), last.to - 1)) return closed(last.day);
  return firstBreakHit(ctx, head) ?? firstBreakHit(ctx, tail);
}

function wallClockViolation(input: ConfigRulesInput, start: number, end: number, zone: IANAZone): WallClockViolation | null {
  const config = input.config ?? {};
  const ctx: WallClockContext = {
    zone,
    allDay: input.allDay === true,
    hoursOf: (day) => dayHours(config, weekdayOf(day)),
  };
  const firstDay = localDayOf(zone, start);
  const lastDay = localDayOf(zone, end - MINUTE); // an end at next midnight stays on the same date
  if (firstDay === lastDay) return singleDayViolation(ctx, start, end);
  if (config.bookMultipleDayRoom !== true) return { reason: 'MULTI_DAY' };
  return multiDayViolation(ctx, start, end, Math.min(firstDay, lastDay), Math.max(firstDay, lastDay));
}

// ---------------------------------------------------------------------------
// Clock-relative and duration rules
// ---------------------------------------------------------------------------

function finiteOr0(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** minimumLeadTime in minutes (days = 1440 min, hours = 60 min); never negative. */
export function leadTimeMinutes(config: AssetConfig | null | undefined): number {
  const lead = config?.minimumLeadTime;
  return Math.max(0, finiteOr0(lead?.days) * 1440 + finiteOr0(lead?.hours) * 60 + finiteOr0(lead?.minutes));
}

function maxDurationViolation(config: AssetConfig, start: number, end: number) {
  const max = config.maxDurationMinutes;
  if (typeof max !== 'number' || !Number.isFinite(max) || max <= 0) return null;
  return end - start > max * MINUTE ? { reason: 'MAX_DURATION' as const, maxDurationMinutes: max } : null;
}

function leadTimeViolation(config: AssetConfig, start: number, now: number) {
  const earliestStart = truncateToMinute(now) + leadTimeMinutes(config) * MINUTE;
  return start < earliestStart ? { reason: 'LEAD_TIME' as const, earliestStart } : null;
}

function advanceDaysViolation(config: AssetConfig, zone: IANAZone, start: number, now: number) {
  const max = config.maxAdvanceBookingDays;
  if (typeof max !== 'number' || !Number.isFinite(max) || max < 0) return null;
  const lastDay = localDayOf(zone, now) + Math.floor(max);
  return localDayOf(zone, start) > lastDay ? { reason: 'ADVANCE_DAYS' as const, lastBookableDate: isoDate(lastDay) } : null;
}

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

/** Rules 1-7 (config only, no other bookings). Throws RangeError on an unknown time zone. */
export function checkConfigRules(input: ConfigRulesInput): ConfigRulesResult {
  const start = truncateToMinute(input.start);
  const end = truncateToMinute(input.end);
  if (!(end > start)) return { ok: false, reason: 'INVALID_WINDOW', start, end };
  const zone = zoneOf(input.timeZone);
  const config = input.config ?? {};
  const violation =
    wallClockViolation(input, start, end, zone) ??
    maxDurationViolation(config, start, end) ??
    leadTimeViolation(config, start, input.now) ??
    advanceDaysViolation(config, zone, start, input.now);
  return violation ? { ok: false, start, end, ...violation } : { ok: true, start, end };
}

function cleanupMs(cleanupMinutes: number): number {
  return Number.isFinite(cleanupMinutes) && cleanupMinutes > 0 ? cleanupMinutes * MINUTE : 0;
}

function toBusy(b: ExistingBooking, cleanup: number): BusyInterval {
  const busy: BusyInterval = { start: b.start, end: b.end, cleaningEndsAt: b.end + cleanup };
  if (b.id !== undefined) busy.id = b.id;
  return busy;
}

/**
 * Slot and cleaning rule only. The window (truncated to the minute) holds
 * [start, end + cleanup); each booking holds [b.start, b.end + cleanup); they conflict iff these
 * half-open intervals overlap. Returns the earliest-starting conflicting booking, or null.
 */
export function findConflict(input: ConflictInput): BusyInterval | null {
  const cleanup = cleanupMs(input.cleanupMinutes);
  const start = truncateToMinute(input.start);
  const holdEnd = truncateToMinute(input.end) + cleanup;
  let found: ExistingBooking | null = null;
  for (const b of input.bookings) {
    if (input.excludeBookingId !== undefined && b.id === input.excludeBookingId) continue;
    const bHoldEnd = b.end + cleanup;
    const overlaps = b.start < bHoldEnd && start < holdEnd && start < bHoldEnd && b.start < holdEnd;
    if (overlaps && (found === null || b.start < found.start)) found = b;
  }
  return found ? toBusy(found, cleanup) : null;
}

/** All rules, in the order documented at the top of this file. */
export function checkBookingWindow(input: BookingWindowInput): BookingWindowResult {
  const rules = checkConfigRules(input);
  if (!rules.ok) return rules;
  const conflict = findConflict({ ...input, start: rules.start, end: rules.end });
  return conflict ? { ok: false, reason: 'CONFLICT', start: rules.start, end: rules.end, conflictWith: conflict } : rules;
}

/** Existing holds sorted by start (then end), each with the instant its cleaning ends. */
export function busyIntervals(bookings: readonly ExistingBooking[], cleanupMinutes: number): BusyInterval[] {
  const cleanup = cleanupMs(cleanupMinutes);
  return bookings.map((b) => toBusy(b, cleanup)).sort((x, y) => x.start - y.start || x.end - y.end);
}

// ---------------------------------------------------------------------------
// timePeriod (desks): morning / afternoon / allDay
// ---------------------------------------------------------------------------

export type TimePeriod = 'morning' | 'afternoon' | 'allDay';

export interface TimePeriodInput {
  start: number;
  period: TimePeriod;
  timeZone: string;
  config: AssetConfig;
  /**
   * Service time. A period that is already over by then is not open (null), as when
   * `start` is after it: a start at local midnight must not turn that into a lead-time refusal.
   */
  now?: number;
}

/** The span of breaks around noon: every break that touches 12:00 or, transitively, another one. */
function noonBreakBlock(h: DayHours): { start: number; end: number } {
  const block = { start: NOON, end: NOON };
  for (let grew = true; grew;) {
    grew = false;
    for (const b of h.breaks) {
      if (b.start <= block.end && b.end >= block.start && (b.start < block.start || b.end > block.end)) {
        block.start = Math.min(block.start, b.start);
        block.end = Math.max(block.end, b.end);
        grew = true;
      }
    }
  }
  return block;
}

/** The period in minutes of the day, or null when it is empty. */
function periodMinutes(h: DayHours, period: TimePeriod): { from: number; to: number } | null {
  const noon = noonBreakBlock(h);
  const [from, to] =
    period === 'morning'
      ? [h.open, Math.min(h.close, noon.start)]
      : period === 'afternoon'
        ? [Math.max(h.open, noon.end), h.close]
        : [h.open, h.close];
  return from < to ? { from, to } : null;
}

/**
 * Resolves a desk timePeriod on the local date of `start`: morning = open..12:00,
 * afternoon = 12:00..close, allDay = open..close; a break containing 12:00 splits morning and
 * afternoon at its edges. The window starts at max(start truncated, period start) and ends at
 * the period end. Null when the asset is closed that day or the period is over by `start`
 * (or by `now`, when given).
 */
export function resolveTimePeriod(input: TimePeriodInput): { start: number; end: number } | null {
  const zone = zoneOf(input.timeZone);
  const requested = truncateToMinute(input.start);
  const day = localDayOf(zone, requested);
  const hours = dayHours(input.config ?? {}, weekdayOf(day));
  const range = hours && periodMinutes(hours, input.period);
  if (!range) return null;
  const start = Math.max(requested, instantAtLocalTime(zone, day, range.from));
  const end = instantAtLocalTime(zone, day, range.to);
  if (input.now !== undefined && end <= truncateToMinute(input.now)) return null;
  return start < end ? { start, end } : null;
}
