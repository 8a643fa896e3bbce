/**
 * A local stand-in of the Opn Payments (Omise) API, for the Opn adapter and the
 * service's HTTP tests. It answers what the adapter uses, in the documented
 * shapes (API version 2019-05-29): POST /sources (promptpay), POST /charges,
 * GET /charges (list), GET /charges/:id, POST /charges/:id/expire,
 * POST|GET /charges/:id/refunds, GET /charges/:id/refunds/:rid, and the QR
 * document download. HTTP Basic auth with the secret key as user, else 401
 * `authentication_failure`. Opn documents no idempotency key: none is honoured.
 * Events are signed as Opn signs them: Omise-Signature = hex HMAC-SHA256 of
 * `timestamp.body` keyed with the base64-decoded webhook secret, and
 * Omise-Signature-Timestamp = epoch seconds.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './read-body.js';

export interface OpnRecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (undefined when none). */
  body: unknown;
  /** The Basic-auth user (the secret key) was right. */
  authorized: boolean;
}

export type OpnChargeStatus = 'pending' | 'successful' | 'failed' | 'expired' | 'reversed';

export interface OpnStandinCharge {
  object: 'charge';
  id: string;
  location: string;
  livemode: false;
  amount: number;
  currency: string;
  description: string | null;
  metadata: Record<string, unknown>;
  status: OpnChargeStatus;
  paid: boolean;
  paid_at: string | null;
  expired: boolean;
  expired_at: string | null;
  expires_at: string | null;
  failure_code: string | null;
  failure_message: string | null;
  refunded_amount: number;
  source: Record<string, unknown>;
  refunds: { object: 'list'; data: OpnStandinRefund[]; total: number };
  created_at: string;
}

export interface OpnStandinRefund {
  object: 'refund';
  id: string;
  location: string;
  livemode: false;
  amount: number;
  currency: string;
  charge: string;
  status: 'pending' | 'closed';
  voided: boolean;
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface SignedEventOptions {
  /** Another base64 secret to sign with (a forgery). */
  secret?: string;
  /** Epoch seconds of Omise-Signature-Timestamp (default: now). */
  timestamp?: number;
  /** Also sign with this secret (a rotation: two comma-separated signatures). */
  alsoSignWith?: string;
  /** The event id (default: a new evnt_test_…; reuse one to repeat an event). */
  eventId?: string;
  /** For refund events: the refund the event carries (data is the refund object). */
  refundId?: string;
  /** Overrides the charge snapshot's status in `data` (what the event says, not what the API says). */
  dataStatus?: OpnChargeStatus;
}

export interface OpnStandin {
  url: string;
  requests: OpnRecordedRequest[];
  charge(id: string): OpnStandinCharge | undefined;
  /** All charges, oldest first. */
  charges(): OpnStandinCharge[];
  /** Every API request answers 503 while on. */
  setDown(on: boolean): void;
  /** The next API request (or the next whose path contains `pathPart`) answers `status` with an Opn error object. */
  failNext(status: number, error?: { code?: string; message?: string }, pathPart?: string): void;
  /** Runs `action` just before the next request whose path contains `pathPart` is handled (races: paid while being expired). */
  beforeNext(pathPart: string, action: () => void): void;
  /** While on, a document download answers 302 to the stored file (`/files/…`, served without auth, as a signed storage URL would be). */
  redirectDownloads(on: boolean): void;
  /** The payer paid: the charge becomes successful. */
  succeed(id: string): void;
  /** The payment failed: the charge becomes failed. */
  fail(id: string): void;
  /** New refunds answer `pending` (PromptPay refunds waiting for bank details) while on. */
  refundsPending(on: boolean): void;
  /** A pending refund completes (status closed). */
  completeRefund(chargeId: string, refundId: string): void;
  signedEvent(key: string, chargeId: string, opts?: SignedEventOptions): { body: string; headers: Record<string, string> };
  close(): Promise<void>;
}

/** A tiny SVG, as Opn serves the QR document (filename qrcode.svg). */
export const OPN_STANDIN_QR_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="2" height="2"/></svg>';

const id = (prefix: string): string => `${prefix}_test_${randomBytes(9).toString('hex')}`;
const iso = (ms = Date.now()): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

class OpnError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface State {
  url: string;
  secretKey: string;
  webhookSecret: string;
  sources: Map<string, Record<string, unknown> & { used: boolean }>;
  charges: Map<string, OpnStandinCharge>;
  documents: Map<string, string>;
  down: boolean;
  nextFailure: { status: number; code?: string; message?: string; pathPart?: string } | null;
  refundsPending: boolean;
  hooks: Array<{ pathPart: string; action: () => void }>;
  redirectDownloads: boolean;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, path: string, err: OpnError): void {
  sendJson(res, err.status, {
    object: 'error',
    location: `https://www.omise.co/api-errors#${err.code}`,
    code: err.code,
    message: err.message || path,
  });
}

function getCharge(s: State, chargeId: string): OpnStandinCharge {
  const c = s.charges.get(chargeId);
  if (!c) throw new OpnError(404, 'not_found', 'charge was not found');
  return c;
}

function num(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
    throw new OpnError(400, 'bad_request', `${field} must be a positive integer`);
  }
  return v;
}

function createSource(s: State, body: Record<string, unknown>): unknown {
  if (body.type !== 'promptpay') throw new OpnError(400, 'invalid_source', 'type is not supported by the stand-in');
  const source = {
    object: 'source',
    id: id('src'),
    livemode: false,
    location: '',
    type: 'promptpay',
    flow: 'offline',
    amount: num(body.amount, 'amount'),
    currency: String(body.currency ?? '').toUpperCase(),
    charge_status: 'unknown',
    scannable_code: null,
    created_at: iso(),
    used: false,
  };
  source.location = `/sources/${source.id}`;
  s.sources.set(source.id, source);
  const { used: _used, ...answer } = source;
  return answer;
}

function createCharge(s: State, body: Record<string, unknown>): OpnStandinCharge {
  const source = typeof body.source === 'string' ? s.sources.get(body.source) : undefined;
  if (!source) throw new OpnError(404, 'not_found', 'source was not found');
  if (source.used) throw new OpnError(400, 'used_source', 'source has already been used');
  const amount = num(body.amount, 'amount');
  const currency = String(body.currency ?? '').toUpperCase();
  if (amount !== source.amount || currency !== source.currency) {
    throw new OpnError(400, 'invalid_charge', 'amount and currency must match the source');
  }
  source.used = true;
  const chargeId = id('chrg');
  const docuId = id('docu');
  const downloadPath = `/charges/${chargeId}/documents/${docuId}/downloads/${randomBytes(8).toString('hex').toUpperCase()}`;
  s.documents.set(downloadPath, OPN_STANDIN_QR_SVG);
  const { used: _used, ...sourceAnswer } = source;
  const charge: OpnStandinCharge = {
    object: 'charge',
    id: chargeId,
    location: `/charges/${chargeId}`,
    livemode: false,
    amount,
    currency,
    description: typeof body.description === 'string' ? body.description : null,
    metadata: (body.metadata as Record<string, unknown> | undefined) ?? {},
    status: 'pending',
    paid: false,
    paid_at: null,
    expired: false,
    expired_at: null,
    expires_at: typeof body.expires_at === 'string' ? body.expires_at : iso(Date.now() + 24 * 3600_000),
    failure_code: null,
    failure_message: null,
    refunded_amount: 0,
    source: {
      ...sourceAnswer,
      charge_status: 'pending',
      scannable_code: {
        object: 'barcode',
        type: 'qr',
        image: {
          object: 'document',
          livemode: false,
          id: docuId,
          deleted: false,
          filename: 'qrcode.svg',
          location: `/charges/${chargeId}/documents/${docuId}`,
          kind: 'qr',
          download_uri: `${s.url}${downloadPath}`,
          created_at: iso(),
        },
      },
    },
    refunds: { object: 'list', data: [], total: 0 },
    created_at: iso(),
  };
  s.charges.set(chargeId, charge);
  return charge;
}

function listCharges(s: State, query: Record<string, string>): unknown {
  const from = query.from ? Date.parse(query.from) : 0;
  let data = [...s.charges.values()].filter((c) => Date.parse(c.created_at) >= from - 1000);
  if (query.order === 'reverse_chronological') data = data.reverse();
  const limit = Math.min(Number(query.limit ?? 20) || 20, 100);
  return { object: 'list', data: data.slice(0, limit), limit, offset: 0, total: data.length, order: query.order ?? 'chronological' };
}

function expireCharge(s: State, chargeId: string): OpnStandinCharge {
  const c = getCharge(s, chargeId);
  if (c.status !== 'pending') throw new OpnError(400, 'failed_expire', 'charge is not pending');
  Object.assign(c, { status: 'expired', expired: true, expired_at: iso() });
  (c.source as { charge_status?: string }).charge_status = 'expired';
  return c;
}

function createRefund(s: State, chargeId: string, body: Record<string, unknown>): OpnStandinRefund {
  const c = getCharge(s, chargeId);
  const amount = num(body.amount, 'amount');
  if (c.status !== 'successful') throw new OpnError(400, 'failed_refund', 'charge is not successful');
  if (amount > c.amount - c.refunded_amount) throw new OpnError(400, 'failed_refund', 'amount exceeds the refundable');
  const refundId = id('rfnd');
  const refund: OpnStandinRefund = {
    object: 'refund',
    id: refundId,
    location: `/charges/${chargeId}/refunds/${refundId}`,
    livemode: false,
    amount,
    currency: c.currency,
    charge: chargeId,
    status: s.refundsPending ? 'pending' : 'closed',
    voided: false,
    metadata: (body.metadata as Record<string, unknown> | undefined) ?? {},
    created_at: iso(),
  };
  c.refunds.data.push(refund);
  c.refunds.total = c.refunds.data.length;
  c.refunded_amount += amount;
  return refund;
}

function getRefund(s: State, chargeId: string, refundId: string): OpnStandinRefund {
  const r = getCharge(s, chargeId).refunds.data.find((x) => x.id === refundId);
  if (!r) throw new OpnError(404, 'not_found', 'refund was not found');
  return r;
}

/** Routes one authorized request; answers a JSON body or a document. */
function route(s: State, method: string, path: string, query: Record<string, string>, body: Record<string, unknown>): unknown {
  const parts = path.split('/').filter(Boolean);
  if (method === 'POST' && path === '/sources') return createSource(s, body);
  if (parts[0] !== 'charges') throw new OpnError(404, 'not_found', 'path was not found');
  if (parts.length === 1) {
    if (method === 'POST') return createCharge(s, body);
    if (method === 'GET') return listCharges(s, query);
  }
  const chargeId = parts[1]!;
  if (parts.length === 2 && method === 'GET') return getCharge(s, chargeId);
  if (parts.length === 3 && parts[2] === 'expire' && method === 'POST') return expireCharge(s, chargeId);
  if (parts[2] === 'refunds') {
    if (parts.length === 3 && method === 'POST') return createRefund(s, chargeId, body);
    if (parts.length === 3 && method === 'GET') {
      const data = getCharge(s, chargeId).refunds.data;
      return { object: 'list', data, limit: 20, offset: 0, total: data.length, order: 'chronological' };
    }
    if (parts.length === 4 && method === 'GET') return getRefund(s, chargeId, parts[3]!);
  }
  throw new OpnError(404, 'not_found', 'path was not found');
}

async function handle(s: State, requests: OpnRecordedRequest[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', s.url);
  const raw = await readBody(req);
  let body: unknown;
  try {
    body = raw ? (JSON.parse(raw) as unknown) : undefined;
  } catch {
    body = raw;
  }
  const expected = `Basic ${Buffer.from(`${s.secretKey}:`).toString('base64')}`;
  const authorized = req.headers.authorization === expected;
  const query = Object.fromEntries(url.searchParams);
  requests.push({ method: req.method ?? 'GET', path: url.pathname, query, headers: req.headers, body, authorized });
  const hook = s.hooks.findIndex((h) => url.pathname.includes(h.pathPart));
  if (hook >= 0) s.hooks.splice(hook, 1)[0]!.action();
  try {
    if (s.down) throw new OpnError(503, 'service_unavailable', 'service is down');
    const failure = s.nextFailure;
    if (failure && (!failure.pathPart || url.pathname.includes(failure.pathPart))) {
      s.nextFailure = null;
      throw new OpnError(failure.status, failure.code ?? 'internal_error', failure.message ?? 'failure');
    }
    const file = url.pathname.startsWith('/files/') ? s.documents.get(url.pathname.slice('/files'.length)) : undefined;
    if (file !== undefined && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(file);
      return;
    }
    if (!authorized) throw new OpnError(401, 'authentication_failure', 'authentication failed');
    const doc = s.documents.get(url.pathname);
    if (doc !== undefined && req.method === 'GET' && s.redirectDownloads) {
      res.writeHead(302, { location: `/files${url.pathname}` });
      res.end();
      return;
    }
    if (doc !== undefined && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(doc);
      return;
    }
    const bodyObj = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    sendJson(res, 200, route(s, req.method ?? 'GET', url.pathname, query, bodyObj));
  } catch (err) {
    if (err instanceof OpnError) sendError(res, url.pathname, err);
    else sendJson(res, 500, { object: 'error', code: 'internal_error', message: 'stand-in failure' });
  }
}

function sign(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'base64')).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

function signedEvent(
  s: State,
  key: string,
  chargeId: string,
  opts: SignedEventOptions = {},
): { body: string; headers: Record<string, string> } {
  const charge = s.charges.get(chargeId);
  let data: unknown;
  if (opts.refundId) {
    data = charge?.refunds.data.find((r) => r.id === opts.refundId) ?? { object: 'refund', id: opts.refundId, charge: chargeId };
  } else {
    const snapshot = charge
      ? (JSON.parse(JSON.stringify(charge)) as OpnStandinCharge)
      : { object: 'charge', id: chargeId, status: 'pending' };
    data = opts.dataStatus ? { ...snapshot, status: opts.dataStatus } : snapshot;
  }
  const eventId = opts.eventId ?? id('evnt');
  const body = JSON.stringify({
    object: 'event',
    id: eventId,
    livemode: false,
    location: `/events/${eventId}`,
    webhook_deliveries: [],
    data,
    key,
    created_at: iso(),
  });
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const sigs = [sign(opts.secret ?? s.webhookSecret, timestamp, body)];
  if (opts.alsoSignWith) sigs.push(sign(opts.alsoSignWith, timestamp, body));
  return {
    body,
    headers: { 'content-type': 'application/json', 'omise-signature': sigs.join(','), 'omise-signature-timestamp': String(timestamp) },
  };
}

function setStatus(s: State, chargeId: string, status: 'successful' | 'failed'): void {
  const c = getCharge(s, chargeId);
  if (status === 'successful') Object.assign(c, { status, paid: true, paid_at: iso() });
  else Object.assign(c, { status, failure_code: 'payment_rejected', failure_message: 'payment was rejected' });
  (c.source as { charge_status?: string }).charge_status = status;
}

export async function startOpnStandin(o: { secretKey: string; webhookSecret: string }): Promise<OpnStandin> {
  const requests: OpnRecordedRequest[] = [];
  const s: State = {
    url: '',
    secretKey: o.secretKey,
    webhookSecret: o.webhookSecret,
    sources: new Map(),
    charges: new Map(),
    documents: new Map(),
    down: false,
    nextFailure: null,
    refundsPending: false,
    hooks: [],
    redirectDownloads: false,
  };
  const server = createServer((req, res) => void handle(s, requests, req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  s.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: s.url,
    requests,
    charge: (chargeId) => s.charges.get(chargeId),
    charges: () => [...s.charges.values()],
    setDown: (on) => void (s.down = on),
    failNext: (status, error, pathPart) => void (s.nextFailure = { status, ...error, pathPart }),
    redirectDownloads: (on) => void (s.redirectDownloads = on),
    beforeNext: (pathPart, action) => void s.hooks.push({ pathPart, action }),
    succeed: (chargeId) => setStatus(s, chargeId, 'successful'),
    fail: (chargeId) => setStatus(s, chargeId, 'failed'),
    refundsPending: (on) => void (s.refundsPending = on),
    completeRefund: (chargeId, refundId) => void (getRefund(s, chargeId, refundId).status = 'closed'),
    signedEvent: (key, chargeId, opts) => signedEvent(s, key, chargeId, opts),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
