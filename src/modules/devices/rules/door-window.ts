/**
 * Door access in a booking's window (pure). A booking at an asset with door devices
 * gives its participants access on those doors from the check-in window before the
 * start (`preStartMinutes`; -1: from the start of the booking's local day) to the end
 * of the booking. Cleaning time is never part of it. Only bookings that are `active`
 * or `checked-in` hold a window; unpaid, cancelled, done and rejected ones hold none.
 */
import { DateTime } from 'luxon';

/** What a booking's door window is computed from (the booking writer's door facts, structurally). */
export interface DoorWindowFacts {
  timeZone: string;
  preStartMinutes: number;
  status: string;
  /** The times held: a single booking's window, or a series' remaining occurrences. */
  windows: readonly { start: number; end: number }[];
}

/** A validity window on a device (epoch ms): from `from` (inclusive) until `until` (exclusive). */
export interface AccessWindow {
  from: number;
  until: number;
}

const HOLDING = new Set(['active', 'checked-in']);

/** The start of the local day of `ms` in `zone`. */
function localDayStart(ms: number, zone: string): number {
  return DateTime.fromMillis(ms, { zone }).startOf('day').toMillis();
}

/** When access opens for a booking starting at `start`. */
export function accessOpensAt(start: number, preStartMinutes: number, timeZone: string): number {
  return preStartMinutes < 0 ? localDayStart(start, timeZone) : start - preStartMinutes * 60_000;
}

/**
 * The window a booking's participants hold at `now`: that of the first held time whose
 * end is after `now`, or null (a status that holds nothing, or every time over).
 */
export function doorWindow(facts: DoorWindowFacts, now: number): AccessWindow | null {
  if (!HOLDING.has(facts.status)) return null;
  const next = [...facts.windows].sort((a, b) => a.start - b.start).find((w) => w.end > now && w.end > w.start);
  if (!next) return null;
  return { from: accessOpensAt(next.start, facts.preStartMinutes, facts.timeZone), until: next.end };
}

/**
 * Of several windows one user holds on one device, the one to set on the device at
 * `now`: the current or next one (earliest start among those not over), with every
 * window that overlaps or touches it merged into it. Null when all are over.
 */
export function windowToSet(windows: readonly AccessWindow[], now: number): AccessWindow | null {
  const live = windows.filter((w) => w.until > now && w.until > w.from).sort((a, b) => a.from - b.from || a.until - b.until);
  const first = live[0];
  if (!first) return null;
  let merged = { ...first };
  for (const w of live.slice(1)) {
    if (w.from > merged.until) break;
    merged = { from: merged.from, until: Math.max(merged.until, w.until) };
  }
  return merged;
}

/** Whether two windows (or their absence) are the same. */
export function sameWindow(a: AccessWindow | null, b: AccessWindow | null): boolean {
  return a === b || (!!a && !!b && a.from === b.from && a.until === b.until);
}
