/**
 * The hosted web payment page over HTTP: what it shows (English and Thai), its
 * security headers, the Pay button's POST (settles as /settle does and redirects
 * to the frontendRedirectUrl), and the settled, voided, expired and unknown pages.
 * Paid bookings are seeded without the booking API (test/support/payments.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DateTime } from 'luxon';
import { startTestService, type HttpResult, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { TZ, webhookSite } from '../support/webhook-site.js';
import { at, dayAhead } from '../support/catalogue.js';
import { seedPaidBooking } from '../support/payments.js';

const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('web payment page (HTTP)', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  let portal: string;
  const id = (key: string) => idOf(ids, key);
  const get = (path: string, headers: Record<string, string> = {}) => svc.request('GET', path, { headers });
  const post = (path: string) => fetch(svc.url + path, { method: 'POST', headers: form, body: '', redirect: 'manual' });
  const meeting = async (meetingId: string) => {
    const res = await svc.request('GET', `/meetings/${meetingId}`, { token: portal });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  };
  const seed = (o: { title?: string; from?: string; to?: string; redirectUrl?: string | null; desk?: boolean } = {}) =>
    seedPaidBooking(svc, {
      projectId: id('tower'),
      assetKind: o.desk ? 'desk' : 'room',
      assetId: id(o.desk ? 'hotdesk' : 'lotus'),
      organizerUserId: id('alice'),
      appId: id('portal'),
      title: o.title ?? 'Quarterly review',
      start: at(D, o.from ?? '10:00'),
      end: at(D, o.to ?? '11:00'),
      redirectUrl: o.redirectUrl === undefined ? `${svc.url}/done?from=app` : o.redirectUrl,
    });
  const noPayButton = (html: string) => {
    expect(html).not.toMatch(/<button/);
    expect(html).not.toMatch(/<form/);
  };

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(
      svc,
      webhookSite({ rooms: [{ key: 'lotus', name: 'Lotus Room' }], desks: [{ key: 'hotdesk', name: 'Hot Desk 7' }] }),
    );
    D = await dayAhead(svc, TZ, 2);
    portal = (await appToken(svc)).access_token;
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('webPaymentUrl points at the page and webPaymentQr encodes it as an image', async () => {
    const p = await seed();
    expect(p.payment.webPaymentUrl).toBe(`${svc.url}${p.pagePath}`);
    expect(p.payment.webPaymentQr).toMatch(/^data:image\/png;base64,/);
  });

  it('shows what is paid for, the amount and currency, the time left and a Pay button', async () => {
    const p = await seed({ title: 'Q4 <review> & "plan"' });
    const res = await get(p.pagePath, { 'accept-language': 'en-GB,en;q=0.9' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = res.text;
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('Lotus Room');
    expect(html).toContain('Meeting room · Floor 12F');
    // Every value is escaped.
    expect(html).toContain('Q4 &lt;review&gt; &amp; &quot;plan&quot;');
    expect(html).not.toContain('<review>');
    expect(html).toContain(p.payment.invoiceNo);
    expect(html).toMatch(/THB\s250\.00/);
    expect(html).toContain('Thai Baht');
    // Property-local date and time (Asia/Bangkok), with luxon.
    expect(html).toContain(D.setLocale('en-GB').toLocaleString({ weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }));
    expect(html).toContain('10:00–11:00 (GMT+7)');
    // Countdown from expiresAt - now as the service sees it.
    const remaining = Number(/data-remaining-ms="(\d+)"/.exec(html)?.[1]);
    expect(remaining).toBeGreaterThan(4 * 60_000);
    expect(remaining).toBeLessThanOrEqual(5 * 60_000);
    expect(html).toMatch(/role="timer"[^>]*>0[45]:\d\d</);
    // The Pay button posts back to the page.
    expect(html).toMatch(/<form method="post" action="\/pay\/[^"]+\?lang=en" id="pay-form"/);
    expect(html).toMatch(/<button type="submit" id="pay-button" aria-label="Pay"[^>]*>Pay<\/button>/);
    expect(html).toContain('Sandbox payment');
    // A language switch.
    expect(html).toMatch(/<a class="lang" href="\/pay\/[^"]+\?lang=th"[^>]*>ภาษาไทย<\/a>/);
  });

  it('a booking across midnight shows when it starts and when it ends, in property-local time', async () => {
    const p = await seedPaidBooking(svc, {
      projectId: id('tower'),
      assetId: id('lotus'),
      organizerUserId: id('alice'),
      appId: id('portal'),
      title: 'Night shift',
      start: at(D, '22:00', 3),
      end: at(D, '02:00', 4),
      redirectUrl: null,
    });
    const day = { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' } as const;
    const html = (await get(p.pagePath)).text;
    expect(html).toContain(`<dt>Starts</dt><dd>${D.plus({ days: 3 }).setLocale('en-GB').toLocaleString(day)}, 22:00</dd>`);
    expect(html).toContain(`<dt>Ends</dt><dd>${D.plus({ days: 4 }).setLocale('en-GB').toLocaleString(day)}, 02:00 (GMT+7)</dd>`);
  });

  it('sends security headers and loads nothing from anywhere', async () => {
    const p = await seed();
    const res = await get(p.pagePath);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const csp = res.headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`style-src 'nonce-${nonce}'`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("base-uri 'none'");
    // The form may submit to the page itself, whose answer redirects to the frontend.
    expect(csp).toContain(`form-action 'self' ${svc.url}`);
    // Inline style and script carry the nonce; nothing is loaded from elsewhere.
    expect(res.text).toContain(`<style nonce="${nonce}">`);
    expect(res.text).toContain(`<script nonce="${nonce}">`);
    expect(res.text).not.toMatch(/\ssrc=|<iframe|@import|url\(/i);
    // The one link element is an empty icon, so that the browser does not ask for /favicon.ico.
    expect(res.text.match(/<link[^>]*>/g)).toEqual(['<link rel="icon" href="data:,">']);
    // A fresh nonce per response.
    const again = await get(p.pagePath);
    expect(again.headers.get('content-security-policy')).not.toBe(csp);
  });

  it('speaks Thai with ?lang=th or when the browser prefers Thai, keeping the accessible name "Pay"', async () => {
    const p = await seed({ desk: true, from: '13:00', to: '17:00' });
    const th = await get(`${p.pagePath}?lang=th`, { 'accept-language': 'en' });
    expect(th.status).toBe(200);
    expect(th.text).toContain('<html lang="th">');
    expect(th.text).toContain('ชำระเงินค่าการจอง');
    expect(th.text).toContain('โต๊ะทำงาน · ชั้น 3F');
    expect(th.text).toContain('Hot Desk 7');
    expect(th.text).toContain('฿250.00');
    expect(th.text).toContain(D.setLocale('th-TH').toLocaleString({ weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }));
    expect(th.text).toContain('13:00–17:00');
    expect(th.text).toContain('เหลือเวลาชำระเงิน');
    expect(th.text).toMatch(/<button type="submit" id="pay-button" aria-label="Pay"[^>]*>ชำระเงิน<\/button>/);
    expect(th.text).toMatch(/action="\/pay\/[^"]+\?lang=th"/);
    expect(th.text).toMatch(/<a class="lang" href="\/pay\/[^"]+\?lang=en"[^>]*>English<\/a>/);

    const prefersThai = await get(p.pagePath, { 'accept-language': 'th-TH,th;q=0.9,en;q=0.8' });
    expect(prefersThai.text).toContain('<html lang="th">');
    const prefersEnglish = await get(p.pagePath, { 'accept-language': 'en-US,en;q=0.9,th;q=0.5' });
    expect(prefersEnglish.text).toContain('<html lang="en">');
    const explicit = await get(`${p.pagePath}?lang=en`, { 'accept-language': 'th' });
    expect(explicit.text).toContain('<html lang="en">');
  });

  it('Pay settles the payment, makes the booking active with `pay`, and redirects 303 with meetingId and status', async () => {
    const p = await seed({ from: '14:00', to: '15:00' });
    expect((await meeting(p.meetingId)).status).toBe('unpaid');
    const res = await post(`${p.pagePath}?lang=en`);
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(`${svc.url}/done`);
    expect(location.searchParams.get('from')).toBe('app');
    expect(location.searchParams.get('meetingId')).toBe(p.meetingId);
    expect(location.searchParams.get('status')).toBe('paid');
    expect(res.headers.get('cache-control')).toBe('no-store');

    const m = await meeting(p.meetingId);
    expect(m.status).toBe('active');
    const pay = m.histories.find((h: { action: string }) => h.action === 'pay');
    expect(pay).toMatchObject({ action: 'pay', sourceDetail: 'web payment page' });
    expect(m.billingSummaries).toEqual([expect.objectContaining({ payment_id: p.payment.paymentId, status: 'paid' })]);
    expect(m.payment.webPaymentUrl).toBeUndefined();

    // The settled page says so, has no Pay button, and links on to the frontend.
    const page = await get(p.pagePath);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Payment complete');
    noPayButton(page.text);
    expect(page.text).toContain(`status=paid`);

    // A second press (double submit, back button) settles nothing again and lands in the same place.
    const again = await post(p.pagePath);
    expect(again.status).toBe(303);
    expect(new URL(again.headers.get('location')!).searchParams.get('status')).toBe('paid');
    expect((await meeting(p.meetingId)).histories.filter((h: { action: string }) => h.action === 'pay')).toHaveLength(1);
  });

  it('without a frontendRedirectUrl, Pay comes back to the page, which shows the payment as settled', async () => {
    const p = await seed({ from: '16:00', to: '17:00', redirectUrl: null });
    const res = await post(`${p.pagePath}?lang=th`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${p.pagePath}?lang=th`);
    const page = await get(res.headers.get('location')!);
    expect(page.text).toContain('ชำระเงินเรียบร้อยแล้ว');
    noPayButton(page.text);
    expect(page.text).not.toContain('class="button-link"');
    expect((await meeting(p.meetingId)).status).toBe('active');
  });

  it('a voided payment (booking cancelled) says so, has no button, and Pay returns to the page', async () => {
    const p = await seed({ from: '18:00', to: '19:00' });
    await svc.services.storage.db
      .transaction()
      .execute((trx) => svc.services.payments.voidPending(trx, p.meetingId, svc.services.clock.now()));
    const page = await get(p.pagePath);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Payment cancelled');
    noPayButton(page.text);
    const res = await post(p.pagePath);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${p.pagePath}?lang=en`);
    expect((await meeting(p.meetingId)).status).toBe('unpaid');
  });

  it('an unknown or forged token is a 404 HTML page, on GET and POST', async () => {
    const p = await seed({ from: '19:00', to: '20:00' });
    const [paymentId, tag] = p.token.split('.');
    const forged = `${paymentId}.${tag!.slice(0, -2)}${tag!.endsWith('AA') ? 'BB' : 'AA'}`;
    const paths = [
      `/pay/${forged}`,
      `/pay/${paymentId}`,
      '/pay/not-a-token',
      `/pay/ffffffffffffffffffffffff.${tag}`,
      `/pay/${'x'.repeat(5000)}`,
    ];
    for (const path of paths) {
      const res: HttpResult = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.text).toContain('Payment not found');
      noPayButton(res.text);
      expect(res.text).not.toMatch(/\bat .*\.(ts|js):\d+|Error:/);
    }
    const th = await get(`/pay/${forged}?lang=th`);
    expect(th.text).toContain('ไม่พบรายการชำระเงิน');
    const posted = await post(`/pay/${forged}`);
    expect(posted.status).toBe(404);
    expect(await posted.text()).toContain('Payment not found');
    expect((await meeting(p.meetingId)).status).toBe('unpaid');
  });

  it('is not part of the public API description', async () => {
    const res = await svc.request('GET', '/openapi.json');
    expect(Object.keys(res.body.paths).filter((path) => path.startsWith('/pay/'))).toEqual([]);
  });

  // Last: it moves the sandbox clock.
  it('once the time to pay has run out the page says so and has no button; Pay returns to the page', async () => {
    const p = await seed({ from: '20:00', to: '21:00' });
    const adv = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 6 });
    expect(adv.status, adv.text).toBe(200);
    const page = await get(p.pagePath);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Time to pay has run out');
    noPayButton(page.text);
    expect(page.text).not.toContain('role="timer"');
    const res = await post(p.pagePath);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${p.pagePath}?lang=en`);
    // The lapse cancelled the booking; pressing Pay late took no money.
    const m = await meeting(p.meetingId);
    expect(m.status).toBe('cancelled');
    expect(m.billingSummaries).toEqual([expect.objectContaining({ payment_id: p.payment.paymentId, status: 'expired' })]);
    const th = await get(`${p.pagePath}?lang=th`);
    expect(th.text).toContain('หมดเวลาชำระเงินแล้ว');
  });
});
