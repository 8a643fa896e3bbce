/**
 * Example-based tests for the availability engine (src/modules/booking/rules/availability.ts), the asset
 * config helpers and the effective cleaning time.
 */
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { dayHours, resolveMeetingConfig, type AssetConfig, type DayConfig } from '../../src/modules/booking/rules/asset-config.js';
import {
  busyIntervals,
  checkBookingWindow,
  checkConfigRules,
  findConflict,
  resolveTimePeriod,
  truncateToMinute,
  type BookingWindowInput,
} from '../../src/modules/booking/rules/availability.js';
import { effectiveCleanupMinutes } from '../../src/modules/booking/rules/cleaning-time.js';

const TZ = 'America/New_York';
const MIN = 60_000;

/** Local wall-clock ISO time (no offset) in `zone` -> epoch ms. */
function at(local: string, zone = TZ): number {
  const dt = DateTime.fromISO(local, { zone });
  if (!dt.isValid) throw new Error(`bad test time ${local}`);
  return dt.toMillis();
}
const utc = (iso: string) => Date.parse(iso);

const day = (start: string, end: string, breaks: Array<[string, string]> = []): DayConfig => ({
  availableTime: { start, end },
  breakTimes: breaks.map(([s, e]) => ({ start: s, end: e })),
});
const weekdays = (d: DayConfig): AssetConfig['dayConfig'] => ({ Mon: d, Tue: d, Wed: d, Thu: d, Fri: d });

const OFFICE: AssetConfig = { dayConfig: weekdays(day('08:00:00', '18:00:00', [['12:00:00', '13:00:00']])) };
const NOW = at('2026-06-01T07:00'); // Monday 2026-06-01, 07:00 local

function check(start: number, end: number, over: Partial<BookingWindowInput> = {}) {
  return checkBookingWindow({
    start,
    end,
    now: NOW,
    timeZone: TZ,
    config: OFFICE,
    cleanupMinutes: 0,
    bookings: [],
    ...over,
  });
}
const reasonOf = (r: ReturnType<typeof check>) => (r.ok ? 'OK' : r.reason);

describe('truncateToMinute', () => {
  it('drops seconds and milliseconds', () => {
    expect(truncateToMinute(utc('2026-06-01T10:00:59.999Z'))).toBe(utc('2026-06-01T10:00:00Z'));
    expect(truncateToMinute(utc('2026-06-01T10:00:00Z'))).toBe(utc('2026-06-01T10:00:00Z'));
  });

  it('applies to both ends of a booking window', () => {
    const r = check(at('2026-06-01T09:00:45'), at('2026-06-01T10:00:30'));
    expect(r).toEqual({ ok: true, start: at('2026-06-01T09:00'), end: at('2026-06-01T10:00') });
  });
});

describe('INVALID_WINDOW', () => {
  it('refuses end <= start, also when truncation makes them equal', () => {
    expect(reasonOf(check(at('2026-06-01T10:00'), at('2026-06-01T10:00')))).toBe('INVALID_WINDOW');
    expect(reasonOf(check(at('2026-06-01T10:00'), at('2026-06-01T09:00')))).toBe('INVALID_WINDOW');
    expect(reasonOf(check(at('2026-06-01T10:00:10'), at('2026-06-01T10:00:50')))).toBe('INVALID_WINDOW');
    expect(reasonOf(check(Number.NaN, at('2026-06-01T10:00')))).toBe('INVALID_WINDOW');
  });
});

describe('cleaning time (spec example: 10:00-11:00 booking, 15 min cleaning)', () => {
  const existing = [{ id: 'b1', start: at('2026-06-01T10:00'), end: at('2026-06-01T11:00') }];
  const withCleaning = { cleanupMinutes: 15, bookings: existing };

  it('the next booking may start at 11:15 at the earliest', () => {
    expect(check(at('2026-06-01T11:15'), at('2026-06-01T11:45'), withCleaning).ok).toBe(true);
    const r = check(at('2026-06-01T11:14'), at('2026-06-01T11:45'), withCleaning);
    expect(r).toMatchObject({
      ok: false,
      reason: 'CONFLICT',
      conflictWith: { id: 'b1', start: at('2026-06-01T10:00'), end: at('2026-06-01T11:00'), cleaningEndsAt: at('2026-06-01T11:15') },
    });
  });

  it('a booking before it must end by 09:45', () => {
    expect(check(at('2026-06-01T09:00'), at('2026-06-01T09:45'), withCleaning).ok).toBe(true);
    expect(reasonOf(check(at('2026-06-01T09:00'), at('2026-06-01T09:46'), withCleaning))).toBe('CONFLICT');
  });

  it('plain overlaps conflict, and without cleaning back-to-back bookings are fine', () => {
    expect(reasonOf(check(at('2026-06-01T10:30'), at('2026-06-01T10:45'), withCleaning))).toBe('CONFLICT');
    expect(reasonOf(check(at('2026-06-01T09:00'), at('2026-06-01T11:30'), withCleaning))).toBe('CONFLICT');
    expect(check(at('2026-06-01T11:00'), at('2026-06-01T11:30'), { bookings: existing }).ok).toBe(true);
    expect(check(at('2026-06-01T09:00'), at('2026-06-01T10:00'), { bookings: existing }).ok).toBe(true);
  });

  it('ignores the booking being moved (excludeBookingId)', () => {
    const moved = check(at('2026-06-01T10:30'), at('2026-06-01T11:30'), { ...withCleaning, excludeBookingId: 'b1' });
    expect(moved.ok).toBe(true);
  });

  it('findConflict reports the earliest-starting conflicting booking', () => {
    const bookings = [
      { id: 'late', start: at('2026-06-01T11:00'), end: at('2026-06-01T11:30') },
      { id: 'early', start: at('2026-06-01T10:00'), end: at('2026-06-01T10:30') },
      { start: at('2026-06-01T15:00'), end: at('2026-06-01T16:00') },
    ];
    const c = findConflict({ start: at('2026-06-01T10:00'), end: at('2026-06-01T12:00'), cleanupMinutes: 10, bookings });
    expect(c?.id).toBe('early');
    expect(c?.cleaningEndsAt).toBe(at('2026-06-01T10:40'));
    expect(findConflict({ start: at('2026-06-01T12:00'), end: at('2026-06-01T14:50'), cleanupMinutes: 10, bookings })).toBeNull();
    expect(findConflict({ start: at('2026-06-01T12:00'), end: at('2026-06-01T14:51'), cleanupMinutes: 10, bookings })).not.toBeNull();
  });

  it('busyIntervals sorts holds and adds cleaningEndsAt', () => {
    const list = busyIntervals(
      [
        { id: 'b', start: 3 * MIN * 60, end: 4 * MIN * 60 },
        { id: 'a', start: MIN * 60, end: 2 * MIN * 60 },
      ],
      15,
    );
    expect(list).toEqual([
      { id: 'a', start: 3_600_000, end: 7_200_000, cleaningEndsAt: 7_200_000 + 15 * MIN },
      { id: 'b', start: 10_800_000, end: 14_400_000, cleaningEndsAt: 14_400_000 + 15 * MIN },
    ]);
  });
});

describe('effectiveCleanupMinutes', () => {
  it('rooms use their own value (0 = none), else the property default', () => {
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: 20, propertyDefaultMinutes: 10, isDesk: false })).toBe(20);
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: 0, propertyDefaultMinutes: 10, isDesk: false })).toBe(0);
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: null, propertyDefaultMinutes: 10, isDesk: false })).toBe(10);
    expect(effectiveCleanupMinutes({ propertyDefaultMinutes: 10, isDesk: false })).toBe(10);
  });

  it('desks always follow the property default; nothing configured = 0', () => {
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: 30, propertyDefaultMinutes: 5, isDesk: true })).toBe(5);
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: 30, isDesk: true })).toBe(0);
    expect(effectiveCleanupMinutes({ isDesk: false })).toBe(0);
  });

  it('a shorter positive booking grid caps the cleaning time', () => {
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: 30, bookingGridMinutes: 15, isDesk: false })).toBe(15);
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: 10, bookingGridMinutes: 15, isDesk: false })).toBe(10);
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: 30, bookingGridMinutes: 0, isDesk: false })).toBe(30);
    expect(effectiveCleanupMinutes({ assetCleanupMinutes: 30, bookingGridMinutes: null, isDesk: false })).toBe(30);
  });
});

describe('resolveMeetingConfig', () => {
  it('fills the spec defaults', () => {
    expect(resolveMeetingConfig(undefined)).toEqual({
      preStartMinutes: 15,
      postStartWarnMinutes: 10,
      postStartExpireMinutes: 15,
      preEndMinutes: 15,
    });
  });

  it('keeps configured values including -1 and 0', () => {
    const cfg: AssetConfig = { meetingConfig: { preStartMinutes: -1, postStartExpireMinutes: 0, preEndMinutes: 5 } };
    expect(resolveMeetingConfig(cfg)).toEqual({
      preStartMinutes: -1,
      postStartWarnMinutes: 10,
      postStartExpireMinutes: 0,
      preEndMinutes: 5,
    });
  });
});

describe('operating hours', () => {
  it('accepts a window inside the hours, touching open and close', () => {
    expect(check(at('2026-06-01T08:00'), at('2026-06-01T12:00')).ok).toBe(true);
    expect(check(at('2026-06-01T13:00'), at('2026-06-01T18:00')).ok).toBe(true);
  });

  it('refuses a window that starts before opening or ends after closing', () => {
    expect(check(at('2026-06-01T07:59'), at('2026-06-01T09:00'))).toMatchObject({
      ok: false,
      reason: 'OPERATING_HOURS',
      date: '2026-06-01',
    });
    expect(reasonOf(check(at('2026-06-01T17:00'), at('2026-06-01T18:01')))).toBe('OPERATING_HOURS');
  });

  it('a weekday missing from dayConfig is not bookable', () => {
    expect(check(at('2026-06-06T10:00'), at('2026-06-06T11:00'))).toMatchObject({
      reason: 'OPERATING_HOURS',
      date: '2026-06-06',
    });
  });

  it('legacy start/end apply to every day when dayConfig is absent', () => {
    const legacy: AssetConfig = { start: '09:00:00', end: '17:00:00' };
    expect(check(at('2026-06-06T09:00'), at('2026-06-06T17:00'), { config: legacy }).ok).toBe(true);
    expect(reasonOf(check(at('2026-06-06T08:30'), at('2026-06-06T10:00'), { config: legacy }))).toBe('OPERATING_HOURS');
  });

  it('dayConfig wins over legacy start/end', () => {
    const both: AssetConfig = { ...OFFICE, start: '00:00:00', end: '24:00:00' };
    expect(reasonOf(check(at('2026-06-01T19:00'), at('2026-06-01T20:00'), { config: both }))).toBe('OPERATING_HOURS');
    expect(reasonOf(check(at('2026-06-06T10:00'), at('2026-06-06T11:00'), { config: both }))).toBe('OPERATING_HOURS');
  });

  it('no hours configured means open all day, every day', () => {
    expect(check(at('2026-06-06T00:00'), at('2026-06-07T00:00'), { config: {} }).ok).toBe(true);
  });

  it.each(['24:00:00', '23:59:59', '00:00:00', '06:00:00'])('availableTime end %s means until midnight', (end) => {
    const cfg: AssetConfig = { dayConfig: weekdays(day('08:00:00', end)) };
    expect(check(at('2026-06-01T20:00'), at('2026-06-02T00:00'), { config: cfg }).ok).toBe(true);
    expect(dayHours(cfg, 'Mon')).toMatchObject({ open: 480, close: 1440 });
  });

  it('accepts HH:mm times and fails closed on malformed ones', () => {
    expect(dayHours({ dayConfig: { Mon: day('8:30', '17:45') } }, 'Mon')).toMatchObject({ open: 510, close: 1065 });
    expect(dayHours({ dayConfig: { Mon: day('8h', '17:45') } }, 'Mon')).toBeNull();
    expect(dayHours({ dayConfig: { Mon: day('08:00', '17:45', [['12:00', 'x']]) } }, 'Mon')).toBeNull();
  });
});

describe('break times', () => {
  it('refuses any overlap with a break', () => {
    expect(check(at('2026-06-01T11:00'), at('2026-06-01T12:01'))).toMatchObject({
      reason: 'BREAK_TIME',
      date: '2026-06-01',
      breakTime: { start: '12:00:00', end: '13:00:00' },
    });
    expect(reasonOf(check(at('2026-06-01T12:59'), at('2026-06-01T14:00')))).toBe('BREAK_TIME');
    expect(reasonOf(check(at('2026-06-01T11:00'), at('2026-06-01T14:00')))).toBe('BREAK_TIME');
  });

  it('touching a break edge is fine', () => {
    expect(check(at('2026-06-01T11:00'), at('2026-06-01T12:00')).ok).toBe(true);
    expect(check(at('2026-06-01T13:00'), at('2026-06-01T14:00')).ok).toBe(true);
  });

  it('allDay windows are not refused for breaks (other rules still apply)', () => {
    expect(check(at('2026-06-01T08:00'), at('2026-06-01T18:00'), { allDay: true }).ok).toBe(true);
    expect(reasonOf(check(at('2026-06-01T08:00'), at('2026-06-01T18:00')))).toBe('BREAK_TIME');
    expect(reasonOf(check(at('2026-06-01T07:00'), at('2026-06-01T18:00'), { allDay: true }))).toBe('OPERATING_HOURS');
  });
});

describe('minimumLeadTime', () => {
  const lead = (minimumLeadTime: AssetConfig['minimumLeadTime']): AssetConfig => ({ ...OFFICE, minimumLeadTime });

  it('start must be at least now + lead', () => {
    const cfg = lead({ hours: 1, minutes: 30 }); // now 07:00 -> earliest 08:30
    expect(check(at('2026-06-01T08:30'), at('2026-06-01T09:00'), { config: cfg }).ok).toBe(true);
    expect(check(at('2026-06-01T08:29'), at('2026-06-01T09:00'), { config: cfg })).toMatchObject({
      reason: 'LEAD_TIME',
      earliestStart: at('2026-06-01T08:30'),
    });
  });

  it('days count as 1440 minutes', () => {
    const cfg = lead({ days: 1 });
    expect(reasonOf(check(at('2026-06-02T06:59'), at('2026-06-02T09:00'), { config: { ...cfg, dayConfig: undefined } }))).toBe('LEAD_TIME');
    expect(check(at('2026-06-02T08:00'), at('2026-06-02T09:00'), { config: cfg }).ok).toBe(true);
  });

  it('a start in the past always fails, even without a lead time; the current minute is fine', () => {
    const now = at('2026-06-01T10:00:30');
    expect(reasonOf(check(at('2026-06-01T09:59'), at('2026-06-01T11:00'), { now }))).toBe('LEAD_TIME');
    expect(check(at('2026-06-01T10:00'), at('2026-06-01T11:00'), { now }).ok).toBe(true);
  });
});

describe('maxAdvanceBookingDays', () => {
  const cfg: AssetConfig = { maxAdvanceBookingDays: 2 };

  it('compares local calendar dates, not 24-hour periods', () => {
    const now = at('2026-06-01T23:30'); // already 2026-06-02 in UTC
    expect(check(at('2026-06-03T23:00'), at('2026-06-03T23:30'), { config: cfg, now }).ok).toBe(true);
    expect(check(at('2026-06-04T00:00'), at('2026-06-04T01:00'), { config: cfg, now })).toMatchObject({
      reason: 'ADVANCE_DAYS',
      lastBookableDate: '2026-06-03',
    });
  });

  it('0 means today only', () => {
    const now = at('2026-06-01T08:00');
    const today: AssetConfig = { maxAdvanceBookingDays: 0 };
    expect(check(at('2026-06-01T23:00'), at('2026-06-02T00:00'), { config: today, now }).ok).toBe(true);
    expect(reasonOf(check(at('2026-06-02T00:00'), at('2026-06-02T01:00'), { config: today, now }))).toBe('ADVANCE_DAYS');
  });
});

describe('maxDurationMinutes', () => {
  it('end - start must not exceed it', () => {
    const cfg: AssetConfig = { ...OFFICE, maxDurationMinutes: 90 };
    expect(check(at('2026-06-01T08:00'), at('2026-06-01T09:30'), { config: cfg }).ok).toBe(true);
    expect(check(at('2026-06-01T08:00'), at('2026-06-01T09:31'), { config: cfg })).toMatchObject({
      reason: 'MAX_DURATION',
      maxDurationMinutes: 90,
    });
  });
});

describe('multi-day windows', () => {
  const cfg: AssetConfig = { dayConfig: weekdays(day('08:00:00', '18:00:00', [['12:00:00', '13:00:00']])) };
  const multi: AssetConfig = { ...cfg, bookMultipleDayRoom: true };

  it('are refused unless bookMultipleDayRoom is true', () => {
    expect(reasonOf(check(at('2026-06-01T09:00'), at('2026-06-02T10:00'), { config: cfg }))).toBe('MULTI_DAY');
    expect(reasonOf(check(at('2026-06-01T09:00'), at('2026-06-02T10:00'), { config: { ...cfg, bookMultipleDayRoom: false } }))).toBe(
      'MULTI_DAY',
    );
  });

  it('an end exactly at the next local midnight is the same day', () => {
    const open: AssetConfig = {};
    expect(check(at('2026-06-01T20:00'), at('2026-06-02T00:00'), { config: open }).ok).toBe(true);
    expect(reasonOf(check(at('2026-06-01T20:00'), at('2026-06-02T00:01'), { config: open }))).toBe('MULTI_DAY');
  });

  it('when allowed: start and end inside their day hours, nights and middle days are not checked', () => {
    expect(check(at('2026-06-01T14:00'), at('2026-06-03T11:00'), { config: multi }).ok).toBe(true);
    expect(check(at('2026-06-01T17:59'), at('2026-06-02T08:01'), { config: multi }).ok).toBe(true);
  });

  it('when allowed: start or end outside hours is refused', () => {
    expect(check(at('2026-06-01T18:00'), at('2026-06-02T10:00'), { config: multi })).toMatchObject({
      reason: 'OPERATING_HOURS',
      date: '2026-06-01',
    });
    expect(check(at('2026-06-01T10:00'), at('2026-06-02T08:00'), { config: multi })).toMatchObject({
      reason: 'OPERATING_HOURS',
      date: '2026-06-02', // ends at 08:00: its last minute (07:59) is outside the hours
    });
    expect(check(at('2026-06-01T10:00'), at('2026-06-02T18:01'), { config: multi })).toMatchObject({
      reason: 'OPERATING_HOURS',
      date: '2026-06-02',
    });
  });

  it('when allowed: every spanned date must be an operating day', () => {
    // Fri 2026-06-05 -> Mon 2026-06-08 spans the closed weekend
    expect(check(at('2026-06-05T10:00'), at('2026-06-08T10:00'), { config: multi })).toMatchObject({
      reason: 'OPERATING_HOURS',
      date: '2026-06-06',
    });
    // a long stay: only Sunday is closed, and it falls in the middle
    const noSundays: AssetConfig = {
      dayConfig: { ...weekdays(day('08:00', '18:00')), Sat: day('08:00', '18:00') },
      bookMultipleDayRoom: true,
    };
    expect(check(at('2026-06-01T10:00'), at('2026-06-09T10:00'), { config: noSundays })).toMatchObject({
      reason: 'OPERATING_HOURS',
      date: '2026-06-07',
    });
    expect(check(at('2026-06-01T10:00'), at('2026-06-06T10:00'), { config: noSundays }).ok).toBe(true);
  });

  it('when allowed: breaks are checked on the first and last day parts only', () => {
    expect(check(at('2026-06-01T11:00'), at('2026-06-03T10:00'), { config: multi })).toMatchObject({
      reason: 'BREAK_TIME',
      date: '2026-06-01',
    });
    expect(check(at('2026-06-01T14:00'), at('2026-06-03T12:30'), { config: multi })).toMatchObject({
      reason: 'BREAK_TIME',
      date: '2026-06-03',
    });
    // 2026-06-02's break is inside the window but it is a middle day
    expect(check(at('2026-06-01T14:00'), at('2026-06-03T11:00'), { config: multi }).ok).toBe(true);
  });
});

describe('order of rules', () => {
  it('config rules come before CONFLICT, in the documented order', () => {
    const cfg: AssetConfig = { ...OFFICE, maxDurationMinutes: 30, minimumLeadTime: { days: 30 }, maxAdvanceBookingDays: 1 };
    const bookings = [{ id: 'x', start: at('2026-06-03T09:00'), end: at('2026-06-03T17:00') }];
    const o = { config: cfg, bookings };
    expect(reasonOf(check(at('2026-06-03T10:00'), at('2026-06-04T10:00'), o))).toBe('MULTI_DAY');
    expect(reasonOf(check(at('2026-06-03T07:00'), at('2026-06-03T12:30'), o))).toBe('OPERATING_HOURS');
    expect(reasonOf(check(at('2026-06-03T10:00'), at('2026-06-03T12:30'), o))).toBe('BREAK_TIME');
    expect(reasonOf(check(at('2026-06-03T10:00'), at('2026-06-03T11:00'), o))).toBe('MAX_DURATION');
    expect(reasonOf(check(at('2026-06-03T10:00'), at('2026-06-03T10:30'), o))).toBe('LEAD_TIME');
    const noLead = { ...o, config: { ...cfg, minimumLeadTime: undefined } };
    expect(reasonOf(check(at('2026-06-03T10:00'), at('2026-06-03T10:30'), noLead))).toBe('ADVANCE_DAYS');
    const onlyConflict = { ...o, config: OFFICE };
    expect(reasonOf(check(at('2026-06-03T10:00'), at('2026-06-03T10:30'), onlyConflict))).toBe('CONFLICT');
  });

  it('checkConfigRules ignores bookings; findConflict ignores config', () => {
    const bookings = [{ start: at('2026-06-06T10:00'), end: at('2026-06-06T11:00') }];
    const window = { start: at('2026-06-06T10:00'), end: at('2026-06-06T11:00') };
    expect(checkConfigRules({ ...window, now: NOW, timeZone: TZ, config: OFFICE })).toMatchObject({
      reason: 'OPERATING_HOURS',
    });
    expect(findConflict({ ...window, cleanupMinutes: 0, bookings })).not.toBeNull();
  });

  it('throws on an unknown time zone', () => {
    expect(() => check(at('2026-06-01T09:00'), at('2026-06-01T10:00'), { timeZone: 'Mars/Olympus' })).toThrow(RangeError);
  });
});

describe('resolveTimePeriod', () => {
  const resolve = (start: number, period: 'morning' | 'afternoon' | 'allDay', config: AssetConfig = OFFICE, timeZone = TZ) =>
    resolveTimePeriod({ start, period, timeZone, config });

  it('morning and afternoon split at the break containing 12:00; allDay is open..close', () => {
    const start = at('2026-06-01T00:00');
    expect(resolve(start, 'morning')).toEqual({ start: at('2026-06-01T08:00'), end: at('2026-06-01T12:00') });
    expect(resolve(start, 'afternoon')).toEqual({ start: at('2026-06-01T13:00'), end: at('2026-06-01T18:00') });
    expect(resolve(start, 'allDay')).toEqual({ start: at('2026-06-01T08:00'), end: at('2026-06-01T18:00') });
  });

  it('splits at 12:00 when no break contains it, and around a break straddling noon', () => {
    const plain: AssetConfig = { dayConfig: weekdays(day('08:00', '18:00')) };
    expect(resolve(at('2026-06-01T00:00'), 'morning', plain)?.end).toBe(at('2026-06-01T12:00'));
    expect(resolve(at('2026-06-01T00:00'), 'afternoon', plain)?.start).toBe(at('2026-06-01T12:00'));
    const straddle: AssetConfig = { dayConfig: weekdays(day('08:00', '18:00', [['11:30', '12:30']])) };
    expect(resolve(at('2026-06-01T00:00'), 'morning', straddle)?.end).toBe(at('2026-06-01T11:30'));
    expect(resolve(at('2026-06-01T00:00'), 'afternoon', straddle)?.start).toBe(at('2026-06-01T12:30'));
  });

  it('starts at the requested start when it is later than the period start', () => {
    expect(resolve(at('2026-06-01T09:10:30'), 'morning')).toEqual({ start: at('2026-06-01T09:10'), end: at('2026-06-01T12:00') });
  });

  it('returns null when closed that day or when the period is over', () => {
    expect(resolve(at('2026-06-06T09:00'), 'allDay')).toBeNull();
    expect(resolve(at('2026-06-01T12:00'), 'morning')).toBeNull();
    const early: AssetConfig = { dayConfig: weekdays(day('07:00', '11:00')) };
    expect(resolve(at('2026-06-01T06:00'), 'afternoon', early)).toBeNull();
  });

  it('with no operating hours the day is 00:00-24:00', () => {
    expect(resolve(at('2026-06-06T05:00'), 'allDay', {})).toEqual({ start: at('2026-06-06T05:00'), end: at('2026-06-07T00:00') });
    expect(resolve(at('2026-06-06T05:00'), 'morning', {})).toEqual({ start: at('2026-06-06T05:00'), end: at('2026-06-06T12:00') });
  });

  it('resolved windows pass checkBookingWindow (allDay keeps its place over lunch)', () => {
    for (const period of ['morning', 'afternoon', 'allDay'] as const) {
      const w = resolve(at('2026-06-01T00:00'), period)!;
      expect(check(w.start, w.end, { allDay: period === 'allDay' }).ok).toBe(true);
    }
  });
});

describe('DST-change days in America/New_York', () => {
  const sundays: AssetConfig = { dayConfig: { Sat: day('08:00:00', '20:00:00'), Sun: day('08:00:00', '20:00:00') } };
  const now = utc('2026-01-01T00:00:00Z');
  const ok = (s: string, e: string) => check(utc(s), utc(e), { config: sundays, now }).ok;

  it('spring forward (2026-03-08): 08:00-20:00 EDT is 12:00Z-00:00Z', () => {
    expect(resolveTimePeriod({ start: utc('2026-03-08T05:00:00Z'), period: 'allDay', timeZone: TZ, config: sundays })).toEqual({
      start: utc('2026-03-08T12:00:00Z'),
      end: utc('2026-03-09T00:00:00Z'),
    });
    expect(ok('2026-03-08T12:00:00Z', '2026-03-09T00:00:00Z')).toBe(true);
    expect(ok('2026-03-08T11:59:00Z', '2026-03-08T13:00:00Z')).toBe(false);
    expect(ok('2026-03-08T23:00:00Z', '2026-03-09T00:01:00Z')).toBe(false);
    // the day before is still EST: 08:00-20:00 is 13:00Z-01:00Z
    expect(ok('2026-03-07T13:00:00Z', '2026-03-08T01:00:00Z')).toBe(true);
    expect(ok('2026-03-07T12:00:00Z', '2026-03-07T13:00:00Z')).toBe(false);
  });

  it('fall back (2026-11-01): 08:00-20:00 EST is 13:00Z-01:00Z', () => {
    expect(resolveTimePeriod({ start: utc('2026-11-01T04:00:00Z'), period: 'allDay', timeZone: TZ, config: sundays })).toEqual({
      start: utc('2026-11-01T13:00:00Z'),
      end: utc('2026-11-02T01:00:00Z'),
    });
    expect(ok('2026-11-01T13:00:00Z', '2026-11-02T01:00:00Z')).toBe(true);
    expect(ok('2026-11-01T12:00:00Z', '2026-11-01T14:00:00Z')).toBe(false);
    // the day before is still EDT: 08:00-20:00 is 12:00Z-00:00Z
    expect(ok('2026-10-31T12:00:00Z', '2026-11-01T00:00:00Z')).toBe(true);
  });

  it('the whole local day is 23 h on spring-forward day and 25 h on fall-back day', () => {
    const open = { config: {}, now };
    expect(check(utc('2026-03-08T05:00:00Z'), utc('2026-03-09T04:00:00Z'), open).ok).toBe(true);
    expect(reasonOf(check(utc('2026-03-08T05:00:00Z'), utc('2026-03-09T04:01:00Z'), open))).toBe('MULTI_DAY');
    expect(check(utc('2026-11-01T04:00:00Z'), utc('2026-11-02T05:00:00Z'), open).ok).toBe(true);
    expect(reasonOf(check(utc('2026-11-01T04:00:00Z'), utc('2026-11-02T05:01:00Z'), open))).toBe('MULTI_DAY');
  });

  it('a time the clock skips takes effect when the clock jumps; a repeated time at its first occurrence', () => {
    const opensInGap: AssetConfig = { dayConfig: { Sun: day('02:30', '24:00') } };
    expect(resolveTimePeriod({ start: utc('2026-03-08T05:00:00Z'), period: 'allDay', timeZone: TZ, config: opensInGap })).toEqual({
      start: utc('2026-03-08T07:00:00Z'), // 03:00 EDT
      end: utc('2026-03-09T04:00:00Z'),
    });
    const opensInRepeat: AssetConfig = { dayConfig: { Sun: day('01:30', '24:00') } };
    expect(resolveTimePeriod({ start: utc('2026-11-01T04:00:00Z'), period: 'allDay', timeZone: TZ, config: opensInRepeat })?.start).toBe(
      utc('2026-11-01T05:30:00Z'), // 01:30 EDT
    );
  });

  it('duration is elapsed time, not wall-clock time', () => {
    const open: AssetConfig = { maxDurationMinutes: 60 };
    // 01:30 EST -> 03:30 EDT on spring-forward day is one real hour
    expect(check(utc('2026-03-08T06:30:00Z'), utc('2026-03-08T07:30:00Z'), { config: open, now }).ok).toBe(true);
  });

  // Regression (property-test counterexample, seed 1005 of the spring-forward week): on a
  // multi-day window the last day's part before the jump (00:00-01:59 EST) lies wholly before
  // the 02:00 opening; clipping it to the hours left an empty range that still "overlapped" the
  // 01:00-02:15 break, so the engine said BREAK_TIME although no minute of the window is both
  // open and in the break (02:00 and 02:15 are skipped: both take effect at 03:00 EDT).
  it('multi-day into spring-forward day: a break only in the skipped hour or before opening is not hit', () => {
    const config: AssetConfig = {
      dayConfig: {
        Fri: day('09:30', '05:30', [['11:30', '13:45']]), // until midnight
        Sat: day('07:00:00', '07:30:00', [
          ['03:15', '06:00'],
          ['01:00', '01:30'],
        ]),
        Sun: day('02:00:00', '00:00:00', [['01:00', '02:15']]), // open 03:00 EDT - midnight
      },
      bookMultipleDayRoom: true,
      maxDurationMinutes: 510,
      maxAdvanceBookingDays: 5,
    };
    const input = {
      start: 1772843460000 + 59_000, // Fri 2026-03-06 19:31:59 EST
      end: 1772843460000 + 2230 * MIN + 28_000, // Sun 2026-03-08 09:41:28 EDT
      now: utc('2026-03-06T04:00:00Z'),
      timeZone: TZ,
      config,
    };
    expect(reasonOf(checkConfigRules(input))).toBe('MAX_DURATION');
    // without the duration limit the window is bookable
    const unlimited = { ...input, config: { ...config, maxDurationMinutes: undefined } };
    expect(checkConfigRules(unlimited).ok).toBe(true);

    // distilled: Sat 20:00 EST -> Sun 04:00 EDT, Sunday open 02:00 (= 03:00 EDT), break 01:00-02:30
    const sunGap: AssetConfig = {
      dayConfig: { Sat: day('08:00', '24:00'), Sun: day('02:00', '24:00', [['01:00', '02:30']]) },
      bookMultipleDayRoom: true,
    };
    expect(check(at('2026-03-07T20:00'), at('2026-03-08T04:00'), { config: sunGap, now }).ok).toBe(true);
    // a break that reaches past the jump still blocks: 01:00-03:30 covers 03:00-03:29 EDT
    const sunBreak: AssetConfig = {
      dayConfig: { Sat: day('08:00', '24:00'), Sun: day('02:00', '24:00', [['01:00', '03:30']]) },
      bookMultipleDayRoom: true,
    };
    expect(reasonOf(check(at('2026-03-07T20:00'), at('2026-03-08T04:00'), { config: sunBreak, now }))).toBe('BREAK_TIME');
  });
});

describe('DST-change days in Europe/London', () => {
  const LON = 'Europe/London';
  const cfg: AssetConfig = { dayConfig: { Sun: day('08:00:00', '20:00:00') } };
  const resolve = (iso: string) => resolveTimePeriod({ start: utc(iso), period: 'allDay', timeZone: LON, config: cfg });

  it('maps 08:00-20:00 to BST on 2026-03-29 and to GMT on 2026-10-25', () => {
    expect(resolve('2026-03-29T00:00:00Z')).toEqual({ start: utc('2026-03-29T07:00:00Z'), end: utc('2026-03-29T19:00:00Z') });
    expect(resolve('2026-10-25T00:00:00Z')).toEqual({ start: utc('2026-10-25T08:00:00Z'), end: utc('2026-10-25T20:00:00Z') });
    const r = checkBookingWindow({
      start: utc('2026-03-29T07:00:00Z'),
      end: utc('2026-03-29T19:00:00Z'),
      now: 0,
      timeZone: LON,
      config: cfg,
      cleanupMinutes: 0,
      bookings: [],
    });
    expect(r.ok).toBe(true);
  });

  // Regression (property-test counterexample, seed 1006 of the London spring-forward week): the
  // first day's part after the jump (02:00 BST on) lies wholly after the 01:45 closing (skipped,
  // so it takes effect at the jump); clipping it to the hours gave an inverted range that still
  // "overlapped" the 01:30-03:45 break.
  it('multi-day from spring-forward day: a break starting in the skipped hour after closing is not hit', () => {
    const config: AssetConfig = {
      dayConfig: { Sun: day('00:00:00', '01:45:00', [['01:30:00', '03:45:00']]), Mon: day('01:30:00', '24:00:00') },
      bookMultipleDayRoom: true,
    };
    const input = { start: utc('2026-03-29T00:00:19Z'), now: 0, timeZone: LON, config, cleanupMinutes: 0, bookings: [] };
    // Sun 00:00 GMT -> Mon 03:40 BST (the counterexample's 1600 minutes; with maxDurationMinutes 30 it gave BREAK_TIME)
    const end = utc('2026-03-29T00:00:29Z') + 1600 * MIN;
    expect(checkBookingWindow({ ...input, end }).ok).toBe(true);
    expect(reasonOf(checkBookingWindow({ ...input, end, config: { ...config, maxDurationMinutes: 30 } }))).toBe('MAX_DURATION');
    // Sunday's open minutes are 00:00-00:59 GMT only, none of them in the break (which starts at the jump)
    expect(checkBookingWindow({ ...input, start: utc('2026-03-29T00:30:00Z'), end: utc('2026-03-30T08:30:00Z') }).ok).toBe(true);
  });
});

describe('resolveTimePeriod with a start at local midnight after the period', () => {
  it('a period already over by now is not open (null: OPERATING_HOURS), not a lead-time refusal', () => {
    const midnight = at('2026-06-01T00:00');
    const now = at('2026-06-01T12:30');
    expect(resolveTimePeriod({ start: midnight, period: 'morning', timeZone: TZ, config: OFFICE, now })).toBeNull();
    expect(resolveTimePeriod({ start: midnight, period: 'morning', timeZone: TZ, config: OFFICE, now: at('2026-06-01T11:59') })).toEqual({
      start: at('2026-06-01T08:00'),
      end: at('2026-06-01T12:00'),
    });
    // The afternoon of that day is still open; tomorrow's morning too.
    expect(resolveTimePeriod({ start: midnight, period: 'afternoon', timeZone: TZ, config: OFFICE, now })).not.toBeNull();
    expect(resolveTimePeriod({ start: at('2026-06-02T00:00'), period: 'morning', timeZone: TZ, config: OFFICE, now })).not.toBeNull();
  });
});
