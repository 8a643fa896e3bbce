/**
 * The SDK's webhook receiving through each adapter (node:http, Fastify, Express
 * middleware over node:http): valid deliveries handled once, duplicates
 * acknowledged without handling, a tampered body, a stale timestamp, missing
 * headers or a wrong secret refused, a failing handler answered 500 so the
 * delivery is retried. Deliveries are signed here with node:crypto, independently
 * of the SDK and of the service.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import {
  MemoryDedupeStore,
  WebhookReceiver,
  expressWebhookMiddleware,
  fastifyWebhookPlugin,
  nodeWebhookHandler,
  verifyWebhook,
  type WebhookEvent,
} from '../../sdk/src/index.js';

const SECRET = 'sdk-test-secret-0123456789abcdef0123456789';

function sign(body: string, o: { id?: string; nowMs?: number; secret?: string; sets?: 'both' | 'service' | 'standard' } = {}) {
  const id = o.id ?? `whk_${randomUUID()}`;
  const now = o.nowMs ?? Date.now();
  const secret = o.secret ?? SECRET;
  const ts = String(now);
  const sec = String(Math.floor(now / 1000));
  const service = {
    'x-service-event': 'ROOM_BOOK',
    'x-service-delivery': id,
    'x-service-timestamp': ts,
    'x-service-signature': 'sha256=' + createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex'),
  };
  const standard = {
    'webhook-id': id,
    'webhook-timestamp': sec,
    'webhook-signature': 'v1,' + createHmac('sha256', secret).update(`${id}.${sec}.${body}`).digest('base64'),
  };
  const sets = o.sets ?? 'both';
  return {
    id,
    headers: { 'content-type': 'application/json', ...(sets !== 'standard' ? service : {}), ...(sets !== 'service' ? standard : {}) },
  };
}

function delivery(id: string, roomName = 'Orchid') {
  return JSON.stringify({
    id,
    type: 'ROOM_BOOK',
    version: 1,
    occurredAt: '2030-01-07T03:00:00.000Z',
    projectId: 'p',
    data: {
      projectId: 'p',
      userId: 'u',
      timestamp: '2030-01-07T03:00:00.000Z',
      roomName,
      floorName: '12F',
      bookingDate: '2030-01-07T03:00:00.000Z',
      startTime: '10:00',
      endTime: '11:00',
      unknownField: 1,
    },
  });
}

interface Harness {
  url: string;
  close(): Promise<void>;
}

type Adapter = (receiver: WebhookReceiver) => Promise<Harness>;

async function listen(server: http.Server): Promise<Harness> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const adapters: Record<string, Adapter> = {
  'node:http': (receiver) => listen(http.createServer(nodeWebhookHandler(receiver))),
  fastify: async (receiver) => {
    const app = Fastify();
    await app.register(fastifyWebhookPlugin, { receiver, path: '/hooks' });
    // The rest of the app keeps its JSON parser.
    app.post('/other', async (req) => ({ parsed: req.body }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    return { url: `http://127.0.0.1:${port}/hooks`, close: () => app.close() };
  },
  'express middleware (stream)': (receiver) => {
    const mw = expressWebhookMiddleware(receiver);
    return listen(
      http.createServer((req, res) =>
        mw(req, res, (err) => {
          res.statusCode = 599;
          res.end(String(err));
        }),
      ),
    );
  },
  'express middleware (after express.raw: req.body is a Buffer)': (receiver) => {
    const mw = expressWebhookMiddleware(receiver);
    return listen(
      http.createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const ch of req) chunks.push(ch as Buffer);
        Object.assign(req, { body: Buffer.concat(chunks) });
        mw(req, res, (err) => {
          res.statusCode = 599;
          res.end(String(err));
        });
      }),
    );
  },
};

describe.each(Object.keys(adapters))('webhook receiving: %s', (name) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function start(o: { failFirst?: boolean } = {}) {
    const events: { event: WebhookEvent; deliveryId: string }[] = [];
    let failures = o.failFirst ? 1 : 0;
    const receiver = new WebhookReceiver({
      secret: SECRET,
      onEvent: (event, ctx) => {
        if (failures-- > 0) throw new Error('handler down');
        events.push({ event, deliveryId: ctx.deliveryId });
      },
    });
    h = await adapters[name](receiver);
    const post = async (body: string, headers: Record<string, string>) => (await fetch(h!.url, { method: 'POST', headers, body })).status;
    return { events, post };
  }

  it('valid delivery handled once; the same delivery id again is acknowledged without handling', async () => {
    const { events, post } = await start();
    const id = `whk_${randomUUID()}`;
    const body = delivery(id);
    const signed = sign(body, { id });
    expect(await post(body, signed.headers)).toBe(204);
    // A retry: same id and body, fresh timestamp.
    expect(await post(body, sign(body, { id, nowMs: Date.now() + 1000 }).headers)).toBe(200);
    expect(events).toHaveLength(1);
    expect(events[0].deliveryId).toBe(id);
    const e = events[0].event;
    if (e.type !== 'ROOM_BOOK') throw new Error('narrowing');
    expect(e.data.roomName).toBe('Orchid');
    expect(e.data.startTime).toBe('10:00');
  });

  it('refuses a tampered body, a stale timestamp, missing headers and a wrong secret (401), never handling them', async () => {
    const { events, post } = await start();
    const id = `whk_${randomUUID()}`;
    const body = delivery(id);
    expect(await post(body.replace('Orchid', 'Lotus'), sign(body, { id }).headers)).toBe(401);
    expect(await post(body, sign(body, { id, nowMs: Date.now() - 6 * 60_000 }).headers)).toBe(401);
    expect(await post(body, sign(body, { id, nowMs: Date.now() + 6 * 60_000 }).headers)).toBe(401);
    expect(await post(body, { 'content-type': 'application/json' })).toBe(401);
    expect(await post(body, sign(body, { id, secret: 'another-secret-0123456789abcdef0123456789' }).headers)).toBe(401);
    // One good header set and one bad: refused.
    const good = sign(body, { id });
    expect(await post(body, { ...good.headers, 'webhook-signature': 'v1,AAAA' })).toBe(401);
    expect(events).toEqual([]);
    // Refusals did not mark the id as seen: the genuine delivery is still handled.
    expect(await post(body, good.headers)).toBe(204);
    expect(events).toHaveLength(1);
  });

  it('accepts either header set alone (X-Service-* or Standard Webhooks)', async () => {
    const { events, post } = await start();
    for (const sets of ['service', 'standard'] as const) {
      const id = `whk_${randomUUID()}`;
      const body = delivery(id);
      expect(await post(body, sign(body, { id, sets }).headers)).toBe(204);
    }
    expect(events).toHaveLength(2);
  });

  it('a failing handler answers 500 and the retry is handled', async () => {
    const { events, post } = await start({ failFirst: true });
    const id = `whk_${randomUUID()}`;
    const body = delivery(id);
    expect(await post(body, sign(body, { id }).headers)).toBe(500);
    expect(await post(body, sign(body, { id }).headers)).toBe(204);
    expect(events).toHaveLength(1);
  });
});

describe('webhook pieces', () => {
  it('the Fastify plugin keeps the raw body to itself: other routes still parse JSON', async () => {
    const app = Fastify();
    await app.register(fastifyWebhookPlugin, { receiver: new WebhookReceiver({ secret: SECRET, onEvent: () => {} }), path: '/hooks' });
    app.post('/other', async (req) => ({ parsed: req.body }));
    const res = await app.inject({ method: 'POST', url: '/other', payload: { a: 1 } });
    expect(res.json()).toEqual({ parsed: { a: 1 } });
    await app.close();
  });

  it('the Express middleware passes a body some parser already turned into an object to next', async () => {
    const mw = expressWebhookMiddleware(new WebhookReceiver({ secret: SECRET, onEvent: () => {} }));
    const errors: unknown[] = [];
    const req = Object.assign(new http.IncomingMessage(null as any), { body: { already: 'parsed' }, headers: {} });
    req.push(null);
    await new Promise<void>((r) => req.on('end', () => r()).resume());
    await new Promise<void>((resolve) => mw(req, {} as any, (err) => (errors.push(err), resolve())));
    expect(String(errors[0])).toMatch(/already parsed/);
  });

  it('verifyWebhook with an injected clock, several secrets (rotation) and Fetch Headers', () => {
    const now = 1_900_000_000_000;
    const id = 'whk_1';
    const body = delivery(id);
    const { headers } = sign(body, { id, nowMs: now, secret: 'old-secret-0123456789abcdef0123456789ab' });
    expect(verifyWebhook(SECRET, headers, body, { nowMs: now })).toEqual({ ok: false, reason: 'bad-signature' });
    expect(
      verifyWebhook([SECRET, 'old-secret-0123456789abcdef0123456789ab'], new Headers(headers), Buffer.from(body), { nowMs: now }),
    ).toEqual({ ok: true, id });
    expect(verifyWebhook([SECRET, 'old-secret-0123456789abcdef0123456789ab'], headers, body, { nowMs: now + 5 * 60_000 + 1000 })).toEqual({
      ok: false,
      reason: 'stale-timestamp',
    });
  });

  it('the in-memory de-duplication store forgets ids after its TTL', () => {
    const clock = { now: 0 };
    const store = new MemoryDedupeStore({ ttlMs: 1000, now: () => clock.now });
    expect(store.claim('a')).toBe(true);
    expect(store.claim('a')).toBe(false);
    clock.now = 1001;
    expect(store.claim('b')).toBe(true);
    expect(store.size).toBe(1);
    expect(store.claim('a')).toBe(true);
  });
});
