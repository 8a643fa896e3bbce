/**
 * Asset `config` (rooms and desks): the meeting-timing defaults and the
 * interpretation of its wall-clock times as minutes of a local day. The shape
 * itself is the contract's (src/contract/asset-config.ts).
 * Pure: no I/O, no clock. See api-spec "Asset `config`".
 */
import type { AssetConfig, DayConfig, MeetingConfig, TimeRange } from '../../../contract/asset-config.js';

export type { AssetConfig, DayConfig, MeetingConfig, TimeRange };

export type Weekday = 'Mon' | 'Tue' | 'Wed' | 'Thu' | 'Fri' | 'Sat' | 'Sun';

/** ISO order: index 0 = Monday ... 6 = Sunday. */
export const WEEKDAYS: readonly Weekday[] = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

export type ResolvedMeetingConfig = Required<MeetingConfig>;

export const MEETING_CONFIG_DEFAULTS: Readonly<ResolvedMeetingConfig> = {
  preStartMinutes: 15,
  postStartWarnMinutes: 10,
  postStartExpireMinutes: 15,
  preEndMinutes: 15,
};

/** Integers >= -1 are taken as configured; anything else (absent, null, junk) means the default. */
function tick(value: unknown, fallback: number): number {
  return Number.isInteger(value) && (value as number) >= -1 ? (value as number) : fallback;
}

/** All four meetingConfig ticks of an asset, with the spec defaults filled in. */
export function resolveMeetingConfig(cfg: AssetConfig | null | undefined): ResolvedMeetingConfig {
  const mc: MeetingConfig = cfg?.meetingConfig ?? {};
  const d = MEETING_CONFIG_DEFAULTS;
  return {
    preStartMinutes: tick(mc.preStartMinutes, d.preStartMinutes),
    postStartWarnMinutes: tick(mc.postStartWarnMinutes, d.postStartWarnMinutes),
    postStartExpireMinutes: tick(mc.postStartExpireMinutes, d.postStartExpireMinutes),
    preEndMinutes: tick(mc.preEndMinutes, d.preEndMinutes),
  };
}

// ---------------------------------------------------------------------------
// Wall-clock interpretation. All values are minutes since local midnight;
// ranges are half-open [start, end), and 1440 means "until midnight".
// ---------------------------------------------------------------------------

/** Asset statuses that can never be booked (rooms: inactive; desks: inactive or suspended). */
export function isClosedStatus(kind: 'room' | 'desk', status: string): boolean {
  return status === 'inactive' || (kind === 'desk' && status === 'suspended');
}

export const MINUTES_PER_DAY = 1440;

/** A break in minutes, with the config entry it came from (for messages). */
export interface BreakMinutes {
  start: number;
  end: number;
  source: TimeRange;
}

/** One day's operating hours in minutes: open [open, close) minus breaks. */
export interface DayHours {
  open: number;
  close: number;
  breaks: BreakMinutes[];
}

const TIME_RE = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;

interface ParsedTime {
  minutes: number;
  /** True for the end-of-day spellings "24:00[:00]" and "23:59:59". */
  endOfDay: boolean;
}

/** "HH:mm[:ss]" -> minutes since midnight (seconds truncated), or null if malformed. */
function parseTime(text: unknown): ParsedTime | null {
  if (typeof text !== 'string') return null;
  const m = TIME_RE.exec(text.trim());
  if (!m) return null;
  const [h, min, sec] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (min > 59 || sec > 59 || h > 24 || (h === 24 && (min > 0 || sec > 0))) return null;
  const endOfDay = h === 24 || (h === 23 && min === 59 && sec === 59);
  return { minutes: h * 60 + min, endOfDay };
}

/** Minutes since midnight for "HH:mm[:ss]" (seconds truncated); null when malformed. */
export function parseTimeOfDay(text: unknown): number | null {
  return parseTime(text)?.minutes ?? null;
}

/**
 * Operating range [open, close). An end of "24:00:00", "23:59:59", "00:00:00",
 * or any end <= start, means until midnight (1440).
 */
function parseOpenRange(range: TimeRange | undefined): { open: number; close: number } | null {
  const start = parseTime(range?.start);
  const end = parseTime(range?.end);
  if (!start || !end || start.minutes >= MINUTES_PER_DAY) return null;
  const close = end.endOfDay || end.minutes <= start.minutes ? MINUTES_PER_DAY : end.minutes;
  return { open: start.minutes, close };
}

/**
 * A break [start, end). End "24:00:00", "23:59:59" or "00:00:00" means midnight;
 * any other end <= start makes an empty break (blocks nothing).
 * Returns undefined when malformed (the caller then closes the day).
 */
function parseBreak(range: TimeRange): BreakMinutes | null | undefined {
  const start = parseTime(range?.start);
  const end = parseTime(range?.end);
  if (!start || !end || start.minutes >= MINUTES_PER_DAY) return undefined;
  const endMin = end.endOfDay || end.minutes === 0 ? MINUTES_PER_DAY : end.minutes;
  return endMin > start.minutes ? { start: start.minutes, end: endMin, source: range } : null;
}

function parseDayConfig(day: DayConfig | undefined | null): DayHours | null {
  if (!day) return null;
  const hours = parseOpenRange(day.availableTime);
  if (!hours) return null; // malformed hours: fail closed
  const breaks: BreakMinutes[] = [];
  for (const range of day.breakTimes ?? []) {
    const b = parseBreak(range);
    if (b === undefined) return null; // malformed break: fail closed
    if (b) breaks.push(b);
  }
  return { ...hours, breaks };
}

function legacyHours(cfg: AssetConfig): DayHours {
  const start = cfg.start ?? '00:00:00';
  const end = cfg.end ?? '24:00:00';
  const hours = parseOpenRange({ start, end });
  return hours ? { ...hours, breaks: [] } : { open: 0, close: 0, breaks: [] };
}

/**
 * Operating hours of the asset on a given weekday, or null when it is not bookable that day.
 * dayConfig (when present) is the source of truth and a missing weekday means closed;
 * otherwise legacy start/end apply to every day; with neither the day is 00:00-24:00.
 */
export function dayHours(cfg: AssetConfig | null | undefined, weekday: Weekday): DayHours | null {
  if (cfg?.dayConfig != null) return parseDayConfig(cfg.dayConfig[weekday]);
  if (cfg?.start != null || cfg?.end != null) {
    const h = legacyHours(cfg);
    return h.close > h.open ? h : null;
  }
  return { open: 0, close: MINUTES_PER_DAY, breaks: [] };
}

/**
 * Whether a new booking starts checked in: its asset needs no check-in
 * (postStartExpireMinutes 0) and it is made inside the check-in window.
 */
export function checkedInAtCreate(cfg: AssetConfig | null | undefined, now: number, start: number): boolean {
  const m = resolveMeetingConfig(cfg);
  return m.postStartExpireMinutes === 0 && m.preStartMinutes >= 0 && now >= start - m.preStartMinutes * 60_000;
}
