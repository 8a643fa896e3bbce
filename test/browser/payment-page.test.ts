/**
 * The web payment page in a real browser (Debian's Chromium through
 * playwright-core): a phone opens the page, presses "Pay" and lands on the
 * booking's frontendRedirectUrl (a tiny local server) with meetingId and
 * status=paid; the booking is then active. The countdown runs out live and the
 * page swaps the button for the expired message without a reload.
 *
 * A real provider's payment (provider and display written into the row): the
 * PromptPay QR, amount and countdown on a phone (English, Thai) and a desktop;
 * settled from elsewhere while open, the page goes to the redirect by itself
 * (it polls /pay/{token}/status); with the sandbox clock moved past the
 * deadline, it shows the lapsed message by itself.
 *
 * UPDATE_SCREENSHOTS=1 writes docs/payments/payment-page-*.png (the provider's: payment-page-promptpay-*.png).
 * Skipped, with a message, when Chromium is not installed (.ci/run installs it).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { TZ, webhookSite } from '../support/webhook-site.js';
import { at, dayAhead } from '../support/catalogue.js';
import { seedPaidBooking } from '../support/payments.js';
import { asProviderPayment, promptpayPayload } from '../support/promptpay.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const SHOTS_DIR = fileURLToPath(new URL('../../docs/payments/', import.meta.url));
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const DESKTOP = { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 };

if (!HAVE_CHROMIUM) {
  console.warn(
    `payment page browser test SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium fonts-thai-tlwg, or set CHROMIUM_PATH)`,
  );
}

describe.skipIf(!HAVE_CHROMIUM)('web payment page in a real browser', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  let portal: string;
  let browser: Browser;
  let frontend: Server;
  let frontendUrl: string;
  const id = (key: string) => idOf(ids, key);

  const seed = (o: { from: string; to: string; title: string; payWithinMs?: number; desk?: boolean }) =>
    seedPaidBooking(svc, {
      projectId: id('tower'),
      assetKind: o.desk ? 'desk' : 'room',
      assetId: id(o.desk ? 'hotdesk' : 'lotus'),
      organizerUserId: id('alice'),
      appId: id('portal'),
      title: o.title,
      start: at(D, o.from),
      end: at(D, o.to),
      redirectUrl: `${frontendUrl}/bookings/done?src=pay`,
      ...(o.payWithinMs ? { payWithinMs: o.payWithinMs } : {}),
    });
  const meetingStatus = async (meetingId: string) => {
    const res = await svc.request('GET', `/meetings/${meetingId}`, { token: portal });
    expect(res.status, res.text).toBe(200);
    return res.body.data.status as string;
  };
  const shot = async (page: Page, name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SHOTS_DIR, { recursive: true });
    await page.screenshot({ path: `${SHOTS_DIR}${name}`, fullPage: true });
  };
  /** Every request the page makes, and every console error (a CSP violation shows up there). */
  const watch = (page: Page) => {
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    return { requests, problems };
  };
  const payButton = (page: Page) => page.getByRole('button', { name: 'Pay', exact: true });

  beforeAll(async () => {
    frontend = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Booking app</title><h1>Booking confirmed</h1>');
    });
    await new Promise<void>((resolve) => frontend.listen(0, '127.0.0.1', resolve));
    frontendUrl = `http://127.0.0.1:${(frontend.address() as AddressInfo).port}`;
    svc = await startTestService();
    ids = await applySite(
      svc,
      webhookSite({ rooms: [{ key: 'lotus', name: 'Lotus Room' }], desks: [{ key: 'hotdesk', name: 'Hot Desk 7' }] }),
    );
    D = await dayAhead(svc, TZ, 2);
    portal = (await appToken(svc)).access_token;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    await new Promise<void>((resolve) => (frontend ? frontend.close(() => resolve()) : resolve()));
  });

  it('on a phone: shows the booking, amount and a running countdown; Pay lands on the redirect URL and the booking is active', async () => {
    const p = await seed({ from: '10:00', to: '11:30', title: 'Quarterly review with the design team' });
    const context: BrowserContext = await browser.newContext({ ...PHONE, locale: 'en-GB' });
    try {
      const page = await context.newPage();
      const seen = watch(page);
      await page.goto(p.payment.webPaymentUrl!);
      await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('en');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Lotus Room');
      expect(await page.locator('#amount').textContent()).toMatch(/^THB\s250\.00$/);
      expect(await page.getByText('Quarterly review with the design team').isVisible()).toBe(true);
      expect(await page.getByText(p.payment.invoiceNo).isVisible()).toBe(true);
      const timer = page.getByRole('timer');
      const first = await timer.textContent();
      expect(first).toMatch(/^0[45]:\d\d$/);
      await expect.poll(() => timer.textContent(), { timeout: 5000 }).not.toBe(first);
      // Fits the phone: no sideways scrolling; the button is a comfortable target.
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      const box = (await payButton(page).boundingBox())!;
      expect(box.height).toBeGreaterThanOrEqual(44);
      expect(box.width).toBeGreaterThan(300);
      expect(await page.locator('.qr').isVisible()).toBe(false);
      await shot(page, 'payment-page-phone-en.png');

      // Thai, from the language switch: the same accessible name, Thai text on the button.
      await page.getByRole('link', { name: 'ภาษาไทย' }).click();
      await page.waitForURL(/\?lang=th$/);
      expect(await page.locator('html').getAttribute('lang')).toBe('th');
      expect(await payButton(page).textContent()).toBe('ชำระเงิน');
      expect(await page.getByText('เหลือเวลาชำระเงิน').isVisible()).toBe(true);
      expect(await page.locator('#amount').textContent()).toBe('฿250.00');
      await shot(page, 'payment-page-phone-th.png');

      await page.getByRole('link', { name: 'English' }).click();
      await page.waitForURL(/\?lang=en$/);
      await payButton(page).click();
      await page.waitForURL(`${frontendUrl}/bookings/done?**`);
      const landed = new URL(page.url());
      expect(landed.pathname).toBe('/bookings/done');
      expect(landed.searchParams.get('src')).toBe('pay');
      expect(landed.searchParams.get('meetingId')).toBe(p.meetingId);
      expect(landed.searchParams.get('status')).toBe('paid');
      expect(await page.getByRole('heading', { name: 'Booking confirmed' }).isVisible()).toBe(true);
      expect(await meetingStatus(p.meetingId)).toBe('active');

      // The page called nothing but its own origin (then the frontend it was sent to), and the policy blocked nothing.
      const origins = new Set(seen.requests.map((u) => new URL(u).origin));
      expect([...origins].sort()).toEqual([svc.url, frontendUrl].sort());
      expect(seen.problems).toEqual([]);

      // Back on the page: paid, and no Pay button.
      await page.goto(p.payment.webPaymentUrl!);
      expect(await page.getByRole('heading', { name: 'Payment complete' }).isVisible()).toBe(true);
      expect(await payButton(page).count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('on a desktop: the same page, with a QR code to carry on on a phone', async () => {
    const p = await seed({ from: '13:00', to: '17:00', title: 'Focus afternoon', desk: true });
    const context = await browser.newContext({ ...DESKTOP, locale: 'en-GB' });
    try {
      const page = await context.newPage();
      const seen = watch(page);
      await page.goto(p.payment.webPaymentUrl!);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Hot Desk 7');
      expect(await payButton(page).isVisible()).toBe(true);
      expect(await page.locator('.qr svg').isVisible()).toBe(true);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
      await shot(page, 'payment-page-desktop.png');
      expect(seen.problems).toEqual([]);
      expect(new Set(seen.requests.map((u) => new URL(u).origin))).toEqual(new Set([svc.url]));
    } finally {
      await context.close();
    }
  }, 60_000);

  it('when the countdown reaches zero the button gives way to the expired message, without a reload', async () => {
    const p = await seed({ from: '18:00', to: '19:00', title: 'Late sync', payWithinMs: 4000 });
    const context = await browser.newContext({ ...PHONE, locale: 'en-GB' });
    try {
      const page = await context.newPage();
      const seen = watch(page);
      let navigations = 0;
      page.on('framenavigated', (f) => {
        if (f === page.mainFrame()) navigations += 1;
      });
      await page.goto(p.payment.webPaymentUrl!);
      expect(await payButton(page).isVisible()).toBe(true);
      expect(await page.getByRole('heading', { name: 'Time to pay has run out' }).isVisible()).toBe(false);
      await page.getByRole('heading', { name: 'Time to pay has run out' }).waitFor({ state: 'visible', timeout: 10_000 });
      expect(await payButton(page).count()).toBe(0);
      expect(await page.getByRole('timer').count()).toBe(0);
      expect(await page.locator('#due-label').textContent()).toBe('Amount');
      expect(navigations).toBe(1);
      expect(seen.problems).toEqual([]);
      await shot(page, 'payment-page-expired.png');
      // A reload agrees.
      await page.reload();
      expect(await page.getByRole('heading', { name: 'Time to pay has run out' }).isVisible()).toBe(true);
      expect(await payButton(page).count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 60_000);

  const providerSeed = async (from: string, to: string, title: string) => {
    const p = await seed({ from, to, title });
    await asProviderPayment(svc, p.payment.paymentId, { promptpay: { payload: promptpayPayload('250.00') } });
    return p;
  };
  /** The QR is drawn (no decoding): an SVG whose paths carry many modules, bigger than 150 px. */
  const expectQr = async (page: Page) => {
    const svg = page.locator('.pp-code svg');
    expect(await svg.isVisible()).toBe(true);
    const box = (await svg.boundingBox())!;
    expect(box.width).toBeGreaterThan(150);
    expect(box.height).toBeGreaterThan(150);
    const drawn = await svg.locator('path').evaluateAll((paths) => paths.reduce((n, p) => n + (p.getAttribute('d') ?? '').length, 0));
    expect(drawn).toBeGreaterThan(1000);
  };

  it("a provider's PromptPay QR on a phone (English, Thai) and a desktop; settled elsewhere, the page goes to the redirect by itself", async () => {
    const p = await providerSeed('08:00', '09:00', 'Tenant committee');
    const context = await browser.newContext({ ...PHONE, locale: 'en-GB' });
    try {
      const page = await context.newPage();
      const seen = watch(page);
      await page.goto(p.payment.webPaymentUrl!);
      await expectQr(page);
      expect(await page.getByRole('heading', { name: 'Pay with PromptPay' }).isVisible()).toBe(true);
      expect(await page.locator('#amount').textContent()).toMatch(/^THB\s250\.00$/);
      expect(await page.getByRole('timer').textContent()).toMatch(/^0[45]:\d\d$/);
      expect(await page.getByText('Waiting for your payment…').isVisible()).toBe(true);
      expect(await payButton(page).count()).toBe(0);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await shot(page, 'payment-page-promptpay-phone-en.png');

      await page.getByRole('link', { name: 'ภาษาไทย' }).click();
      await page.waitForURL(/\?lang=th$/);
      await expectQr(page);
      expect(await page.getByRole('heading', { name: 'ชำระเงินด้วยพร้อมเพย์' }).isVisible()).toBe(true);
      expect(await page.getByText('กำลังรอการชำระเงินของคุณ…').isVisible()).toBe(true);
      expect(await page.locator('#amount').textContent()).toBe('฿250.00');
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await shot(page, 'payment-page-promptpay-phone-th.png');

      // Paid from elsewhere (the provider's verified event goes through the payment inbox like this): no click here.
      let navigations = 0;
      page.on('framenavigated', (f) => {
        if (f === page.mainFrame()) navigations += 1;
      });
      const settled = await svc.services.payments.notify({
        provider: 'stripe-account',
        eventId: 'evt_browser_paid',
        paymentId: p.payment.paymentId,
        kind: 'settle',
        via: 'stripe payment_intent.succeeded',
      });
      expect(settled.outcome).toBe('settled');
      await page.waitForURL(`${frontendUrl}/bookings/done?**`, { timeout: 10_000 });
      expect(navigations).toBe(1);
      const landed = new URL(page.url());
      expect(landed.searchParams.get('meetingId')).toBe(p.meetingId);
      expect(landed.searchParams.get('status')).toBe('paid');
      expect(await meetingStatus(p.meetingId)).toBe('active');
      expect(seen.problems).toEqual([]);
      const origins = new Set(seen.requests.map((u) => new URL(u).origin));
      expect([...origins].sort()).toEqual([svc.url, frontendUrl].sort());
    } finally {
      await context.close();
    }

    const q = await providerSeed('09:00', '10:00', 'Tenant committee follow-up');
    const desktop = await browser.newContext({ ...DESKTOP, locale: 'en-GB' });
    try {
      const page = await desktop.newPage();
      const seen = watch(page);
      await page.goto(q.payment.webPaymentUrl!);
      await expectQr(page);
      expect(await page.locator('.qr').count()).toBe(0);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
      await shot(page, 'payment-page-promptpay-desktop.png');
      expect(seen.problems).toEqual([]);
    } finally {
      await desktop.close();
    }
  }, 60_000);

  // Last: it moves the sandbox clock.
  it("a provider's page shows the lapsed message by itself once the service's deadline has passed", async () => {
    const p = await providerSeed('20:00', '21:00', 'Evening briefing');
    const context = await browser.newContext({ ...PHONE, locale: 'en-GB' });
    try {
      const page = await context.newPage();
      const seen = watch(page);
      await page.goto(p.payment.webPaymentUrl!);
      await expectQr(page);
      const lapsed = page.getByRole('heading', { name: 'Time to pay has run out' });
      expect(await lapsed.isVisible()).toBe(false);
      const adv = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 6 });
      expect(adv.status, adv.text).toBe(200);
      await lapsed.waitFor({ state: 'visible', timeout: 10_000 });
      expect(await page.locator('.pp-code').count()).toBe(0);
      expect(await page.getByRole('timer').count()).toBe(0);
      expect(seen.problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
