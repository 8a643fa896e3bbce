/**
 * The delivery HTTP client against receivers that misbehave, over real loopback
 * HTTP (docs/webhooks.md): a redirect is the receiver's answer (a failed attempt)
 * and is never followed, whatever its code; a huge or endless response body is not
 * read (the status is the answer; the connection is dropped past 64 KB or at the
 * deadline), so it neither holds the attempt up nor fills memory; and deliveries to
 * one listener reuse kept-alive connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookService, type WebhookCtx } from '../support/webhook-site.js';
import { sleep } from '../support/fixtures.js';
import { OddReceiver } from '../support/odd-receiver.js';

const TIMEOUT_MS = 2_000;

describe('the delivery client against odd receivers', () => {
  let rx: OddReceiver;
  let c: WebhookCtx;

  beforeAll(async () => {
    rx = await OddReceiver.start();
    c = await startWebhookService({
      rooms: [{ key: 'orchid', name: 'Orchid' }],
      hooks: [
        ...[301, 302, 303, 307, 308].map((code) => ({ key: `hk-${code}`, url: rx.url(`/redirect-${code}`), events: ['ROOM_BOOK'] })),
        { key: 'hk-huge-200', url: rx.url('/huge-200'), events: ['ROOM_BOOK'] },
        { key: 'hk-huge-500', url: rx.url('/huge-500'), events: ['ROOM_BOOK'] },
        { key: 'hk-endless', url: rx.url('/endless'), events: ['ROOM_BOOK'] },
        { key: 'hk-plain', url: rx.url('/plain'), events: ['ROOM_BOOK', 'ROOM_MODIFY'] },
      ],
      env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  it('answers are taken from the status alone, and no odd receiver holds the others up', async () => {
    const started = Date.now();
    await c.bookRoom('orchid', '10:00', '11:00', 1);
    await c.drain();
    // Nothing waited for a body: the endless one is answered 200 at once, its body dropped at the deadline at the latest.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3_000);
    expect(rx.count('/plain')).toBe(1);
  });

  it('a redirect (301, 302, 303, 307, 308) is a failed attempt, with its status, and is never followed', async () => {
    for (const code of [301, 302, 303, 307, 308]) {
      expect(rx.count(`/redirect-${code}`), `${code}`).toBe(1);
      const [d] = await c.deliveries(`hk-${code}`);
      expect(d, `${code}`).toMatchObject({ status: 'pending', attempts: 1, lastStatus: code, lastError: `HTTP ${code}` });
      expect(d.nextAttemptAt, `${code}: retried later`).not.toBeNull();
    }
    expect(rx.count('/target')).toBe(0);
  });

  it('a 10 MB answer is not read: a 200 is delivered and a 500 refused, and the connection is dropped after a few dozen KB', async () => {
    const [ok] = await c.deliveries('hk-huge-200');
    expect(ok).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200 });
    const [refused] = await c.deliveries('hk-huge-500');
    expect(refused).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 500, lastError: 'HTTP 500' });
    for (const path of ['/huge-200', '/huge-500']) {
      const [cut] = rx.cut.get(path) ?? [];
      expect(cut, `${path}: the client went away before the end`).toBeDefined();
      // What the server managed to write: the 64 KB read plus what socket buffers hold, far from 10 MB.
      expect(cut!.written, path).toBeLessThan(4 * 1024 * 1024);
      expect(cut!.closedAfterMs, path).toBeLessThan(TIMEOUT_MS);
    }
  });

  it('an endless answer is delivered on its status, and its connection is dropped', async () => {
    const [d] = await c.deliveries('hk-endless');
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200 });
    await sleep(200);
    const [cut] = rx.cut.get('/endless') ?? [];
    expect(cut, 'the client went away').toBeDefined();
    expect(cut!.written).toBeLessThan(4 * 1024 * 1024);
  });

  it('deliveries to one listener reuse their kept-alive connections', async () => {
    const meeting = await c.bookRoom('orchid', '12:00', '13:00', 1);
    await c.drain();
    const before = rx.sockets.size;
    for (let i = 0; i < 12; i++) {
      const res = await c.patch(meeting._id, { title: `edit ${i}` });
      expect(res.status, res.text).toBe(200);
    }
    await c.drain();
    expect(rx.count('/plain')).toBe(2 + 12);
    // 12 deliveries, at most 4 at once: no new connection per delivery.
    expect(rx.sockets.size - before).toBeLessThanOrEqual(4);
  });
});
