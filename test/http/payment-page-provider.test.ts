/**
 * The hosted payment page of a real provider's payment (Stripe, Opn) over HTTP:
 * the PromptPay QR drawn by the service (inline SVG from the payload, or the
 * provider's image as a data: URL), no Pay button, English and Thai, the page's
 * policy (unchanged without a card; with one, exactly the script origin added),
 * and the JSON status the page polls (GET /pay/{token}/status).
 * The provider columns are written straight into a seeded payment's row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { TZ, webhookSite } from '../support/webhook-site.js';
import { at, dayAhead } from '../support/catalogue.js';
import { seedPaidBooking } from '../support/payments.js';
import { asProviderPayment, promptpayPayload } from '../support/promptpay.js';

const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const SVG_NS = 'http://www.w3.org/2000/svg';

describe('web payment page with a provider (HTTP)', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  let slot = 0;
  const id = (key: string) => idOf(ids, key);
  const get = (path: string, headers: Record<string, string> = {}) => svc.request('GET', path, { headers });
  const seed = async (o: { redirectUrl?: string | null; payload?: boolean; image?: boolean; card?: string } = {}) => {
    const hour = 6 + slot++;
    const p = await seedPaidBooking(svc, {
      projectId: id('tower'),
      assetId: id('lotus'),
      organizerUserId: id('alice'),
      appId: id('portal'),
      title: 'Board meeting',
      start: at(D, `${String(hour).padStart(2, '0')}:00`),
      end: at(D, `${String(hour).padStart(2, '0')}:30`),
      redirectUrl: o.redirectUrl === undefined ? 'https://app.example.test/done?from=app' : o.redirectUrl,
    });
    await asProviderPayment(svc, p.payment.paymentId, {
      promptpay: {
        ...(o.payload !== false ? { payload: promptpayPayload('250.00') } : {}),
        ...(o.image ? { image: { contentType: 'image/png', base64: PNG_1PX } } : {}),
      },
      ...(o.card ? { card: { scriptOrigin: o.card } } : {}),
    });
    return p;
  };
  const cspOf = (res: { headers: Headers }) => res.headers.get('content-security-policy')!;
  const nonceOf = (csp: string) => /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
  const strictCsp = (nonce: string) =>
    [
      "default-src 'none'",
      `style-src 'nonce-${nonce}'`,
      `script-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
  /** Every absolute URL in the HTML: only the service's own (and the SVG namespace). */
  const foreignUrls = (html: string) => (html.match(/https?:\/\/[^\s"'<>)]+/g) ?? []).filter((u) => !u.startsWith(svc.url) && u !== SVG_NS);
  /** The provider's word that the money arrived, through the payment inbox as a verified event would bring it. */
  const providerSettles = async (paymentId: string) =>
    (
      await svc.services.payments.notify({
        provider: 'stripe-account',
        eventId: `evt_${paymentId}`,
        paymentId,
        kind: 'settle',
        via: 'test',
      })
    ).outcome;
  const status = async (token: string) => {
    const res = await get(`/pay/${token}/status`);
    return { res, body: res.body as { state: string; redirectUrl: string | null } };
  };

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, webhookSite({ rooms: [{ key: 'lotus', name: 'Lotus Room' }] }));
    D = await dayAhead(svc, TZ, 3);
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('shows the PromptPay QR (inline SVG from the payload), the amount and countdown, no Pay button, no provider URL', async () => {
    const p = await seed();
    const res = await get(p.pagePath, { 'accept-language': 'en' });
    expect(res.status).toBe(200);
    const html = res.text;
    expect(html).toMatch(/<section class="promptpay" id="promptpay"[^>]*>/);
    const svg = /<div class="pp-code" role="img" aria-label="PromptPay QR code"><svg[^>]*>([\s\S]*?)<\/svg>\s*<\/div>/.exec(html);
    expect(svg).not.toBeNull();
    // Many modules: a QR path, not a placeholder.
    expect(svg![1]!.length).toBeGreaterThan(1500);
    expect(html).toMatch(/THB\s250\.00/);
    expect(html).toContain('role="timer"');
    expect(html).toContain('Scan this code and check the amount, then confirm.');
    expect(html).toContain('Waiting for your payment…');
    expect(html).toContain(`data-status="/pay/${p.token}/status"`);
    expect(html).not.toMatch(/<button|<form/);
    expect(html).not.toContain('Sandbox payment');
    // The page-carrying QR (sandbox, desktop) is not shown next to the PromptPay one.
    expect(html).not.toContain('class="qr"');
    expect(foreignUrls(html)).toEqual([]);
    expect(html).not.toContain('pi_test_');
    expect(cspOf(res)).toBe(strictCsp(nonceOf(cspOf(res))));
  });

  it('speaks Thai', async () => {
    const p = await seed();
    const res = await get(`${p.pagePath}?lang=th`);
    expect(res.text).toContain('<html lang="th">');
    expect(res.text).toContain('ชำระเงินด้วยพร้อมเพย์');
    expect(res.text).toContain('กำลังรอการชำระเงินของคุณ…');
    expect(res.text).toContain('aria-label="คิวอาร์โค้ดพร้อมเพย์"');
    expect(res.text).toContain('฿250.00');
  });

  it("shows the provider's own QR image as a data: URL, never hot-linked", async () => {
    const p = await seed({ payload: false, image: true });
    const res = await get(p.pagePath);
    expect(res.text).toContain(`<img src="data:image/png;base64,${PNG_1PX}" alt="PromptPay QR code">`);
    expect(foreignUrls(res.text)).toEqual([]);
    expect(cspOf(res)).toBe(strictCsp(nonceOf(cspOf(res))));
  });

  it("with a card method: exactly the provider script's origin is added to script-src, frame-src and connect-src", async () => {
    const p = await seed({ card: 'https://js.stripe.com/v3/' });
    const res = await get(p.pagePath);
    const csp = cspOf(res);
    const nonce = nonceOf(csp);
    expect(csp).toBe(
      [
        "default-src 'none'",
        `style-src 'nonce-${nonce}'`,
        `script-src 'nonce-${nonce}' https://js.stripe.com`,
        "img-src 'self' data:",
        "connect-src 'self' https://js.stripe.com",
        'frame-src https://js.stripe.com',
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ].join('; '),
    );
    // No card UI is drawn: the page itself still names no other origin.
    expect(foreignUrls(res.text)).toEqual([]);
  });

  it('a stored display that is not an image or not base64 is dropped, and the page says payment is unavailable', async () => {
    const p = await seed({ payload: false });
    await svc.services.storage.db
      .updateTable('payments')
      .set({ provider_display: JSON.stringify({ promptpay: { image: { contentType: 'text/html', base64: 'PHNjcmlwdD4=' } } }) })
      .where('id', '=', p.payment.paymentId)
      .execute();
    const res = await get(p.pagePath);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Online payment is not available');
    expect(res.text).not.toContain('PHNjcmlwdD4=');
    expect(res.text).not.toMatch(/<button|<form/);
  });

  it("the page's Pay POST never settles a provider's payment, even with the sandbox on", async () => {
    const p = await seed();
    const res = await fetch(svc.url + p.pagePath, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${p.pagePath}?lang=en`);
    expect((await svc.services.payments.byId(p.payment.paymentId))?.status).toBe('pending');
  });

  it('status: payable, then settled with the redirect (meetingId, status=paid); JSON, no-store, nothing else', async () => {
    const p = await seed();
    const before = await status(p.token);
    expect(before.res.status).toBe(200);
    expect(before.res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(before.res.headers.get('cache-control')).toBe('no-store');
    expect(before.res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(before.body).toEqual({ state: 'payable', redirectUrl: null });
    expect(await providerSettles(p.payment.paymentId)).toBe('settled');
    const after = await status(p.token);
    expect(Object.keys(after.body).sort()).toEqual(['redirectUrl', 'state']);
    expect(after.body.state).toBe('settled');
    const next = new URL(after.body.redirectUrl!);
    expect(`${next.origin}${next.pathname}`).toBe('https://app.example.test/done');
    expect(next.searchParams.get('from')).toBe('app');
    expect(next.searchParams.get('meetingId')).toBe(p.meetingId);
    expect(next.searchParams.get('status')).toBe('paid');
  });

  it('status: settled without a redirect URL is null; voided says voided', async () => {
    const p = await seed({ redirectUrl: null });
    expect(await providerSettles(p.payment.paymentId)).toBe('settled');
    expect((await status(p.token)).body).toEqual({ state: 'settled', redirectUrl: null });
    const q = await seed();
    await svc.services.storage.db
      .transaction()
      .execute((trx) => svc.services.payments.voidPending(trx, q.meetingId, svc.services.clock.now()));
    expect((await status(q.token)).body).toEqual({ state: 'voided', redirectUrl: null });
  });

  it('status: an unknown or forged token is a JSON 404 that says nothing about any payment', async () => {
    const p = await seed();
    const [paymentId, tag] = p.token.split('.');
    const forged = `${paymentId}.${tag!.slice(0, -2)}${tag!.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const token of [forged, paymentId!, 'not-a-token', `ffffffffffffffffffffffff.${tag}`, 'x'.repeat(5000)]) {
      const res = await get(`/pay/${token}/status`);
      expect(res.status, token.slice(0, 40)).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toEqual({ code: 'KS005', success: false, message: 'Payment not found' });
    }
    // The status of one payment is not reachable through another's token.
    const other = await seed();
    expect(await providerSettles(other.payment.paymentId)).toBe('settled');
    expect((await status(p.token)).body).toEqual({ state: 'payable', redirectUrl: null });
  });

  it('status is not part of the public API description', async () => {
    const res = await svc.request('GET', '/openapi.json');
    expect(Object.keys(res.body.paths).filter((path) => path.startsWith('/pay/'))).toEqual([]);
  });

  // Last: it moves the sandbox clock.
  it('status: once the time to pay has run out it says expired, and the page shows the lapsed message', async () => {
    const p = await seed();
    const adv = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 6 });
    expect(adv.status, adv.text).toBe(200);
    expect((await status(p.token)).body).toEqual({ state: 'expired', redirectUrl: null });
    const page = await get(p.pagePath);
    expect(page.text).toContain('Time to pay has run out');
    expect(page.text).not.toContain('id="promptpay"');
  });
});
