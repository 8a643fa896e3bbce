/**
 * From rollup rows and the assets' hours to the answer's rows: groups, available minutes (per
 * local day from the hours in effect that day), figures and ratios. Pure.
 */
import type { IANAZone } from 'luxon';
import type { AnalyticsGroupBy, UtilisationGroup, UtilisationRow } from '../../../contract/analytics.js';
import { DAY, isoDate, offsetAt, weekdayIndex } from '../../../platform/time/wall-clock.js';
import { FIGURE_COUNT, FIGURE_NAMES } from './booking-figures.js';
import { splitByLocalHour } from './local-split.js';
import { openInstants, versionOn, versionSignature, type HoursVersion } from './opening-hours.js';
import type { Level } from './rollup-levels.js';

export interface AssetInfo {
  id: string;
  name: string;
  floorId: string | null;
  floorName: string | null;
  zoneId: string | null;
  zoneName: string | null;
  versions: readonly HoursVersion[];
}

/** Sums of rollup rows of one level, grouped by what the grouping needs ('' / -1 for what it does not). */
export interface RollupRow {
  level: Level;
  assetId: string;
  period: string;
  slot: number;
  figures: number[];
  /** `held` of the rows wholly before today: the occurrences that reached their start (today's come apart). */
  reached: number;
}

/** The columns the rollup rows of a question are summed by. */
export function groupColumns(groupBy: AnalyticsGroupBy, monthWeekhour: boolean): ('asset_id' | 'period' | 'slot')[] {
  switch (groupBy) {
    case 'project':
    case 'zone':
    case 'floor':
    case 'asset':
      return ['asset_id'];
    case 'day':
    case 'week':
    case 'month':
      return ['period'];
    case 'hourOfWeek':
      return monthWeekhour ? ['slot'] : ['period', 'slot'];
  }
}

/** An occurrence that started today before now (it reached its start; today's rows are not "before today"). */
export interface StartedToday {
  assetId: string;
  day: number;
  hour: number;
}

export interface FoldInput {
  groupBy: AnalyticsGroupBy;
  project: { id: string; name: string };
  zone: IANAZone;
  assets: readonly AssetInfo[];
  from: number;
  to: number;
  today: number;
  rows: readonly RollupRow[];
  startedToday: readonly StartedToday[];
}

const I = Object.fromEntries(FIGURE_NAMES.map((n, i) => [n, i])) as Record<(typeof FIGURE_NAMES)[number], number>;

interface Acc {
  group: UtilisationGroup;
  sort: string | number;
  available: number;
  figures: number[];
  reached: number;
}

/** The Monday (day number) of a day's ISO week. */
export function mondayOf(day: number): number {
  return day - weekdayIndex(day);
}

/** Day number of YYYY-MM-DD or of the first day of YYYY-MM. */
function dayOf(period: string): number {
  return Math.floor(Date.parse(`${period.length === 7 ? `${period}-01` : period}T00:00:00Z`) / DAY);
}

/** Whether a local day has no offset change anywhere near it (then wall minutes are plain arithmetic). */
function regularDay(zone: IANAZone, day: number): boolean {
  return offsetAt(zone, day * DAY - 14 * 3_600_000) === offsetAt(zone, (day + 1) * DAY + 14 * 3_600_000);
}

/** Available minutes per local hour (index 0-23) of one set of hours on one day, memoized per content. */
class HourMinutes {
  private readonly ids = new Map<string, number>();
  private readonly idOf = new Map<HoursVersion, number>();
  /** Per content id: per weekday, per hour (days without an offset change). */
  private readonly weekly = new Map<number, number[][]>();
  private readonly irregular = new Map<string, number[]>();
  private readonly regular: boolean[];

  constructor(
    private readonly zone: IANAZone,
    private readonly from: number,
    to: number,
  ) {
    this.regular = Array.from({ length: to - from + 1 }, (_, i) => regularDay(zone, from + i));
  }

  of(v: HoursVersion, day: number): number[] {
    let id = this.idOf.get(v);
    if (id === undefined) {
      const text = versionSignature(v);
      if (!this.ids.has(text)) this.ids.set(text, this.ids.size);
      this.idOf.set(v, (id = this.ids.get(text)!));
    }
    const wd = weekdayIndex(day);
    if (this.regular[day - this.from]) {
      let week = this.weekly.get(id);
      if (!week) this.weekly.set(id, (week = v.hours.map((intervals) => wallHours(intervals))));
      return week[wd];
    }
    const key = `${id}|${day}`;
    let out = this.irregular.get(key);
    if (!out) {
      out = new Array<number>(24).fill(0);
      for (const [a, b] of openInstants(v.hours, this.zone, day, wd))
        for (const p of splitByLocalHour(this.zone, a, b)) out[p.hour] += p.minutes;
      this.irregular.set(key, out);
    }
    return out;
  }
}

/** Minutes per hour of open intervals in wall minutes (a day without an offset change). */
function wallHours(intervals: readonly [number, number][]): number[] {
  const out = new Array<number>(24).fill(0);
  for (const [from, to] of intervals) {
    for (let h = Math.floor(from / 60); h * 60 < to && h < 24; h++) out[h] += Math.min(to, (h + 1) * 60) - Math.max(from, h * 60);
  }
  return out;
}

function newAcc(group: UtilisationGroup, sort: string | number): Acc {
  return { group, sort, available: 0, figures: new Array<number>(FIGURE_COUNT).fill(0), reached: 0 };
}

/** Every group the answer shows, whether or not anything happened in it. */
function seedGroups(input: FoldInput): Map<string | number, Acc> {
  const groups = new Map<string | number, Acc>();
  const { groupBy, from, to } = input;
  const put = (key: string | number, group: UtilisationGroup) => {
    if (!groups.has(key)) groups.set(key, newAcc(group, key));
  };
  if (groupBy === 'project') put(input.project.id, { projectId: input.project.id, projectName: input.project.name });
  for (const a of input.assets) {
    const zone = a.zoneId ? { zoneId: a.zoneId, zoneName: a.zoneName ?? '' } : {};
    const floor = a.floorId ? { floorId: a.floorId, floorName: a.floorName ?? '' } : {};
    if (groupBy === 'asset') put(a.id, { assetId: a.id, assetName: a.name, ...floor, ...zone });
    if (groupBy === 'floor' && a.floorId) put(a.floorId, { ...floor, ...zone });
    if (groupBy === 'zone' && a.zoneId) put(a.zoneId, { zoneId: a.zoneId, zoneName: a.zoneName ?? '' });
  }
  for (let d = from; d <= to; d++) {
    const date = isoDate(d);
    if (groupBy === 'day') put(date, { day: date });
    if (groupBy === 'week') put(isoDate(mondayOf(d)), { week: isoDate(mondayOf(d)) });
    if (groupBy === 'month') put(date.slice(0, 7), { month: date.slice(0, 7) });
  }
  if (groupBy === 'hourOfWeek') for (let s = 0; s < 168; s++) put(s, { weekday: Math.floor(s / 24) + 1, hour: s % 24 });
  return groups;
}

/** The group key of an asset's minute or count at a day (or month) and, for hourOfWeek, a weekhour slot. */
function keyOf(input: FoldInput, asset: AssetInfo | undefined, period: string, slot: number): string | number | null {
  switch (input.groupBy) {
    case 'project':
      return input.project.id;
    case 'asset':
      return asset?.id ?? null;
    case 'floor':
      return asset?.floorId ?? null;
    case 'zone':
      return asset?.zoneId ?? null;
    case 'day':
      return period;
    case 'week':
      return weekOf(period);
    case 'month':
      return period.slice(0, 7);
    case 'hourOfWeek':
      return slot;
  }
}

const weekMemo = new Map<string, string>();
/** The ISO week (its Monday) of a day, memoized. */
function weekOf(period: string): string {
  let w = weekMemo.get(period);
  if (w === undefined) {
    if (weekMemo.size > 10_000) weekMemo.clear();
    weekMemo.set(period, (w = isoDate(mondayOf(dayOf(period)))));
  }
  return w;
}

/** The weekhour slot of a row (hourOfWeek reads day-hour or month-weekhour rows). */
function weekSlot(r: RollupRow): number {
  if (r.level === 'amw') return r.slot;
  return weekdayIndex(dayOf(r.period)) * 24 + r.slot;
}

/**
 * Adds each group's available minutes. Assets with the same recorded hours share one pass over the
 * days (a building's rooms mostly share a few), and a day's group key is computed once.
 */
function addAvailable(input: FoldInput, groups: Map<string | number, Acc>): void {
  const minutes = new HourMinutes(input.zone, input.from, input.to);
  const days = input.to - input.from + 1;
  const sigOf = new Map<HoursVersion, string>();
  const shared = new Map<string, { versions: readonly HoursVersion[]; assets: AssetInfo[] }>();
  for (const a of input.assets) {
    const key = a.versions
      .map((v) => {
        let sig = sigOf.get(v);
        if (sig === undefined) sigOf.set(v, (sig = `${v.fromDay}:${versionSignature(v)}`));
        return sig;
      })
      .join('|');
    const entry = shared.get(key);
    if (entry) entry.assets.push(a);
    else shared.set(key, { versions: a.versions, assets: [a] });
  }
  const byDay = ['day', 'week', 'month'].includes(input.groupBy);
  const dayKeys = byDay ? Array.from({ length: days }, (_, i) => keyOf(input, undefined, isoDate(input.from + i), -1)) : [];
  for (const { versions, assets } of shared.values()) {
    const perDay = new Array<number>(days).fill(0);
    const perSlot = new Array<number>(168).fill(0);
    for (let i = 0; i < days; i++) {
      const d = input.from + i;
      const v = versionOn(versions, d);
      if (!v?.active) continue;
      const perHour = minutes.of(v, d);
      const base = weekdayIndex(d) * 24;
      for (let h = 0; h < 24; h++) {
        perDay[i] += perHour[h];
        perSlot[base + h] += perHour[h];
      }
    }
    const n = assets.length;
    if (input.groupBy === 'hourOfWeek') {
      for (let sl = 0; sl < 168; sl++) if (perSlot[sl]) groups.get(sl)!.available += perSlot[sl] * n;
    } else if (byDay) {
      for (let i = 0; i < days; i++) {
        const g = dayKeys[i] === null ? undefined : groups.get(dayKeys[i]!);
        if (g) g.available += perDay[i] * n;
      }
    } else {
      const total = perDay.reduce((s, x) => s + x, 0);
      for (const a of assets) {
        const key = keyOf(input, a, '', -1);
        const g = key === null ? undefined : groups.get(key);
        if (g) g.available += total;
      }
    }
  }
}

const ratio = (n: number, d: number): number | null => (d > 0 ? n / d : null);

/** The answer's rows, in group order. */
export function foldRows(input: FoldInput): UtilisationRow[] {
  const groups = seedGroups(input);
  const assets = new Map(input.assets.map((a) => [a.id, a]));
  addAvailable(input, groups);
  for (const r of input.rows) {
    const asset = r.assetId ? assets.get(r.assetId) : undefined;
    if (r.assetId && !asset) continue;
    const key = input.groupBy === 'hourOfWeek' ? weekSlot(r) : keyOf(input, asset, r.period, r.slot);
    const g = key === null ? undefined : groups.get(key);
    if (!g) continue;
    for (let i = 0; i < FIGURE_COUNT; i++) g.figures[i] += r.figures[i];
    g.reached += r.reached;
  }
  for (const s of input.startedToday) {
    const key =
      input.groupBy === 'hourOfWeek' ? weekdayIndex(s.day) * 24 + s.hour : keyOf(input, assets.get(s.assetId), isoDate(s.day), -1);
    const g = key === null ? undefined : groups.get(key);
    if (g) g.reached += 1;
  }
  return [...groups.values()].sort((a, b) => (a.sort < b.sort ? -1 : a.sort > b.sort ? 1 : 0)).map((g) => rowOf(g));
}

function rowOf(g: Acc): UtilisationRow {
  const f = g.figures;
  return {
    group: g.group,
    availableMinutes: g.available,
    bookedMinutes: f[I.booked],
    occupiedMinutes: f[I.occupied],
    releasedMinutes: f[I.released],
    bookings: f[I.bookings],
    checkIns: f[I.check_ins],
    noShows: f[I.no_shows],
    cancellations: f[I.cancellations],
    walkIns: f[I.walk_ins],
    utilisation: ratio(f[I.booked], g.available),
    occupancy: ratio(f[I.occupied], g.available),
    noShowRate: ratio(f[I.no_shows], g.reached),
  };
}
