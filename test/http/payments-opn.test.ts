/**
 * Opn Payments (formerly Omise) behind the payment port, against the local stand-in
 * of its API (test/support/opn-standin.ts): the shared provider scenarios, and what
 * the service sends Opn when a paid booking is made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpnStandin, type OpnStandin } from '../support/opn-standin.js';
import {
  describeProviderScenarios,
  startProviderScenario,
  type ProviderDriver,
  type ProviderScenarioCtx,
} from '../support/provider-scenarios.js';
import { opnProvider } from '../../src/modules/payments/providers/opn.js';
import { systemClock } from '../../src/platform/clock/clock.js';

const SECRET_KEY = 'skey_test_5x0aG2hbQ3nlvR8kYtJp1';
const WEBHOOK_SECRET = Buffer.from('opn-webhook-secret-0123456789abcdef').toString('base64');
const OTHER_SECRET = Buffer.from('not-the-webhook-secret-0123456789ab').toString('base64');

export function opnDriver(): ProviderDriver & { standin(): OpnStandin } {
  let standin: OpnStandin | undefined;
  const st = () => standin!;
  return {
    provider: 'opn',
    secretKey: SECRET_KEY,
    webhookSecret: WEBHOOK_SECRET,
    standin: st,
    start: async () => {
      standin = await startOpnStandin({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
      return { url: standin.url };
    },
    close: async () => standin?.close(),
    pay: (ref) => st().succeed(ref),
    failAttempt: (ref) => st().fail(ref),
    paidEvent: (ref) => st().signedEvent('charge.complete', ref),
    failedEvent: (ref) => st().signedEvent('charge.complete', ref),
    forgedEvent: (ref) => st().signedEvent('charge.complete', ref, { secret: OTHER_SECRET }),
    foreignEvent: async () => {
      // A charge made on the same account by something else (not through the service).
      const other = opnProvider(
        {
          id: 'other',
          provider: 'opn',
          secretKey: SECRET_KEY,
          webhookSecret: WEBHOOK_SECRET,
          methods: ['promptpay'],
          apiBaseUrl: st().url,
        },
        { realClock: systemClock, timeoutMs: 3000 },
      );
      const { ref } = await other.createCheckout({
        paymentId: 'f00000000000000000000001',
        meetingId: 'f00000000000000000000002',
        amountMinor: 5000,
        currency: 'THB',
        description: 'not ours',
        methods: ['promptpay'],
        idempotencyKey: 'payment-foreign',
        expiresAt: Date.now() + 300_000,
      });
      st().succeed(ref);
      return st().signedEvent('charge.complete', ref);
    },
    setDown: (on) => st().setDown(on),
    refundsPending: (on) => st().refundsPending(on),
    completeRefunds: () => {
      for (const c of st().charges()) for (const r of c.refunds.data) if (r.status === 'pending') st().completeRefund(c.id, r.id);
    },
    isCancelled: (ref) => st().charge(ref)?.status === 'expired',
    refundsOf: (ref) =>
      (st().charge(ref)?.refunds.data ?? []).map((r) => ({ amount: r.amount, status: r.status === 'pending' ? 'pending' : 'succeeded' })),
  };
}

describeProviderScenarios('Opn Payments', opnDriver);

describe('Opn Payments: what the service asks of Opn for a paid booking', () => {
  let s: ProviderScenarioCtx;
  let driver: ReturnType<typeof opnDriver>;
  beforeAll(async () => {
    driver = opnDriver();
    s = await startProviderScenario(driver);
  });
  afterAll(async () => {
    await s?.c.close();
    await s?.rx.close();
    await driver?.close();
  });

  it('a PromptPay source and a charge for the total in satang, with the payment and booking ids, and the QR shown from our own page', async () => {
    await s.c.clockTo('08:00');
    const { m, ref } = await s.bookPaid('p-a', '10:00', '11:30');
    const sent = driver.standin().requests.filter((r) => r.method === 'POST');
    const source = sent.find((r) => r.path === '/sources')!;
    const charge = sent.find((r) => r.path === '/charges')!;
    // 1.5 hours at 200 THB = 300 THB = 30000 satang.
    expect(source.body).toMatchObject({ type: 'promptpay', amount: 30000, currency: 'thb' });
    expect(source.authorized && charge.authorized).toBe(true);
    expect(charge.body).toMatchObject({
      amount: 30000,
      currency: 'thb',
      metadata: { paymentId: m.payment.paymentId, meetingId: m._id },
    });
    expect(driver.standin().charge(ref)?.metadata).toMatchObject({ paymentId: m.payment.paymentId });
    // The page draws the QR the service downloaded; it never links to Opn.
    const page = await s.c.svc.request('GET', new URL(m.payment.webPaymentUrl).pathname, { token: null });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(driver.standin().url);
  });
});
