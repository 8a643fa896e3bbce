/**
 * Property tests for the availability engine against a brute-force oracle that walks every
 * minute: each minute's local date and time-of-day come straight from luxon, operating hours
 * and breaks come from the numeric model the config was generated from, and bookings (plus
 * cleaning) are marked minute by minute on a grid.
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { AssetConfig, DayConfig, TimeRange, Weekday } from '../../src/modules/booking/rules/asset-config.js';
import { checkBookingWindow, checkConfigRules, findConflict } from '../../src/modules/booking/rules/availability.js';

const MIN = 60_000;
const NAMES: Weekday[] = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']; // luxon weekday - 1

// ---------------------------------------------------------------------------
// Generated config: numeric model + the config text the engine reads
// ---------------------------------------------------------------------------

interface DayModel {
  open: number;
  close: number; // exclusive, 1440 = midnight
  breaks: Array<[number, number]>;
}

const pad = (n: number) => String(n).padStart(2, '0');
const clock = (min: number, short: boolean) => `${pad(Math.floor(min / 60))}:${pad(min % 60)}${short ? '' : ':00'}`;
const MIDNIGHT = ['24:00:00', '23:59:59', '00:00:00'];
const endText = (min: number, spelling: number, short: boolean) => (min >= 1440 ? MIDNIGHT[spelling] : clock(min, short));

const breakArb = fc
  .record({ at: fc.integer({ min: 0, max: 95 }), len: fc.integer({ min: 1, max: 16 }), spelling: fc.nat(2), short: fc.boolean() })
  .map(({ at, len, spelling, short }) => {
    const start = at * 15;
    const end = Math.min(start + len * 15, 1440);
    const text: TimeRange = { start: clock(start, short), end: endText(end, spelling, short) };
    return { model: [start, end] as [number, number], text };
  });

const dayArb = fc
  .record({
    open: fc.integer({ min: 0, max: 32 }).map((i) => i * 30),
    closeKind: fc.constantFrom('later', 'later', 'midnight', 'wraps'),
    steps: fc.integer({ min: 1, max: 96 }),
    spelling: fc.nat(2),
    short: fc.boolean(),
    breaks: fc.array(breakArb, { maxLength: 2 }),
  })
  .map(({ open, closeKind, steps, spelling, short, breaks }) => {
    let close = 1440;
    let endStr = MIDNIGHT[spelling];
    if (closeKind === 'later') {
      close = Math.min(open + steps * 15, 1440);
      endStr = endText(close, spelling, short);
    } else if (closeKind === 'wraps') {
      endStr = clock(Math.max(open - steps * 15, 0), short); // end <= start: until midnight
    }
    const model: DayModel = { open, close, breaks: breaks.map((b) => b.model) };
    const text: DayConfig = { availableTime: { start: clock(open, short), end: endStr }, breakTimes: breaks.map((b) => b.text) };
    return { model, text };
  });

interface ConfigCase {
  config: AssetConfig;
  hoursOf: (luxonWeekday: number) => DayModel | null;
}

const dayConfigArb: fc.Arbitrary<ConfigCase> = fc.array(fc.option(dayArb, { freq: 4 }), { minLength: 7, maxLength: 7 }).map((days) => {
  const dayConfig: Partial<Record<Weekday, DayConfig>> = {};
  days.forEach((d, i) => {
    if (d) dayConfig[NAMES[i]] = d.text;
  });
  return { config: { dayConfig }, hoursOf: (wd: number) => days[wd - 1]?.model ?? null };
});

const legacyArb: fc.Arbitrary<ConfigCase> = dayArb.map(({ model, text }) => ({
  config: { start: text.availableTime.start, end: text.availableTime.end },
  hoursOf: () => ({ ...model, breaks: [] }),
}));

const openArb: fc.Arbitrary<ConfigCase> = fc.constant({ config: {}, hoursOf: () => ({ open: 0, close: 1440, breaks: [] }) });

const configArb = fc.oneof({ arbitrary: dayConfigArb, weight: 8 }, { arbitrary: legacyArb, weight: 1 }, { arbitrary: openArb, weight: 1 });

// ---------------------------------------------------------------------------
// Scenario: config + rules + bookings + a window, all within a few days of `base`
// ---------------------------------------------------------------------------

const SPAN_DAYS = 4;

/** Each generated day's open hours as instants (approximate on DST days), to aim windows at. */
function openSpans(cfg: ConfigCase, base: number, weekdayOfDay: (d: number) => number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (let d = 0; d < SPAN_DAYS; d++) {
    const h = cfg.hoursOf(weekdayOfDay(d));
    if (h) spans.push([base + (d * 1440 + h.open) * MIN, base + (d * 1440 + h.close) * MIN]);
  }
  return spans;
}

/** Instants at the opening, closing and break edges of each generated day (approximate on DST days). */
function edgesOf(cfg: ConfigCase, base: number, weekdayOfDay: (d: number) => number): number[] {
  const edges: number[] = [];
  for (let d = 0; d < SPAN_DAYS; d++) {
    const h = cfg.hoursOf(weekdayOfDay(d));
    const marks = h ? [h.open, h.close, ...h.breaks.flat()] : [];
    for (const m of marks) edges.push(base + (d * 1440 + m) * MIN);
  }
  return edges;
}

/** A booking placed anywhere nearby, or just before / just after the window's cleaning edges. */
function bookingArb(minuteNear: fc.Arbitrary<number>, s: number, e: number, cleanup: number) {
  const len = fc.integer({ min: 1, max: 60 }).map((n) => n * 5 * MIN);
  const nudge = fc.constantFrom(-5, -1, 0, 0, 1, 5).map((n) => n * MIN);
  return fc.oneof(
    { arbitrary: fc.tuple(minuteNear, len).map(([start, l]) => ({ start, end: start + l })), weight: 2 },
    { arbitrary: fc.tuple(nudge, len).map(([n, l]) => ({ start: s - cleanup * MIN - l + n, end: s - cleanup * MIN + n })), weight: 1 },
    { arbitrary: fc.tuple(nudge, len).map(([n, l]) => ({ start: e + cleanup * MIN + n, end: e + cleanup * MIN + n + l })), weight: 1 },
  );
}

function scenarioArb(base: number, weekdayOfDay: (d: number) => number) {
  const minuteNear = fc
    .tuple(fc.integer({ min: 0, max: (SPAN_DAYS * 1440) / 5 }), fc.constantFrom(0, 0, 0, 1, -1))
    .map(([i, jitter]) => base + (i * 5 + jitter) * MIN);
  const duration = fc.oneof(
    { arbitrary: fc.integer({ min: 1, max: 36 }).map((n) => n * 5), weight: 12 },
    { arbitrary: fc.integer({ min: -1, max: 1 }), weight: 1 },
    { arbitrary: fc.integer({ min: 288, max: 576 }).map((n) => n * 5), weight: 3 },
  );
  const startNear = (edges: number[], spans: Array<[number, number]>) =>
    edges.length === 0
      ? minuteNear
      : fc.oneof(
          minuteNear,
          fc
            .tuple(fc.constantFrom(...edges), fc.integer({ min: -12, max: 12 }), fc.constantFrom(0, 0, 1, -1))
            .map(([edge, k, j]) => edge + (k * 5 + j) * MIN),
          fc
            .tuple(fc.constantFrom(...spans), fc.double({ min: 0, max: 1, noNaN: true }))
            .map(([[from, to], f]) => from + Math.floor(((to - from) * f) / (5 * MIN)) * 5 * MIN),
        );
  return configArb
    .chain((cfg) =>
      fc.record({
        cfg: fc.constant(cfg),
        multi: fc.boolean(),
        maxDuration: fc.option(
          fc.integer({ min: 1, max: 48 }).map((n) => n * 15),
          { freq: 2 },
        ),
        maxAdvance: fc.option(fc.integer({ min: 0, max: 5 }), { freq: 2 }),
        allDay: fc.constantFrom(false, false, false, true),
        cleanup: fc.integer({ min: 0, max: 60 }),
        start: startNear(edgesOf(cfg, base, weekdayOfDay), openSpans(cfg, base, weekdayOfDay)),
        duration,
        seconds: fc.tuple(fc.nat(59), fc.nat(59)),
      }),
    )
    .chain((sc) =>
      fc
        .array(bookingArb(minuteNear, sc.start, sc.start + sc.duration * MIN, sc.cleanup), { maxLength: 6 })
        .map((bs) => ({ ...sc, bookings: bs.map((b, i) => ({ id: `b${i}`, ...b })) })),
    );
}

type Scenario = ReturnType<typeof scenarioArb> extends fc.Arbitrary<infer T> ? T : never;

// ---------------------------------------------------------------------------
// Oracle
// ---------------------------------------------------------------------------

interface LocalMinute {
  date: string;
  weekday: number;
  tod: number;
}

/** Local date and time-of-day of every minute in [from, to), straight from luxon. */
function minuteTable(zone: string, from: number, to: number) {
  const table: LocalMinute[] = [];
  for (let t = from; t < to; t += MIN) {
    const dt = DateTime.fromMillis(t, { zone });
    table.push({ date: dt.toISODate()!, weekday: dt.weekday, tod: dt.hour * 60 + dt.minute });
  }
  return (t: number): LocalMinute => {
    const m = table[(t - from) / MIN];
    if (!m) throw new Error('minute outside the oracle table');
    return m;
  };
}

const dayNumber = (isoDate: string) => Date.parse(`${isoDate}T00:00:00Z`) / 86_400_000;

function expectedConfigVerdict(sc: Scenario, s: number, e: number, now: number, local: (t: number) => LocalMinute): string {
  if (e <= s) return 'INVALID_WINDOW';
  const hours = (m: LocalMinute) => sc.cfg.hoursOf(m.weekday);
  const inHours = (m: LocalMinute) => {
    const h = hours(m);
    return h !== null && m.tod >= h.open && m.tod < h.close;
  };
  const minutes: LocalMinute[] = [];
  for (let t = s; t < e; t += MIN) minutes.push(local(t));
  const first = minutes[0];
  const last = minutes[minutes.length - 1];
  const multiDay = first.date !== last.date;

  if (multiDay && !sc.multi) return 'MULTI_DAY';
  if (multiDay) {
    if (minutes.some((m) => hours(m) === null) || !inHours(first) || !inHours(last)) return 'OPERATING_HOURS';
  } else if (!minutes.every(inHours)) {
    return 'OPERATING_HOURS';
  }
  const breakChecked = (m: LocalMinute) => m.date === first.date || m.date === last.date;
  const inBreak = (m: LocalMinute) => inHours(m) && hours(m)!.breaks.some(([bs, be]) => m.tod >= bs && m.tod < be);
  if (!sc.allDay && minutes.some((m) => breakChecked(m) && inBreak(m))) return 'BREAK_TIME';
  if (sc.maxDuration !== null && e - s > sc.maxDuration * MIN) return 'MAX_DURATION';
  if (s < now) return 'LEAD_TIME';
  if (sc.maxAdvance !== null && dayNumber(first.date) - dayNumber(local(now).date) > sc.maxAdvance) return 'ADVANCE_DAYS';
  return 'OK';
}

/** Marks every minute held by some booking (slot + cleaning) and probes the window's hold. */
function expectedConflict(sc: Scenario, s: number, e: number): boolean {
  const held = new Set<number>();
  const c = sc.cleanup * MIN;
  for (const b of sc.bookings) for (let t = b.start; t < b.end + c; t += MIN) held.add(t);
  for (let t = s; t < e + c; t += MIN) if (held.has(t)) return true;
  return false;
}

// ---------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------

function runAgainstOracle(zone: string, baseLocalDate: string, numRuns: number) {
  const baseDt = DateTime.fromISO(`${baseLocalDate}T00:00`, { zone });
  const base = baseDt.toMillis();
  const weekdayOfDay = (d: number) => baseDt.plus({ days: d }).weekday;
  const now = base - 60 * MIN;
  const local = minuteTable(zone, now - 1440 * MIN, base + (SPAN_DAYS + 4) * 1440 * MIN);

  fc.assert(
    fc.property(scenarioArb(base, weekdayOfDay), (sc) => {
      const config: AssetConfig = { ...sc.cfg.config, bookMultipleDayRoom: sc.multi };
      if (sc.maxDuration !== null) config.maxDurationMinutes = sc.maxDuration;
      if (sc.maxAdvance !== null) config.maxAdvanceBookingDays = sc.maxAdvance;
      const rawStart = sc.start + sc.seconds[0] * 1000;
      const rawEnd = sc.start + sc.duration * MIN + sc.seconds[1] * 1000;
      const s = sc.start;
      const e = sc.start + sc.duration * MIN;

      const configVerdict = expectedConfigVerdict(sc, s, e, now, local);
      const conflict = e > s && expectedConflict(sc, s, e);
      const expected = configVerdict !== 'OK' ? configVerdict : conflict ? 'CONFLICT' : 'OK';

      const input = { start: rawStart, end: rawEnd, now, timeZone: zone, config, allDay: sc.allDay };
      const rules = checkConfigRules(input);
      const found = findConflict({ start: rawStart, end: rawEnd, cleanupMinutes: sc.cleanup, bookings: sc.bookings });
      const full = checkBookingWindow({ ...input, cleanupMinutes: sc.cleanup, bookings: sc.bookings });

      expect(rules.ok ? 'OK' : rules.reason).toBe(configVerdict);
      if (e > s) expect(found !== null).toBe(conflict);
      expect(full.ok ? 'OK' : full.reason).toBe(expected);
      if (full.ok) expect([full.start, full.end]).toEqual([s, e]);
      if (!full.ok && full.reason === 'CONFLICT') {
        const b = full.conflictWith;
        expect(b.cleaningEndsAt).toBe(b.end + sc.cleanup * MIN);
        expect(s < b.cleaningEndsAt && b.start < e + sc.cleanup * MIN).toBe(true);
      }
    }),
    { numRuns },
  );
}

describe('availability engine vs minute-grid oracle', () => {
  it('an ordinary week (America/New_York, June)', () => runAgainstOracle('America/New_York', '2026-06-05', 500));
  it('a half-hour offset without DST (Asia/Kolkata)', () => runAgainstOracle('Asia/Kolkata', '2026-06-05', 200));
  it('spring-forward week (America/New_York, 2026-03-08)', () => runAgainstOracle('America/New_York', '2026-03-06', 500));
  it('fall-back week (America/New_York, 2026-11-01)', () => runAgainstOracle('America/New_York', '2026-10-30', 500));
  it('spring-forward week (Europe/London, 2026-03-29)', () => runAgainstOracle('Europe/London', '2026-03-27', 300));
  it('half-hour DST change (Australia/Lord_Howe, 2026-04-05)', () => runAgainstOracle('Australia/Lord_Howe', '2026-04-03', 300));
});
