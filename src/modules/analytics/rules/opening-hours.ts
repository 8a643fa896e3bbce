/**
 * Available time of an asset: its opening hours (dayConfig, or the legacy start/end, read by the
 * booking rules' `dayHours`) minus breaks, as local-minute intervals per ISO weekday, and the
 * instants those intervals cover on a given local day (DST-correct: a day's 00:00-24:00 is 23 or
 * 25 hours on a change day). An asset's hours are recorded per local day they took effect
 * (`HoursVersion`), so a change of hours does not rewrite the past. Pure.
 */
import type { IANAZone } from 'luxon';
import { dayHours, WEEKDAYS, type AssetConfig } from '../../booking/rules/asset-config.js';
import { isClosedStatus } from '../../booking/rules/asset-config.js';
import { instantAtLocalTime } from '../../../platform/time/wall-clock.js';

/** Per ISO weekday (index 0 = Monday), the open [from, to) intervals in local minutes, breaks taken out. */
export type WeekHours = [number, number][][];

/** An asset's hours, zone and status from local day `fromDay` (a day number) on. */
export interface HoursVersion {
  fromDay: number;
  hours: WeekHours;
  timezone: string;
  active: boolean;
}

/** The open intervals of each weekday of a config. */
export function weekHours(config: AssetConfig | null | undefined): WeekHours {
  return WEEKDAYS.map((wd) => {
    const h = dayHours(config, wd);
    if (!h) return [];
    const out: [number, number][] = [];
    let from = h.open;
    const breaks = [...h.breaks].sort((a, b) => a.start - b.start);
    for (const b of breaks) {
      const bs = Math.max(b.start, h.open);
      const be = Math.min(b.end, h.close);
      if (be <= bs) continue;
      if (bs > from) out.push([from, bs]);
      from = Math.max(from, be);
    }
    if (h.close > from) out.push([from, h.close]);
    return out;
  });
}

/** Whether an asset of this kind and status counts as available. */
export function countsAsActive(kind: 'room' | 'desk', status: string): boolean {
  return !isClosedStatus(kind, status);
}

/** The version in effect on `day` (versions sorted by fromDay), or null before the first. */
export function versionOn(versions: readonly HoursVersion[], day: number): HoursVersion | null {
  let found: HoursVersion | null = null;
  for (const v of versions) {
    if (v.fromDay <= day) found = v;
    else break;
  }
  return found;
}

/** Instants [start, end) that the open intervals of `hours` cover on local `day` in `zone`. */
export function openInstants(hours: WeekHours, zone: IANAZone, day: number, weekday: number): [number, number][] {
  const out: [number, number][] = [];
  for (const [from, to] of hours[weekday]) {
    const a = instantAtLocalTime(zone, day, from);
    const b = instantAtLocalTime(zone, day, to);
    if (b > a) out.push([a, b]);
  }
  return out;
}

/** A stable text of a version's content (hours, zone, status), to tell a real change from a re-save. */
export function versionSignature(v: Pick<HoursVersion, 'hours' | 'timezone' | 'active'>): string {
  return JSON.stringify([v.hours, v.timezone, v.active]);
}
