/**
 * In production the sandbox provider takes no money, so its payment page must
 * not settle anything: it shows the booking and the amount, says online payment
 * is not available, has no Pay button, and a forged POST changes nothing. A
 * real provider's payment (Stripe, Opn) shows its PromptPay QR there instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { TZ, webhookSite } from '../support/webhook-site.js';
import { at } from '../support/catalogue.js';
import { seedPaidBooking } from '../support/payments.js';
import { asProviderPayment, promptpayPayload } from '../support/promptpay.js';

const PROD_SECRETS_KEY = 'a'.repeat(64);

describe('web payment page in production with the sandbox provider', () => {
  let svc: TestService;
  /** Presses the page's Pay button (its form's POST), without following the answer's redirect. */
  const pressPay = (pagePath: string) =>
    fetch(svc.url + pagePath, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
  let ids: SiteIds;
  let D: DateTime;

  beforeAll(async () => {
    svc = await startTestService({ env: { BOOKING_ENV: 'production', SECRETS_KEY: PROD_SECRETS_KEY } });
    ids = await applySite(svc, webhookSite({ rooms: [{ key: 'lotus', name: 'Lotus Room' }] }));
    // No sandbox clock in production: service time is real time.
    D = DateTime.now().setZone(TZ).startOf('day').plus({ days: 2 });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('shows the booking without a Pay button, and a POST settles nothing', async () => {
    const p = await seedPaidBooking(svc, {
      projectId: idOf(ids, 'tower'),
      assetId: idOf(ids, 'lotus'),
      organizerUserId: idOf(ids, 'alice'),
      start: at(D, '10:00'),
      end: at(D, '11:00'),
      redirectUrl: 'http://127.0.0.1:9/done',
    });
    const page = await fetch(svc.url + p.pagePath);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Lotus Room');
    expect(html).toContain('Online payment is not available');
    expect(html).not.toContain('aria-label="Pay"');

    const post = await pressPay(p.pagePath);
    expect(post.status).toBe(303);
    expect(post.headers.get('location')).not.toContain('status=paid');
    const payment = await svc.services.payments.byId(p.payment.paymentId);
    expect(payment?.status).toBe('pending');
  });

  it("a real provider's payment shows its PromptPay QR and the status to follow, and a POST still settles nothing", async () => {
    const p = await seedPaidBooking(svc, {
      projectId: idOf(ids, 'tower'),
      assetId: idOf(ids, 'lotus'),
      organizerUserId: idOf(ids, 'alice'),
      start: at(D, '12:00'),
      end: at(D, '13:00'),
      redirectUrl: 'http://127.0.0.1:9/done',
    });
    await asProviderPayment(svc, p.payment.paymentId, { promptpay: { payload: promptpayPayload('250.00') } }, 'opn');
    const page = await fetch(svc.url + p.pagePath);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Pay with PromptPay');
    expect(html).toMatch(/<div class="pp-code" role="img" aria-label="PromptPay QR code"><svg/);
    expect(html).not.toContain('Online payment is not available');
    expect(html).not.toMatch(/<button|<form/);
    const status = await fetch(`${svc.url}/pay/${p.token}/status`);
    expect(await status.json()).toEqual({ state: 'payable', redirectUrl: null });
    const post = await pressPay(p.pagePath);
    expect(post.status).toBe(303);
    expect((await svc.services.payments.byId(p.payment.paymentId))?.status).toBe('pending');
  });
});
