/**
 * Stripe behind the payment port, against the local stand-in of its API
 * (test/support/stripe-standin.ts) reached through the official `stripe` library:
 * the shared provider scenarios, and what the service sends Stripe when a paid
 * booking is made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripeDriver } from '../support/stripe-standin.js';
import { describeProviderScenarios, startProviderScenario, type ProviderScenarioCtx } from '../support/provider-scenarios.js';

describeProviderScenarios('Stripe', () => stripeDriver());

describe('Stripe: what the service asks of Stripe for a paid booking', () => {
  let s: ProviderScenarioCtx;
  const driver = stripeDriver();
  beforeAll(async () => {
    s = await startProviderScenario(driver);
  });
  afterAll(async () => {
    await s?.c.close();
    await s?.rx.close();
    await driver.close();
  });

  it('one PaymentIntent for the total in satang, PromptPay confirmed with the payer email, our ids in its metadata, a key from the payment id', async () => {
    await s.c.clockTo('08:00');
    const { m, ref } = await s.bookPaid('p-a', '10:00', '11:30');
    const creates = driver.standin.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents');
    expect(creates).toHaveLength(1);
    const create = creates[0]!;
    // 1.5 hours at 200 THB = 300 THB = 30000 satang.
    expect(create.body).toMatchObject({
      amount: '30000',
      currency: 'thb',
      allowed_payment_method_types: ['promptpay'],
      metadata: { paymentId: m.payment.paymentId, meetingId: m._id },
      confirm: 'true',
      payment_method_data: { type: 'promptpay', billing_details: { email: 'alice@example.com' } },
    });
    expect(create.headers['idempotency-key']).toBe(`payment-${m.payment.paymentId}`);
    expect(create.headers.authorization).toBe(`Bearer ${driver.secretKey}`);
    expect(driver.standin.intent(ref)?.status).toBe('requires_action');
    // The page draws the QR from the payload; it never links to Stripe's images.
    const page = await s.c.svc.request('GET', new URL(m.payment.webPaymentUrl).pathname, { token: null });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(driver.standin.url);
  });
});
