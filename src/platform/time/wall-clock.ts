/**
 * The wall clock of a property's IANA zone as plain arithmetic: UTC offsets (memoized luxon
 * lookups), local day numbers (days since 1970-01-01 on the wall clock), ISO dates and the
 * instant a local time of day takes effect. Pure; shared by the booking rules (opening hours)
 * and the analytics rules (minutes per local day and hour).
 */
import { IANAZone } from 'luxon';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** The luxon zone of an IANA name; throws a RangeError for an unknown one. */
export function zoneOf(timeZone: string): IANAZone {
  const zone = IANAZone.create(timeZone);
  if (!zone.isValid) throw new RangeError(`Unknown IANA time zone: ${timeZone}`);
  return zone;
}

/**
 * UTC offsets already computed, per zone name: per UTC day, the day's one offset when it has no
 * change (nearly every day: two luxon lookups serve every instant of it), else per instant. luxon
 * formats the instant in the zone for every offset it is asked for, which dominated the cost of
 * judging many bookings and opening hours.
 */
const dayMemo = new Map<string, Map<number, number | null>>();
const offsetMemo = new Map<string, Map<number, number>>();
const OFFSET_MEMO_SIZE = 4096;
const DAY_MEMO_SIZE = 100_000;

function exactOffset(zone: IANAZone, t: number): number {
  let memo = offsetMemo.get(zone.name);
  if (!memo) offsetMemo.set(zone.name, (memo = new Map<number, number>()));
  let offset = memo.get(t);
  if (offset === undefined) {
    offset = Math.round(zone.offset(t)) * MINUTE;
    if (memo.size >= OFFSET_MEMO_SIZE) memo.clear();
    memo.set(t, offset);
  }
  return offset;
}

/** The zone's UTC offset at instant `t`, in milliseconds. */
export function offsetAt(zone: IANAZone, t: number): number {
  let days = dayMemo.get(zone.name);
  if (!days) dayMemo.set(zone.name, (days = new Map<number, number | null>()));
  const d = Math.floor(t / DAY);
  let steady = days.get(d);
  if (steady === undefined) {
    const first = Math.round(zone.offset(d * DAY)) * MINUTE;
    const last = Math.round(zone.offset((d + 1) * DAY - 1)) * MINUTE;
    steady = first === last ? first : null;
    if (days.size >= DAY_MEMO_SIZE) days.clear();
    days.set(d, steady);
  }
  return steady ?? exactOffset(zone, t);
}

/** Local calendar date of an instant, as a day number (days since 1970-01-01 on the wall clock). */
export function localDayOf(zone: IANAZone, t: number): number {
  return Math.floor((t + offsetAt(zone, t)) / DAY);
}

/** `HH:mm` on the zone's wall clock at instant `t` (what luxon's `toFormat('HH:mm')` shows, without its formatting cost). */
export function wallClockTime(zone: IANAZone, t: number): string {
  const local = t + offsetAt(zone, t);
  const minutes = Math.floor((((local % DAY) + DAY) % DAY) / MINUTE);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return `${h < 10 ? '0' : ''}${h}:${m < 10 ? '0' : ''}${m}`;
}

/** ISO weekday index of a day number: 0 = Monday … 6 = Sunday. */
export function weekdayIndex(day: number): number {
  return (((day + 3) % 7) + 7) % 7; // day 0 (1970-01-01) was a Thursday
}

/** YYYY-MM-DD of a day number. */
export function isoDate(day: number): string {
  return new Date(day * DAY).toISOString().slice(0, 10);
}

/** The day number of a YYYY-MM-DD date. */
export function dayNumber(isoDay: string): number {
  return Math.floor(Date.parse(`${isoDay}T00:00:00Z`) / DAY);
}

/**
 * Earliest instant at which the wall clock shows `minutes` past midnight of local `day`
 * (minutes may be 1440 = next midnight). Repeated times resolve to their first occurrence;
 * skipped times to the first instant after the jump.
 */
export function instantAtLocalTime(zone: IANAZone, day: number, minutes: number): number {
  const wall = day * DAY + minutes * MINUTE;
  const guesses = [wall - 14 * HOUR, wall + 14 * HOUR].map((t) => wall - offsetAt(zone, t));
  const exact = guesses.filter((t) => t + offsetAt(zone, t) === wall);
  if (exact.length > 0) return Math.min(...exact);
  // Gap: find the first minute whose wall clock is at or past `wall`.
  let lo = Math.min(...guesses);
  let hi = Math.max(...guesses);
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
    if (mid + offsetAt(zone, mid) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** First instant in (a, limit) whose UTC offset differs from `offset`; `limit` when none. */
export function offsetChangeBefore(zone: IANAZone, a: number, limit: number, offset: number): number {
  if (offsetAt(zone, limit - MINUTE) === offset) return limit;
  let lo = a;
  let hi = limit - MINUTE;
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
    if (offsetAt(zone, mid) === offset) lo = mid;
    else hi = mid;
  }
  return hi;
}
