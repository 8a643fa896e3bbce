/**
 * Hostile webhook receivers with the background workers running (as in
 * production, no test-driven drain): one never answers, one answers 10 MB, one
 * redirects. While they misbehave, a healthy listener gets every delivery: it is
 * never held up. The one that never answers times out at WEBHOOK_TIMEOUT_MS
 * (10 s by default, 3 s here), the 10 MB one is delivered on its status without
 * its body being read, the redirect is a failed attempt and is not followed.
 * (webhooks-transport.test.ts covers each odd answer in detail with drains.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookService, type WebhookCtx } from '../support/webhook-site.js';
import { TEST_ENGINE } from '../support/test-database.js';
import { until } from '../support/delivery-audit.js';
import { OddReceiver } from '../support/odd-receiver.js';

const TIMEOUT_MS = 3_000;
const BOOKINGS = 3;

describe(`hostile webhook receivers with the workers running (${TEST_ENGINE})`, () => {
  let rx: OddReceiver;
  let c: WebhookCtx;

  beforeAll(async () => {
    rx = await OddReceiver.start();
    c = await startWebhookService({
      rooms: Array.from({ length: BOOKINGS }, (_, i) => ({ key: `room${i}`, name: `Room ${i}` })),
      hooks: [
        { key: 'hk-hang', url: rx.url('/hang'), events: ['ROOM_BOOK'] },
        { key: 'hk-huge', url: rx.url('/huge-200'), events: ['ROOM_BOOK'] },
        { key: 'hk-redirect', url: rx.url('/redirect-302'), events: ['ROOM_BOOK'] },
        { key: 'hk-plain', url: rx.url('/plain'), events: ['ROOM_BOOK'] },
      ],
      env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  it('a healthy listener gets every delivery while another hangs; the hanging one times out; 10 MB and redirects are dealt with', async () => {
    for (let i = 0; i < BOOKINGS; i++) await c.bookRoom(`room${i}`, '10:00', '11:00', 1);

    // Every delivery to the healthy listener arrives while the hanging listener still holds its requests open.
    await until(
      'the healthy listener served',
      async () => {
        const ds = await c.deliveries('hk-plain');
        return ds.length === BOOKINGS && ds.every((d) => d.status === 'delivered');
      },
      15_000,
      50,
    );
    expect(rx.count('/plain')).toBe(BOOKINGS);
    expect(rx.hanging.size, 'the hanging receiver still holds requests').toBeGreaterThan(0);
    const hangingNow = await c.deliveries('hk-hang');
    expect(
      hangingNow.some((d) => d.status === 'pending' && d.attempts === 0),
      'a hanging attempt not finished yet',
    ).toBe(true);

    // The 10 MB answer: delivered on its 200, body not read to the end.
    await until(
      'huge delivered',
      async () => (await c.deliveries('hk-huge')).filter((d) => d.status === 'delivered').length === BOOKINGS,
      15_000,
      50,
    );
    // The redirect: a failed attempt with its status, retried later, never followed.
    await until('redirects recorded', async () => (await c.deliveries('hk-redirect')).every((d) => d.attempts === 1), 15_000, 50);
    for (const d of await c.deliveries('hk-redirect')) {
      expect(d).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 302, lastError: 'HTTP 302' });
    }
    expect(rx.count('/target')).toBe(0);

    // The hanging receiver: each attempt ends as a timeout, and is retried later.
    await until(
      'hanging attempts timed out',
      async () => (await c.deliveries('hk-hang')).every((d) => d.attempts >= 1),
      TIMEOUT_MS * 3 + 10_000,
      100,
    );
    for (const d of await c.deliveries('hk-hang')) {
      expect(d.status).toBe('pending');
      expect(d.lastError).toMatch(/timed out after 3 s/);
      expect(d.nextAttemptAt).not.toBeNull();
    }
  }, 60_000);
});
