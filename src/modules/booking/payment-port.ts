/**
 * Port: what the booking module needs from payments, without depending on it.
 * The payments module implements it; `services.ts` plugs it in.
 */
import type { Db } from '../../platform/db/db.js';

/** What a Meeting shows of its payment (`payment` field). */
export interface PaymentSnapshot {
  paymentId: string;
  invoiceNo: string;
  amount: number;
  summary: { subtotal: number; total: number; discounts: { code: string; value: number; name: string }[] };
  webPaymentUrl?: string;
  webPaymentQr?: string;
}

/** One entry of a Meeting's `billingSummaries`. */
export interface BillingEntry {
  kind: string;
  payment_id: string;
  amount: number;
  total: number;
  invoice_no: string;
  status: string;
  expiredAt: string;
}

export interface PromoCode {
  id: string;
  code: string;
  name: string;
  percentOff: number | null;
  amountOff: number | null;
  active: boolean;
  validFrom: number | null;
  validUntil: number | null;
  maxUses: number | null;
  usedCount: number;
}

export interface OpenPayment {
  meetingId: string;
  projectId: string;
  /** `checkout` (self-service, with a payment page), `quote` (back-office hold), `extension` (the difference of a PATCH). */
  kind: 'checkout' | 'quote' | 'extension';
  currency: string;
  /** Amount due in minor units, and the summary in major units. */
  amountMinor: number;
  summary: PaymentSnapshot['summary'];
  expiresAt: number;
  /** Back-office holds: when to send the second *_PAYMENT_DUE (about 75 % of the hold). */
  nudgeAt?: number | null;
  redirectUrl: string | null;
  promoCodeId: string | null;
  /** What a lapse restores (an extension's previous window and status). */
  restore?: unknown;
  /** The payer's email where known (a provider may want one with the payment). */
  payerEmail?: string | null;
  /** The provider's payment object made before the transaction (`PaymentDesk.prepare`); absent: made inside it. */
  prepared?: PreparedCheckout | null;
  now: number;
}

/**
 * A provider payment object made before the booking's transaction, so the slow call to
 * the provider never holds the asset's lock (or SQLite's write lock). Opened with the
 * booking, or discarded (its object cancelled) when the booking is not made.
 */
export interface PreparedCheckout {
  paymentId: string;
  /** The provider account (null: the sandbox). */
  accountId: string | null;
  provider: string;
  ref: string;
  /** JSON of what the page shows from the provider's answer, or null. */
  display: string | null;
}

/** What a provider payment object is made for, before the booking's transaction. */
export interface CheckoutToPrepare {
  projectId: string;
  meetingId: string;
  currency: string;
  amountMinor: number;
  expiresAt: number;
  payerEmail?: string | null;
  now: number;
}

export interface PaymentDesk {
  /** Makes the provider's payment object before the booking's transaction (503 KS234 when the provider is down or refuses). */
  prepare(p: CheckoutToPrepare): Promise<PreparedCheckout>;
  /** The booking was not made: the prepared object is cancelled at the provider (queued, never lost). */
  discard(prepared: PreparedCheckout): Promise<void>;
  /** A promo code of the project by its code (case-sensitive as stored), if any. */
  findPromo(projectId: string, code: string): Promise<PromoCode | undefined>;
  /** Takes one use of a promo code in the booking's transaction; false when it is used up (atomic across instances). */
  claimPromo(trx: Db, promoCodeId: string): Promise<boolean>;
  /** Opens a payment in the booking's transaction; returns what the Meeting shows and its billing entry. */
  open(trx: Db, p: OpenPayment): Promise<{ snapshot: PaymentSnapshot; billing: BillingEntry }>;
  /** Voids the booking's pending payments (cancel); returns the billing entries' new status by payment id. */
  voidPending(trx: Db, meetingId: string, now: number): Promise<string[]>;
  /** Refunds the booking's settled payments (a paid booking cancelled before its start); returns their ids. */
  refundSettled(trx: Db, meetingId: string, now: number): Promise<string[]>;
  /** The pending payment of a booking, if any (cancel checks a given paymentId against it). */
  pendingOf(meetingId: string, db?: Db): Promise<{ id: string } | undefined>;
  /** The newest payment of a booking as the console shows it (amount in major units, dueAt its deadline), if any. */
  paymentOf(meetingId: string): Promise<{ status: string; amount: number; currency: string; dueAt: number | null } | undefined>;
}

/** Billing entry statuses (the spec leaves them open; see docs/decisions.md). */
export type BillingStatus = 'pending' | 'paid' | 'voided' | 'expired' | 'refunded';

/**
 * A booking's billing entries with some payments' status changed. The same array comes back
 * when no entry changes, so a caller can tell a change by reference.
 */
export function billingWithStatus(entries: BillingEntry[], paymentIds: readonly string[], status: BillingStatus): BillingEntry[] {
  if (!entries.some((e) => paymentIds.includes(e.payment_id) && e.status !== status)) return entries;
  return entries.map((e) => (paymentIds.includes(e.payment_id) ? { ...e, status } : e));
}

/**
 * A PaymentDesk that forwards to one known only later: the payments module is built
 * after the booking module (it acts through booking's BookingChanges), while the
 * booking services hold their desk from the start.
 */
export function latePaymentDesk(desk: () => PaymentDesk): PaymentDesk {
  return {
    prepare: (p) => desk().prepare(p),
    discard: (prepared) => desk().discard(prepared),
    findPromo: (projectId, code) => desk().findPromo(projectId, code),
    claimPromo: (trx, promoCodeId) => desk().claimPromo(trx, promoCodeId),
    open: (trx, p) => desk().open(trx, p),
    voidPending: (trx, meetingId, now) => desk().voidPending(trx, meetingId, now),
    refundSettled: (trx, meetingId, now) => desk().refundSettled(trx, meetingId, now),
    pendingOf: (meetingId, db) => desk().pendingOf(meetingId, db),
    paymentOf: (meetingId) => desk().paymentOf(meetingId),
  };
}
