/**
 * The analytics module's pure rules: open intervals of a config, minutes per local day and hour
 * across DST changes, what a booking's history makes of each occurrence, the rollup plan of a
 * range, and the fold into rows. Unit cases plus properties (fast-check).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { weekHours, type HoursVersion } from '../../src/modules/analytics/rules/opening-hours.js';
import { splitByLocalHour } from '../../src/modules/analytics/rules/local-split.js';
import {
  FIGURE_NAMES,
  occurrenceBuckets,
  occurrenceOutcomes,
  type BookingInput,
  type HistoryInput,
} from '../../src/modules/analytics/rules/booking-figures.js';
import { plan } from '../../src/modules/analytics/rules/rollup-levels.js';
import { addBuckets } from '../../src/modules/analytics/rules/rollup-levels.js';
import { foldRows } from '../../src/modules/analytics/rules/utilisation-rows.js';
import { dayNumber, isoDate, zoneOf } from '../../src/platform/time/wall-clock.js';
import { NO_SHOW_REASON } from '../../src/modules/lifecycle/rules/timer-plan.js';

const BERLIN = zoneOf('Europe/Berlin');
const t = (iso: string, zone = 'Europe/Berlin') => DateTime.fromISO(iso, { zone }).toMillis();
const day = (config: Record<string, unknown>) => ({
  dayConfig: Object.fromEntries(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => [d, config])),
});
const h = (action: string, at: number, extra: Partial<HistoryInput> = {}): HistoryInput => ({
  action,
  at,
  source: 'user',
  reason: null,
  statusBefore: 'active',
  oldEnd: null,
  newEnd: null,
  ...extra,
});
const F = Object.fromEntries(FIGURE_NAMES.map((n, i) => [n, i + 2])) as Record<(typeof FIGURE_NAMES)[number], number>;
const sum = (buckets: number[][], f: number) => buckets.reduce((s, b) => s + b[f], 0);

describe('weekHours', () => {
  it('takes breaks out of the day, reads legacy hours, and leaves a missing day closed', () => {
    const cfg = { dayConfig: { Mon: { availableTime: { start: '08:00', end: '18:00' }, breakTimes: [{ start: '12:00', end: '13:00' }] } } };
    const w = weekHours(cfg);
    expect(w[0]).toEqual([
      [480, 720],
      [780, 1080],
    ]);
    expect(w[1]).toEqual([]);
    expect(weekHours({ start: '09:00:00', end: '17:00:00' })[3]).toEqual([[540, 1020]]);
    expect(weekHours(null)[6]).toEqual([[0, 1440]]);
  });
});

describe('splitByLocalHour', () => {
  it('gives a spring-forward night 2 real hours for 01:00-04:00 and the skipped hour none', () => {
    const pieces = splitByLocalHour(BERLIN, t('2027-03-28T01:00'), t('2027-03-28T04:00'));
    expect(pieces.map((p) => [p.hour, p.minutes])).toEqual([
      [1, 60],
      [3, 60],
    ]);
  });
  it('gives the repeated hour of a fall-back night 120 minutes', () => {
    const pieces = splitByLocalHour(BERLIN, t('2027-10-31T01:00'), t('2027-10-31T04:00'));
    expect(pieces.map((p) => [p.hour, p.minutes])).toEqual([
      [1, 60],
      [2, 120],
      [3, 60],
    ]);
  });
  it('splits any span into pieces whose minutes add up to its length (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 * 24 * 60 }), fc.integer({ min: 1, max: 3000 }), (startMin, len) => {
        const a = Date.UTC(2027, 0, 1) + startMin * 60_000;
        const pieces = splitByLocalHour(BERLIN, a, a + len * 60_000);
        expect(pieces.reduce((s, p) => s + p.minutes, 0)).toBe(len);
        for (const p of pieces) expect(p.minutes).toBeLessThanOrEqual(120);
      }),
    );
  });
});

const OPEN_ALL: HoursVersion = { fromDay: 0, hours: weekHours(null), timezone: 'Europe/Berlin', active: true };
const asset = { zone: BERLIN, versions: [OPEN_ALL] };
const single = (start: string, end: string, status: string): BookingInput => ({
  id: 'm',
  status,
  start: t(start),
  bookedEnd: t(end),
  series: null,
});

describe('occurrenceOutcomes and occurrenceBuckets', () => {
  it('counts nothing for a lapsed unpaid booking or a rejected one', () => {
    const lapsed = occurrenceOutcomes(single('2027-05-03T10:00', '2027-05-03T11:00', 'cancelled'), [
      h('create', t('2027-05-01T10:00'), { statusBefore: null }),
      h('payment-timeout', t('2027-05-01T10:05'), { statusBefore: 'unpaid', source: 'system' }),
    ]);
    expect(lapsed).toEqual([]);
    expect(
      occurrenceOutcomes(single('2027-05-03T10:00', '2027-05-03T11:00', 'rejected'), [h('rejected', 0, { statusBefore: null })]),
    ).toEqual([]);
  });

  it('ends a checked-out booking at the check-out minute and gives back the rest', () => {
    const [o] = occurrenceOutcomes(single('2027-05-03T10:00', '2027-05-03T11:00', 'done'), [
      h('create', 0, { statusBefore: null }),
      h('check-in', t('2027-05-03T09:55')),
      h('check-out', t('2027-05-03T10:20:40'), {
        statusBefore: 'checked-in',
        oldEnd: t('2027-05-03T11:00'),
        newEnd: t('2027-05-03T10:20'),
      }),
    ]);
    const b = occurrenceBuckets(o, asset);
    expect([sum(b, F.booked), sum(b, F.occupied), sum(b, F.released), sum(b, F.check_ins), sum(b, F.held)]).toEqual([20, 20, 40, 1, 1]);
  });

  it('tells a no-show, a cancellation before the start (by a person) and one after it apart', () => {
    const noShow = occurrenceOutcomes(single('2027-05-03T10:00', '2027-05-03T11:00', 'cancelled'), [
      h('create', 0, { statusBefore: null }),
      h('cancel', t('2027-05-03T10:15'), { source: 'system', reason: NO_SHOW_REASON }),
    ]);
    const b1 = occurrenceBuckets(noShow[0], asset);
    expect([sum(b1, F.booked), sum(b1, F.released), sum(b1, F.no_shows), sum(b1, F.cancellations)]).toEqual([15, 45, 1, 0]);
    const before = occurrenceOutcomes(single('2027-05-03T10:00', '2027-05-03T11:00', 'cancelled'), [
      h('create', 0, { statusBefore: null }),
      h('cancel', t('2027-05-02T10:15')),
    ]);
    const b2 = occurrenceBuckets(before[0], asset);
    expect([sum(b2, F.booked), sum(b2, F.released), sum(b2, F.bookings), sum(b2, F.cancellations), sum(b2, F.held)]).toEqual([
      0, 0, 1, 1, 0,
    ]);
    const after = occurrenceOutcomes(single('2027-05-03T10:00', '2027-05-03T11:00', 'cancelled'), [
      h('create', 0, { statusBefore: null }),
      h('cancel', t('2027-05-03T10:30:59')),
    ]);
    const b3 = occurrenceBuckets(after[0], asset);
    expect([sum(b3, F.booked), sum(b3, F.released), sum(b3, F.cancellations), sum(b3, F.held)]).toEqual([30, 30, 0, 1]);
  });

  it('judges each occurrence of a series on its own: one checked out early, one a no-show, the rest held', () => {
    const occ = (d: string) => ({ id: d, start: t(`2027-05-0${d}T10:00`), end: t(`2027-05-0${d}T11:00`) });
    const series: BookingInput = {
      id: 's',
      status: 'active',
      start: t('2027-05-03T10:00'),
      bookedEnd: t('2027-05-03T11:00'),
      series: {
        occurrences: [{ ...occ('3'), end: t('2027-05-03T10:30') }, occ('5')],
        cancelled: [{ ...occ('4'), reason: NO_SHOW_REASON }],
      },
    };
    const outcomes = occurrenceOutcomes(series, [
      h('create', 0, { statusBefore: null }),
      h('check-in', t('2027-05-03T10:01')),
      h('check-out', t('2027-05-03T10:30'), { statusBefore: 'checked-in', oldEnd: t('2027-05-03T11:00'), newEnd: t('2027-05-03T10:30') }),
      h('cancel', t('2027-05-04T10:15'), { source: 'system', reason: NO_SHOW_REASON }),
    ]);
    expect(outcomes.map((o) => [o.id, (o.actualEnd - o.start) / 60_000, o.bookedEnd - o.start, o.checkIn !== null, o.noShow])).toEqual([
      ['3', 30, 3_600_000, true, false],
      ['4', 15, 3_600_000, false, true],
      ['5', 60, 3_600_000, false, false],
    ]);
  });

  it('counts booked minutes only inside opening hours, and on a DST day the real minutes', () => {
    const hours: HoursVersion = {
      fromDay: 0,
      hours: weekHours(day({ availableTime: { start: '08:00', end: '18:00' }, breakTimes: [{ start: '12:00', end: '13:00' }] })),
      timezone: 'Europe/Berlin',
      active: true,
    };
    const [o] = occurrenceOutcomes(single('2027-05-03T11:00', '2027-05-03T14:00', 'done'), [h('create', 0, { statusBefore: null })]);
    expect(sum(occurrenceBuckets(o, { zone: BERLIN, versions: [hours] }), F.booked)).toBe(120);
    const [night] = occurrenceOutcomes(single('2027-03-28T01:00', '2027-03-28T04:00', 'done'), [h('create', 0, { statusBefore: null })]);
    expect(sum(occurrenceBuckets(night, asset), F.booked)).toBe(120);
  });

  it('never books more than it holds, and booked + released is the available part of the booked window (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: -120, max: 700 }),
        fc.constantFrom('checkout', 'noshow', 'cancel', 'none'),
        (startQuarter, len, offset, how) => {
          const start = Date.UTC(2027, 2, 20) + startQuarter * 15 * 60_000;
          const end = start + len * 60_000;
          const at = start + offset * 60_000 + 17_000;
          const hs = [h('create', 0, { statusBefore: null })];
          let status = 'done';
          if (how === 'checkout' && at > start)
            hs.push(h('check-in', start), h('check-out', at, { oldEnd: end, newEnd: Math.min(end, Math.floor(at / 60_000) * 60_000) }));
          if (how === 'noshow' || how === 'cancel') {
            status = 'cancelled';
            hs.push(h('cancel', at, how === 'noshow' ? { source: 'system', reason: NO_SHOW_REASON } : {}));
          }
          const outs = occurrenceOutcomes({ id: 'x', status, start, bookedEnd: end, series: null }, hs);
          const b = occurrenceBuckets(outs[0], asset);
          const booked = sum(b, F.booked);
          expect(booked).toBeLessThanOrEqual(len);
          if (!outs[0].cancelledBeforeStart) expect(booked + sum(b, F.released)).toBe(len);
          expect(sum(b, F.occupied)).toBeLessThanOrEqual(booked);
        },
      ),
    );
  });
});

describe('plan', () => {
  it('reads whole months outside the current one and days for the rest, each day exactly once (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 800 }), fc.integer({ min: 0, max: 365 }), fc.integer({ min: 0, max: 900 }), (a, len, td) => {
        const base = dayNumber('2026-01-01');
        const from = base + a;
        const to = from + len;
        const today = base + td;
        const reads = plan('asset', 'all', from, to, today);
        const seen = new Map<number, number>();
        for (const r of reads) {
          if (r.level === 'am') {
            for (let d = dayNumber(`${r.from}-01`); isoDate(d).slice(0, 7) <= r.to; d++) seen.set(d, (seen.get(d) ?? 0) + 1);
            expect(r.from <= isoDate(today).slice(0, 7) && r.to >= isoDate(today).slice(0, 7)).toBe(false);
          } else {
            for (let d = dayNumber(r.from); d <= dayNumber(r.to); d++) seen.set(d, (seen.get(d) ?? 0) + 1);
          }
        }
        for (let d = from; d <= to; d++) expect(seen.get(d)).toBe(1);
        expect(seen.size).toBe(to - from + 1);
      }),
    );
  });
});

describe('foldRows', () => {
  it('adds up to the same totals whatever the grouping (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            asset: fc.integer({ min: 0, max: 2 }),
            startH: fc.integer({ min: 0, max: 24 * 20 }),
            len: fc.integer({ min: 15, max: 300 }),
          }),
          {
            maxLength: 12,
          },
        ),
        (bookings) => {
          const from = dayNumber('2027-03-22');
          const to = from + 13;
          const versions = [
            {
              fromDay: from - 10,
              hours: weekHours(day({ availableTime: { start: '07:00', end: '19:00' } })),
              timezone: 'Europe/Berlin',
              active: true,
            },
          ];
          const assets = [0, 1, 2].map((i) => ({
            id: `a${i}`,
            name: `A${i}`,
            floorId: `f${i % 2}`,
            floorName: 'F',
            zoneId: 'z',
            zoneName: 'Z',
            versions,
          }));
          const deltas = new Map();
          for (const b of bookings) {
            const start = t('2027-03-22T00:00') + b.startH * 3_600_000;
            const [o] = occurrenceOutcomes({ id: 'x', status: 'done', start, bookedEnd: start + b.len * 60_000, series: null }, [
              h('create', 0, { statusBefore: null }),
            ]);
            addBuckets(deltas, `a${b.asset}`, occurrenceBuckets(o, { zone: BERLIN, versions }), 1);
          }
          const rows = [...deltas.values()].map((d: any) => ({
            level: d.level,
            assetId: d.assetId,
            period: d.period,
            slot: d.slot,
            figures: d.figures,
            reached: d.figures[8], // held; every row lies before `today`
          }));
          const totals = (groupBy: any, scope: 'asset' | 'project', grain: 'day' | 'all' | 'hour') => {
            const reads = plan(scope, grain, from, to, to + 40);
            const picked = rows.filter((r) => reads.some((x) => x.level === r.level && r.period >= x.from && r.period <= x.to));
            const out = foldRows({
              groupBy,
              project: { id: 'p', name: 'P' },
              zone: BERLIN,
              assets,
              from,
              to,
              today: to + 40,
              rows: picked,
              startedToday: [],
            });
            return ['availableMinutes', 'bookedMinutes', 'bookings'].map((k) => out.reduce((s, r: any) => s + r[k], 0));
          };
          const reference = totals('project', 'project', 'all');
          expect(totals('asset', 'asset', 'all')).toEqual(reference);
          expect(totals('floor', 'asset', 'all')).toEqual(reference);
          expect(totals('day', 'project', 'day')).toEqual(reference);
          expect(totals('week', 'asset', 'day')).toEqual(reference);
          expect(totals('hourOfWeek', 'project', 'hour')).toEqual(reference);
          expect(totals('hourOfWeek', 'asset', 'hour')).toEqual(reference);
          expect(totals('month', 'asset', 'all')).toEqual(reference);
        },
      ),
      { numRuns: 60 },
    );
  });
});
