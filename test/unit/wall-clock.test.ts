/**
 * The wall-clock arithmetic (platform/time/wall-clock.ts) against luxon, which it
 * replaces on hot paths: the same local time of day at any instant, across DST
 * changes and in zones with half-hour and 45-minute offsets.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { wallClockTime, zoneOf } from '../../src/platform/time/wall-clock.js';

const ZONES = ['Asia/Bangkok', 'Europe/London', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'UTC'];
const luxonHm = (t: number, zone: string) => DateTime.fromMillis(t, { zone }).toFormat('HH:mm');

describe('wallClockTime', () => {
  it('shows the local HH:mm luxon shows, at any minute from 1990 to 2090 in zones with DST and odd offsets', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: Date.UTC(1990, 0, 1) / 60_000, max: Date.UTC(2090, 0, 1) / 60_000 }),
        (zone, minute) => {
          const t = minute * 60_000;
          expect(wallClockTime(zoneOf(zone), t)).toBe(luxonHm(t, zone));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('is right on both sides of a DST change, minute by minute', () => {
    // Europe/London 2026-03-29 01:00 UTC: 00:59 GMT is followed by 02:00 BST; 2026-10-25 01:00 UTC: 01:59 BST then 01:00 GMT.
    for (const change of [Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 9, 25, 1)]) {
      for (let m = -90; m <= 90; m++) {
        const t = change + m * 60_000;
        expect(wallClockTime(zoneOf('Europe/London'), t), new Date(t).toISOString()).toBe(luxonHm(t, 'Europe/London'));
      }
    }
    expect(wallClockTime(zoneOf('Europe/London'), Date.UTC(2026, 2, 29, 0, 59))).toBe('00:59');
    expect(wallClockTime(zoneOf('Europe/London'), Date.UTC(2026, 2, 29, 1, 0))).toBe('02:00');
    expect(wallClockTime(zoneOf('Asia/Bangkok'), Date.UTC(2026, 10, 28, 17, 5))).toBe('00:05');
    expect(wallClockTime(zoneOf('Asia/Kathmandu'), Date.UTC(2026, 10, 28, 0, 0))).toBe('05:45');
  });
});
