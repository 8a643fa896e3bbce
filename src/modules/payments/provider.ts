/**
 * Port to a payment provider, and the sandbox provider used by default. Stripe
 * (providers/stripe.ts) and Opn Payments (providers/opn.ts) implement the same
 * calls; the payment service never knows which one it holds. Events a provider
 * posts come back through `verifyEvent` and the payment inbox, exactly like the
 * sandbox's settle.
 */

import type { Clock } from '../../platform/clock/clock.js';

/** Payment methods a provider account may offer (site document `paymentProviders[].methods`). */
export type PaymentMethod = 'promptpay' | 'card';

/** A project's provider account as the site document set it, secrets opened (never logged). */
export interface ProviderAccount {
  /** The `payment_providers` row id (`providerId` of /payments/webhooks/{providerId}). */
  id: string;
  provider: 'stripe' | 'opn';
  secretKey: string;
  webhookSecret: string;
  methods: PaymentMethod[];
  /** Another host for the provider's API (a stand-in or mock server); null: the provider's own. */
  apiBaseUrl: string | null;
}

export interface ProviderDeps {
  /** Real time (signature tolerances; never the sandbox clock). */
  realClock: Clock;
  /** How long one call to the provider may take before it counts as unavailable. */
  timeoutMs: number;
}

/** Builds the adapter of an account (providers/stripe.ts, providers/opn.ts). */
export type ProviderFactory = (account: ProviderAccount, deps: ProviderDeps) => PaymentProvider;

export interface CheckoutRequest {
  paymentId: string;
  meetingId: string;
  /** In minor units (THB × 100). */
  amountMinor: number;
  /** ISO 4217, upper case as stored (e.g. THB); an adapter lower-cases it where its API wants that. */
  currency: string;
  /** The invoice number. */
  description: string;
  methods: PaymentMethod[];
  /** Derived from the payment id: the same key on every retry of this create, so it never charges twice. */
  idempotencyKey: string;
  /** The payer's email where known (Stripe's PromptPay wants one on the payment method). */
  payerEmail?: string;
  /** Service time the payment lapses (epoch ms); a provider object may be set to expire then. */
  expiresAt: number;
}

/** What the payment page shows from the provider's answer. Stored as JSON with the payment. */
export interface CheckoutDisplay {
  /** PromptPay: the EMVCo payload to draw as a QR (Stripe gives it), or the provider's QR image fetched by the service (Opn). */
  promptpay?: { payload?: string; image?: { contentType: string; base64: string } };
  /** Card: the browser needs the provider's script with this publishable key (absent: no card on the page). */
  card?: { scriptOrigin: string };
}

export interface Checkout {
  /** The provider's id of the payment object (Stripe PaymentIntent `pi_…`, Opn charge `chrg_…`). */
  ref: string;
  display: CheckoutDisplay;
}

/** A provider payment object's state, read from the provider's API. */
export type ProviderPaymentState = 'pending' | 'succeeded' | 'failed' | 'cancelled';

export interface ProviderPayment {
  ref: string;
  state: ProviderPaymentState;
  amountMinor: number;
  /** Upper case. */
  currency: string;
  /** Our payment id from the object's metadata, when it carries one. */
  paymentId?: string;
}

export interface ProviderRefund {
  /** The provider's id of the refund (`re_…`, `rfnd_…`). */
  ref: string;
  /** pending: accepted, not finished (a PromptPay refund may wait for the payer's bank details). */
  status: 'pending' | 'succeeded' | 'failed';
}

/** A provider event whose signature verified. */
export interface VerifiedEvent {
  /** The provider's event id (the dedupe key: a repeated id changes nothing). */
  eventId: string;
  type: string;
  /** The payment object it is about (PaymentIntent or charge id), if any. */
  ref?: string;
  /**
   * What it means for our payment: settle (paid), fail (an attempt failed), or
   * ignore (anything else, acknowledged). An adapter that must re-read the object
   * before acting (Opn) has already done so.
   */
  outcome: 'settle' | 'fail' | 'ignore';
  /** A refund it reports on, if any. */
  refund?: ProviderRefund;
}

/** The provider could not be reached or answered 5xx/429/timeout: try again later (503 KS234 at create). */
export class ProviderUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 30,
  ) {
    super(message);
    this.name = 'ProviderUnavailableError';
  }
}

/** The provider refused the request (4xx other than 429): retrying the same request will not help. */
export class ProviderRefusedError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ProviderRefusedError';
  }
}

/** An event whose signature is missing or does not verify (400, nothing changes). */
export class BadSignatureError extends Error {
  constructor(message = 'The event signature is missing or does not verify') {
    super(message);
    this.name = 'BadSignatureError';
  }
}

export interface PaymentProvider {
  /** sandbox | stripe | opn */
  readonly name: string;
  /** Creates the provider's payment object for a checkout; idempotent on `idempotencyKey`. */
  createCheckout(req: CheckoutRequest): Promise<Checkout>;
  /** Reads a payment object's current state from the provider (reconciliation; Opn's events). */
  retrieve(ref: string): Promise<ProviderPayment>;
  /** Cancels a payment object that was not paid. Cancelling one already cancelled or expired is not an error. */
  void(ref: string): Promise<void>;
  /** Returns money of a paid object; idempotent on `idempotencyKey`. */
  refund(ref: string, amountMinor: number, idempotencyKey: string): Promise<ProviderRefund>;
  /** Re-reads a refund (one the provider answered as pending). */
  retrieveRefund(paymentRef: string, refundRef: string): Promise<ProviderRefund>;
  /**
   * Verifies a posted event over its raw bytes and says what it means. Throws
   * BadSignatureError for a missing or wrong signature (the body is not trusted
   * before that).
   */
  verifyEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): Promise<VerifiedEvent>;
}

/** Takes every call and moves no money: payments settle or fail only through the sandbox routes or the page's Pay button. */
export class SandboxProvider implements PaymentProvider {
  readonly name = 'sandbox';

  async createCheckout(p: CheckoutRequest): Promise<Checkout> {
    return { ref: `sbx_${p.paymentId}`, display: {} };
  }

  async retrieve(ref: string): Promise<ProviderPayment> {
    // The sandbox's money moves only through the inbox: it never knows more than the service does.
    return { ref, state: 'pending', amountMinor: 0, currency: '' };
  }

  async void(): Promise<void> {}

  async refund(ref: string): Promise<ProviderRefund> {
    return { ref: `sbx_re_${ref}`, status: 'succeeded' };
  }

  async retrieveRefund(_paymentRef: string, refundRef: string): Promise<ProviderRefund> {
    return { ref: refundRef, status: 'succeeded' };
  }

  async verifyEvent(): Promise<VerifiedEvent> {
    throw new BadSignatureError('The sandbox provider takes no posted events');
  }
}
