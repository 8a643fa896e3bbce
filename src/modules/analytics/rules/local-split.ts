/**
 * Splits spans of instants into local days and hours of a zone, per minute: a minute belongs to
 * the date and hour the wall clock shows at it (on a fall-back day the repeated hour holds
 * 120 minutes; on a spring-forward day the skipped hour holds none). Pure.
 */
import type { IANAZone } from 'luxon';
import { DAY, HOUR, MINUTE, offsetAt, offsetChangeBefore } from '../../../platform/time/wall-clock.js';

/** Minutes of a span that fall into one local day (a day number) and hour. */
export interface HourPiece {
  day: number;
  hour: number;
  minutes: number;
}

/** [a, b) (minute-aligned instants) cut at every local hour boundary and offset change. */
export function splitByLocalHour(zone: IANAZone, a: number, b: number): HourPiece[] {
  const out: HourPiece[] = [];
  for (let t = a; t < b;) {
    const offset = offsetAt(zone, t);
    const wall = t + offset;
    const nextHour = t + (Math.floor(wall / HOUR) + 1) * HOUR - wall;
    const limit = offsetChangeBefore(zone, t, Math.min(b, nextHour), offset);
    const day = Math.floor(wall / DAY);
    const hour = Math.floor((wall - day * DAY) / HOUR);
    const last = out[out.length - 1];
    const minutes = (limit - t) / MINUTE;
    if (last && last.day === day && last.hour === hour) last.minutes += minutes;
    else out.push({ day, hour, minutes });
    t = limit;
  }
  return out;
}

/** The parts of [a, b) inside the sorted, disjoint `intervals`. */
export function intersect(a: number, b: number, intervals: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [s, e] of intervals) {
    const from = Math.max(a, s);
    const to = Math.min(b, e);
    if (to > from) out.push([from, to]);
  }
  return out;
}
