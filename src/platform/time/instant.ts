/**
 * The one reader of instants written in requests. Both the `date-time` format the
 * HTTP validator checks (registered in app.ts) and `parseInstant`, which the services
 * call on the validated text, use the same grammar, so a value the validator lets
 * through always parses to a finite epoch millisecond:
 *
 *   YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM)
 *
 * - an explicit offset is required (`Z` or ±HH:MM);
 * - the date is a real calendar date (no 30 February), and the instant lies from
 *   1970-01-01T00:00Z up to the end of 9998 (UTC): the year 9999 is left as headroom,
 *   so a span the service derives from an instant (a calendar's default week, a
 *   payment window) still prints as an ordinary ISO date-time;
 * - hour 00–23, minute 00–59, second 00–59: a leap second (`:60`) is refused, since
 *   an epoch-millisecond clock cannot represent it;
 * - seconds may be left out (ISO 8601 allows `12:00+07:00`; the service truncates
 *   seconds anyway).
 */
import { errors } from '../errors.js';

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export const MIN_INSTANT_YEAR = 1970;
export const MAX_INSTANT_YEAR = 9999;
/** The first instant refused: 9999-01-01T00:00Z (see above). */
const LATEST_INSTANT_MS = Date.UTC(9999, 0, 1);

/** What an instant must look like, for messages and the OpenAPI description. */
export const INSTANT_TEXT =
  'an ISO 8601 date-time with a timezone offset (YYYY-MM-DDTHH:MM[:SS[.sss]] then Z or ±HH:MM; a real date from 1970 to 9998, no leap second)';

const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/** Epoch milliseconds of `text`, or undefined when it is not a valid instant. */
export function tryParseInstant(text: unknown): number | undefined {
  if (typeof text !== 'string' || text.length > 40) return undefined;
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  if (year < MIN_INSTANT_YEAR || year > MAX_INSTANT_YEAR) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const instant = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMinutes * 60_000;
  return instant >= 0 && instant < LATEST_INSTANT_MS ? instant : undefined;
}

/** True when `text` is an instant `parseInstant` accepts (the `date-time` format). */
export const isInstant = (text: unknown): boolean => tryParseInstant(text) !== undefined;

/**
 * Epoch milliseconds of a request's instant. Validation has already checked the
 * text; a value that slipped past it is still a 400 KS001, never a NaN.
 */
export function parseInstant(text: string, field = 'date-time'): number {
  const ms = tryParseInstant(text);
  if (ms === undefined) throw errors.validation([`${field} must be ${INSTANT_TEXT}`]);
  return ms;
}
