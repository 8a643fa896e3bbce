/**
 * `frontendRedirectUrl` is where the payment page sends the payer's browser, so
 * it must be an http or https URL: `javascript:`, `vbscript:`, `data:` and every
 * other scheme are 400 KS001 naming the field, and nothing is booked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookService, type WebhookCtx } from '../support/webhook-site.js';

describe('frontendRedirectUrl: http and https only', () => {
  let c: WebhookCtx;

  beforeAll(async () => {
    c = await startWebhookService({
      rooms: [{ key: 'pr', name: 'Redirect Room', chargeRate: { perHour: 200, perDay: 0 } }],
      clockAt: '06:00',
    });
  });
  afterAll(async () => {
    await c?.close();
  });

  const body = (from: string, to: string, frontendRedirectUrl: string) => ({
    meetingRoomId: c.id('pr'),
    title: 'redirect',
    startDateTime: c.t(from),
    endDateTime: c.t(to),
    frontendRedirectUrl,
  });

  it('refuses every other scheme with 400 KS001 and books nothing', async () => {
    const hostile = [
      'javascript:alert(document.cookie)',
      'JavaScript:alert(1)',
      'javascript://example.com/%0aalert(1)',
      'vbscript:msgbox(1)',
      'VBScript:msgbox(1)',
      'data:text/html,<script>alert(1)</script>',
      'file:///etc/passwd',
      'ftp://example.com/x',
      'mailto:a@example.com',
      'https://exa mple.com/x',
    ];
    for (const url of hostile) {
      const res = await c.book(body('10:00', '11:00', url));
      expect(res.status, `${url}: ${res.text}`).toBe(400);
      expect(res.body.code).toBe('KS001');
      expect(res.body.message).toContain('body.frontendRedirectUrl must be an http or https URL');
      // A draft is refused the same way.
      const draft = await c.book({ ...body('10:00', '11:00', url), draft: true });
      expect(draft.status, `${url} (draft): ${draft.text}`).toBe(400);
    }
    // Nothing was booked: the window is still free.
    const ok = await c.book(body('10:00', '11:00', 'https://app.example/done'));
    expect(ok.status, ok.text).toBe(201);
  });

  it('takes http and https (any case of the scheme); Pay on the page lands there', async () => {
    for (const [i, url] of ['http://localhost:3000/paid', 'HTTPS://App.Example/done?x=1'].entries()) {
      const res = await c.book(body(`1${2 + i}:00`, `1${2 + i}:30`, url));
      expect(res.status, res.text).toBe(201);
      const page = new URL(res.body.data.payment.webPaymentUrl).pathname;
      const pay = await fetch(c.svc.url + page, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
        redirect: 'manual',
      });
      expect(pay.status).toBe(303);
      const to = new URL(pay.headers.get('location')!);
      expect(to.origin).toBe(new URL(url).origin);
      expect(to.searchParams.get('status')).toBe('paid');
    }
  });

  it('the OpenAPI document says so', async () => {
    const doc = (await c.svc.request('GET', '/openapi.json')).body;
    const schema = doc.paths['/meetings'].post.requestBody.content['application/json'].schema;
    const field = schema.properties.frontendRedirectUrl;
    expect(field.description).toMatch(/http or https/);
    expect(new RegExp(field.pattern).test('https://app.example/x')).toBe(true);
    expect(new RegExp(field.pattern).test('javascript:alert(1)')).toBe(false);
  });
});
