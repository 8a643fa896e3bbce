/**
 * Calendar sync decisions that need no database (pure): whether a message is
 * newer than what was applied for its UID, where an invitation's times fall in
 * the property's zone, and the words the room answers with.
 */
import { DateTime } from 'luxon';

export type Verdict = 'apply' | 'duplicate' | 'stale';

/**
 * A message is a duplicate when it is byte-for-byte the last one applied (line
 * endings aside), stale when its SEQUENCE is lower than the last applied — or equal
 * with an older DTSTAMP (RFC 5546 3.7.1) — and otherwise applied.
 */
export function verdict(
  stored: { sequence: number; dtstamp: number | null; lastHash: string } | null,
  msg: { sequence: number; dtstamp: number | null; hash: string },
): Verdict {
  if (!stored) return 'apply';
  if (stored.lastHash === msg.hash) return 'duplicate';
  if (msg.sequence < stored.sequence) return 'stale';
  if (msg.sequence === stored.sequence && msg.dtstamp !== null && stored.dtstamp !== null && msg.dtstamp < stored.dtstamp) return 'stale';
  return 'apply';
}

/** When an iTIP event happens, as parsed (itip.ts's ItipEvent carries these). */
export interface EventTimes {
  /** Epoch ms (see floating below). */
  start: number;
  /** DTEND, or DTSTART + DURATION; timed event with neither: = start; all-day with neither: start + 1 day. */
  end: number;
  /** DTSTART;VALUE=DATE. */
  allDay: boolean;
  /** All-day only: 'YYYY-MM-DD' of DTSTART and of DTEND (exclusive). */
  startDate: string | null;
  endDate: string | null;
  /** True when DTSTART has neither a UTC 'Z' nor a TZID (floating local time); start/end were then computed as if UTC. */
  floating: boolean;
  /** Floating or all-day: the wall-clock DTSTART / DTEND as 'YYYY-MM-DDTHH:mm:ss' so the caller can place it in the property's zone. */
  startLocal: string | null;
  endLocal: string | null;
}

/**
 * The instants an event covers: timed events as written (UTC or their TZID),
 * floating times as wall-clock time in the property's zone, all-day events from
 * local midnight of the first day to local midnight after the last.
 */
export function eventWindow(e: EventTimes, timeZone: string): { start: number; end: number } {
  if (e.allDay && e.startDate) {
    const start = DateTime.fromISO(e.startDate, { zone: timeZone }).startOf('day');
    const end = e.endDate ? DateTime.fromISO(e.endDate, { zone: timeZone }).startOf('day') : start.plus({ days: 1 });
    return { start: start.toMillis(), end: end.toMillis() };
  }
  if (e.floating && e.startLocal) {
    const start = DateTime.fromISO(e.startLocal, { zone: timeZone }).toMillis();
    const end = e.endLocal ? DateTime.fromISO(e.endLocal, { zone: timeZone }).toMillis() : start + (e.end - e.start);
    return { start, end };
  }
  return { start: e.start, end: e.end };
}

/** "1 Dec 2026 10:00–11:00" in the property's zone. */
export function describeWindow(w: { start: number; end: number }, timeZone: string): string {
  const s = DateTime.fromMillis(w.start, { zone: timeZone }).setLocale('en-US');
  const e = DateTime.fromMillis(w.end, { zone: timeZone }).setLocale('en-US');
  const sameDay = s.hasSame(e, 'day');
  return sameDay
    ? `${s.toFormat('d MMM yyyy HH:mm')}–${e.toFormat('HH:mm')}`
    : `${s.toFormat('d MMM yyyy HH:mm')} – ${e.toFormat('d MMM yyyy HH:mm')}`;
}

export const REASONS = {
  removed: 'The room was removed from the invitation',
  roomDeclined: "The invitation was declined in the room's calendar",
  deleted: 'The organizer deleted the event from their calendar',
  noOrganizer: 'The invitation names no organizer',
  seriesChange: 'Changes to a whole recurring series are not applied: the series keeps its times. Cancel it and send a new invitation.',
  ended: 'The booking has already ended',
} as const;
