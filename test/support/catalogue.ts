/**
 * Helpers for the catalogue tests (rooms and desks): asset configs open every
 * day, query strings with repeated keys, and property-local instants on a day
 * picked relative to the service clock.
 */
import { expect } from 'vitest';
import { DateTime } from 'luxon';
import type { HttpResult, TestService } from './test-service.js';

export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

export interface ClockRange {
  start: string;
  end: string;
}

/** A config open `open`-`close` on all seven days (so tests never depend on today's weekday). */
export function everyDay(open: string, close: string, breaks: ClockRange[] = [], extra: Record<string, unknown> = {}) {
  const day = { availableTime: { start: open, end: close }, ...(breaks.length ? { breakTimes: breaks } : {}) };
  return { dayConfig: Object.fromEntries(WEEKDAYS.map((d) => [d, day])), ...extra };
}

/** 08:00-20:00 every day with a 12:00-13:00 break. */
export function standardHours(extra: Record<string, unknown> = {}) {
  return everyDay('08:00:00', '20:00:00', [{ start: '12:00:00', end: '13:00:00' }], extra);
}

/** Current service time (sandbox clock), epoch ms. */
export async function serviceNow(svc: TestService): Promise<number> {
  const res = await svc.ops('GET', '/ops/v1/clock');
  expect(res.status, res.text).toBe(200);
  return Date.parse(res.body.data.now);
}

/** Moves the sandbox clock forward to `iso`. */
export async function setClock(svc: TestService, iso: string): Promise<void> {
  const res = await svc.ops('POST', '/ops/v1/clock', { set: iso });
  expect(res.status, res.text).toBe(200);
}

/** Local midnight, in `zone`, `days` days after the service's current local date. */
export async function dayAhead(svc: TestService, zone: string, days = 3): Promise<DateTime> {
  return DateTime.fromMillis(await serviceNow(svc), { zone })
    .startOf('day')
    .plus({ days });
}

/** ISO instant with the zone's offset for local time `hhmm` ("HH:mm" or "HH:mm:ss") on `day` (+ plusDays). */
export function at(day: DateTime, hhmm: string, plusDays = 0): string {
  const [h, m, s] = hhmm.split(':').map(Number);
  const dt = day.plus({ days: plusDays }).set({ hour: h, minute: m, second: s ?? 0, millisecond: 0 });
  if (!dt.isValid || dt.hour !== h || dt.minute !== m) throw new Error(`no local time ${hhmm} on ${day.toISODate()}`);
  return dt.toISO()!;
}

export type QueryValue = string | number | boolean | undefined | readonly (string | number)[];

/** Query string; arrays become repeated keys; `+` and other reserved characters are encoded. */
export function qs(params: Record<string, QueryValue>): string {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) sp.append(k, String(item));
    else sp.append(k, String(v));
  }
  const text = sp.toString();
  return text ? `?${text}` : '';
}

/** Asserts a 200 success envelope and returns its `data`. */
export function okData(res: HttpResult): any {
  expect(res.status, res.text).toBe(200);
  expect(res.body.code).toBe('KS000');
  expect(res.body.success).toBe(true);
  return res.body.data;
}

/** Sorted `name`s of a list response's items. */
export function namesOf(res: HttpResult): string[] {
  const data = okData(res);
  expect(Array.isArray(data), res.text).toBe(true);
  return (data as { name: string }[]).map((x) => x.name).sort();
}

export const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
