/**
 * The Stripe adapter against the Stripe stand-in, through the official library
 * pointed at 127.0.0.1. No database.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/platform/clock/clock.js';
import {
  BadSignatureError,
  ProviderRefusedError,
  ProviderUnavailableError,
  type CheckoutRequest,
  type PaymentProvider,
  type ProviderAccount,
} from '../../src/modules/payments/provider.js';
import { PROMPTPAY_PLACEHOLDER_EMAIL, STRIPE_API_VERSION, stripeProvider } from '../../src/modules/payments/providers/stripe.js';
import { startStripeStandin, stripeDriver, type StripeStandin } from '../support/stripe-standin.js';

const SECRET_KEY = 'sk_test_51StandinSecretKeyDoNotLog0123456789';
const WEBHOOK_SECRET = 'whsec_standin_webhook_secret_0123456789';

let standin: StripeStandin;
let provider: PaymentProvider;

function account(over: Partial<ProviderAccount> = {}): ProviderAccount {
  return {
    id: 'prv_1',
    provider: 'stripe',
    secretKey: SECRET_KEY,
    webhookSecret: WEBHOOK_SECRET,
    methods: ['promptpay'],
    apiBaseUrl: standin.url,
    ...over,
  };
}

function checkout(over: Partial<CheckoutRequest> = {}): CheckoutRequest {
  return {
    paymentId: 'pay_abc123',
    meetingId: 'mtg_xyz789',
    amountMinor: 150_050,
    currency: 'THB',
    description: 'INV-2026-0042',
    methods: ['promptpay'],
    idempotencyKey: 'checkout-pay_abc123',
    payerEmail: 'payer@example.com',
    expiresAt: Date.UTC(2026, 10, 27),
    ...over,
  };
}

const posts = (path: string) => standin.requests.filter((r) => r.method === 'POST' && r.path === path);

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

async function paidIntent(): Promise<string> {
  const { ref } = await provider.createCheckout(checkout());
  standin.succeed(ref);
  return ref;
}

beforeEach(async () => {
  standin = await startStripeStandin({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
  provider = stripeProvider(account(), { realClock: systemClock, timeoutMs: 2_000 });
});

afterEach(async () => {
  await standin.close();
});

describe('Stripe adapter: checkout', () => {
  it('creates one PaymentIntent in minor units, thb, the methods, metadata, the idempotency key and the email', async () => {
    const out = await provider.createCheckout(checkout());
    const creates = posts('/v1/payment_intents');
    expect(creates).toHaveLength(1);
    const req = creates[0];
    expect(req.body).toMatchObject({
      amount: '150050',
      currency: 'thb',
      allowed_payment_method_types: ['promptpay'],
      description: 'INV-2026-0042',
      metadata: { paymentId: 'pay_abc123', meetingId: 'mtg_xyz789' },
      confirm: 'true',
      payment_method_data: { type: 'promptpay', billing_details: { email: 'payer@example.com' } },
    });
    expect(req.headers['idempotency-key']).toBe('checkout-pay_abc123');
    expect(req.headers['stripe-version']).toBe(STRIPE_API_VERSION);
    expect(req.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    const pi = standin.intent(out.ref)!;
    expect(out.ref).toMatch(/^pi_/);
    expect(pi).toMatchObject({ amount: 150050, currency: 'thb', status: 'requires_action', payment_method_types: ['promptpay'] });
  });

  it('answers the QR payload from next_action, never an image URL, and no card script for promptpay only', async () => {
    const out = await provider.createCheckout(checkout());
    const qr = standin.intent(out.ref)!.next_action!.promptpay_display_qr_code;
    expect(out.display).toEqual({ promptpay: { payload: qr.data } });
    expect(JSON.stringify(out)).not.toContain('qr.stripe.com');
  });

  it('a payer without an email gets the documented placeholder', async () => {
    await provider.createCheckout(checkout({ payerEmail: undefined }));
    expect(posts('/v1/payment_intents')[0].body).toMatchObject({
      payment_method_data: { billing_details: { email: PROMPTPAY_PLACEHOLDER_EMAIL } },
    });
  });

  it('card: no confirm, and the page is told the one script origin', async () => {
    const out = await provider.createCheckout(checkout({ methods: ['promptpay', 'card'] }));
    expect(out.display.card).toEqual({ scriptOrigin: 'https://js.stripe.com' });
    const cardOnly = await provider.createCheckout(checkout({ methods: ['card'], idempotencyKey: 'checkout-card' }));
    expect(cardOnly.display).toEqual({ card: { scriptOrigin: 'https://js.stripe.com' } });
    const body = posts('/v1/payment_intents')[1].body;
    expect(body.confirm).toBeUndefined();
    expect(body.allowed_payment_method_types).toEqual(['card']);
  });

  it('a retried create gives the same PaymentIntent, replayed by the idempotency key (no second charge)', async () => {
    const first = await provider.createCheckout(checkout());
    const second = await provider.createCheckout(checkout());
    expect(second).toEqual(first);
    expect(posts('/v1/payment_intents')).toHaveLength(2);
    expect(posts('/v1/payment_intents').map((r) => r.headers['idempotency-key'])).toEqual(['checkout-pay_abc123', 'checkout-pay_abc123']);
    expect(standin.intents().map((pi) => pi.id)).toEqual([first.ref]);
  });

  it('a 500 on the first try is retried by the library with the same key, and charges once', async () => {
    standin.failNext(500, { type: 'api_error', message: 'boom' });
    const out = await provider.createCheckout(checkout());
    const creates = posts('/v1/payment_intents');
    expect(creates).toHaveLength(2);
    expect(creates[0].headers['idempotency-key']).toBe(creates[1].headers['idempotency-key']);
    expect(standin.intents().map((pi) => pi.id)).toEqual([out.ref]);
  });
});

describe('Stripe adapter: retrieve, void, refund', () => {
  it('retrieve maps the states and reads our payment id from the metadata', async () => {
    const { ref } = await provider.createCheckout(checkout());
    expect(await provider.retrieve(ref)).toEqual({ ref, state: 'pending', amountMinor: 150050, currency: 'THB', paymentId: 'pay_abc123' });
    standin.failAttempt(ref);
    expect((await provider.retrieve(ref)).state).toBe('pending');
    standin.succeed(ref);
    expect((await provider.retrieve(ref)).state).toBe('succeeded');
    const other = await provider.createCheckout(checkout({ idempotencyKey: 'k2' }));
    await provider.void(other.ref);
    expect((await provider.retrieve(other.ref)).state).toBe('cancelled');
  });

  it('void cancels the intent; cancelling one already canceled is fine', async () => {
    const { ref } = await provider.createCheckout(checkout());
    await provider.void(ref);
    expect(standin.intent(ref)!.status).toBe('canceled');
    expect(posts(`/v1/payment_intents/${ref}/cancel`)).toHaveLength(1);
    await expect(provider.void(ref)).resolves.toBeUndefined();
    expect(posts(`/v1/payment_intents/${ref}/cancel`)).toHaveLength(2);
  });

  it('void of a succeeded intent is refused with already_succeeded (the service refunds)', async () => {
    const ref = await paidIntent();
    const err = await caught(provider.void(ref));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect((err as ProviderRefusedError).code).toBe('already_succeeded');
  });

  it('refund succeeded, with the idempotency key, and a replay answers the same refund', async () => {
    const ref = await paidIntent();
    const r = await provider.refund(ref, 150050, 'refund-pay_abc123');
    expect(r).toMatchObject({ status: 'succeeded' });
    expect(r.ref).toMatch(/^re_/);
    const req = posts('/v1/refunds')[0];
    expect(req.body).toEqual({ payment_intent: ref, amount: '150050' });
    expect(req.headers['idempotency-key']).toBe('refund-pay_abc123');
    expect(await provider.refund(ref, 150050, 'refund-pay_abc123')).toEqual(r);
  });

  it('refund pending, then retrieveRefund follows it to succeeded and to failed', async () => {
    standin.refundsPending(true);
    const ref = await paidIntent();
    const r = await provider.refund(ref, 1000, 'refund-1');
    expect(r.status).toBe('pending');
    expect(await provider.retrieveRefund(ref, r.ref)).toEqual({ ref: r.ref, status: 'pending' });
    standin.setRefundStatus(r.ref, 'requires_action');
    expect((await provider.retrieveRefund(ref, r.ref)).status).toBe('pending');
    standin.setRefundStatus(r.ref, 'succeeded');
    expect((await provider.retrieveRefund(ref, r.ref)).status).toBe('succeeded');
    standin.setRefundStatus(r.ref, 'failed');
    expect((await provider.retrieveRefund(ref, r.ref)).status).toBe('failed');
    standin.setRefundStatus(r.ref, 'canceled');
    expect((await provider.retrieveRefund(ref, r.ref)).status).toBe('failed');
  });
});

describe('Stripe adapter: events', () => {
  it('verifies a good event and says what it means', async () => {
    const { ref } = await provider.createCheckout(checkout());
    const paid = standin.signedEvent('payment_intent.succeeded', standin.succeed(ref));
    expect(await provider.verifyEvent(Buffer.from(paid.body), paid.headers)).toEqual({
      eventId: paid.event.id,
      type: 'payment_intent.succeeded',
      ref,
      outcome: 'settle',
    });
    const failed = standin.signedEvent('payment_intent.payment_failed', standin.intent(ref));
    expect((await provider.verifyEvent(Buffer.from(failed.body), failed.headers)).outcome).toBe('fail');
    const other = standin.signedEvent('payment_intent.created', standin.intent(ref));
    expect(await provider.verifyEvent(Buffer.from(other.body), other.headers)).toMatchObject({ outcome: 'ignore', ref });
  });

  it('refund events are ignored with the refund filled, about their PaymentIntent', async () => {
    standin.refundsPending(true);
    const ref = await paidIntent();
    const r = await provider.refund(ref, 500, 'rk');
    for (const type of ['refund.created', 'refund.updated', 'charge.refund.updated']) {
      const ev = standin.signedEvent(type, standin.setRefundStatus(r.ref, 'succeeded'));
      expect(await provider.verifyEvent(Buffer.from(ev.body), ev.headers)).toMatchObject({
        type,
        ref,
        outcome: 'ignore',
        refund: { ref: r.ref, status: 'succeeded' },
      });
    }
  });

  it('refuses a forged event (another secret)', async () => {
    const ev = standin.signedEvent('payment_intent.succeeded', { object: 'payment_intent', id: 'pi_x' }, { secret: 'whsec_forger' });
    await expect(provider.verifyEvent(Buffer.from(ev.body), ev.headers)).rejects.toBeInstanceOf(BadSignatureError);
  });

  it('refuses a missing header', async () => {
    const ev = standin.signedEvent('payment_intent.succeeded', { object: 'payment_intent', id: 'pi_x' });
    await expect(provider.verifyEvent(Buffer.from(ev.body), { 'content-type': 'application/json' })).rejects.toBeInstanceOf(
      BadSignatureError,
    );
  });

  it('refuses a body altered after signing', async () => {
    const ev = standin.signedEvent('payment_intent.payment_failed', { object: 'payment_intent', id: 'pi_x' });
    const altered = ev.body.replace('payment_intent.payment_failed', 'payment_intent.succeeded');
    expect(altered).not.toBe(ev.body);
    await expect(provider.verifyEvent(Buffer.from(altered), ev.headers)).rejects.toBeInstanceOf(BadSignatureError);
  });

  it('refuses a timestamp older than the default tolerance, on real time', async () => {
    const realNow = Math.floor(Date.now() / 1000);
    const old = standin.signedEvent('payment_intent.succeeded', { object: 'payment_intent', id: 'pi_x' }, { timestamp: realNow - 301 });
    await expect(provider.verifyEvent(Buffer.from(old.body), old.headers)).rejects.toBeInstanceOf(BadSignatureError);
    const recent = standin.signedEvent('payment_intent.succeeded', { object: 'payment_intent', id: 'pi_x' }, { timestamp: realNow - 200 });
    await expect(provider.verifyEvent(Buffer.from(recent.body), recent.headers)).resolves.toMatchObject({ outcome: 'settle' });
  });

  it('measures the tolerance on the real clock it is given', async () => {
    const realNow = Math.floor(Date.now() / 1000);
    const ev = standin.signedEvent('payment_intent.succeeded', { object: 'payment_intent', id: 'pi_x' }, { timestamp: realNow });
    const later = stripeProvider(account(), { realClock: new ManualClock((realNow + 3600) * 1000), timeoutMs: 2_000 });
    await expect(later.verifyEvent(Buffer.from(ev.body), ev.headers)).rejects.toBeInstanceOf(BadSignatureError);
  });
});

describe('Stripe adapter: errors', () => {
  it('the stand-in down (503) → ProviderUnavailableError', async () => {
    standin.setDown(true);
    const err = await caught(provider.createCheckout(checkout()));
    expect(err).toBeInstanceOf(ProviderUnavailableError);
  });

  it('connections reset → ProviderUnavailableError', async () => {
    standin.setDown(true, 'reset');
    await expect(provider.retrieve('pi_x')).rejects.toBeInstanceOf(ProviderUnavailableError);
  });

  it('429 with Retry-After → ProviderUnavailableError carrying it', async () => {
    standin.failNext(
      429,
      { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests' },
      { headers: { 'retry-after': '7' } },
    );
    const err = await caught(provider.retrieve('pi_x'));
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as ProviderUnavailableError).retryAfterSeconds).toBe(7);
  });

  it('a wrong secret key (401) → ProviderRefusedError, and no key in the message', async () => {
    const wrongKey = 'sk_test_51WrongKeyWrongKeyWrongKey9876';
    const wrong = stripeProvider(account({ secretKey: wrongKey }), { realClock: systemClock, timeoutMs: 2_000 });
    const err = await caught(wrong.createCheckout(checkout()));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect(err.message).not.toContain(wrongKey);
    expect(err.message).not.toContain('9876');
    expect(err.message).not.toMatch(/sk_test_/);
  });

  it('a 400 (idempotency key reused with another body) → ProviderRefusedError with its code', async () => {
    await provider.createCheckout(checkout());
    const err = await caught(provider.createCheckout(checkout({ amountMinor: 999 })));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect((err as ProviderRefusedError).code).toBe('idempotency_error');
  });

  it('a 404 of an unknown object → ProviderRefusedError resource_missing', async () => {
    const err = await caught(provider.retrieve('pi_nope'));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect((err as ProviderRefusedError).code).toBe('resource_missing');
  });

  it('no error message ever carries the secret key, even when the library would quote it', async () => {
    standin.failNext(400, { type: 'invalid_request_error', message: `bad key ${SECRET_KEY}` });
    standin.setDown(false);
    const err = await caught(provider.retrieve('pi_x'));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect(err.message).not.toContain(SECRET_KEY);
    expect(err.message).not.toContain('sk_test_');
    standin.setDown(true);
    const down = await caught(provider.createCheckout(checkout()));
    expect(`${down.message} ${String(down.stack)}`).not.toContain(SECRET_KEY);
  });
});

describe('Stripe stand-in (what the HTTP tests rely on)', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${standin.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET_KEY}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });

  it('replays an idempotent request with Idempotent-Replayed: true and refuses the key with another body', async () => {
    const body = 'amount=100&currency=thb&allowed_payment_method_types[0]=promptpay&metadata[paymentId]=p1';
    const a = await post('/v1/payment_intents', body, { 'idempotency-key': 'k1' });
    const b = await post('/v1/payment_intents', body, { 'idempotency-key': 'k1' });
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const pa = (await a.json()) as { id: string; metadata: unknown; payment_method_types: unknown };
    expect(((await b.json()) as { id: string }).id).toBe(pa.id);
    expect(pa).toMatchObject({ metadata: { paymentId: 'p1' }, payment_method_types: ['promptpay'] });
    const c = await post('/v1/payment_intents', 'amount=200&currency=thb', { 'idempotency-key': 'k1' });
    expect(c.status).toBe(400);
    expect(await c.json()).toMatchObject({ error: { type: 'idempotency_error' } });
  });

  it('checks the Bearer key and refuses payment_method_types on an endive API version', async () => {
    const wrong = await fetch(`${standin.url}/v1/payment_intents/pi_x`, { headers: { authorization: 'Bearer sk_test_nope' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const old = await post('/v1/payment_intents', 'amount=100&currency=thb&payment_method_types[0]=promptpay', {
      'stripe-version': STRIPE_API_VERSION,
    });
    expect(old.status).toBe(400);
    expect(await old.json()).toMatchObject({ error: { code: 'parameter_unknown', param: 'payment_method_types' } });
  });

  it('the scenario driver: pay, refunds and a foreign object', async () => {
    const driver = stripeDriver();
    const { url } = await driver.start();
    try {
      const p = stripeProvider(account({ apiBaseUrl: url, secretKey: driver.secretKey, webhookSecret: driver.webhookSecret }), {
        realClock: systemClock,
        timeoutMs: 2_000,
      });
      const { ref } = await p.createCheckout(checkout());
      driver.pay(ref);
      const paid = driver.paidEvent(ref);
      expect(await p.verifyEvent(Buffer.from(paid.body), paid.headers)).toMatchObject({ outcome: 'settle', ref });
      const forged = driver.forgedEvent(ref);
      await expect(p.verifyEvent(Buffer.from(forged.body), forged.headers)).rejects.toBeInstanceOf(BadSignatureError);
      driver.refundsPending(true);
      await p.refund(ref, 100, 'r1');
      expect(driver.refundsOf(ref)).toEqual([{ amount: 100, status: 'pending' }]);
      driver.completeRefunds();
      expect(driver.refundsOf(ref)).toEqual([{ amount: 100, status: 'succeeded' }]);
      const foreign = await driver.foreignEvent();
      const verified = await p.verifyEvent(Buffer.from(foreign.body), foreign.headers);
      expect(verified.ref).toMatch(/^pi_/);
      expect(verified.ref).not.toBe(ref);
      expect(driver.isCancelled(ref)).toBe(false);
    } finally {
      await driver.close();
    }
  });
});
