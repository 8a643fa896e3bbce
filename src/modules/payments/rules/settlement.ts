/**
 * What a settlement does (pure): the payer's money arrived for a payment, and
 * the booking is as read under its asset's lock.
 *
 * - `already-settled`: paid before; nothing changes.
 * - `refuse`: voided or refunded already; the money cannot be taken (409).
 * - `settle`: pending, booking still unpaid, and either inside its deadline or
 *   `confirmedByProvider` (a real provider says the money arrived: a late event or
 *   the check made before a lapse; a booking is never lapsed while its provider
 *   says it was paid, docs/decisions.md).
 * - `refund`: anything else. The deadline passed (the booking lapsed, or will lapse
 *   in the same transaction when the lapse job has not got to it yet: `lapseFirst`),
 *   or the booking is no longer waiting for this money. A booking in a final state
 *   never comes back (docs/decisions.md), so the money goes back.
 */
export type Settlement =
  { action: 'already-settled' } | { action: 'refuse'; status: string } | { action: 'settle' } | { action: 'refund'; lapseFirst: boolean };

export function settlementDecision(
  p: { status: string; expiresAt: number },
  meetingStatus: string,
  now: number,
  confirmedByProvider = false,
): Settlement {
  if (p.status === 'settled') return { action: 'already-settled' };
  if (p.status === 'voided' || p.status === 'refunded') return { action: 'refuse', status: p.status };
  const inTime = now < p.expiresAt;
  if (p.status === 'pending' && (inTime || confirmedByProvider) && meetingStatus === 'unpaid') return { action: 'settle' };
  return { action: 'refund', lapseFirst: p.status === 'pending' && !inTime };
}
