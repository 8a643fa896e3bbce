/** Property-local calendar days (luxon), shared by the rules that cut time at local midnight. */
import { DateTime } from 'luxon';

/**
 * The first instant of the local day after the one holding `ms`: its midnight, or
 * 01:00 where the clocks skip midnight. (`startOf('day').plus({ days: 1 })` would
 * carry a skipped midnight's 01:00 into a following day that has a midnight.)
 */
export function nextLocalDayStart(ms: number, zone: string): number {
  const next = DateTime.fromMillis(ms, { zone }).plus({ days: 1 }).startOf('day');
  if (!next.isValid) throw new Error(`unknown time zone ${zone}`);
  return next.toMillis();
}
