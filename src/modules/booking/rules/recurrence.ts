/**
 * Recurring series: a small, strict subset of RFC 5545 RRULE.
 *   FREQ=DAILY|WEEKLY; INTERVAL=n; BYDAY=MO,TU,... (weekly only); COUNT=n or UNTIL=date[-time]
 * Occurrences keep the first booking's local wall-clock start and duration in
 * the property's time zone (so 09:00 stays 09:00 across a DST change). The first
 * occurrence is always the requested window itself. Pure: no clock, no I/O.
 */
import { DateTime } from 'luxon';
import { tryParseInstant } from '../../../platform/time/instant.js';

export const MAX_OCCURRENCES = 100;

const DAY_CODES = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;

export interface RecurrenceRule {
  freq: 'DAILY' | 'WEEKLY';
  interval: number;
  byDay: number[] | null; // luxon weekdays 1 (Mon) .. 7 (Sun)
  count: number | null;
  until: number | null; // epoch ms, inclusive bound on occurrence starts
}

export interface Occurrence {
  index: number;
  start: number;
  end: number;
}

export type ParseResult = { ok: true; rule: RecurrenceRule } | { ok: false; errors: string[] };

function parseUntil(value: string, timeZone: string): number | null {
  const dateOnly = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  if (dateOnly) {
    const d = DateTime.fromObject({ year: +dateOnly[1], month: +dateOnly[2], day: +dateOnly[3] }, { zone: timeZone });
    return d.isValid ? d.endOf('day').toMillis() : null;
  }
  const dateTime = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  // The request instants' grammar decides (a real date, no leap second, no 25:00).
  if (dateTime)
    return tryParseInstant(`${dateTime[1]}-${dateTime[2]}-${dateTime[3]}T${dateTime[4]}:${dateTime[5]}:${dateTime[6]}Z`) ?? null;
  return null;
}

export function parseRecurrence(text: string, timeZone: string): ParseResult {
  const errors: string[] = [];
  const body = text.trim().replace(/^RRULE:/i, '');
  const parts = new Map<string, string>();
  for (const part of body.split(';').filter(Boolean)) {
    const [k, v] = part.split('=');
    if (!k || v === undefined) {
      errors.push(`recurrence: "${part}" is not NAME=VALUE`);
      continue;
    }
    parts.set(k.toUpperCase(), v.toUpperCase());
  }
  for (const k of parts.keys()) {
    if (!['FREQ', 'INTERVAL', 'BYDAY', 'COUNT', 'UNTIL', 'WKST'].includes(k)) errors.push(`recurrence: ${k} is not supported`);
  }
  const freq = parts.get('FREQ');
  if (freq !== 'DAILY' && freq !== 'WEEKLY') errors.push('recurrence: FREQ must be DAILY or WEEKLY');
  const interval = parts.has('INTERVAL') ? Number(parts.get('INTERVAL')) : 1;
  if (!Number.isInteger(interval) || interval < 1 || interval > 52) errors.push('recurrence: INTERVAL must be an integer from 1 to 52');
  let byDay: number[] | null = null;
  if (parts.has('BYDAY')) {
    if (freq !== 'WEEKLY') errors.push('recurrence: BYDAY is supported with FREQ=WEEKLY only');
    const codes = parts.get('BYDAY')!.split(',');
    const days = codes.map((c) => DAY_CODES.indexOf(c as (typeof DAY_CODES)[number]) + 1);
    if (days.some((d) => d === 0)) errors.push('recurrence: BYDAY takes MO, TU, WE, TH, FR, SA, SU');
    byDay = [...new Set(days)].sort();
  }
  const hasCount = parts.has('COUNT');
  const hasUntil = parts.has('UNTIL');
  if (hasCount === hasUntil) errors.push('recurrence: give exactly one of COUNT or UNTIL');
  const count = hasCount ? Number(parts.get('COUNT')) : null;
  if (count !== null && (!Number.isInteger(count) || count < 1 || count > MAX_OCCURRENCES)) {
    errors.push(`recurrence: COUNT must be an integer from 1 to ${MAX_OCCURRENCES}`);
  }
  const until = hasUntil ? parseUntil(parts.get('UNTIL')!, timeZone) : null;
  if (hasUntil && until === null) errors.push('recurrence: UNTIL must be YYYYMMDD or YYYYMMDDTHHMMSSZ');
  if (errors.length) return { ok: false, errors };
  return { ok: true, rule: { freq: freq as 'DAILY' | 'WEEKLY', interval, byDay, count, until } };
}

/**
 * Expands a rule from the first window. Returns the occurrences, or an error when
 * the series would exceed MAX_OCCURRENCES or UNTIL lies before the first start.
 */
export function expandRecurrence(
  rule: RecurrenceRule,
  first: { start: number; end: number },
  timeZone: string,
): { ok: true; occurrences: Occurrence[] } | { ok: false; errors: string[] } {
  const duration = first.end - first.start;
  const origin = DateTime.fromMillis(first.start, { zone: timeZone });
  const wall = { hour: origin.hour, minute: origin.minute, second: 0, millisecond: 0 };
  if (rule.until !== null && rule.until < first.start) return { ok: false, errors: ['recurrence: UNTIL is before the first occurrence'] };

  const out: Occurrence[] = [{ index: 0, start: first.start, end: first.end }];
  const limit = rule.count ?? MAX_OCCURRENCES + 1;
  const add = (day: DateTime): boolean => {
    const start = day.set(wall).toMillis();
    if (start <= out[out.length - 1].start) return true;
    if (rule.until !== null && start > rule.until) return false;
    out.push({ index: out.length, start, end: start + duration });
    return out.length < limit;
  };

  const startDay = origin.startOf('day');
  if (rule.freq === 'DAILY') {
    for (let i = 1; out.length < limit; i++) if (!add(startDay.plus({ days: i * rule.interval }))) break;
  } else {
    const days = rule.byDay ?? [origin.weekday];
    const weekStart = startDay.minus({ days: origin.weekday - 1 });
    let going = true;
    for (let w = 0; going && out.length < limit; w += rule.interval) {
      for (const d of days) {
        const day = weekStart.plus({ weeks: w, days: d - 1 });
        if (day.toMillis() < startDay.toMillis()) continue;
        if (!add(day)) {
          going = false;
          break;
        }
      }
      if (w > 520) break; // ten years of weeks: a rule that never advances
    }
  }
  if (out.length > MAX_OCCURRENCES) {
    return { ok: false, errors: [`recurrence: a series may have at most ${MAX_OCCURRENCES} occurrences`] };
  }
  return { ok: true, occurrences: out };
}
