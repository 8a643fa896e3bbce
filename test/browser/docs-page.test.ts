/**
 * The API reference (/docs, Swagger UI) in a real browser under its strict
 * Content-Security-Policy (platform/http/security-headers.ts): the page renders
 * the service's OpenAPI document, loads every script and style it needs from this
 * origin, and the browser reports no CSP violation.
 * Skipped, with a message, when Chromium is not installed (.ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { startTestService, type TestService } from '../support/test-service.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);

if (!HAVE_CHROMIUM) console.warn(`docs page browser test SKIPPED: no Chromium at ${CHROMIUM}`);

describe.skipIf(!HAVE_CHROMIUM)('the /docs page in a real browser', () => {
  let svc: TestService;
  let browser: Browser;

  beforeAll(async () => {
    svc = await startTestService();
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
  });

  it('renders the OpenAPI document with no CSP violation and nothing loaded from elsewhere', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const requests: string[] = [];
      const problems: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      const res = await page.goto(`${svc.url}/docs`);
      expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.locator('.swagger-ui .info .title').waitFor({ timeout: 15_000 });
      expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('Room and Desk Booking Service');
      expect(await page.locator('.opblock-summary-path').count()).toBeGreaterThan(10);
      expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);
      for (const url of requests) expect(url.startsWith(`${svc.url}/`) || url.startsWith('data:'), url).toBe(true);
    } finally {
      await context.close();
    }
  });
});
