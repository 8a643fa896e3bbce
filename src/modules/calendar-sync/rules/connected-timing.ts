/**
 * Timing rules of connected room calendars: the window a full read covers, when a
 * subscription is renewed, how long a failed call waits, and the room's answer as
 * remembered on a link. Pure: every instant is passed in.
 */

const DAY = 86_400_000;
const MINUTE = 60_000;

/** The window of a full read: from a day ago to 400 days ahead (the feeds' horizon). */
export function syncWindow(now: number): { start: number; end: number } {
  return { start: now - DAY, end: now + 400 * DAY };
}

/** When a subscription expiring at `expiresAt` (made at `madeAt`) is renewed: a quarter of its life before, at most a day before. */
export function renewAt(madeAt: number, expiresAt: number): number {
  const life = Math.max(0, expiresAt - madeAt);
  return expiresAt - Math.min(DAY, Math.floor(life / 4));
}

/** Wait after the `attempts`-th failure in a row: 5 s doubling, at most 15 minutes; a provider's Retry-After when longer. */
export function retryDelayMs(attempts: number, retryAfterMs: number | null = null): number {
  const backoff = Math.min(15 * MINUTE, 5_000 * 2 ** Math.max(0, Math.min(attempts - 1, 20)));
  return Math.max(backoff, retryAfterMs ?? 0);
}

/** The answer the room gave an invitation, as remembered on its link (`written_hash`). */
export interface RoomAnswer {
  accepted: boolean;
  comment: string;
}

export function answerKey(a: RoomAnswer): string {
  return `${a.accepted ? 'accepted' : 'declined'}:${a.comment}`;
}

/** true (accepted), false (declined) or null (not answered yet) from a remembered answer. */
export function lastAnswerOf(key: string | null): boolean | null {
  if (!key) return null;
  if (key.startsWith('accepted:')) return true;
  if (key.startsWith('declined:')) return false;
  return null;
}
