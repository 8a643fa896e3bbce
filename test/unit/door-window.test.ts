/**
 * The door window rule (devices/rules/door-window.ts): which window a booking's participants hold
 * at `now`, and the window a device gets of several a user holds there (property tests against a
 * minute-by-minute oracle).
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { accessOpensAt, doorWindow, sameWindow, windowToSet, type AccessWindow } from '../../src/modules/devices/rules/door-window.js';

const MIN = 60_000;
const TZ = 'Asia/Bangkok';
const T = (iso: string) => DateTime.fromISO(iso, { zone: TZ }).toMillis();
const facts = (over: Partial<Parameters<typeof doorWindow>[0]> = {}) => ({
  timeZone: TZ,
  preStartMinutes: 15,
  status: 'active',
  windows: [{ start: T('2026-12-01T09:00'), end: T('2026-12-01T10:00') }],
  ...over,
});

describe('doorWindow', () => {
  it('opens preStartMinutes before the start and ends at the end (no cleaning)', () => {
    expect(doorWindow(facts(), T('2026-12-01T07:00'))).toEqual({ from: T('2026-12-01T08:45'), until: T('2026-12-01T10:00') });
    expect(doorWindow(facts({ preStartMinutes: 0 }), T('2026-12-01T07:00'))).toEqual({
      from: T('2026-12-01T09:00'),
      until: T('2026-12-01T10:00'),
    });
  });

  it('preStartMinutes -1 opens at the start of the booking’s local day', () => {
    const w = doorWindow(facts({ preStartMinutes: -1 }), T('2026-11-30T07:00'));
    expect(w).toEqual({ from: T('2026-12-01T00:00'), until: T('2026-12-01T10:00') });
    // Local day, not UTC: 00:30 Bangkok is still the previous day in UTC.
    expect(accessOpensAt(T('2026-12-01T00:30'), -1, TZ)).toBe(T('2026-12-01T00:00'));
    expect(accessOpensAt(T('2026-12-01T00:30'), -1, 'UTC')).toBe(Date.UTC(2026, 10, 30));
  });

  it('only active and checked-in bookings hold a window', () => {
    for (const status of ['active', 'checked-in']) expect(doorWindow(facts({ status }), 0)).not.toBeNull();
    for (const status of ['unpaid', 'cancelled', 'done', 'rejected', 'pending']) expect(doorWindow(facts({ status }), 0)).toBeNull();
  });

  it('a series holds its first occurrence that is not over; none when all are', () => {
    const windows = [
      { start: T('2026-12-08T09:00'), end: T('2026-12-08T10:00') },
      { start: T('2026-12-01T09:00'), end: T('2026-12-01T10:00') },
    ];
    expect(doorWindow(facts({ windows }), T('2026-12-01T09:30'))).toEqual({ from: T('2026-12-01T08:45'), until: T('2026-12-01T10:00') });
    expect(doorWindow(facts({ windows }), T('2026-12-01T10:00'))).toEqual({ from: T('2026-12-08T08:45'), until: T('2026-12-08T10:00') });
    expect(doorWindow(facts({ windows }), T('2026-12-08T10:00'))).toBeNull();
  });
});

describe('windowToSet', () => {
  it('merges windows that overlap or touch the current one, not later ones', () => {
    const a = { from: 100, until: 200 };
    const b = { from: 200, until: 300 };
    const c = { from: 250, until: 280 };
    const d = { from: 400, until: 500 };
    expect(windowToSet([d, b, a, c], 0)).toEqual({ from: 100, until: 300 });
    expect(windowToSet([d, b, a, c], 300)).toEqual(d);
    expect(windowToSet([a, d], 500)).toBeNull();
    expect(sameWindow(windowToSet([], 0), null)).toBe(true);
  });

  const windowArb = fc
    .tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 20 }))
    .map(([s, len]) => ({ from: s, until: s + len }));

  it('property: the window set is the connected run (minute grid) of the earliest live window', () => {
    fc.assert(
      fc.property(fc.array(windowArb, { maxLength: 8 }), fc.integer({ min: 0, max: 90 }), (ws: AccessWindow[], now) => {
        const got = windowToSet(ws, now);
        const live = ws.filter((w) => w.until > now);
        if (!live.length) {
          expect(got).toBeNull();
          return;
        }
        // Oracle: cover minutes, start at the earliest live window's start and walk while covered.
        const covered = (m: number) => live.some((w) => w.from <= m && m < w.until);
        const from = Math.min(...live.map((w) => w.from));
        let until = from;
        while (covered(until)) until += 1;
        expect(got).toEqual({ from, until });
        expect(got!.until).toBeGreaterThan(now);
      }),
    );
  });

  it('property: doorWindow is the first not-over time, opened preStart before it, for holding statuses only', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1, max: 120 })), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 700 }),
        fc.integer({ min: 0, max: 60 }),
        fc.constantFrom('active', 'checked-in', 'unpaid', 'cancelled', 'done'),
        (times, nowMin, pre, status) => {
          const base = T('2026-12-01T08:00');
          const windows = times.map(([s, len]) => ({ start: base + s * MIN, end: base + (s + len) * MIN }));
          const now = base + nowMin * MIN;
          const got = doorWindow({ timeZone: TZ, preStartMinutes: pre, status, windows }, now);
          const next = windows.filter((w) => w.end > now).sort((a, b) => a.start - b.start)[0];
          if (!['active', 'checked-in'].includes(status) || !next) expect(got).toBeNull();
          else expect(got).toEqual({ from: next.start - pre * MIN, until: next.end });
        },
      ),
    );
  });
});
