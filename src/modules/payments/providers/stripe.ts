/**
 * Stripe behind the PaymentProvider port, through the official `stripe` library.
 * A PaymentIntent per checkout (PromptPay confirmed server-side so its QR payload
 * comes back in the create's answer), cancel to void, refunds, and events verified
 * over the raw bytes with the library's default tolerance on real time.
 */

import Stripe from 'stripe';
import {
  BadSignatureError,
  ProviderRefusedError,
  ProviderUnavailableError,
  type Checkout,
  type CheckoutRequest,
  type PaymentProvider,
  type ProviderAccount,
  type ProviderDeps,
  type ProviderFactory,
  type ProviderPayment,
  type ProviderRefund,
  type VerifiedEvent,
} from '../provider.js';

/** The API version every request pins (the one stripe@23.1.0 is typed for). */
export const STRIPE_API_VERSION = '2026-10-28.endive' as const;

/**
 * The email Stripe's PromptPay payment method requires when the payer gave none.
 * Stripe only stores it on the payment method (no receipt goes to it: we send no receipt_email).
 */
export const PROMPTPAY_PLACEHOLDER_EMAIL = 'payer@promptpay.invalid';

const CARD_SCRIPT_ORIGIN = 'https://js.stripe.com';

type StripeErrorLike = InstanceType<typeof Stripe.errors.StripeError>;

function clientConfig(account: ProviderAccount, deps: ProviderDeps): ConstructorParameters<typeof Stripe>[1] {
  const config: NonNullable<ConstructorParameters<typeof Stripe>[1]> = {
    apiVersion: STRIPE_API_VERSION,
    timeout: deps.timeoutMs,
    // One retry after a connection error or 5xx; it reuses the request's idempotency key.
    maxNetworkRetries: 1,
    telemetry: false,
  };
  if (account.apiBaseUrl) {
    const url = new URL(account.apiBaseUrl);
    const protocol = url.protocol === 'http:' ? 'http' : 'https';
    config.host = url.hostname;
    config.port = url.port || (protocol === 'http' ? 80 : 443);
    config.protocol = protocol;
  }
  return config;
}

/** A message safe to log: no secret key, nothing that looks like one. */
function scrub(message: string, secretKey: string): string {
  let out = secretKey ? message.split(secretKey).join('[redacted]') : message;
  out = out.replace(/\b(sk|rk|whsec)_[A-Za-z0-9_*]+/g, '[redacted]');
  return out;
}

function retryAfterSeconds(err: StripeErrorLike): number | undefined {
  const raw = err.headers?.['retry-after'];
  const n = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isFinite(n) && n > 0 ? Math.ceil(n) : undefined;
}

/** Maps anything the library throws to the port's errors. */
export function mapStripeError(err: unknown, secretKey: string, what: string): Error {
  if (err instanceof ProviderRefusedError || err instanceof ProviderUnavailableError) return err;
  if (!(err instanceof Stripe.errors.StripeError)) {
    const detail = err instanceof Error ? scrub(err.message, secretKey) : 'unknown error';
    return new ProviderUnavailableError(`Stripe ${what} failed: ${detail}`);
  }
  const status = err.statusCode;
  const detail = `Stripe ${what}: ${err.type}${status ? ` ${status}` : ''}${err.code ? ` ${err.code}` : ''}: ${scrub(err.message, secretKey)}`;
  const unavailable =
    err instanceof Stripe.errors.StripeConnectionError ||
    err instanceof Stripe.errors.StripeAPIError ||
    err instanceof Stripe.errors.StripeRateLimitError ||
    status === undefined ||
    status === 429 ||
    status >= 500;
  if (unavailable) return new ProviderUnavailableError(detail, retryAfterSeconds(err));
  return new ProviderRefusedError(detail, err.code ?? err.rawType ?? err.type);
}

function paymentState(status: string): ProviderPayment['state'] {
  if (status === 'succeeded') return 'succeeded';
  if (status === 'canceled') return 'cancelled';
  return 'pending';
}

function refundStatus(status: string | null | undefined): ProviderRefund['status'] {
  if (status === 'succeeded') return 'succeeded';
  if (status === 'failed' || status === 'canceled') return 'failed';
  return 'pending';
}

function idOf(v: string | { id: string } | null | undefined): string | undefined {
  if (!v) return undefined;
  return typeof v === 'string' ? v : v.id;
}

function createParams(req: CheckoutRequest): Stripe.PaymentIntentCreateParams {
  const params: Stripe.PaymentIntentCreateParams = {
    amount: req.amountMinor,
    currency: req.currency.toLowerCase(),
    // API 2026-09-30.endive and later (stripe@23) replaced `payment_method_types` on create with this;
    // the PaymentIntent still answers `payment_method_types`.
    allowed_payment_method_types: [...req.methods],
    description: req.description,
    metadata: { paymentId: req.paymentId, meetingId: req.meetingId },
  };
  if (req.methods.includes('promptpay')) {
    // Confirmed in the create itself: one idempotent call, no unconfirmed intent left behind
    // when a second call fails, and a replay answers the same QR.
    params.confirm = true;
    params.payment_method_data = {
      type: 'promptpay',
      billing_details: { email: req.payerEmail || PROMPTPAY_PLACEHOLDER_EMAIL },
    };
  }
  return params;
}

/** What an event's object says about our payment: the PaymentIntent it concerns and any refund. */
function eventSubject(event: Stripe.Event): { ref?: string; refund?: ProviderRefund } {
  const obj = event.data.object as unknown as {
    object?: string;
    id?: string;
    status?: string | null;
    payment_intent?: string | { id: string } | null;
  };
  if (obj.object === 'payment_intent') return { ref: obj.id };
  if (obj.object === 'refund' && obj.id) {
    return { ref: idOf(obj.payment_intent), refund: { ref: obj.id, status: refundStatus(obj.status) } };
  }
  return { ref: idOf(obj.payment_intent) };
}

function eventOutcome(type: string): VerifiedEvent['outcome'] {
  if (type === 'payment_intent.succeeded') return 'settle';
  if (type === 'payment_intent.payment_failed') return 'fail';
  return 'ignore';
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : headers[key];
  return Array.isArray(v) ? v[0] : v;
}

class StripeProvider implements PaymentProvider {
  readonly name = 'stripe';
  private readonly stripe: Stripe;

  constructor(
    private readonly account: ProviderAccount,
    private readonly deps: ProviderDeps,
  ) {
    this.stripe = new Stripe(account.secretKey, clientConfig(account, deps));
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw mapStripeError(err, this.account.secretKey, what);
    }
  }

  async createCheckout(req: CheckoutRequest): Promise<Checkout> {
    const pi = await this.call('create PaymentIntent', () =>
      this.stripe.paymentIntents.create(createParams(req), { idempotencyKey: req.idempotencyKey }),
    );
    const checkout: Checkout = { ref: pi.id, display: {} };
    if (req.methods.includes('promptpay')) {
      const payload = pi.next_action?.promptpay_display_qr_code?.data;
      checkout.display.promptpay = payload ? { payload } : {};
    }
    if (req.methods.includes('card')) checkout.display.card = { scriptOrigin: CARD_SCRIPT_ORIGIN };
    return checkout;
  }

  async retrieve(ref: string): Promise<ProviderPayment> {
    const pi = await this.call('retrieve PaymentIntent', () => this.stripe.paymentIntents.retrieve(ref));
    const out: ProviderPayment = {
      ref: pi.id,
      state: paymentState(pi.status),
      amountMinor: pi.amount,
      currency: pi.currency.toUpperCase(),
    };
    const paymentId = pi.metadata?.paymentId;
    if (paymentId) out.paymentId = paymentId;
    return out;
  }

  async void(ref: string): Promise<void> {
    try {
      await this.stripe.paymentIntents.cancel(ref);
      return;
    } catch (err) {
      const unexpectedState = err instanceof Stripe.errors.StripeError && err.code === 'payment_intent_unexpected_state';
      if (!unexpectedState) throw mapStripeError(err, this.account.secretKey, 'cancel PaymentIntent');
    }
    // Stripe refuses to cancel an intent that is already canceled or succeeded: say which.
    const current = await this.retrieve(ref);
    if (current.state === 'cancelled') return;
    if (current.state === 'succeeded') {
      throw new ProviderRefusedError(`Stripe cancel PaymentIntent ${ref}: it already succeeded`, 'already_succeeded');
    }
    throw new ProviderRefusedError(`Stripe cancel PaymentIntent ${ref}: not cancelable in its state`, 'payment_intent_unexpected_state');
  }

  async refund(ref: string, amountMinor: number, idempotencyKey: string): Promise<ProviderRefund> {
    const refund = await this.call('create refund', () =>
      this.stripe.refunds.create({ payment_intent: ref, amount: amountMinor }, { idempotencyKey }),
    );
    return { ref: refund.id, status: refundStatus(refund.status) };
  }

  async retrieveRefund(_paymentRef: string, refundRef: string): Promise<ProviderRefund> {
    const refund = await this.call('retrieve refund', () => this.stripe.refunds.retrieve(refundRef));
    return { ref: refund.id, status: refundStatus(refund.status) };
  }

  async verifyEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): Promise<VerifiedEvent> {
    const signature = headerValue(headers, 'stripe-signature');
    if (!signature) throw new BadSignatureError('The Stripe-Signature header is missing');
    let event: Stripe.Event;
    try {
      // Default tolerance (300 s), measured on real time: the sandbox clock never moves it.
      event = await this.stripe.webhooks.constructEventAsync(
        rawBody,
        signature,
        this.account.webhookSecret,
        undefined,
        undefined,
        this.deps.realClock.now(),
      );
    } catch {
      throw new BadSignatureError('The Stripe-Signature header does not verify');
    }
    const out: VerifiedEvent = { eventId: event.id, type: event.type, outcome: eventOutcome(event.type) };
    const { ref, refund } = eventSubject(event);
    if (ref) out.ref = ref;
    if (refund) out.refund = refund;
    return out;
  }
}

export const stripeProvider: ProviderFactory = (account, deps) => new StripeProvider(account, deps);
