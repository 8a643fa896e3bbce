import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { MAX_OCCURRENCES, expandRecurrence, parseRecurrence } from '../../src/modules/booking/rules/recurrence.js';

const BKK = 'Asia/Bangkok';
const NY = 'America/New_York';
const local = (iso: string, zone: string) => DateTime.fromISO(iso, { zone }).toMillis();

function expand(rule: string, startIso: string, minutes: number, zone = BKK) {
  const parsed = parseRecurrence(rule, zone);
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  const start = local(startIso, zone);
  const res = expandRecurrence(parsed.rule, { start, end: start + minutes * 60_000 }, zone);
  if (!res.ok) throw new Error(res.errors.join('; '));
  return res.occurrences.map((o) => DateTime.fromMillis(o.start, { zone }).toFormat('ccc yyyy-MM-dd HH:mm'));
}

describe('recurrence rules', () => {
  it('daily with COUNT', () => {
    expect(expand('FREQ=DAILY;COUNT=3', '2026-12-01T09:00', 60)).toEqual([
      'Tue 2026-12-01 09:00',
      'Wed 2026-12-02 09:00',
      'Thu 2026-12-03 09:00',
    ]);
  });

  it('daily with INTERVAL and UNTIL (date, inclusive)', () => {
    expect(expand('RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20261205', '2026-12-01T09:00', 60)).toEqual([
      'Tue 2026-12-01 09:00',
      'Thu 2026-12-03 09:00',
      'Sat 2026-12-05 09:00',
    ]);
  });

  it('weekly on several days, starting mid-week', () => {
    expect(expand('FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=5', '2026-12-02T14:00', 30)).toEqual([
      'Wed 2026-12-02 14:00',
      'Fri 2026-12-04 14:00',
      'Mon 2026-12-07 14:00',
      'Wed 2026-12-09 14:00',
      'Fri 2026-12-11 14:00',
    ]);
  });

  it('every other week on the start weekday', () => {
    expect(expand('FREQ=WEEKLY;INTERVAL=2;COUNT=3', '2026-12-01T10:00', 60)).toEqual([
      'Tue 2026-12-01 10:00',
      'Tue 2026-12-15 10:00',
      'Tue 2026-12-29 10:00',
    ]);
  });

  it('keeps the local wall-clock time across a DST change', () => {
    const occ = expand('FREQ=DAILY;COUNT=3', '2027-03-13T09:00', 60, NY);
    expect(occ).toEqual(['Sat 2027-03-13 09:00', 'Sun 2027-03-14 09:00', 'Mon 2027-03-15 09:00']);
  });

  it('refuses unsupported or contradictory rules with one message each', () => {
    const r = parseRecurrence('FREQ=MONTHLY;BYMONTHDAY=1', BKK);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.length).toBeGreaterThanOrEqual(3); // BYMONTHDAY, FREQ, COUNT/UNTIL
    expect(parseRecurrence('FREQ=DAILY;COUNT=2;UNTIL=20261231', BKK).ok).toBe(false);
    expect(parseRecurrence(`FREQ=DAILY;COUNT=${MAX_OCCURRENCES + 1}`, BKK).ok).toBe(false);
    expect(parseRecurrence('FREQ=DAILY;BYDAY=MO;COUNT=2', BKK).ok).toBe(false);
  });

  it('caps UNTIL series at the maximum number of occurrences', () => {
    const parsed = parseRecurrence('FREQ=DAILY;UNTIL=20301231', BKK);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const start = local('2026-12-01T09:00', BKK);
    expect(expandRecurrence(parsed.rule, { start, end: start + 3_600_000 }, BKK).ok).toBe(false);
  });

  it('property: occurrences are increasing, keep duration and local time, and respect COUNT', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('DAILY', 'WEEKLY'),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 30 }),
        fc.subarray(['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'], { minLength: 1 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 6 * 60, max: 20 * 60 }),
        fc.constantFrom(BKK, NY, 'Europe/London'),
        (freq, interval, count, days, dayOffset, minuteOfDay, zone) => {
          const rule = `FREQ=${freq};INTERVAL=${interval};COUNT=${count}${freq === 'WEEKLY' ? `;BYDAY=${days.join(',')}` : ''}`;
          const parsed = parseRecurrence(rule, zone);
          expect(parsed.ok).toBe(true);
          if (!parsed.ok) return;
          const first = DateTime.fromISO('2026-12-01T00:00', { zone })
            .plus({ days: dayOffset })
            .set({ hour: Math.floor(minuteOfDay / 60), minute: minuteOfDay % 60 });
          const start = first.toMillis();
          const res = expandRecurrence(parsed.rule, { start, end: start + 45 * 60_000 }, zone);
          expect(res.ok).toBe(true);
          if (!res.ok) return;
          expect(res.occurrences.length).toBe(count);
          expect(res.occurrences[0].start).toBe(start);
          for (let i = 1; i < res.occurrences.length; i++) {
            const o = res.occurrences[i];
            expect(o.start).toBeGreaterThan(res.occurrences[i - 1].start);
            expect(o.end - o.start).toBe(45 * 60_000);
            const lt = DateTime.fromMillis(o.start, { zone });
            expect(lt.hour * 60 + lt.minute).toBe(minuteOfDay);
            if (freq === 'WEEKLY') expect(days).toContain(['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'][lt.weekday - 1]);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
