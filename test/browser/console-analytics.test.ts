/**
 * The console's Analytics screen (issue 29) in a real browser (Debian's Chromium through
 * playwright-core) against the real service with the demo site and a few bookings on one day:
 * the screen loads lazily, its headline figures are the API's (groupBy project), the hour-of-week
 * heatmap has its 168 cells, the chart draws, the least/most used lists rank by utilisation, the
 * CSV download is the API's CSV; desks (no bookings) show zeros and a sentence, a bad range shows
 * the API's message; English and Thai, desktop (1280×800) and phone (375×812) fit their width.
 *
 * CONSOLE_SHOTS=<path prefix> writes screenshots (<prefix><name>.png); skipped, with a message,
 * when Chromium is not installed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { DateTime } from 'luxon';
import { OPS_TOKEN, startTestService, type TestService } from '../support/test-service.js';
import { actAsToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { demoSiteDocument } from '../../src/modules/sandbox/apply-demo.js';
import { buildConsole } from '../../scripts/build-console.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const SHOTS = process.env.CONSOLE_SHOTS;
const TZ = 'Asia/Bangkok';
const DESKTOP = { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 };
const PHONE = { viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

if (!HAVE_CHROMIUM) console.warn(`console analytics browser test SKIPPED: no Chromium at ${CHROMIUM}`);

const pct = (v: number | null) =>
  v === null ? '—' : new Intl.NumberFormat('en-GB', { style: 'percent', maximumFractionDigits: 1 }).format(v);

describe.skipIf(!HAVE_CHROMIUM)('console analytics screen in a real browser', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  let browser: Browser;
  let member: string;
  let project: string;
  const id = (key: string) => idOf(ids, key);
  const range = () => ({ from: D.minus({ days: 29 }).toISODate()!, to: D.toISODate()! });
  const utilisation = async (groupBy: string, assetKind = 'room') => {
    const q = new URLSearchParams({ project, ...range(), groupBy, assetKind });
    const res = await svc.ops('GET', `/ops/v1/analytics/utilisation?${q.toString()}`);
    expect(res.status, res.text).toBe(200);
    return res.body.data as any[];
  };
  const shot = async (p: Page, name: string) => {
    if (SHOTS) await p.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
  };
  const watch = (p: Page) => {
    const problems: string[] = [];
    p.on('console', (m) => {
      // The refused range below is an API answer the screen shows (and the browser's own favicon request may miss);
      // a CSP violation or a script error is not expected.
      if (
        (m.type() === 'error' || m.type() === 'warning') &&
        !/status of 40[01]/.test(m.text()) &&
        !m.location().url.endsWith('/favicon.ico')
      ) {
        problems.push(m.text());
      }
    });
    p.on('pageerror', (e) => problems.push(String(e)));
    return problems;
  };
  const signIn = async (p: Page) => {
    await p.goto(`${svc.url}/console`);
    await p.getByLabel('Ops token').fill(OPS_TOKEN);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('navigation').getByRole('link', { name: 'Floor plan' }).waitFor();
  };
  const fitsWidth = async (p: Page, width: number, what: string) => {
    const wide = await p.evaluate<string[]>(
      `[...document.querySelectorAll('body *')].filter((e) => !e.closest('nav') && e.getBoundingClientRect().right > ${width} + 1)
        .map((e) => e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 5)`,
    );
    expect(await p.evaluate<number>('document.documentElement.scrollWidth'), `${what} ${wide.join(', ')}`).toBeLessThanOrEqual(width);
  };
  /** Waits until the analytics job has caught up with the bookings (status: nothing pending). */
  const caughtUp = async () => {
    for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
      const s = (await svc.ops('GET', `/ops/v1/analytics/status?project=${project}`)).body.data;
      if (s && s.pendingBookings === 0 && s.pendingWalkIns === 0) return;
    }
    throw new Error('the analytics job did not catch up within 20 s');
  };
  const figure = (p: Page, name: string) => p.locator(`.figure[data-figure="${name}"] dd`);

  beforeAll(async () => {
    await buildConsole();
    svc = await startTestService();
    const doc = structuredClone(demoSiteDocument()) as any;
    ids = await applySite(svc, doc);
    project = id('demo-tower');
    D = await dayAhead(svc, TZ, 2);
    while (D.weekday > 5) D = D.plus({ days: 1 });
    await setClock(svc, at(D, '08:00'));
    member = (await actAsToken(svc, { appId: 'demo-portal', secret: doc.apps[0].appSecret, subject: 'portal-user-1002' })).access_token;
    const book = async (room: string, start: string, end: string) => {
      const res = await svc.request('POST', '/meetings', {
        token: member,
        body: { meetingRoomId: id(room), title: `Analytics ${room}`, startDateTime: at(D, start), endDateTime: at(D, end) },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.data._id as string;
    };
    const teak = await book('demo-teak', '09:00', '10:00');
    await book('demo-phonebooth', '10:00', '10:45');
    await book('demo-orchid', '14:00', '16:00');
    const lotus = await book('demo-lotus', '15:00', '16:00');
    const cancel = await svc.request('POST', `/meetings/${lotus}/cancel`, { token: member, body: {} });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    await setClock(svc, at(D, '09:05'));
    const checkIn = await svc.request('POST', `/meetings/${teak}/check-in`, { token: member, body: {} });
    expect(checkIn.status, checkIn.text).toBeLessThan(300);
    // The figures follow the bookings through the analytics job: wait until it has caught up.
    await caughtUp();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  it('shows the API figures: headline, chart, heatmap, least and most used, CSV (desktop, English and Thai)', async () => {
    const [total] = await utilisation('project');
    expect(total).toMatchObject({ bookings: 4, checkIns: 1, cancellations: 1 });
    const hours = await utilisation('hourOfWeek');
    const assets = await utilisation('asset');
    const context = await browser.newContext({ ...DESKTOP, locale: 'en-GB', timezoneId: 'Europe/London', acceptDownloads: true });
    const page = await context.newPage();
    const problems = watch(page);
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(new URL(r.url()).pathname));
    try {
      await signIn(page);
      const firstLoad = [...scripts];
      await page.getByRole('navigation').getByRole('link', { name: 'Analytics' }).click();
      await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
      // The screen and uPlot come as a chunk of their own, fetched only now.
      expect(scripts.length).toBeGreaterThan(firstLoad.length);
      await expect.poll(() => figure(page, 'bookings').textContent()).toBe(String(total.bookings));
      expect(await figure(page, 'checkIns').textContent()).toBe(String(total.checkIns));
      expect(await figure(page, 'noShows').textContent()).toBe(String(total.noShows));
      expect(await figure(page, 'cancellations').textContent()).toBe(String(total.cancellations));
      expect(await figure(page, 'walkIns').textContent()).toBe(String(total.walkIns));
      expect(await figure(page, 'utilisation').textContent()).toBe(pct(total.utilisation));
      expect(await figure(page, 'occupancy').textContent()).toBe(pct(total.occupancy));
      expect(await figure(page, 'noShowRate').textContent()).toBe(pct(total.noShowRate));
      expect(await page.locator('.analytics-empty').count()).toBe(0);
      // The chart (a canvas with its legend), the 7 × 24 heatmap, the rankings.
      await page.locator('.trend-chart canvas').waitFor();
      expect(await page.locator('.trend-chart .u-legend').innerText()).toContain('Utilisation');
      expect(await page.locator('.heatmap tbody tr').count()).toBe(7);
      expect(await page.locator('.heatmap td.heat').count()).toBe(168);
      const nine = hours.find((h) => h.group.weekday === D.weekday && h.group.hour === 9);
      expect(nine.utilisation).toBeGreaterThan(0);
      const cells = page
        .locator('.heatmap tbody tr')
        .nth(D.weekday - 1)
        .locator('td');
      expect(await cells.nth(9).getAttribute('aria-label')).toContain(`9:00, utilisation ${pct(nine.utilisation)}`);
      const top = assets.filter((a) => a.utilisation !== null).sort((a, b) => b.utilisation - a.utilisation)[0];
      expect(await page.locator('[data-ranking="most"] li').first().innerText()).toContain(top.group.assetName);
      // Fewer than ten rooms: the two lists share them out, none in both.
      const listed = await page.locator('[data-ranking] li .rank-name').allInnerTexts();
      expect(new Set(listed).size).toBe(listed.length);
      await shot(page, 'analytics-desktop-en');
      // CSV: the same query, by the grouping chosen, as the API's CSV.
      await page.getByLabel('One row per').selectOption('asset');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
      const csv = readFileSync((await download.path())!, 'utf8')
        .trim()
        .split(/\r?\n/);
      expect(csv[0]).toMatch(/^assetId,assetName,.*availableMinutes,bookedMinutes,/);
      expect(csv.length).toBe(assets.length + 1);
      await page.getByText(`Downloaded ${download.suggestedFilename()}.`).waitFor();
      expect(download.suggestedFilename()).toMatch(/^analytics-room-asset-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
      // Thai.
      await page.getByRole('button', { name: 'ภาษาไทย' }).click();
      await page.getByRole('heading', { name: 'การวิเคราะห์', level: 1 }).waitFor();
      await page.locator('.figure dt', { hasText: 'อัตราการใช้งาน' }).first().waitFor();
      await page.locator('.trend-chart canvas').waitFor();
      await page.getByText(`ดาวน์โหลด ${download.suggestedFilename()} แล้ว`).waitFor();
      await fitsWidth(page, 1280, 'desktop thai');
      await shot(page, 'analytics-desktop-th');
      await page.getByRole('button', { name: 'English' }).click();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('shows zeros and a sentence when nothing was booked, and the API message for a bad range', async () => {
    const context = await browser.newContext({ ...DESKTOP, locale: 'en-GB' });
    const page = await context.newPage();
    const problems = watch(page);
    try {
      await signIn(page);
      await page.goto(`${svc.url}/console#/analytics?project=${project}&kind=desk`);
      await page.locator('.analytics-empty').waitFor();
      expect(await figure(page, 'bookings').textContent()).toBe('0');
      expect(await page.locator('[data-ranking="most"]').innerText()).toContain('Nothing was booked in this range.');
      expect(await page.locator('.heatmap td.heat').count()).toBe(168);
      expect(await page.getByRole('alert').count()).toBe(0);
      await shot(page, 'analytics-empty-desktop');
      const { from, to } = range();
      await page.goto(`${svc.url}/console#/analytics?project=${project}&kind=room&from=${to}&to=${from}`);
      const alert = page.getByRole('alert').filter({ hasText: 'Something went wrong' });
      await alert.waitFor();
      expect(await alert.innerText()).toContain('KS001');
      await shot(page, 'analytics-error-desktop');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('fits a phone (375 px), English and Thai', async () => {
    const context = await browser.newContext({ ...PHONE, locale: 'en-GB' });
    const page = await context.newPage();
    const problems = watch(page);
    try {
      await signIn(page);
      await page.goto(`${svc.url}/console#/analytics`);
      await expect.poll(() => figure(page, 'bookings').textContent()).toBe('4');
      await page.locator('.trend-chart canvas').waitFor();
      await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
      await page.getByRole('link', { name: 'Save again' }).waitFor();
      await fitsWidth(page, 375, 'phone');
      await shot(page, 'analytics-phone-en');
      await page.getByRole('button', { name: 'ภาษาไทย' }).click();
      await page.getByRole('heading', { name: 'การวิเคราะห์', level: 1 }).waitFor();
      await page.locator('.trend-chart canvas').waitFor();
      await fitsWidth(page, 375, 'phone thai');
      await shot(page, 'analytics-phone-th');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
