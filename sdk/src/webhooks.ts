/**
 * Receiving webhook deliveries: signature verification over the raw bytes (the
 * service's `X-Service-*` headers and the Standard Webhooks `webhook-*` headers,
 * every set present must hold), timestamp tolerance (5 minutes), de-duplication
 * on the delivery id (pluggable store; in memory with a TTL by default), typed
 * event payloads, and adapters for node:http, Fastify and Express. See
 * docs/webhooks.md. No dependency on fastify or express.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookEvent } from './types.js';

export const DEFAULT_TOLERANCE_MS = 5 * 60_000;
/** Largest body read by the adapters (deliveries are small JSON documents). */
export const MAX_BODY_BYTES = 1024 * 1024;

export type Headers_ = Record<string, string | string[] | undefined> | Headers;

export type VerifyFailure = 'missing-headers' | 'stale-timestamp' | 'bad-signature';
export type Verification = { ok: true; id: string } | { ok: false; reason: VerifyFailure };

export interface VerifyOptions {
  /** Epoch ms of now. Default Date.now(). */
  nowMs?: number;
  toleranceMs?: number;
}

function headerGetter(headers: Headers_): (name: string) => string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    const h = headers as Headers;
    return (name) => h.get(name) ?? undefined;
  }
  const rec = headers as Record<string, string | string[] | undefined>;
  const lower = new Map(Object.entries(rec).map(([k, v]) => [k.toLowerCase(), v]));
  return (name) => {
    const v = lower.get(name);
    return Array.isArray(v) ? v[0] : v;
  };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const hmac = (secret: string, prefix: string, body: Buffer) =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(prefix).update(body);

function checkService(secrets: string[], h: (n: string) => string | undefined, body: Buffer, now: number, tol: number): Verification {
  const ts = h('x-service-timestamp');
  const sig = h('x-service-signature');
  const id = h('x-service-delivery');
  if (!ts || !sig || !id) return { ok: false, reason: 'missing-headers' };
  if (!/^\d+$/.test(ts) || Math.abs(now - Number(ts)) > tol) return { ok: false, reason: 'stale-timestamp' };
  const ok = secrets.some((s) => sameText(sig, 'sha256=' + hmac(s, `${ts}.`, body).digest('hex')));
  return ok ? { ok: true, id } : { ok: false, reason: 'bad-signature' };
}

function checkStandard(secrets: string[], h: (n: string) => string | undefined, body: Buffer, now: number, tol: number): Verification {
  const id = h('webhook-id');
  const ts = h('webhook-timestamp');
  const sigs = h('webhook-signature');
  if (!id || !ts || !sigs) return { ok: false, reason: 'missing-headers' };
  if (!/^\d+$/.test(ts) || Math.abs(now - Number(ts) * 1000) > tol) return { ok: false, reason: 'stale-timestamp' };
  const given = sigs.split(' ').filter(Boolean);
  const ok = secrets.some((s) => {
    const expected = 'v1,' + hmac(s, `${id}.${ts}.`, body).digest('base64');
    return given.some((g) => sameText(g, expected));
  });
  return ok ? { ok: true, id } : { ok: false, reason: 'bad-signature' };
}

/**
 * Verifies a delivery over its exact raw bytes. Checks the `X-Service-*` set when
 * any of its headers is present and the Standard Webhooks set when any `webhook-*`
 * header is; every set present must hold and at least one must be there. Several
 * secrets may be given (secret rotation): any one may match.
 */
export function verifyWebhook(
  secret: string | string[],
  headers: Headers_,
  rawBody: Buffer | Uint8Array | string,
  o: VerifyOptions = {},
): Verification {
  const secrets = Array.isArray(secret) ? secret : [secret];
  const body =
    typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const h = headerGetter(headers);
  const now = o.nowMs ?? Date.now();
  const tol = o.toleranceMs ?? DEFAULT_TOLERANCE_MS;
  const checks: Verification[] = [];
  if (['x-service-timestamp', 'x-service-signature', 'x-service-delivery'].some((n) => h(n) !== undefined))
    checks.push(checkService(secrets, h, body, now, tol));
  if (['webhook-id', 'webhook-timestamp', 'webhook-signature'].some((n) => h(n) !== undefined))
    checks.push(checkStandard(secrets, h, body, now, tol));
  if (checks.length === 0) return { ok: false, reason: 'missing-headers' };
  for (const c of checks) if (!c.ok) return c;
  // Both sets name the same delivery (webhook-id = X-Service-Delivery); refuse a mix.
  const ids = new Set(checks.map((c) => (c as { id: string }).id));
  if (ids.size > 1) return { ok: false, reason: 'bad-signature' };
  return checks[0];
}

/** Remembers delivery ids already handled. `claim` answers false when the id was seen (or is being handled). */
export interface DedupeStore {
  claim(id: string): boolean | Promise<boolean>;
  /** Forgets a claim whose handling failed, so the retry is handled. */
  release(id: string): void | Promise<void>;
}

/**
 * In-memory store with a TTL (default 24 h: the service's retries span about 15
 * minutes, an operator's redelivery may come later) and a size cap. One process
 * only: behind several instances use a shared store (Redis SET NX PX, a unique
 * index ...).
 */
export class MemoryDedupeStore implements DedupeStore {
  private readonly seen = new Map<string, number>();

  constructor(private readonly o: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {}

  claim(id: string): boolean {
    const now = (this.o.now ?? Date.now)();
    this.sweep(now);
    const until = this.seen.get(id);
    if (until !== undefined && until > now) return false;
    this.seen.delete(id);
    this.seen.set(id, now + (this.o.ttlMs ?? 24 * 3_600_000));
    const max = this.o.maxEntries ?? 100_000;
    while (this.seen.size > max) this.seen.delete(this.seen.keys().next().value!);
    return true;
  }

  release(id: string): void {
    this.seen.delete(id);
  }

  get size(): number {
    return this.seen.size;
  }

  private sweep(now: number): void {
    // Insertion order is expiry order (one TTL): drop from the front while expired.
    for (const [id, until] of this.seen) {
      if (until > now) break;
      this.seen.delete(id);
    }
  }
}

export interface DeliveryContext {
  /** The delivery id (= body id), already de-duplicated. */
  deliveryId: string;
  headers: Headers_;
  rawBody: Buffer;
}

export interface WebhookReceiverOptions {
  /** The listener secret (or several, during a rotation). */
  secret: string | string[];
  /** Called once per delivery id with the verified, parsed event. Throw to have the service retry. */
  onEvent: (event: WebhookEvent, ctx: DeliveryContext) => void | Promise<void>;
  toleranceMs?: number;
  store?: DedupeStore;
  /** Epoch ms. Default Date.now. */
  now?: () => number;
  /** Told about every refused or duplicate delivery. */
  onRejected?: (r: { status: number; reason: string; deliveryId?: string }) => void;
}

export interface ReceiveResult {
  /** Status to answer with: 204 handled, 200 duplicate, 401 not verified, 400 not JSON, 500 the handler failed (retried). */
  status: number;
  reason?: 'duplicate' | VerifyFailure | 'bad-json' | 'handler-failed' | 'too-large';
  event?: WebhookEvent;
  error?: unknown;
}

/** Verifies, de-duplicates, parses and dispatches deliveries; the adapters feed it. */
export class WebhookReceiver {
  readonly store: DedupeStore;

  constructor(private readonly o: WebhookReceiverOptions) {
    this.store = o.store ?? new MemoryDedupeStore({ now: o.now });
  }

  async receive(headers: Headers_, rawBody: Buffer | Uint8Array | string): Promise<ReceiveResult> {
    const body =
      typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
    const v = verifyWebhook(this.o.secret, headers, body, { nowMs: (this.o.now ?? Date.now)(), toleranceMs: this.o.toleranceMs });
    if (!v.ok) return this.rejected({ status: 401, reason: v.reason });
    let event: WebhookEvent;
    try {
      event = JSON.parse(body.toString('utf8')) as WebhookEvent;
    } catch {
      return this.rejected({ status: 400, reason: 'bad-json' }, v.id);
    }
    if (!event || typeof event !== 'object' || typeof event.type !== 'string')
      return this.rejected({ status: 400, reason: 'bad-json' }, v.id);
    if (!(await this.store.claim(v.id))) return this.rejected({ status: 200, reason: 'duplicate', event }, v.id);
    try {
      await this.o.onEvent(event, { deliveryId: v.id, headers, rawBody: body });
    } catch (error) {
      await this.store.release(v.id);
      return this.rejected({ status: 500, reason: 'handler-failed', event, error }, v.id);
    }
    return { status: 204, event };
  }

  private rejected(r: ReceiveResult, deliveryId?: string): ReceiveResult {
    this.o.onRejected?.({ status: r.status, reason: r.reason!, deliveryId });
    return r;
  }
}

/** Reads a node request's body (at most `limit` bytes; undefined beyond it). */
export function readRawBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) over = true;
      else if (!over) chunks.push(c);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function answer(res: ServerResponse, r: ReceiveResult): void {
  res.statusCode = r.status;
  res.end();
}

/** node:http request listener: `http.createServer(nodeWebhookHandler(receiver))`, or call it from your own router. */
export function nodeWebhookHandler(receiver: WebhookReceiver): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'POST') {
      res.statusCode = 405;
      res.setHeader('allow', 'POST');
      res.end();
      return;
    }
    const raw = await readRawBody(req);
    if (!raw) return answer(res, { status: 413, reason: 'too-large' });
    answer(res, await receiver.receive(req.headers, raw));
  };
}

// --- Express --------------------------------------------------------------

/** The parts of an Express request and response used here (Express's own types fit). */
export interface ExpressLikeRequest extends IncomingMessage {
  body?: unknown;
  rawBody?: Buffer;
}
export type ExpressLikeNext = (err?: unknown) => void;

/**
 * Express middleware `(req, res, next)`. Mount it before any JSON body parser
 * (`app.post('/hooks', expressWebhookMiddleware(receiver))`), or after
 * `express.raw({type: 'application/json'})`: it needs the raw bytes. A body some
 * parser already turned into an object cannot be verified: that is passed to
 * `next` as an error. It answers the delivery itself; `next` is called only on
 * such errors.
 */
export function expressWebhookMiddleware(
  receiver: WebhookReceiver,
): (req: ExpressLikeRequest, res: ServerResponse, next: ExpressLikeNext) => void {
  return (req, res, next) => {
    void (async () => {
      let raw: Buffer | undefined;
      if (Buffer.isBuffer(req.rawBody)) raw = req.rawBody;
      else if (Buffer.isBuffer(req.body)) raw = req.body;
      else if (typeof req.body === 'string') raw = Buffer.from(req.body, 'utf8');
      else if (!req.readableEnded) {
        raw = await readRawBody(req);
        if (!raw) return answer(res, { status: 413, reason: 'too-large' });
      } else {
        throw new Error('webhook body was already parsed; mount the webhook middleware before express.json() or use express.raw()');
      }
      answer(res, await receiver.receive(req.headers, raw));
    })().catch(next);
  };
}

// --- Fastify ----------------------------------------------------------------

/** The parts of Fastify used here (structural: no dependency on fastify). */
export interface FastifyLikeRequest {
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  rawBody?: Buffer | string;
}
export interface FastifyLikeReply {
  code(status: number): FastifyLikeReply;
  send(payload?: unknown): unknown;
}
export interface FastifyLikeInstance {
  addContentTypeParser(
    type: string | string[] | RegExp,
    opts: { parseAs: 'buffer'; bodyLimit?: number },
    parser: (req: unknown, body: Buffer, done: (err: Error | null, body?: unknown) => void) => void,
  ): void;
  post(path: string, handler: (req: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<unknown>): unknown;
}

/**
 * Fastify route handler. The body must reach it as raw bytes: a Buffer body (a
 * `parseAs: 'buffer'` content-type parser) or `req.rawBody` (fastify-raw-body).
 */
export function fastifyWebhookHandler(receiver: WebhookReceiver): (req: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<unknown> {
  return async (req, reply) => {
    const raw = req.rawBody ?? req.body;
    if (!Buffer.isBuffer(raw) && typeof raw !== 'string') {
      throw new Error('webhook body is not raw bytes; register fastifyWebhookPlugin or keep the raw body (parseAs: buffer)');
    }
    const r = await receiver.receive(req.headers, raw);
    return reply.code(r.status).send();
  };
}

/**
 * Fastify plugin: `app.register(fastifyWebhookPlugin, {receiver, path: '/hooks'})`.
 * Inside its own (encapsulated) context it parses `application/json` as a Buffer,
 * so the rest of the app keeps its JSON parser.
 */
export async function fastifyWebhookPlugin(
  instance: FastifyLikeInstance,
  opts: { receiver: WebhookReceiver; path?: string; bodyLimit?: number },
): Promise<void> {
  const parser = (_req: unknown, body: Buffer, done: (err: Error | null, body?: unknown) => void) => done(null, body);
  instance.addContentTypeParser(
    ['application/json', 'application/*+json'],
    { parseAs: 'buffer', bodyLimit: opts.bodyLimit ?? MAX_BODY_BYTES },
    parser,
  );
  instance.post(opts.path ?? '/webhooks', fastifyWebhookHandler(opts.receiver));
}

// --- for tests and tools ------------------------------------------------------

/** Signs a body the way the service does (both header sets), e.g. to test a receiver. */
export function signDelivery(secret: string, id: string, rawBody: string | Buffer, nowMs: number): Record<string, string> {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const ts = String(nowMs);
  const seconds = String(Math.floor(nowMs / 1000));
  return {
    'content-type': 'application/json',
    'x-service-delivery': id,
    'x-service-timestamp': ts,
    'x-service-signature': 'sha256=' + hmac(secret, `${ts}.`, body).digest('hex'),
    'webhook-id': id,
    'webhook-timestamp': seconds,
    'webhook-signature': 'v1,' + hmac(secret, `${id}.${seconds}.`, body).digest('base64'),
  };
}
