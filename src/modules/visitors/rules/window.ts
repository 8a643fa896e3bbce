/**
 * An invite's validity window and its status (pure).
 */
import { nextLocalDayStart } from '../../../platform/time/local-day.js';
import type { InviteStatus } from '../../../contract/visitors.js';

/**
 * When an invite stops admitting: the given end, or, for a null end, the end of
 * the property-local day the visit starts on (the next local midnight, in the
 * project's IANA zone; a day of a DST change is 23 or 25 hours long).
 */
export function validUntil(startMs: number, endMs: number | null, zone: string): number {
  if (endMs !== null) return endMs;
  return nextLocalDayStart(startMs, zone);
}

export interface InviteFacts {
  startAt: number;
  /** validUntil (exclusive). */
  endAt: number;
  cancelledAt: number | null;
  /** Entries recorded so far. */
  entries: number;
}

/** cancelled, else checked-in once anyone entered, else expired from validUntil on, else invited. */
export function inviteStatus(i: InviteFacts, now: number): InviteStatus {
  if (i.cancelledAt !== null) return 'cancelled';
  if (i.entries > 0) return 'checked-in';
  if (now >= i.endAt) return 'expired';
  return 'invited';
}

export type ScanDecision = { granted: true } | { granted: false; reason: 'cancelled' | 'expired' | 'not-yet-valid' };

/** Whether a scan at `now` lets the invite's visitor in; valid from startAt (inclusive) to endAt (exclusive). */
export function scanDecision(i: Pick<InviteFacts, 'startAt' | 'endAt' | 'cancelledAt'>, now: number): ScanDecision {
  if (i.cancelledAt !== null) return { granted: false, reason: 'cancelled' };
  if (now >= i.endAt) return { granted: false, reason: 'expired' };
  if (now < i.startAt) return { granted: false, reason: 'not-yet-valid' };
  return { granted: true };
}

/**
 * Which of several invites matching one scan (a plate reused over time, or an old
 * code) the scan is about: one valid now; else the next one to become valid;
 * else the most recent (latest start). Undefined when there are none.
 */
export function pickInvite<T extends Pick<InviteFacts, 'startAt' | 'endAt' | 'cancelledAt'>>(
  candidates: readonly T[],
  now: number,
): T | undefined {
  const valid = candidates.filter((c) => scanDecision(c, now).granted).sort((a, b) => a.endAt - b.endAt);
  if (valid[0]) return valid[0];
  const upcoming = candidates.filter((c) => c.cancelledAt === null && c.startAt > now).sort((a, b) => a.startAt - b.startAt);
  if (upcoming[0]) return upcoming[0];
  return [...candidates].sort((a, b) => b.startAt - a.startAt)[0];
}
