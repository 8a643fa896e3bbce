/**
 * The operator console (/console) in a real browser (Debian's Chromium through
 * playwright-core) against the real service with the demo site: sign in with the
 * ops token, watch a booking made through the public API appear on the live floor
 * plan, cancel it from the day view, redeliver a failed webhook delivery, create a
 * visitor invite, advance the sandbox clock; the page policy blocks nothing. And
 * what a newcomer met (issue 23): the phone tab bar shows it scrolls and keeps the
 * current tab in view; room labels wrap only between words (Thai too); history
 * names who acted; an organizer without email is just a name; the floor picker
 * keeps to one project; listeners name their event types; the bookings screen's
 * default dates follow the service clock, not the browser's.
 *
 * UPDATE_SCREENSHOTS=1 writes docs/console/*.png (every screen, phone and desktop).
 * Skipped, with a message, when Chromium is not installed (.ci/run installs it).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { DateTime } from 'luxon';
import { OPS_TOKEN, startTestService, type TestService } from '../support/test-service.js';
import { actAsToken, appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { seedProviderAction, seedProviderEvent } from '../support/provider-log.js';
import { demoSiteDocument } from '../../src/modules/sandbox/apply-demo.js';
import { buildConsole } from '../../scripts/build-console.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const SHOTS_DIR = fileURLToPath(new URL('../../docs/console/', import.meta.url));
const TZ = 'Asia/Bangkok';
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const DESKTOP = { viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 };
const HOOK_SECRET = 'whsec-console-0123456789abcdef0123456789abcdef';

if (!HAVE_CHROMIUM) {
  console.warn(
    `console browser test SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium fonts-thai-tlwg, or set CHROMIUM_PATH)`,
  );
}

describe.skipIf(!HAVE_CHROMIUM)('operator console in a real browser', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let member: string;
  let desktop: BrowserContext;
  let page: Page;
  let seen: { problems: string[]; requests: string[] };
  let liveBookingId = '';
  const id = (key: string) => idOf(ids, key);

  const shot = async (p: Page, name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SHOTS_DIR, { recursive: true });
    await p.screenshot({ path: `${SHOTS_DIR}${name}.png`, fullPage: true });
  };
  const watch = (p: Page) => {
    const problems: string[] = [];
    const requests: string[] = [];
    p.on('request', (r) => requests.push(r.url()));
    p.on('console', (m) => {
      // An API answer the console shows as a state (401 before sign-in, the 404 below) is expected; a CSP violation is not.
      if (
        (m.type() === 'error' || m.type() === 'warning') &&
        !/^Failed to load resource: the server responded with a status of 40[14]/.test(m.text())
      ) {
        problems.push(m.text());
      }
    });
    p.on('pageerror', (e) => problems.push(String(e)));
    return { problems, requests };
  };
  const book = async (body: Record<string, unknown>) => {
    const res = await svc.request('POST', '/meetings', { token: member, body });
    expect(res.status, res.text).toBe(201);
    return res.body.data as { _id: string; status: string };
  };
  const signIn = async (p: Page) => {
    await p.goto(`${svc.url}/console`);
    await p.getByLabel('Ops token').fill(OPS_TOKEN);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('navigation').getByRole('link', { name: 'Floor plan' }).waitFor();
  };
  /** Every room label: its text, the places where a line starts inside a word (Intl.Segmenter's boundaries), and whether it stays on the plan. */
  const roomLabels = (p: Page) =>
    p.evaluate<{ text: string; insideWord: string[]; width: number; onPlan: boolean; box: number[] }[]>(`(() => {
      const plan = document.querySelector('.plan').getBoundingClientRect();
      return [...document.querySelectorAll('.room-label .room-name')].map((el) => {
        const text = el.textContent || '';
        const starts = new Set([...new Intl.Segmenter('th', { granularity: 'word' }).segment(text)].map((s) => s.index));
        const tops = [];
        const range = document.createRange();
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          for (let i = 0; i < n.data.length; i++) {
            range.setStart(n, i);
            range.setEnd(n, i + 1);
            const r = range.getClientRects()[0];
            tops.push(r && r.width > 0 && n.data[i].trim() ? r.top : null);
          }
        }
        const insideWord = [];
        let prev = null;
        tops.forEach((top, i) => {
          if (top === null) return;
          if (prev !== null && top > prev + 2 && !starts.has(i)) insideWord.push(text.slice(0, i) + '|' + text.slice(i));
          prev = top;
        });
        const box = el.getBoundingClientRect();
        return { text, insideWord, width: box.width, onPlan: box.left >= plan.left - 1 && box.right <= plan.right + 1, box: [box.left, box.top, box.right, box.bottom] };
      });
    })()`);
  /** Pairs of room labels that cover each other. */
  const overlapping = (labels: { text: string; box: number[] }[]) =>
    labels.flatMap((a, i) =>
      labels
        .slice(i + 1)
        .filter((b) => a.box[0]! < b.box[2]! - 1 && b.box[0]! < a.box[2]! - 1 && a.box[1]! < b.box[3]! - 1 && b.box[1]! < a.box[3]! - 1)
        .map((b) => `${a.text} / ${b.text}`),
    );
  /** The tab bar: whether it shows more tabs on either side, and whether the current tab is wholly in view. */
  const tabBar = (p: Page) =>
    p.evaluate<{ overflows: boolean; moreStart: boolean; moreEnd: boolean; currentInView: boolean }>(`(() => {
      const nav = document.querySelector('nav');
      const strip = nav.querySelector('ul');
      const view = strip.getBoundingClientRect();
      const cur = nav.querySelector('a[aria-current="page"]').getBoundingClientRect();
      const shown = (sel) => {
        const el = nav.querySelector(sel);
        return !!el && Number(getComputedStyle(el).opacity) > 0.9 && el.getBoundingClientRect().width > 0;
      };
      return {
        overflows: strip.scrollWidth > strip.clientWidth,
        moreStart: shown('.nav-fade.start'),
        moreEnd: shown('.nav-fade.end'),
        currentInView: cur.left >= view.left - 1 && cur.right <= view.right + 1 && cur.right <= document.documentElement.clientWidth + 1,
      };
    })()`);
  const fitsWidth = async (p: Page, width: number, what = '') => {
    // On failure, name the widest elements that stick out.
    const wide = await p.evaluate<
      string[]
    >(`[...document.querySelectorAll('body *')].filter((e) => !e.closest('nav') && e.getBoundingClientRect().right > ${width} + 1)
      .map((e) => e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 5)`);
    expect(await p.evaluate<number>('document.documentElement.scrollWidth'), `${what} ${wide.join(', ')}`).toBeLessThanOrEqual(width);
  };

  beforeAll(async () => {
    await buildConsole();
    receiver = await WebhookReceiver.start();
    receiver.respond('/hook', 500);
    svc = await startTestService();
    const doc = structuredClone(demoSiteDocument()) as any;
    doc.webhooks = [
      {
        key: 'front-desk-app',
        project: 'demo-tower',
        url: receiver.url('/hook'),
        secret: HOOK_SECRET,
        events: ['ROOM_BOOK', 'ROOM_CANCEL'],
      },
    ];
    // A second project, whose floor the picker must keep apart, with narrow rooms: a long English word and a Thai name (no spaces).
    doc.projects.push({ ...doc.projects[0], key: 'h23-sukhumvit', name: 'Sukhumvit Place' });
    doc.zones.push({ key: 'h23-podium', project: 'h23-sukhumvit', name: 'Podium' });
    doc.floors.push({ key: 'h23-p3', zone: 'h23-podium', name: '3F' });
    const teak = doc.rooms.find((r: any) => r.key === 'demo-teak');
    const box = (x: number, y: number, w: number, h: number) => [
      { xPct: x, yPct: y },
      { xPct: x + w, yPct: y },
      { xPct: x + w, yPct: y + h },
      { xPct: x, yPct: y + h },
    ];
    for (const [key, name, polygon] of [
      ['h23-ratchaprasong', 'Conference Room Ratchaprasong', box(4, 8, 10, 34)],
      ['h23-chaophraya', 'ห้องประชุมเจ้าพระยา', box(18, 8, 10, 34)],
      ['h23-sala', 'Sala ศาลา', box(34, 8, 30, 50)],
    ] as const) {
      doc.rooms.push({
        ...structuredClone(teak),
        key,
        floor: 'h23-p3',
        name,
        email: `${key}@rooms.demo.example`,
        polygon,
        accessDevices: undefined,
      });
    }
    ids = await applySite(svc, doc);
    D = await dayAhead(svc, TZ, 2);
    while (D.weekday > 5) D = D.plus({ days: 1 });
    await setClock(svc, at(D, '09:00'));
    member = (await actAsToken(svc, { appId: 'demo-portal', secret: doc.apps[0].appSecret, subject: 'portal-user-1002' })).access_token;
    // The scene on 8F: a booking ending into its cleaning time, an unpaid (priced) room, a desk to check in.
    await book({
      meetingRoomId: id('demo-phonebooth'),
      title: 'Call with Chiang Mai office',
      startDateTime: at(D, '09:00'),
      endDateTime: at(D, '09:45'),
    });
    await book({
      meetingRoomId: id('demo-training'),
      title: 'New joiner training',
      startDateTime: at(D, '09:45'),
      endDateTime: at(D, '11:45'),
    });
    const desk = await book({ deskId: id('demo-desk-02'), title: 'Hot desk', startDateTime: at(D, '09:45'), endDateTime: at(D, '12:00') });
    await book({ deskId: id('demo-desk-07'), title: 'Hot desk', startDateTime: at(D, '13:00'), endDateTime: at(D, '17:00') });
    await setClock(svc, at(D, '09:45'));
    const checkIn = await svc.request('POST', `/meetings/${desk._id}/check-in`, { token: member, body: {} });
    expect(checkIn.status, checkIn.text).toBeLessThan(300);
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
    desktop = await browser.newContext({ ...DESKTOP, locale: 'en-GB', timezoneId: 'Europe/London' });
    page = await desktop.newPage();
    seen = watch(page);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    await receiver?.close();
  });

  it('signs in with the ops token (a wrong one is refused), behind a strict page policy', async () => {
    const res = await fetch(`${svc.url}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(res.headers.get('content-security-policy')).not.toMatch(/unsafe-inline/);
    await page.goto(`${svc.url}/console`);
    await shot(page, 'sign-in-desktop');
    await page.getByLabel('Ops token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'That token is not right.' }).waitFor();
    await shot(page, 'sign-in-error-desktop');
    await page.getByLabel('Ops token').fill(OPS_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Floor plan', level: 1 }).waitFor();
    const cookies = await desktop.cookies();
    const session = cookies.find((c) => c.name === 'ops_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
  }, 60_000);

  it('shows a booking made through the public API on the live floor plan, without a reload', async () => {
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations += 1;
    });
    await page.goto(`${svc.url}/console#/floor/${id('demo-s8')}`);
    const teak = page.locator(`polygon[data-asset="${id('demo-teak')}"]`);
    await expect.poll(() => teak.getAttribute('aria-label')).toBe('Teak: Free');
    expect(await page.locator(`polygon[data-asset="${id('demo-phonebooth')}"]`).getAttribute('aria-label')).toBe('Phone Booth 1: Cleaning');
    expect(await page.locator(`polygon[data-asset="${id('demo-bamboo')}"]`).getAttribute('aria-label')).toMatch(/: Closed$/);
    await page.getByText('Live', { exact: true }).waitFor();
    const before = navigations;

    liveBookingId = (
      await book({
        meetingRoomId: id('demo-teak'),
        title: 'Board prep with Khun Anan',
        startDateTime: at(D, '09:45'),
        endDateTime: at(D, '11:00'),
      })
    )._id;
    await expect.poll(() => teak.getAttribute('aria-label'), { timeout: 15_000 }).toBe('Teak: Booked');
    expect(navigations).toBe(before);
    await teak.hover();
    const side = page.locator('.asset-card');
    await side.getByText('Board prep with Khun Anan').waitFor();
    expect(await side.getByText('09:45–11:00').isVisible()).toBe(true);
    await shot(page, 'floor-plan-desktop');
  }, 60_000);

  it('cancels that booking from the day view (detail with history and payment, no PIN)', async () => {
    await page.locator('.asset-card').getByRole('link', { name: 'Open day view' }).click();
    await page.getByRole('heading', { name: 'Day view', level: 1 }).waitFor();
    const slot = page.getByRole('listitem').filter({ hasText: 'Board prep with Khun Anan' });
    await slot.waitFor();
    await page
      .getByText(/^Break 12:00–13:00/)
      .first()
      .waitFor();
    await shot(page, 'day-view-desktop');
    await slot.click();
    await page.getByRole('heading', { name: 'Booking', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    expect(await page.content()).not.toMatch(/pinCode|PIN/);
    await shot(page, 'booking-detail-desktop');
    await page.getByRole('button', { name: 'Cancel booking' }).click();
    await page.getByLabel('Reason (optional)').fill('Room needed for maintenance');
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await page.getByText('The booking was cancelled.').waitFor();
    await expect.poll(async () => (await svc.ops('GET', `/ops/v1/meetings/${liveBookingId}`)).body.data.status).toBe('cancelled');
    await page.locator('.card h2 .badge').filter({ hasText: 'Cancelled' }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel booking' }).count()).toBe(0);
    // History names who acted, with the kind: the member who booked, then the staff cancel; never a raw id.
    const byColumn = async () => {
      const rows = page.locator('.wide-card tbody tr');
      const out: { action: string; by: string }[] = [];
      for (const r of await rows.all()) {
        out.push({
          action: (await r.locator('td').nth(1).innerText()).trim(),
          by: (await r.locator('td').nth(2).innerText()).replace(/\s+/g, ' ').trim(),
        });
      }
      return out;
    };
    await expect.poll(async () => (await byColumn()).length).toBe(2);
    expect(await byColumn()).toEqual([
      { action: 'create', by: 'Malee Srisuk member' },
      { action: 'cancel', by: 'Operator console staff' },
    ]);
    await shot(page, 'booking-cancelled-desktop');
  }, 60_000);

  it('shows someone who badged in at a room door as occupied by badge, live (English and Thai)', async () => {
    await page.goto(`${svc.url}/console#/floor/${id('demo-s8')}`);
    const teak = page.locator(`polygon[data-asset="${id('demo-teak')}"]`);
    await expect.poll(() => teak.getAttribute('aria-label')).toBe('Teak: Free');
    expect(await page.locator('.legend').getByText('Occupied by badge').isVisible()).toBe(true);
    const users = (await svc.ops('GET', '/ops/v1/site')).body.data.users as { _id: string; projectIds: string[] }[];
    const who = users.find((u) => u.projectIds.includes(id('demo-tower')))!._id;
    // The door reader of Teak (the demo site's accessDevices) reports a granted card: nobody booked Teak now, a walk-in.
    await svc.services.deviceSync.access({
      deviceId: id('demo-teak-door'),
      eventKey: 'console-walk-in-1',
      at: Date.now(),
      granted: true,
      credentialKind: 'card',
      subject: { kind: 'member', id: who },
    });
    await expect.poll(() => teak.getAttribute('aria-label'), { timeout: 15_000 }).toBe('Teak: Free, Occupied by badge');
    await page.locator(`.room-label[data-asset="${id('demo-teak')}"] .badge-in`).waitFor();
    await teak.hover();
    const card = page.locator('.asset-card');
    await card.getByText('Occupied by badge').waitFor();
    await card.getByText(/^Badged in at \d\d:\d\d$/).waitFor();
    await shot(page, 'floor-plan-badge-desktop');
    await page.getByRole('button', { name: 'ภาษาไทย' }).click();
    await card.getByText('มีคนแตะบัตรเข้า').waitFor();
    await card.getByText(/^แตะบัตรเข้าเมื่อ \d\d:\d\d$/).waitFor();
    await shot(page, 'floor-plan-badge-thai-desktop');
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'Floor plan', level: 1 }).waitFor();
    await expect
      .poll(async () => (await svc.ops('GET', `/ops/v1/access-entries?project=${id('demo-tower')}`)).body.data[0]?.outcome)
      .toBe('walk-in');
    // Other rooms of the floor show no badge.
    expect(await page.locator('.room-label .badge-in').count()).toBe(1);
  }, 60_000);

  it('names an app that booked as itself, and shows an organizer without email by name only', async () => {
    const app = (await appToken(svc, 'demo-portal', 'demo-portal-secret-not-for-production-0001')).access_token;
    const res = await svc.request('POST', '/meetings', {
      token: app,
      body: { meetingRoomId: id('demo-teak'), title: 'Lobby screen sync', startDateTime: at(D, '16:00'), endDateTime: at(D, '17:00') },
    });
    expect(res.status, res.text).toBe(201);
    const bookingId = res.body.data._id as string;
    expect((await svc.ops('GET', `/ops/v1/meetings/${bookingId}`)).body.data.organizer.email ?? '').toBe('');
    await page.goto(`${svc.url}/console#/booking/${bookingId}`);
    await page.locator('.card h2').filter({ hasText: 'Lobby screen sync' }).waitFor();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    const organizer = page
      .locator('.facts dt')
      .filter({ hasText: /^Organizer$/ })
      .locator('xpath=following-sibling::dd[1]');
    expect(await organizer.textContent()).toBe('Demo tenant portal');
    const by = page.locator('.wide-card tbody tr').first().locator('td').nth(2);
    expect((await by.innerText()).replace(/\s+/g, ' ').trim()).toBe('Demo tenant portal app');
    expect(await page.locator('.wide-card tbody').innerText()).not.toMatch(/[0-9a-f]{24}/);
    // The previous booking's "cancelled" notice does not follow to this one.
    expect(await page.getByText('The booking was cancelled.').count()).toBe(0);
    await shot(page, 'booking-detail-app-desktop');
  }, 60_000);

  it('lists bookings with the search filters', async () => {
    await page.goto(`${svc.url}/console#/bookings?from=${D.toISODate()}&to=${D.toISODate()}`);
    await page.getByRole('link', { name: 'New joiner training' }).waitFor();
    await shot(page, 'bookings-desktop');
    await page.getByRole('searchbox', { name: 'Search' }).fill('no such booking');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('No bookings match these filters.').waitFor();
    await shot(page, 'bookings-empty-desktop');
  }, 60_000);

  it('redelivers a failed webhook delivery', async () => {
    const hookId = id('front-desk-app');
    await expect
      .poll(
        async () => ((await svc.ops('GET', `/ops/v1/webhooks/${hookId}/deliveries`)).body.data as any[]).some((d) => d.lastStatus === 500),
        { timeout: 20_000 },
      )
      .toBe(true);
    receiver.respond('/hook', 200);
    await page.goto(`${svc.url}/console#/webhooks/${hookId}`);
    await page.getByRole('heading', { name: 'Delivery log of front-desk-app' }).waitFor();
    // The listener names the event types it receives (not only how many).
    const listener = page.locator('tbody tr').filter({ has: page.getByRole('link', { name: 'front-desk-app' }) });
    expect(await listener.locator('.event-list li').allTextContents()).toEqual(['ROOM_BOOK', 'ROOM_CANCEL']);
    const failedRow = page.locator('tbody tr').filter({ hasText: 'ROOM_BOOK' }).filter({ hasText: '500' }).first();
    await failedRow.waitFor();
    await shot(page, 'webhooks-desktop');
    const deliveryId = (await failedRow.getByRole('button', { name: /^Redeliver/ }).getAttribute('aria-label'))!.split(' ').pop()!;
    const received = receiver.on('/hook').length;
    await failedRow.getByRole('button', { name: /^Redeliver/ }).click();
    await page.getByText('Queued to send again.').waitFor();
    await receiver.waitFor((all) => all.length > received, 20_000, 'the redelivery');
    await expect
      .poll(
        async () =>
          ((await svc.ops('GET', `/ops/v1/webhooks/${hookId}/deliveries`)).body.data as any[]).find((d) => d.id === deliveryId)?.lastStatus,
        { timeout: 20_000 },
      )
      .toBe(200);
  }, 60_000);

  it('shows devices and creates and cancels a visitor invite', async () => {
    await page.goto(`${svc.url}/console#/devices`);
    await page.getByText('Lobby Turnstile 1').waitFor();
    const form = page.locator('form.invite-form');
    await form.getByLabel('Visitor').fill('Ms. Pranee Wongsa');
    // GET /ops/v1/site lists the members: the host is picked by name.
    await form.getByLabel('Host', { exact: true }).selectOption({ label: 'Somchai Jaidee' });
    await form.getByLabel('Start').fill('14:00');
    await form.getByLabel('Licence plate').fill('1กข 1234');
    await form.getByLabel('Purpose').fill('Contract signing');
    await form.getByRole('button', { name: 'Create invite' }).click();
    await page.getByText('Invite created for Ms. Pranee Wongsa.').waitFor();
    await page.locator('tbody tr').filter({ hasText: 'Ms. Pranee Wongsa' }).waitFor();
    await form.getByLabel('Visitor').fill('Mr. Somsak Chai');
    await form.getByLabel('Licence plate').fill('');
    await form.getByLabel('Purpose').fill('');
    await form.getByRole('button', { name: 'Create invite' }).click();
    const row = page.locator('tbody tr').filter({ hasText: 'Mr. Somsak Chai' });
    await row.waitFor();
    await row.getByRole('button', { name: 'Cancel invite' }).click();
    await row.getByRole('button', { name: 'Yes' }).click();
    await row.getByText('Cancelled').waitFor();
    await shot(page, 'devices-visitors-desktop');
  }, 60_000);

  it('sandbox: settles a pending payment and advances the clock', async () => {
    const paid = await book({
      meetingRoomId: id('demo-mango'),
      title: 'Client pitch',
      startDateTime: at(D, '15:00'),
      endDateTime: at(D, '16:00'),
    });
    expect(paid.status).toBe('unpaid');
    await page.goto(`${svc.url}/console#/sandbox`);
    const timer = page.getByRole('timer');
    await timer.waitFor();
    const before = await timer.textContent();
    const row = page.locator('tbody tr').filter({ hasText: paid._id });
    await row.waitFor();
    await shot(page, 'sandbox-desktop');
    await row.getByRole('button', { name: 'Settle' }).click();
    await page.getByText('Payment settled.').waitFor();
    await expect.poll(async () => (await svc.request('GET', `/meetings/${paid._id}`, { token: member })).body.data.status).toBe('active');
    await page.getByRole('button', { name: 'Advance 15 min' }).click();
    await page.getByText(/^Clock moved to/).waitFor();
    await expect.poll(() => timer.textContent()).not.toBe(before);
  }, 60_000);

  it('error and empty states, and Thai', async () => {
    await page.goto(`${svc.url}/console#/day/ffffffffffffffffffffffff`);
    await page.getByRole('alert').filter({ hasText: 'Something went wrong' }).waitFor();
    await shot(page, 'error-state-desktop');
    await page.goto(`${svc.url}/console#/floor/${id('demo-r30')}`);
    await page.getByText('No desks on this floor.').waitFor();
    await shot(page, 'empty-state-desktop');
    await page.goto(`${svc.url}/console#/floor/${id('demo-s8')}`);
    await page.getByRole('button', { name: 'ภาษาไทย' }).click();
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('th');
    await page.getByRole('heading', { name: 'ผังชั้น', level: 1 }).waitFor();
    await page.locator('polygon').first().waitFor();
    await shot(page, 'floor-plan-thai-desktop');
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'Floor plan', level: 1 }).waitFor();
    expect(seen.problems).toEqual([]);
    expect(new Set(seen.requests.map((u) => new URL(u).origin))).toEqual(new Set([svc.url]));
  }, 60_000);

  it('keeps the floor picker to one project', async () => {
    await page.goto(`${svc.url}/console#/floor/${id('demo-s8')}`);
    const floorPicker = page.getByRole('combobox', { name: 'Floor' });
    await page.locator('polygon').first().waitFor();
    expect((await floorPicker.locator('option').allTextContents()).sort()).toEqual(['12F', '15F', '30F', '8F']);
    const projectPicker = page.getByRole('combobox', { name: 'Project' });
    expect(await projectPicker.locator('option:checked').textContent()).toBe('Chao Phraya Tower');
    await projectPicker.selectOption({ label: 'Sukhumvit Place' });
    await expect.poll(() => page.evaluate<string>('location.hash')).toBe(`#/floor/${id('h23-p3')}`);
    await page.locator(`polygon[data-asset="${id('h23-chaophraya')}"]`).waitFor();
    expect(await floorPicker.locator('option').allTextContents()).toEqual(['3F']);
    await page.getByText(/^Sukhumvit Place · Podium · 3F/).waitFor();
  }, 60_000);

  it('wraps room labels only between words (Thai too), on the plan, not over each other', async () => {
    await page.goto(`${svc.url}/console#/floor/${id('h23-p3')}`);
    await page.locator(`polygon[data-asset="${id('h23-chaophraya')}"]`).waitFor();
    const labels = await roomLabels(page);
    expect(labels.map((l) => l.text).sort()).toEqual(['Conference Room Ratchaprasong', 'Sala ศาลา', 'ห้องประชุมเจ้าพระยา']);
    for (const l of labels) {
      expect(l.insideWord, l.text).toEqual([]);
      expect(l.onPlan, l.text).toBe(true);
      expect(l.width, l.text).toBeGreaterThan(20);
    }
    expect(overlapping(labels)).toEqual([]);
    // The full name stays available where a word is cut short: the room's tooltip and its name for assistive technology.
    const thai = page.locator(`polygon[data-asset="${id('h23-chaophraya')}"]`);
    expect(await thai.locator('title').textContent()).toBe('ห้องประชุมเจ้าพระยา');
    expect(await thai.getAttribute('aria-label')).toBe('ห้องประชุมเจ้าพระยา: Free');
    await shot(page, 'floor-plan-second-project-desktop');

    await page.goto(`${svc.url}/console#/floor/${id('demo-s8')}`);
    await page.locator('polygon').first().waitFor();
    for (const l of await roomLabels(page)) expect(l.insideWord, l.text).toEqual([]);
  }, 60_000);

  it('on a phone: every screen fits 390 px', async () => {
    const phone = await browser.newContext({ ...PHONE, locale: 'en-GB' });
    try {
      const p = await phone.newPage();
      const phoneSeen = watch(p);
      await p.goto(`${svc.url}/console`);
      await p.getByLabel('Ops token').waitFor();
      await fitsWidth(p, 390);
      await shot(p, 'sign-in-phone');
      await signIn(p);
      // The tab bar scrolls sideways on a phone, and says so: a fading edge on the side with more tabs.
      await expect.poll(async () => (await tabBar(p)).moreEnd).toBe(true);
      expect(await tabBar(p)).toEqual({ overflows: true, moreStart: false, moreEnd: true, currentInView: true });
      // Opening a tab that was out of view scrolls it into view (the fade then shows the tabs before it).
      await p.goto(`${svc.url}/console#/sandbox`);
      await p.getByRole('timer').waitFor();
      await expect.poll(async () => (await tabBar(p)).currentInView).toBe(true);
      await expect.poll(async () => (await tabBar(p)).moreStart).toBe(true);
      const meetings = (
        await svc.ops('GET', `/ops/v1/meetings?from=${encodeURIComponent(at(D, '00:00'))}&to=${encodeURIComponent(at(D, '23:59'))}`)
      ).body.data as any[];
      const training = meetings.find((m) => m.title === 'New joiner training');
      const screens: [string, string, string][] = [
        ['floor-plan', `#/floor/${id('demo-s8')}`, '.plan'],
        ['day-view', `#/day/${id('demo-teak')}/${D.toISODate()}`, '.timeline'],
        ['booking-detail', `#/booking/${training._id}`, '.facts'],
        ['bookings', `#/bookings?from=${D.toISODate()}&to=${D.toISODate()}`, 'tbody tr'],
        ['webhooks', `#/webhooks/${id('front-desk-app')}`, 'tbody tr'],
        ['devices-visitors', '#/devices', 'tbody tr'],
        ['sandbox', '#/sandbox', '[role=timer]'],
        ['error-state', '#/day/ffffffffffffffffffffffff', '.error-box'],
        ['empty-state', `#/floor/${id('demo-r30')}`, '.empty'],
        ['floor-plan-second-project', `#/floor/${id('h23-p3')}`, '.plan'],
      ];
      for (const [name, hash, ready] of screens) {
        await p.goto(`${svc.url}/console${hash}`);
        await p.locator(ready).first().waitFor();
        await fitsWidth(p, 390, name);
        expect((await tabBar(p)).currentInView, name).toBe(true);
        if (name === 'booking-detail') {
          // The lapsed payment's cancel is the service's own (its clock), named as such.
          const history = (await p.locator('.wide-card tbody').innerText()).replace(/\s+/g, ' ');
          expect(history).toContain('payment-timeout The service system (clock)');
        }
        if (name.startsWith('floor-plan')) {
          const labels = await roomLabels(p);
          for (const l of labels) {
            expect(l.insideWord, l.text).toEqual([]);
            expect(l.onPlan, l.text).toBe(true);
          }
          expect(overlapping(labels), name).toEqual([]);
        }
        await shot(p, `${name}-phone`);
      }
      await p.goto(`${svc.url}/console#/floor/${id('demo-s8')}`);
      await p.getByRole('button', { name: 'ภาษาไทย' }).click();
      await p.getByRole('heading', { name: 'ผังชั้น', level: 1 }).waitFor();
      await p.locator('.plan').waitFor();
      await fitsWidth(p, 390);
      expect((await tabBar(p)).currentInView).toBe(true);
      for (const l of await roomLabels(p)) expect(l.insideWord, l.text).toEqual([]);
      await shot(p, 'floor-plan-thai-phone');
      expect(phoneSeen.problems).toEqual([]);
    } finally {
      await phone.close();
    }
  }, 120_000);

  it('opens the payment view: provider, reference, provider events and a pending refund (English and Thai, desktop and phone)', async () => {
    const paid = await book({
      meetingRoomId: id('demo-mango'),
      title: 'Quarterly review',
      startDateTime: at(D, '13:00'),
      endDateTime: at(D, '14:00'),
    });
    expect(paid.status).toBe('unpaid');
    const db = svc.services.storage.db;
    const payment = await db
      .selectFrom('payments')
      .select(['id', 'amount_minor'])
      .where('meeting_id', '=', paid._id)
      .executeTakeFirstOrThrow();
    expect((await svc.ops('POST', `/ops/v1/payments/${payment.id}/settle`, {})).status).toBe(200);
    await db
      .updateTable('payments')
      .set({ provider: 'stripe', provider_ref: 'pi_3QxTestPromptPay01' })
      .where('id', '=', payment.id)
      .execute();
    const t0 = svc.services.clock.now();
    await seedProviderEvent(svc, payment.id, {
      eventId: 'evt_forged',
      type: 'payment_intent.succeeded',
      verified: false,
      receivedAt: t0 - 240_000,
    });
    await seedProviderEvent(svc, payment.id, {
      eventId: 'evt_1Failed',
      type: 'payment_intent.payment_failed',
      verified: true,
      outcome: 'failed-attempt',
      receivedAt: t0 - 180_000,
    });
    await seedProviderEvent(svc, payment.id, {
      eventId: 'evt_2Paid',
      type: 'payment_intent.succeeded',
      verified: true,
      outcome: 'settled',
      receivedAt: t0 - 120_000,
    });
    await seedProviderAction(svc, payment.id, {
      action: 'refund',
      amountMinor: Number(payment.amount_minor),
      status: 'pending',
      reason: 'Cancelled by staff after payment',
      providerRef: 're_3QxTestRefund01',
      createdAt: t0 - 60_000,
    });
    const open = async (p: Page) => {
      await p.goto(`${svc.url}/console#/booking/${paid._id}`);
      await p.getByRole('button', { name: 'Provider, events and refunds' }).click();
      const view = p.locator('#payment-view');
      await view.getByText('pi_3QxTestPromptPay01').waitFor();
      return view;
    };
    const view = await open(page);
    const events = (await view.locator('tbody').first().innerText()).replace(/\s+/g, ' ');
    // Oldest first, verified or not.
    expect(events.indexOf('Not verified')).toBeLessThan(events.indexOf('failed-attempt'));
    expect(events.indexOf('failed-attempt')).toBeLessThan(events.indexOf('settled'));
    const refunds = (await view.locator('tbody').nth(1).innerText()).replace(/\s+/g, ' ');
    expect(refunds).toContain('re_3QxTestRefund01');
    expect(refunds).toContain('Pending (waiting on the provider / payer’s bank)');
    await view.getByText(/waiting on the payer’s bank/).waitFor();
    await shot(page, 'payment-view-desktop');
    await page.getByRole('button', { name: 'ภาษาไทย' }).click();
    await view.getByText('เหตุการณ์จากผู้ให้บริการ').waitFor();
    await view.getByText('✕ ไม่ได้ยืนยัน').waitFor();
    await shot(page, 'payment-view-thai-desktop');
    await page.getByRole('button', { name: 'English' }).click();
    await view.getByText('Provider events').waitFor();

    const phone = await browser.newContext({ ...PHONE, locale: 'en-GB' });
    try {
      const p = await phone.newPage();
      const phoneSeen = watch(p);
      await signIn(p);
      await open(p);
      await fitsWidth(p, 390, 'payment-view');
      await shot(p, 'payment-view-phone');
      await p.getByRole('button', { name: 'ภาษาไทย' }).click();
      await p.locator('#payment-view').getByText('การคืนเงินและการยกเลิกรายการ').waitFor();
      await fitsWidth(p, 390, 'payment-view-thai');
      await shot(p, 'payment-view-thai-phone');
      expect(phoneSeen.problems).toEqual([]);
    } finally {
      await phone.close();
    }
    expect(seen.problems).toEqual([]);
  }, 90_000);

  // Last: it moves the sandbox clock years ahead of the browser's.
  it("defaults the bookings screen's dates to the service clock, not the browser's", async () => {
    const far = D.plus({ days: 900 }).startOf('day');
    await setClock(svc, at(far, '10:00'));
    await page.goto(`${svc.url}/console#/floor`);
    await page.goto(`${svc.url}/console#/bookings`);
    await page.getByRole('heading', { name: 'Bookings', level: 1 }).waitFor();
    const from = page.getByLabel('From', { exact: true });
    await from.waitFor();
    expect(await from.inputValue()).toBe(far.toISODate());
    expect(await page.getByLabel('To', { exact: true }).inputValue()).toBe(far.plus({ days: 7 }).toISODate());
    // On the desktop every tab fits: no fading edge.
    expect(await tabBar(page)).toEqual({ overflows: false, moreStart: false, moreEnd: false, currentInView: true });
  }, 60_000);
});
