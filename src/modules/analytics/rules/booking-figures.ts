/**
 * What one booking adds to the utilisation figures (docs/analytics.md), decided from the booking
 * as stored and its history alone, so the job that follows changes and the rebuild agree:
 *
 * - A booking counts once it was confirmed: it is active, checked in or done, or a history entry
 *   was written while it was active or checked in. Lapsed unpaid and rejected bookings never count.
 *   Each occurrence of a series is a booking of its own.
 * - Its actual end: the booked end; or the check-out; or the no-show release; or a cancellation
 *   after the start. A cancellation before the start ends it at its start (nothing booked).
 * - booked = [start, actual end), occupied = [check-in or start, actual end), released =
 *   [actual end, booked end) when it ended early: each only inside the asset's available time.
 * - Instants count to the minute, truncated. Counts belong to the local day and hour of the
 *   booked start.
 * Pure: the caller passes the asset's hours per day and its zone.
 */
import type { IANAZone } from 'luxon';
import { MINUTE, localDayOf, weekdayIndex } from '../../../platform/time/wall-clock.js';
import { NO_SHOW_REASON } from '../../lifecycle/rules/timer-plan.js';
import { intersect, splitByLocalHour } from './local-split.js';
import { openInstants, versionOn, type HoursVersion } from './opening-hours.js';

/** The figures a bucket holds, in this order (the rollup columns). */
export const FIGURE_NAMES = [
  'booked',
  'occupied',
  'released',
  'bookings',
  'check_ins',
  'no_shows',
  'cancellations',
  'walk_ins',
  'held',
] as const;
export type FigureName = (typeof FIGURE_NAMES)[number];
export const FIGURE_COUNT = FIGURE_NAMES.length;
const F = Object.fromEntries(FIGURE_NAMES.map((n, i) => [n, i])) as Record<FigureName, number>;

/** [local day number, local hour, ...figures in FIGURE_NAMES order]. */
export type Bucket = number[];

/** A booking as the figures need it. */
export interface BookingInput {
  id: string;
  status: string;
  start: number;
  bookedEnd: number;
  series: {
    occurrences: { id: string; start: number; end: number }[];
    cancelled?: { id: string; start: number; end: number; reason: string | null }[];
  } | null;
}

export interface HistoryInput {
  action: string;
  at: number;
  source: string;
  reason: string | null;
  statusBefore: string | null;
  oldEnd: number | null;
  newEnd: number | null;
}

/** How one occurrence went. */
export interface OccurrenceOutcome {
  id: string;
  start: number;
  bookedEnd: number;
  actualEnd: number;
  checkIn: number | null;
  /** Cancelled before its start (nothing booked, it never reached its start). */
  cancelledBeforeStart: boolean;
  cancelledByPerson: boolean;
  noShow: boolean;
}

const trunc = (ms: number) => Math.floor(ms / MINUTE) * MINUTE;
const clamp = (t: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, t));
const LIVE = new Set(['active', 'checked-in', 'done']);

/** Whether the booking was ever confirmed (active or checked in at some point). */
export function wasConfirmed(status: string, histories: readonly HistoryInput[]): boolean {
  return LIVE.has(status) || histories.some((h) => h.statusBefore === 'active' || h.statusBefore === 'checked-in');
}

/** An occurrence ended by a cancel entry at `cancel` (or not, when null). */
function ended(
  o: { id: string; start: number; bookedEnd: number },
  checkIn: number | null,
  cancel: HistoryInput | null,
  checkOutEnd: number | null,
): OccurrenceOutcome {
  const base = { id: o.id, start: o.start, bookedEnd: o.bookedEnd, checkIn };
  if (cancel) {
    const c = trunc(cancel.at);
    if (c < o.start) {
      return { ...base, actualEnd: o.start, cancelledBeforeStart: true, cancelledByPerson: cancel.source !== 'system', noShow: false };
    }
    if (c < o.bookedEnd) {
      const noShow = cancel.reason === NO_SHOW_REASON;
      return { ...base, actualEnd: clamp(c, o.start, o.bookedEnd), cancelledBeforeStart: false, cancelledByPerson: false, noShow };
    }
  }
  const actualEnd = checkOutEnd === null ? o.bookedEnd : clamp(trunc(checkOutEnd), o.start, o.bookedEnd);
  return { ...base, actualEnd, cancelledBeforeStart: false, cancelledByPerson: false, noShow: false };
}

/** Each occurrence's outcome; empty when the booking does not count. */
export function occurrenceOutcomes(b: BookingInput, histories: readonly HistoryInput[]): OccurrenceOutcome[] {
  if (!wasConfirmed(b.status, histories)) return [];
  const checkIns = histories.filter((h) => h.action === 'check-in').map((h) => trunc(h.at));
  const checkOuts = histories.filter((h) => h.action === 'check-out');
  const cancels = histories.filter((h) => h.action === 'cancel');
  const finalCancel = b.status === 'cancelled' ? (cancels[cancels.length - 1] ?? null) : null;
  if (!b.series) {
    const start = trunc(b.start);
    const bookedEnd = trunc(b.bookedEnd);
    const out = checkOuts[checkOuts.length - 1];
    const checkOutEnd = out ? (out.newEnd ?? out.at) : null;
    return [ended({ id: b.id, start, bookedEnd }, checkIns[0] ?? null, finalCancel, checkOutEnd)];
  }
  const held = [...b.series.occurrences].sort((x, y) => x.start - y.start);
  const outcomes: OccurrenceOutcome[] = [];
  for (const o of held) {
    const out = checkOuts.find((h) => h.newEnd === o.end && h.at >= o.start - 24 * 60 * MINUTE && h.at <= o.end + MINUTE);
    const bookedEnd = trunc(out?.oldEnd ?? o.end);
    const checkIn = checkIns.find((t) => held.find((x) => x.end > t)?.id === o.id) ?? null;
    outcomes.push(ended({ id: o.id, start: trunc(o.start), bookedEnd }, checkIn, finalCancel, out ? (out.newEnd ?? out.at) : null));
  }
  for (const c of b.series.cancelled ?? []) {
    const hit = cancels.find((h) => h.reason === c.reason && h.at >= c.start && h.at <= c.end) ?? null;
    const o = { id: c.id, start: trunc(c.start), bookedEnd: trunc(c.end) };
    outcomes.push(
      hit
        ? ended(o, null, hit, null)
        : { ...o, checkIn: null, actualEnd: o.start, cancelledBeforeStart: true, cancelledByPerson: false, noShow: false },
    );
  }
  return outcomes.sort((x, y) => x.start - y.start);
}

/** The asset's available instants on the local days a span touches. */
export interface AssetTime {
  zone: IANAZone;
  versions: readonly HoursVersion[];
}

/** [a, b) inside the asset's available time, cut per local day and hour, added to `into` at figure `f`. */
function addAvailable(into: Map<string, Bucket>, asset: AssetTime, a: number, b: number, f: number): void {
  if (b <= a) return;
  const first = localDayOf(asset.zone, a);
  const last = localDayOf(asset.zone, b - 1);
  for (let day = first; day <= last; day++) {
    const v = versionOn(asset.versions, day);
    if (!v?.active) continue;
    for (const [s, e] of intersect(a, b, openInstants(v.hours, asset.zone, day, weekdayIndex(day)))) {
      for (const p of splitByLocalHour(asset.zone, s, e)) bucketAt(into, p.day, p.hour)[2 + f] += p.minutes;
    }
  }
}

function bucketAt(into: Map<string, Bucket>, day: number, hour: number): Bucket {
  const key = `${day}:${hour}`;
  let b = into.get(key);
  if (!b) into.set(key, (b = [day, hour, ...new Array<number>(FIGURE_COUNT).fill(0)]));
  return b;
}

/** The local day and hour of an instant. */
export function localHourOf(zone: IANAZone, t: number): { day: number; hour: number } {
  const [p] = splitByLocalHour(zone, trunc(t), trunc(t) + MINUTE);
  return { day: p.day, hour: p.hour };
}

/** The buckets one occurrence adds. */
export function occurrenceBuckets(o: OccurrenceOutcome, asset: AssetTime): Bucket[] {
  const into = new Map<string, Bucket>();
  addAvailable(into, asset, o.start, o.actualEnd, F.booked);
  if (o.checkIn !== null) addAvailable(into, asset, Math.max(o.start, o.checkIn), o.actualEnd, F.occupied);
  if (!o.cancelledBeforeStart) addAvailable(into, asset, o.actualEnd, o.bookedEnd, F.released);
  const at = localHourOf(asset.zone, o.start);
  const counts = bucketAt(into, at.day, at.hour);
  counts[2 + F.bookings] += 1;
  if (o.checkIn !== null && !o.cancelledBeforeStart) counts[2 + F.check_ins] += 1;
  if (o.noShow) counts[2 + F.no_shows] += 1;
  if (o.cancelledBeforeStart && o.cancelledByPerson) counts[2 + F.cancellations] += 1;
  if (!o.cancelledBeforeStart) counts[2 + F.held] += 1;
  return [...into.values()];
}

/** The bucket of one walk-in (a granted entry at an asset nobody booked), at its local day and hour. */
export function walkInBucket(zone: IANAZone, at: number): Bucket {
  const { day, hour } = localHourOf(zone, at);
  const b: Bucket = [day, hour, ...new Array<number>(FIGURE_COUNT).fill(0)];
  b[2 + F.walk_ins] = 1;
  return b;
}
