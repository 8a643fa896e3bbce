/**
 * Human-readable reasons for a refused booking window, in the property's local
 * time. The HTTP status and code are chosen by the caller; these are messages.
 */
import { DateTime } from 'luxon';
import { wallClockTime, zoneOf } from '../../../platform/time/wall-clock.js';
import { checkConfigRules, truncateToMinute, type BusyInterval, type RuleViolation } from './availability.js';
import type { AssetConfig } from './asset-config.js';

const hm = (ms: number, zone: string) => wallClockTime(zoneOf(zone), ms);
const dayTime = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone }).toFormat('yyyy-MM-dd HH:mm');

export function ruleViolationMessage(v: RuleViolation, timeZone: string, asset: string): string {
  const window = `${dayTime(v.start, timeZone)}–${hm(v.end, timeZone)} (${timeZone})`;
  switch (v.reason) {
    case 'INVALID_WINDOW':
      return 'endDateTime must be after startDateTime';
    case 'MULTI_DAY':
      return `The ${asset} cannot be booked across several days`;
    case 'OPERATING_HOURS':
      return `${window} is outside the ${asset}'s operating hours on ${v.date}`;
    case 'BREAK_TIME':
      return `${window} overlaps the ${asset}'s break ${v.breakTime.start}–${v.breakTime.end}`;
    case 'MAX_DURATION':
      return `A booking of this ${asset} may last at most ${v.maxDurationMinutes} minutes`;
    case 'LEAD_TIME':
      return `This ${asset} must be booked in advance: the earliest start is ${dayTime(v.earliestStart, timeZone)} (${timeZone})`;
    case 'ADVANCE_DAYS':
      return `This ${asset} can be booked only up to ${v.lastBookableDate}`;
  }
}

/**
 * Why the requested `window` clashes with the existing hold `c`, naming what
 * actually overlaps: the two bookings themselves; the requested booking's own
 * cleaning time running into the existing one; or the existing booking's
 * cleaning time. Without `window`, the existing hold is described as a whole.
 */
export function conflictMessage(c: BusyInterval, timeZone: string, asset: string, window?: { start: number; end: number }): string {
  const booked = `${dayTime(c.start, timeZone)}–${hm(c.end, timeZone)}`;
  const cleanup = c.cleaningEndsAt - c.end;
  const heldForCleaning = `The ${asset} is booked ${booked} and held for cleaning until ${hm(c.cleaningEndsAt, timeZone)} (${timeZone})`;
  if (!window) return cleanup > 0 ? heldForCleaning : `The ${asset} is booked ${booked} (${timeZone})`;
  const start = truncateToMinute(window.start);
  const end = truncateToMinute(window.end);
  if (start < c.end && c.start < end) return `The ${asset} is booked ${booked} (${timeZone})`;
  if (end <= c.start) {
    return (
      `This booking's own cleaning time (${cleanup / 60_000} minutes, until ${hm(end + cleanup, timeZone)}) runs into ` +
      `the ${asset}'s booking ${booked} (${timeZone})`
    );
  }
  return heldForCleaning;
}

/**
 * One message per window that breaks the asset's configuration rules, prefixed
 * with its occurrence number in a series. Lead time and advance days concern the
 * start only, so `ignoreLeadTime` skips them when the start does not move.
 */
export function configProblems(
  windows: readonly { start: number; end: number }[],
  o: { config: AssetConfig; timeZone: string; asset: string; now: number; allDay: boolean; ignoreLeadTime?: boolean },
): string[] {
  const problems: string[] = [];
  windows.forEach((w, i) => {
    const r = checkConfigRules({ start: w.start, end: w.end, now: o.now, timeZone: o.timeZone, config: o.config, allDay: o.allDay });
    if (r.ok || (o.ignoreLeadTime && (r.reason === 'LEAD_TIME' || r.reason === 'ADVANCE_DAYS'))) return;
    const msg = ruleViolationMessage(r, o.timeZone, o.asset);
    problems.push(windows.length > 1 ? `occurrence ${i + 1}: ${msg}` : msg);
  });
  return problems;
}
