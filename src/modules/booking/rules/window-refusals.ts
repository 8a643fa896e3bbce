/**
 * Human-readable reasons for a refused booking window, in the property's local
 * time. The HTTP status and code are chosen by the caller; these are messages.
 */
import { DateTime } from 'luxon';
import type { BusyInterval, RuleViolation } from './availability.js';

const hm = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone }).toFormat('HH:mm');
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

export function conflictMessage(c: BusyInterval, timeZone: string, asset: string): string {
  const booked = `${dayTime(c.start, timeZone)}–${hm(c.end, timeZone)}`;
  return c.cleaningEndsAt > c.end
    ? `The ${asset} is booked ${booked} and held for cleaning until ${hm(c.cleaningEndsAt, timeZone)} (${timeZone})`
    : `The ${asset} is booked ${booked} (${timeZone})`;
}
