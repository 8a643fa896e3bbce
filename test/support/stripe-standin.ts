/**
 * A local stand-in of the parts of the Stripe API the adapter uses
 * (src/modules/payments/providers/stripe.ts), reached through the official `stripe`
 * library pointed at it (`apiBaseUrl`). Faithful to the documented requests and
 * answers: form-encoded bodies in bracket notation, Bearer secret key, idempotency
 * keys replayed with `Idempotent-Replayed: true` (another body under the same key:
 * 400 idempotency_error), Stripe's object and error shapes. Events are signed with
 * the library's own test header helper, exactly as Stripe signs them.
 *
 * Listens on 127.0.0.1 port 0.
 */

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Stripe from 'stripe';

export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormObject = { [key: string]: FormValue };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: FormObject;
  rawBody: string;
}

export interface StripeErrorBody {
  type: string;
  message: string;
  code?: string;
  param?: string;
}

export interface StandinIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  status: string;
  description: string | null;
  metadata: Record<string, string>;
  payment_method_types: string[];
  client_secret: string;
  created: number;
  livemode: false;
  payment_method: string | null;
  latest_charge: string | null;
  last_payment_error: { type: string; code: string; message: string } | null;
  canceled_at: number | null;
  cancellation_reason: string | null;
  next_action: {
    type: 'promptpay_display_qr_code';
    promptpay_display_qr_code: { data: string; hosted_instructions_url: string; image_url_png: string; image_url_svg: string };
  } | null;
}

export interface StandinRefund {
  id: string;
  object: 'refund';
  amount: number;
  currency: string;
  payment_intent: string;
  charge: string | null;
  status: 'pending' | 'requires_action' | 'succeeded' | 'failed' | 'canceled';
  metadata: Record<string, string>;
  reason: string | null;
  created: number;
}

export interface SignedEventOptions {
  /** Signature timestamp, epoch seconds (default now). */
  timestamp?: number;
  /** Sign with another secret (a forged event). */
  secret?: string;
  /** Reuse an event id (a repeated delivery). */
  id?: string;
}

export interface SignedEvent {
  event: { id: string; type: string; data: { object: unknown } };
  body: string;
  headers: Record<string, string>;
}

export interface StripeStandin {
  url: string;
  requests: RecordedRequest[];
  intent(id: string): StandinIntent | undefined;
  /** Every PaymentIntent created, oldest first. */
  intents(): StandinIntent[];
  refund(id: string): StandinRefund | undefined;
  /** on: every request answers 503 api_error (mode 'reset': the socket is destroyed instead). */
  setDown(on: boolean, mode?: '503' | 'reset'): void;
  /** The next `times` requests answer this status and error (plus headers, e.g. Retry-After). */
  failNext(status: number, error: StripeErrorBody, opts?: { times?: number; headers?: Record<string, string> }): void;
  /** The payer paid: the intent succeeds (returns it, for an event). */
  succeed(id: string): StandinIntent;
  /** The payer's attempt failed: back to requires_payment_method with last_payment_error. */
  failAttempt(id: string): StandinIntent;
  /** New refunds start pending (PromptPay refunds waiting for the payer's bank details). */
  refundsPending(on: boolean): void;
  /** Refunds made for a PaymentIntent, oldest first. */
  refundsOf(paymentIntentId: string): StandinRefund[];
  /** Pending (or requires_action) refunds succeed, as the payer's bank eventually lets them. */
  completeRefunds(): StandinRefund[];
  /** A succeeded PaymentIntent of the same account that the service never created (a foreign event's object). */
  foreignIntent(amount?: number): StandinIntent;
  /** Moves a refund to another status (returns it, for an event). */
  setRefundStatus(id: string, status: StandinRefund['status']): StandinRefund;
  signedEvent(type: string, object: unknown, opts?: SignedEventOptions): SignedEvent;
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: StripeErrorBody,
  ) {
    super(error.message);
  }
}

const rand = (n = 12) =>
  randomBytes(n)
    .toString('hex')
    .slice(0, n * 2);
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Parses `a[b][0]=x&a[c][]=y` into nested objects and arrays, as Stripe reads its form bodies. */
export function parseStripeForm(raw: string): FormObject {
  const root: FormObject = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const head = key.split('[', 1)[0];
    const rest = [...key.slice(head.length).matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]);
    const path = [head, ...rest];
    let node: FormObject = root;
    for (let i = 0; i < path.length - 1; i++) {
      const seg = path[i] === '' ? String(Object.keys(node).length) : path[i];
      const next = node[seg];
      if (typeof next !== 'object' || Array.isArray(next)) node[seg] = {};
      node = node[seg] as FormObject;
    }
    const last = path[path.length - 1];
    node[last === '' ? String(Object.keys(node).length) : last] = value;
  }
  return arraysOf(root) as FormObject;
}

function arraysOf(v: FormValue): FormValue {
  if (typeof v === 'string' || Array.isArray(v)) return v;
  const keys = Object.keys(v);
  const out: FormObject = {};
  for (const k of keys) out[k] = arraysOf(v[k]);
  const indexed = keys.length > 0 && keys.every((k, i) => k === String(i));
  return indexed ? keys.map((k) => out[k]) : out;
}

const str = (v: FormValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const strList = (v: FormValue | undefined): string[] | undefined =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;

function stringMap(v: FormValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

const invalid = (message: string, code?: string, param?: string, status = 400) =>
  new ApiError(status, { type: 'invalid_request_error', message, ...(code ? { code } : {}), ...(param ? { param } : {}) });

const missing = (param: string) => invalid(`Missing required param: ${param}.`, 'parameter_missing', param);

class StandinState {
  intents = new Map<string, StandinIntent>();
  refunds = new Map<string, StandinRefund>();
  refundsPending = false;

  getIntent(id: string): StandinIntent {
    const pi = this.intents.get(id);
    if (!pi) throw invalid(`No such payment_intent: '${id}'`, 'resource_missing', 'intent', 404);
    return pi;
  }

  createIntent(body: FormObject, stripeVersion: string): StandinIntent {
    if (body.payment_method_types !== undefined && stripeVersion >= '2026-09-30') {
      throw invalid('Received unknown parameter: payment_method_types', 'parameter_unknown', 'payment_method_types');
    }
    const amount = Number(str(body.amount));
    if (str(body.amount) === undefined) throw missing('amount');
    if (!Number.isInteger(amount) || amount < 1) throw invalid('Invalid integer: amount', 'parameter_invalid_integer', 'amount');
    const currency = str(body.currency);
    if (!currency) throw missing('currency');
    const types = strList(body.allowed_payment_method_types) ?? strList(body.payment_method_types) ?? ['card'];
    const id = `pi_${rand()}`;
    const pi: StandinIntent = {
      id,
      object: 'payment_intent',
      amount,
      amount_received: 0,
      currency,
      status: 'requires_payment_method',
      description: str(body.description) ?? null,
      metadata: stringMap(body.metadata),
      payment_method_types: types,
      client_secret: `${id}_secret_${rand(10)}`,
      created: nowSeconds(),
      livemode: false,
      payment_method: null,
      latest_charge: null,
      last_payment_error: null,
      canceled_at: null,
      cancellation_reason: null,
      next_action: null,
    };
    this.intents.set(id, pi);
    if (str(body.confirm) === 'true') this.confirm(pi, body);
    return pi;
  }

  confirm(pi: StandinIntent, body: FormObject): StandinIntent {
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(pi.status)) {
      throw invalid(`You cannot confirm this PaymentIntent because it has a status of ${pi.status}.`, 'payment_intent_unexpected_state');
    }
    const pmd = body.payment_method_data;
    const pmData = pmd && typeof pmd === 'object' && !Array.isArray(pmd) ? pmd : undefined;
    const type = str(pmData?.type);
    if (!type) throw missing('payment_method');
    if (!pi.payment_method_types.includes(type)) {
      throw invalid(
        `The PaymentMethod provided (${type}) is not allowed for this PaymentIntent.`,
        'payment_intent_incompatible_payment_method',
      );
    }
    if (type !== 'promptpay') throw invalid(`The stand-in confirms only promptpay, not ${type}.`, 'payment_method_unsupported_type');
    const billing = pmData?.billing_details;
    const email = billing && typeof billing === 'object' && !Array.isArray(billing) ? str(billing.email) : undefined;
    if (!email) throw missing('payment_method_data[billing_details][email]');
    if (pi.currency !== 'thb') throw invalid('PromptPay supports only thb.', 'payment_method_currency_mismatch');
    pi.payment_method = `pm_${rand()}`;
    pi.status = 'requires_action';
    pi.last_payment_error = null;
    const qr = `pyqr_${rand(8)}`;
    pi.next_action = {
      type: 'promptpay_display_qr_code',
      promptpay_display_qr_code: {
        data: `00020101021230570016A00000067701011201150107536000315080214${pi.id}5303764540${(pi.amount / 100).toFixed(2)}5802TH6304ABCD`,
        hosted_instructions_url: `https://payments.stripe.com/qr/instructions/${qr}`,
        image_url_png: `https://qr.stripe.com/${qr}.png`,
        image_url_svg: `https://qr.stripe.com/${qr}.svg`,
      },
    };
    return pi;
  }

  cancel(pi: StandinIntent, body: FormObject): StandinIntent {
    if (pi.status === 'succeeded' || pi.status === 'canceled') {
      throw invalid(
        `You cannot cancel this PaymentIntent because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be canceled: requires_payment_method, requires_capture, requires_confirmation, requires_action, processing.`,
        'payment_intent_unexpected_state',
      );
    }
    pi.status = 'canceled';
    pi.canceled_at = nowSeconds();
    pi.cancellation_reason = str(body.cancellation_reason) ?? null;
    pi.next_action = null;
    return pi;
  }

  createRefund(body: FormObject): StandinRefund {
    const piId = str(body.payment_intent);
    if (!piId)
      throw invalid('One of the following params should be provided for this request: payment_intent or charge.', 'parameter_missing');
    const pi = this.intents.get(piId);
    if (!pi) throw invalid(`No such payment_intent: '${piId}'`, 'resource_missing', 'payment_intent');
    if (pi.status !== 'succeeded') throw invalid(`This PaymentIntent (${piId}) does not have a successful charge to refund.`);
    const refunded = [...this.refunds.values()]
      .filter((r) => r.payment_intent === piId && r.status !== 'failed' && r.status !== 'canceled')
      .reduce((sum, r) => sum + r.amount, 0);
    const amount = str(body.amount) === undefined ? pi.amount - refunded : Number(str(body.amount));
    if (!Number.isInteger(amount) || amount < 1) throw invalid('Invalid integer: amount', 'parameter_invalid_integer', 'amount');
    if (amount + refunded > pi.amount) {
      throw invalid(
        `Refund amount (${amount}) is greater than unrefunded amount on charge (${pi.amount - refunded})`,
        'amount_too_large',
        'amount',
      );
    }
    const refund: StandinRefund = {
      id: `re_${rand()}`,
      object: 'refund',
      amount,
      currency: pi.currency,
      payment_intent: piId,
      charge: pi.latest_charge,
      status: this.refundsPending ? 'pending' : 'succeeded',
      metadata: stringMap(body.metadata),
      reason: str(body.reason) ?? null,
      created: nowSeconds(),
    };
    this.refunds.set(refund.id, refund);
    return refund;
  }

  getRefund(id: string): StandinRefund {
    const r = this.refunds.get(id);
    if (!r) throw invalid(`No such refund: '${id}'`, 'resource_missing', 'id', 404);
    return r;
  }
}

type Route = { method: string; pattern: RegExp; run: (m: RegExpMatchArray, body: FormObject, req: RecordedRequest) => unknown };

function routes(state: StandinState): Route[] {
  return [
    {
      method: 'POST',
      pattern: /^\/v1\/payment_intents$/,
      run: (_m, body, req) => state.createIntent(body, req.headers['stripe-version'] ?? ''),
    },
    { method: 'GET', pattern: /^\/v1\/payment_intents\/([^/]+)$/, run: (m) => state.getIntent(m[1]) },
    { method: 'POST', pattern: /^\/v1\/payment_intents\/([^/]+)\/confirm$/, run: (m, body) => state.confirm(state.getIntent(m[1]), body) },
    { method: 'POST', pattern: /^\/v1\/payment_intents\/([^/]+)\/cancel$/, run: (m, body) => state.cancel(state.getIntent(m[1]), body) },
    { method: 'POST', pattern: /^\/v1\/refunds$/, run: (_m, body) => state.createRefund(body) },
    { method: 'GET', pattern: /^\/v1\/refunds\/([^/]+)$/, run: (m) => state.getRefund(m[1]) },
  ];
}

interface Saved {
  fingerprint: string;
  status: number;
  body: string;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function lowerHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export async function startStripeStandin(opts: { secretKey: string; webhookSecret: string }): Promise<StripeStandin> {
  const state = new StandinState();
  const table = routes(state);
  const requests: RecordedRequest[] = [];
  const saved = new Map<string, Saved>();
  const sockets = new Set<Socket>();
  const signer = new Stripe(opts.secretKey);
  let down: false | '503' | 'reset' = false;
  let failures: { status: number; error: StripeErrorBody; headers: Record<string, string> }[] = [];

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'request-id': `req_${rand(7)}`,
      'stripe-version': Stripe.API_VERSION,
      ...headers,
    });
    res.end(body);
  };
  const sendError = (res: ServerResponse, status: number, error: StripeErrorBody, headers?: Record<string, string>) =>
    send(res, status, JSON.stringify({ error }), headers);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const headers = lowerHeaders(req);
    const method = req.method ?? 'GET';
    const record: RecordedRequest = { method, path: url.pathname, headers, body: parseStripeForm(rawBody), rawBody };
    requests.push(record);
    if (down === 'reset') return void req.socket.destroy();
    if (down === '503') return sendError(res, 503, { type: 'api_error', message: 'The Stripe stand-in is down.' });
    const failure = failures.shift();
    if (failure) return sendError(res, failure.status, failure.error, failure.headers);

    const auth = headers.authorization ?? '';
    if (!auth.startsWith('Bearer ')) {
      return sendError(res, 401, { type: 'invalid_request_error', message: 'You did not provide an API key.' });
    }
    const key = auth.slice('Bearer '.length);
    if (key !== opts.secretKey) {
      const masked = `${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`;
      return sendError(res, 401, { type: 'invalid_request_error', message: `Invalid API Key provided: ${masked}` });
    }

    const route = table.find((r) => r.method === method && r.pattern.test(url.pathname));
    if (!route) {
      return sendError(res, 404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${url.pathname}).` });
    }
    const idemKey = method === 'POST' ? headers['idempotency-key'] : undefined;
    const fingerprint = `${method} ${url.pathname} ${rawBody}`;
    if (idemKey) {
      const prior = saved.get(idemKey);
      if (prior && prior.fingerprint !== fingerprint) {
        return sendError(res, 400, {
          type: 'idempotency_error',
          message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idemKey}' if you meant to execute a different request.`,
        });
      }
      if (prior) return send(res, prior.status, prior.body, { 'idempotent-replayed': 'true', 'idempotency-key': idemKey });
    }
    let status = 200;
    let body: string;
    try {
      body = JSON.stringify(route.run(url.pathname.match(route.pattern)!, record.body, record));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      status = err.status;
      body = JSON.stringify({ error: err.error });
    }
    // Stripe saves the result of a request that started executing, errors included.
    if (idemKey) saved.set(idemKey, { fingerprint, status, body });
    send(res, status, body, idemKey ? { 'idempotency-key': idemKey } : {});
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      sendError(res, 500, { type: 'api_error', message: `stand-in failure: ${String(err)}` });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    intent: (id) => state.intents.get(id),
    intents: () => [...state.intents.values()],
    refund: (id) => state.refunds.get(id),
    setDown(on, mode = '503') {
      down = on ? mode : false;
    },
    failNext(status, error, o = {}) {
      for (let i = 0; i < (o.times ?? 1); i++) failures.push({ status, error, headers: o.headers ?? {} });
    },
    succeed(id) {
      const pi = state.getIntent(id);
      pi.status = 'succeeded';
      pi.amount_received = pi.amount;
      pi.latest_charge = `ch_${rand()}`;
      pi.next_action = null;
      return pi;
    },
    failAttempt(id) {
      const pi = state.getIntent(id);
      pi.status = 'requires_payment_method';
      pi.next_action = null;
      pi.payment_method = null;
      pi.last_payment_error = { type: 'card_error', code: 'payment_intent_payment_attempt_failed', message: 'The payment attempt failed.' };
      return pi;
    },
    refundsPending(on) {
      state.refundsPending = on;
    },
    refundsOf: (piId) => [...state.refunds.values()].filter((r) => r.payment_intent === piId),
    completeRefunds() {
      const done = [...state.refunds.values()].filter((r) => r.status === 'pending' || r.status === 'requires_action');
      for (const r of done) r.status = 'succeeded';
      return done;
    },
    foreignIntent(amount = 10_000) {
      const pi = state.createIntent({ amount: String(amount), currency: 'thb', allowed_payment_method_types: ['promptpay'] }, '');
      pi.status = 'succeeded';
      pi.amount_received = amount;
      pi.latest_charge = `ch_${rand()}`;
      return pi;
    },
    setRefundStatus(id, status) {
      const r = state.getRefund(id);
      r.status = status;
      return r;
    },
    signedEvent(type, object, o = {}) {
      const event = {
        id: o.id ?? `evt_${rand()}`,
        object: 'event',
        api_version: Stripe.API_VERSION,
        created: o.timestamp ?? nowSeconds(),
        data: { object: JSON.parse(JSON.stringify(object)) as unknown },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      };
      const body = JSON.stringify(event, null, 2);
      const header = signer.webhooks.generateTestHeaderString({
        payload: body,
        secret: o.secret ?? opts.webhookSecret,
        ...(o.timestamp !== undefined ? { timestamp: o.timestamp } : {}),
      });
      return { event, body, headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header } };
    },
    async close() {
      failures = [];
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The Stripe stand-in as the shared provider scenarios drive it (structurally the
 * `ProviderDriver` of test/support/provider-scenarios.ts).
 */
export function stripeDriver(keys = { secretKey: 'sk_test_51ScenarioSecretKey000000000000', webhookSecret: 'whsec_scenario_0000000000' }) {
  let s: StripeStandin | undefined;
  const standin = () => {
    if (!s) throw new Error('stripeDriver: start() first');
    return s;
  };
  const refundState = (st: StandinRefund['status']): 'pending' | 'succeeded' | 'failed' =>
    st === 'succeeded' ? 'succeeded' : st === 'failed' || st === 'canceled' ? 'failed' : 'pending';
  return {
    provider: 'stripe' as const,
    ...keys,
    get standin() {
      return standin();
    },
    async start() {
      s = await startStripeStandin(keys);
      return { url: s.url };
    },
    close: async () => s?.close(),
    pay: (ref: string) => void standin().succeed(ref),
    failAttempt: (ref: string) => void standin().failAttempt(ref),
    paidEvent: (ref: string) => standin().signedEvent('payment_intent.succeeded', standin().intent(ref)),
    failedEvent: (ref: string) => standin().signedEvent('payment_intent.payment_failed', standin().intent(ref)),
    forgedEvent: (ref: string) =>
      standin().signedEvent('payment_intent.succeeded', standin().intent(ref), { secret: 'whsec_forged_by_someone_else' }),
    foreignEvent: async () => standin().signedEvent('payment_intent.succeeded', standin().foreignIntent()),
    setDown: (on: boolean) => standin().setDown(on),
    refundsPending: (on: boolean) => standin().refundsPending(on),
    completeRefunds: () => void standin().completeRefunds(),
    isCancelled: (ref: string) => standin().intent(ref)?.status === 'canceled',
    refundsOf: (ref: string) =>
      standin()
        .refundsOf(ref)
        .map((r) => ({ amount: r.amount, status: refundState(r.status) })),
  };
}
