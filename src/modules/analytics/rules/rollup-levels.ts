/**
 * The rollups the figures are kept in, and which of them a question reads. Every bucket (an
 * occurrence's or a walk-in's figures for one local day and hour) is added at six levels:
 *
 * | level | asset | period | slot |
 * |---|---|---|---|
 * | ad  | the asset | YYYY-MM-DD | -1 |
 * | am  | the asset | YYYY-MM    | -1 |
 * | adh | the asset | YYYY-MM-DD | hour |
 * | amw | the asset | YYYY-MM    | (ISO weekday - 1) * 24 + hour |
 * | pd  | ''        | YYYY-MM-DD | -1 |
 * | pdh | ''        | YYYY-MM-DD | hour |
 *
 * A question over a range reads a month row for every whole month of the range that lies wholly
 * before or wholly after the current month (the noShowRate denominator needs "before today"
 * per row), and day rows for the rest: at most about 60 day rows and 12 month rows per asset. Pure.
 */
import { isoDate, weekdayIndex } from '../../../platform/time/wall-clock.js';
import { FIGURE_COUNT, type Bucket } from './booking-figures.js';

export type Level = 'ad' | 'am' | 'adh' | 'amw' | 'pd' | 'pdh';

export interface RollupKey {
  level: Level;
  assetId: string;
  period: string;
  slot: number;
}

/** One rollup row's key and figures (FIGURE_NAMES order). */
export interface RollupDelta extends RollupKey {
  figures: number[];
}

/** Adds `sign` × each bucket to the six levels of one asset, into `into` (keyed). */
export function addBuckets(into: Map<string, RollupDelta>, assetId: string, buckets: readonly Bucket[], sign: 1 | -1): void {
  for (const b of buckets) {
    const day = b[0];
    const hour = b[1];
    const date = isoDate(day);
    const month = date.slice(0, 7);
    const keys: RollupKey[] = [
      { level: 'ad', assetId, period: date, slot: -1 },
      { level: 'am', assetId, period: month, slot: -1 },
      { level: 'adh', assetId, period: date, slot: hour },
      { level: 'amw', assetId, period: month, slot: weekdayIndex(day) * 24 + hour },
      { level: 'pd', assetId: '', period: date, slot: -1 },
      { level: 'pdh', assetId: '', period: date, slot: hour },
    ];
    for (const k of keys) {
      const id = `${k.level}|${k.assetId}|${k.period}|${k.slot}`;
      let row = into.get(id);
      if (!row) into.set(id, (row = { ...k, figures: new Array<number>(FIGURE_COUNT).fill(0) }));
      for (let i = 0; i < FIGURE_COUNT; i++) row.figures[i] += sign * b[2 + i];
    }
  }
}

/** Deltas that change something, in key order (so concurrent writers take row locks in one order). */
export function nonZero(deltas: Map<string, RollupDelta>): RollupDelta[] {
  return [...deltas.entries()]
    .filter(([, d]) => d.figures.some((x) => x !== 0))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, d]) => d);
}

/** A read of one level over [from, to] (periods, inclusive, compared as text). */
export interface LevelRead {
  level: Level;
  from: string;
  to: string;
}

export type Scope = 'project' | 'asset';
export type TimeGrain = 'day' | 'all' | 'hour';

/**
 * The reads that cover local days [from, to] (day numbers) for a scope and grain. `today` is
 * the current local day: a month row is read only for a whole month before or after the
 * current month.
 */
export function plan(scope: Scope, grain: TimeGrain, from: number, to: number, today: number): LevelRead[] {
  const dayLevel: Level = scope === 'project' ? (grain === 'hour' ? 'pdh' : 'pd') : grain === 'hour' ? 'adh' : 'ad';
  if (scope === 'project' || grain === 'day') return [{ level: dayLevel, from: isoDate(from), to: isoDate(to) }];
  const monthLevel: Level = grain === 'hour' ? 'amw' : 'am';
  const current = isoDate(today).slice(0, 7);
  const reads: LevelRead[] = [];
  const months: string[] = [];
  let runStart: number | null = null;
  const flushDays = (end: number) => {
    if (runStart !== null && end >= runStart) reads.push({ level: dayLevel, from: isoDate(runStart), to: isoDate(end) });
    runStart = null;
  };
  for (let d = from; d <= to;) {
    const date = isoDate(d);
    const month = date.slice(0, 7);
    const monthEnd = lastDayOfMonth(d);
    if (date.endsWith('-01') && monthEnd <= to && month !== current) {
      flushDays(d - 1);
      months.push(month);
      d = monthEnd + 1;
    } else {
      if (runStart === null) runStart = d;
      d++;
    }
  }
  flushDays(to);
  if (months.length) reads.push({ level: monthLevel, from: months[0], to: months[months.length - 1] });
  return coalesceMonths(reads, months, monthLevel);
}

/** Month reads stay one range only when the months are consecutive; otherwise one read per month. */
function coalesceMonths(reads: LevelRead[], months: string[], level: Level): LevelRead[] {
  const consecutive = months.every((m, i) => i === 0 || nextMonth(months[i - 1]) === m);
  if (consecutive) return reads;
  return [...reads.filter((r) => r.level !== level), ...months.map((m) => ({ level, from: m, to: m }))];
}

function nextMonth(m: string): string {
  const [y, mo] = m.split('-').map(Number);
  return mo === 12 ? `${y + 1}-01` : `${y}-${String(mo + 1).padStart(2, '0')}`;
}

function lastDayOfMonth(day: number): number {
  const d = new Date(day * 86_400_000);
  return Math.floor(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 86_400_000) - 1;
}
