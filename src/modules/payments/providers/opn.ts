/**
 * Opn Payments (formerly Omise) behind the PaymentProvider port, over plain
 * `fetch` (the `omise` package has no timeout, no custom headers, no port in its
 * host setting and cannot download a document; see docs/decisions.md).
 *
 * Checkout is a PromptPay source and a charge on it; the charge's QR document is
 * downloaded here (authenticated) so the page never hot-links it. Opn documents
 * no idempotency key, so a retried create first looks for a charge carrying the
 * same payment id in its metadata, and a retried refund for a refund carrying the
 * same key. Events are verified (Omise-Signature, HMAC-SHA256 over
 * `timestamp.body` with the base64-decoded webhook secret) and the object is
 * always re-read from the API before it means anything.
 */

import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  BadSignatureError,
  ProviderRefusedError,
  ProviderUnavailableError,
  type Checkout,
  type CheckoutRequest,
  type PaymentProvider,
  type ProviderAccount,
  type ProviderDeps,
  type ProviderFactory,
  type ProviderPayment,
  type ProviderPaymentState,
  type ProviderRefund,
  type VerifiedEvent,
} from '../provider.js';

export const OPN_API_BASE = 'https://api.omise.co';
/** The API version the shapes below follow (sent as Omise-Version). */
export const OPN_API_VERSION = '2019-05-29';
/** Origin of Omise.js, the only script a card payment needs. */
export const OPN_SCRIPT_ORIGIN = 'https://cdn.omise.co';
/** How far an event's signature timestamp may be from real time. */
export const OPN_SIGNATURE_TOLERANCE_SECONDS = 300;
/** How far back a retried create looks for the charge of its payment. */
const LOOKBACK_MS = 48 * 3600_000;
/** Redirects a document download may take, and the largest QR document kept with a payment. */
const MAX_REDIRECTS = 3;
const MAX_DOCUMENT_BYTES = 512 * 1024;

interface OpnDocument {
  object: 'document';
  id: string;
  filename?: string;
  download_uri?: string;
}

interface OpnCharge {
  object: 'charge';
  id: string;
  status: 'pending' | 'successful' | 'failed' | 'expired' | 'reversed';
  amount: number;
  currency: string;
  metadata?: Record<string, unknown> | null;
  source?: { id?: string; scannable_code?: { image?: OpnDocument | null } | null } | null;
}

interface OpnRefund {
  object: 'refund';
  id: string;
  charge: string;
  /** Deprecated in the docs but still answered; absent: the refund stands. */
  status?: string | null;
  voided?: boolean;
  metadata?: Record<string, unknown> | null;
}

interface OpnList<T> {
  object: 'list';
  data: T[];
}

interface OpnSource {
  object: 'source';
  id: string;
}

interface OpnEvent {
  object: 'event';
  id: string;
  key: string;
  data?: { object?: string; id?: string; charge?: string | { id?: string } };
}

type Method = 'GET' | 'POST';

/** A small typed client: Basic auth with the secret key, JSON in and out, errors mapped to the port's. */
export class OpnClient {
  private readonly base: string;
  private readonly auth: string;

  constructor(
    apiBaseUrl: string | null,
    secretKey: string,
    private readonly timeoutMs: number,
  ) {
    this.base = (apiBaseUrl ?? OPN_API_BASE).replace(/\/+$/, '');
    this.auth = `Basic ${Buffer.from(`${secretKey}:`).toString('base64')}`;
  }

  async call<T>(method: Method, path: string, body?: Record<string, unknown>): Promise<T> {
    const res = await this.send(method, `${this.base}${path}`, body, 'application/json');
    const text = await res.text();
    if (!res.ok) throw mapHttpError(res, text, `${method} ${describePath(path)}`);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ProviderUnavailableError(`Opn Payments answered ${method} ${describePath(path)} with no JSON`);
    }
  }

  /**
   * Downloads a document (the PromptPay QR), following up to three redirects (a
   * download may answer with the address of the stored file). The key is sent
   * only to the API's own origin, never to another host.
   */
  async download(uri: string): Promise<{ contentType: string; base64: string }> {
    const apiOrigin = new URL(this.base).origin;
    let url = new URL(uri, this.base);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const res = await this.send('GET', url.toString(), undefined, '*/*', url.origin === apiOrigin, 'manual');
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        url = new URL(location, url);
        continue;
      }
      const bytes = Buffer.from(await res.arrayBuffer());
      if (!res.ok) throw mapHttpError(res, bytes.toString('utf8'), 'GET document');
      if (bytes.length > MAX_DOCUMENT_BYTES) throw new ProviderRefusedError('The Opn QR document is too large', 'document_too_large');
      const contentType = (res.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim();
      return { contentType, base64: bytes.toString('base64') };
    }
    throw new ProviderUnavailableError('Opn Payments redirected the QR document too often');
  }

  private async send(
    method: Method,
    url: string,
    body: Record<string, unknown> | undefined,
    accept: string,
    withAuth = true,
    redirect: 'error' | 'manual' = 'error',
  ): Promise<Response> {
    const headers: Record<string, string> = { Accept: accept, 'Omise-Version': OPN_API_VERSION };
    if (withAuth) headers.Authorization = this.auth;
    if (body) headers['Content-Type'] = 'application/json';
    try {
      return await fetch(url, {
        method,
        headers,
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect,
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new ProviderUnavailableError(
        timedOut ? `Opn Payments did not answer within ${this.timeoutMs} ms` : 'Opn Payments could not be reached',
      );
    }
  }
}

/** The path with object ids kept (they are not secret) and any query dropped. */
function describePath(path: string): string {
  return path.split('?')[0]!;
}

function mapHttpError(res: Response, text: string, what: string): Error {
  if (res.status >= 500 || res.status === 429) {
    const retryAfter = Number(res.headers.get('retry-after'));
    return new ProviderUnavailableError(
      `Opn Payments answered ${what} with ${res.status}`,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 30,
    );
  }
  let code = `http_${res.status}`;
  try {
    const parsed = JSON.parse(text) as { object?: string; code?: unknown };
    if (parsed.object === 'error' && typeof parsed.code === 'string') code = parsed.code;
  } catch {
    // not JSON: keep the status code
  }
  return new ProviderRefusedError(`Opn Payments refused ${what} (${res.status} ${code})`, code);
}

export function chargeState(status: OpnCharge['status']): ProviderPaymentState {
  switch (status) {
    case 'successful':
      return 'succeeded';
    case 'failed':
      return 'failed';
    case 'expired':
    case 'reversed':
      return 'cancelled';
    default:
      return 'pending';
  }
}

export function refundStatus(r: OpnRefund): ProviderRefund['status'] {
  const s = (r.status ?? '').toLowerCase();
  if (s === 'pending') return 'pending';
  if (s === 'failed' || s === 'rejected') return 'failed';
  return 'succeeded';
}

function toPayment(c: OpnCharge): ProviderPayment {
  const paymentId = c.metadata?.paymentId;
  return {
    ref: c.id,
    state: chargeState(c.status),
    amountMinor: c.amount,
    currency: c.currency.toUpperCase(),
    ...(typeof paymentId === 'string' ? { paymentId } : {}),
  };
}

function toRefund(r: OpnRefund): ProviderRefund {
  return { ref: r.id, status: refundStatus(r) };
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Checks Omise-Signature over `timestamp.rawBody`; throws BadSignatureError. */
export function verifyOpnSignature(
  rawBody: Buffer,
  headers: Record<string, string | string[] | undefined>,
  webhookSecret: string,
  nowMs: number,
): void {
  const signature = header(headers, 'omise-signature');
  const timestamp = header(headers, 'omise-signature-timestamp');
  if (!signature || !timestamp) throw new BadSignatureError('The event carries no Opn signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw new BadSignatureError('The event signature timestamp is malformed');
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > OPN_SIGNATURE_TOLERANCE_SECONDS) {
    throw new BadSignatureError('The event signature timestamp is outside the tolerance');
  }
  const key = Buffer.from(webhookSecret, 'base64');
  if (key.length === 0) throw new BadSignatureError('No webhook secret to verify the event with');
  const expected = createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), rawBody]))
    .digest();
  const ok = signature.split(',').some((candidate) => {
    const given = Buffer.from(candidate.trim(), 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!ok) throw new BadSignatureError();
}

function parseEvent(rawBody: Buffer): OpnEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new BadSignatureError('The event body is not JSON');
  }
  const e = parsed as Partial<OpnEvent> | null;
  if (!e || e.object !== 'event' || typeof e.id !== 'string' || typeof e.key !== 'string') {
    throw new BadSignatureError('The body is not an Opn event');
  }
  return e as OpnEvent;
}

function isNotFound(err: unknown): boolean {
  return err instanceof ProviderRefusedError && (err.code === 'not_found' || err.code === 'http_404');
}

export class OpnProvider implements PaymentProvider {
  readonly name = 'opn';
  private readonly client: OpnClient;

  constructor(
    private readonly account: ProviderAccount,
    private readonly deps: ProviderDeps,
  ) {
    this.client = new OpnClient(account.apiBaseUrl, account.secretKey, deps.timeoutMs);
  }

  async createCheckout(req: CheckoutRequest): Promise<Checkout> {
    if (!req.methods.includes('promptpay')) {
      throw new ProviderRefusedError('Opn checkout needs the promptpay method', 'unsupported_methods');
    }
    const charge = (await this.findCharge(req.paymentId)) ?? (await this.createCharge(req));
    const uri = charge.source?.scannable_code?.image?.download_uri;
    if (!uri) throw new ProviderUnavailableError(`Opn charge ${charge.id} carries no PromptPay QR yet`);
    const image = await this.client.download(uri);
    return {
      ref: charge.id,
      display: {
        promptpay: { image },
        ...(req.methods.includes('card') ? { card: { scriptOrigin: OPN_SCRIPT_ORIGIN } } : {}),
      },
    };
  }

  /** The charge an earlier attempt of this create left behind, if any (Opn has no idempotency key). */
  private async findCharge(paymentId: string): Promise<OpnCharge | undefined> {
    const from = new Date(this.deps.realClock.now() - LOOKBACK_MS).toISOString();
    const q = new URLSearchParams({ from, order: 'reverse_chronological', limit: '100' });
    const list = await this.client.call<OpnList<OpnCharge>>('GET', `/charges?${q.toString()}`);
    return list.data.find((c) => c.metadata?.paymentId === paymentId && (c.status === 'pending' || c.status === 'successful'));
  }

  private async createCharge(req: CheckoutRequest): Promise<OpnCharge> {
    const currency = req.currency.toLowerCase();
    const source = await this.client.call<OpnSource>('POST', '/sources', {
      type: 'promptpay',
      amount: req.amountMinor,
      currency,
    });
    return this.client.call<OpnCharge>('POST', '/charges', {
      amount: req.amountMinor,
      currency,
      source: source.id,
      description: req.description,
      metadata: { paymentId: req.paymentId, meetingId: req.meetingId, idempotencyKey: req.idempotencyKey },
      expires_at: new Date(req.expiresAt).toISOString(),
    });
  }

  async retrieve(ref: string): Promise<ProviderPayment> {
    return toPayment(await this.getCharge(ref));
  }

  private getCharge(ref: string): Promise<OpnCharge> {
    return this.client.call<OpnCharge>('GET', `/charges/${encodeURIComponent(ref)}`);
  }

  async void(ref: string): Promise<void> {
    if (!(await this.needsExpiring(ref))) return;
    try {
      await this.client.call<OpnCharge>('POST', `/charges/${encodeURIComponent(ref)}/expire`);
    } catch (err) {
      // Refused: the charge moved meanwhile (paid or lapsed); its state now decides.
      if (!(err instanceof ProviderRefusedError) || (await this.needsExpiring(ref))) throw err;
    }
  }

  /** True for a pending charge; false for one already over; refuses a paid one. */
  private async needsExpiring(ref: string): Promise<boolean> {
    const state = chargeState((await this.getCharge(ref)).status);
    if (state === 'succeeded') {
      throw new ProviderRefusedError(`Opn charge ${ref} is already paid`, 'already_succeeded');
    }
    return state === 'pending';
  }

  async refund(ref: string, amountMinor: number, idempotencyKey: string): Promise<ProviderRefund> {
    const path = `/charges/${encodeURIComponent(ref)}/refunds`;
    const earlier = await this.client.call<OpnList<OpnRefund>>('GET', path);
    const same = earlier.data.find((r) => r.metadata?.idempotencyKey === idempotencyKey);
    if (same) return toRefund(same);
    return toRefund(await this.client.call<OpnRefund>('POST', path, { amount: amountMinor, metadata: { idempotencyKey } }));
  }

  async retrieveRefund(paymentRef: string, refundRef: string): Promise<ProviderRefund> {
    const path = `/charges/${encodeURIComponent(paymentRef)}/refunds/${encodeURIComponent(refundRef)}`;
    return toRefund(await this.client.call<OpnRefund>('GET', path));
  }

  async verifyEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): Promise<VerifiedEvent> {
    verifyOpnSignature(rawBody, headers, this.account.webhookSecret, this.deps.realClock.now());
    const event = parseEvent(rawBody);
    const base = { eventId: event.id, type: event.key };
    const data = event.data;
    if (data?.object === 'charge' && typeof data.id === 'string') return this.chargeEvent(base, data.id);
    if (data?.object === 'refund' && typeof data.id === 'string') {
      const chargeId = typeof data.charge === 'string' ? data.charge : data.charge?.id;
      if (chargeId) return this.refundEvent(base, chargeId, data.id);
    }
    return { ...base, outcome: 'ignore' };
  }

  /** The event's word is never trusted: the charge is read from the API. */
  private async chargeEvent(base: { eventId: string; type: string }, chargeId: string): Promise<VerifiedEvent> {
    let charge: OpnCharge;
    try {
      charge = await this.getCharge(chargeId);
    } catch (err) {
      if (isNotFound(err)) return { ...base, ref: chargeId, outcome: 'ignore' };
      throw err;
    }
    const state = chargeState(charge.status);
    const outcome = state === 'succeeded' ? 'settle' : state === 'failed' ? 'fail' : 'ignore';
    return { ...base, ref: charge.id, outcome };
  }

  private async refundEvent(base: { eventId: string; type: string }, chargeId: string, refundId: string): Promise<VerifiedEvent> {
    try {
      const refund = await this.retrieveRefund(chargeId, refundId);
      return { ...base, ref: chargeId, outcome: 'ignore', refund };
    } catch (err) {
      if (isNotFound(err)) return { ...base, ref: chargeId, outcome: 'ignore' };
      throw err;
    }
  }
}

export const opnProvider: ProviderFactory = (account, deps) => new OpnProvider(account, deps);
