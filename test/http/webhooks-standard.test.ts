/**
 * Standard Webhooks headers (standardwebhooks.com, docs/webhooks.md): every
 * delivery carries webhook-id (the delivery id, the same on every retry),
 * webhook-timestamp (unix seconds of the attempt) and webhook-signature
 * ("v1," + base64 HMAC-SHA256 over "{id}.{timestamp}.{body}", keyed with the
 * secret's UTF-8 bytes), next to the service's own x-service-* headers. Checked
 * here with node:crypto directly, not the service's signing code; a retry is
 * signed again with a fresh timestamp, so a receiver with 5 minutes of tolerance
 * accepts a late retry. The receiver kit verifies the new headers too.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookService, secretFor, type WebhookCtx } from '../support/webhook-site.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { sleep } from '../support/fixtures.js';
import { createVerifier } from '../../src/modules/webhooks/receiver-kit.js';

const SECRET = secretFor('hk-std');

/** The Standard Webhooks signature, computed independently. */
const sign = (id: string, ts: string, raw: Buffer) =>
  `v1,${createHmac('sha256', Buffer.from(SECRET, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${id}.${ts}.`), raw]))
    .digest('base64')}`;

describe('Standard Webhooks headers', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    c = await startWebhookService({
      rooms: [{ key: 'orchid', name: 'Orchid' }],
      hooks: [
        { key: 'hk-std', url: rx.url('/std'), events: ['ROOM_BOOK'] },
        { key: 'hk-retry', url: rx.url('/retry'), events: ['ROOM_MODIFY'], secret: SECRET },
      ],
    });
  });
  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  it('each delivery carries webhook-id, webhook-timestamp and a v1 signature a receiver can check with the secret alone', async () => {
    const before = Math.floor(Date.now() / 1000);
    await c.bookRoom('orchid', '09:00', '10:00');
    await c.drain();
    const [r] = await rx.waitForCount('/std', 1);
    const after = Math.floor(Date.now() / 1000);
    const id = r!.headers['webhook-id'] as string;
    const ts = r!.headers['webhook-timestamp'] as string;
    expect(id).toBe(r!.headers['x-service-delivery']);
    expect(ts).toMatch(/^\d+$/);
    expect(Number(ts)).toBeGreaterThanOrEqual(before);
    expect(Number(ts)).toBeLessThanOrEqual(after);
    expect(Number(ts)).toBe(Math.floor(Number(r!.headers['x-service-timestamp']) / 1000));
    expect(r!.headers['webhook-signature']).toBe(sign(id, ts, r!.raw));
    // The service's own signature is still there.
    expect(r!.headers['x-service-signature']).toBe(
      `sha256=${createHmac('sha256', SECRET)
        .update(Buffer.concat([Buffer.from(`${r!.headers['x-service-timestamp']}.`), r!.raw]))
        .digest('hex')}`,
    );
    // The receiver kit checks the Standard Webhooks headers.
    const verifier = createVerifier(SECRET);
    const now = Number(ts) * 1000;
    expect(verifier.verify(r!.headers, r!.raw, now)).toEqual({ ok: true, duplicate: false });
    expect(verifier.verify(r!.headers, r!.raw, now)).toEqual({ ok: true, duplicate: true });
    expect(
      createVerifier(SECRET).verify({ ...r!.headers, 'webhook-signature': sign(id, String(Number(ts) + 1), r!.raw) }, r!.raw, now),
    ).toEqual({ ok: false, reason: 'bad-signature' });
    expect(createVerifier(SECRET).verify(r!.headers, Buffer.concat([r!.raw, Buffer.from(' ')]), now)).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
    expect(createVerifier(SECRET).verify(r!.headers, r!.raw, now + 6 * 60_000)).toEqual({ ok: false, reason: 'stale-timestamp' });
    // A receiver that keeps only the Standard Webhooks headers verifies with them alone.
    const standardOnly = { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': r!.headers['webhook-signature'] as string };
    expect(createVerifier(SECRET).verify(standardOnly, r!.raw, now)).toEqual({ ok: true, duplicate: false });
    expect(createVerifier(SECRET).verify({ ...standardOnly, 'webhook-id': `${id}x` }, r!.raw, now)).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
    // Several signatures (key rotation): any one that matches is enough.
    expect(createVerifier(SECRET).verify({ ...r!.headers, 'webhook-signature': `v1,AAAA ${sign(id, ts, r!.raw)}` }, r!.raw, now)).toEqual({
      ok: true,
      duplicate: false,
    });
  });

  it('a retry keeps webhook-id and is signed again with a newer timestamp', async () => {
    let n = 0;
    rx.respond('/retry', () => (++n === 1 ? 500 : 200));
    const m = await c.bookRoom('orchid', '11:00', '12:00');
    const res = await c.patch(m._id, { title: 'moved' });
    expect(res.status, res.text).toBe(200);
    await c.drain();
    const [first] = await rx.waitForCount('/retry', 1);
    // Timestamps are whole seconds of real time: let one pass before the retry.
    const firstTs = Number(first!.headers['webhook-timestamp']);
    while (Math.floor(Date.now() / 1000) <= firstTs) await sleep(50);
    await c.advance(2);
    await c.drain();
    const [, second] = await rx.waitForCount('/retry', 2);
    expect(second!.answered).toBe(200);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.raw.equals(first!.raw)).toBe(true);
    const ts = second!.headers['webhook-timestamp'] as string;
    expect(Number(ts)).toBeGreaterThan(firstTs);
    expect(second!.headers['webhook-signature']).toBe(sign(second!.headers['webhook-id'] as string, ts, second!.raw));
    expect(second!.headers['webhook-signature']).not.toBe(first!.headers['webhook-signature']);
    expect(createVerifier(SECRET).verify(second!.headers, second!.raw, second!.receivedAt)).toEqual({ ok: true, duplicate: false });
  });

  it('apply refuses custom headers that would replace the signature headers', async () => {
    const res = await c.svc.ops('POST', '/ops/v1/apply', {
      webhooks: [
        {
          key: 'hk-bad',
          project: 'tower',
          url: rx.url('/bad'),
          secret: SECRET,
          events: ['ROOM_BOOK'],
          auth: { scheme: 'custom-header', headers: { 'Webhook-Signature': 'v1,forged', 'webhook-id': 'x', 'webhook-timestamp': '1' } },
        },
      ],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.message).toEqual([
      'webhooks[hk-bad].auth.headers: "Webhook-Signature" is set by the service and cannot be overridden',
      'webhooks[hk-bad].auth.headers: "webhook-id" is set by the service and cannot be overridden',
      'webhooks[hk-bad].auth.headers: "webhook-timestamp" is set by the service and cannot be overridden',
    ]);
  });
});
