/**
 * Sandbox payments (development and uat only; 404 in production):
 * POST /ops/v1/payments/{paymentId}/settle and /fail act exactly as paying, or
 * failing to pay, on the web payment page.
 *
 * The web payment page (public; the unguessable token in its URL is the
 * capability): GET /pay/{token} shows it, POST /pay/{token} is its Pay button
 * (sandbox payments only), GET /pay/{token}/status is the JSON the page polls.
 */
import QRCode from 'qrcode';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { App } from '../../platform/http/types.js';
import type { RouteGuards } from '../../platform/http/module.js';
import { optionalBody } from '../../platform/http/json-body.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { IdParams } from '../../contract/common.js';
import { PaymentIdParams, PaymentNotice, PaymentState, ProviderEventReceipt, ProviderIdParams } from '../../contract/ops.js';
import { ConsolePayment, ConsolePaymentDetail, PaymentsQuery } from '../../contract/ops-console.js';
import { Type } from 'typebox';
import { ServiceError, errors } from '../../platform/errors.js';
import type { PaymentRecord } from './payment-repository.js';
import type { PaymentPageView, PaymentService } from './payment-service.js';
import type { ProviderSync } from './provider-sync.js';
import type { PaymentDetails } from './payment-details.js';
import {
  newNonce,
  pageHeaders,
  pageLanguage,
  pagePath,
  redirectOrigin,
  redirectTarget,
  renderMessagePage,
  renderPaymentPage,
  type PageLang,
  type PromptPayQr,
} from './payment-page.js';

/** What the payment routes use. */
export interface PaymentsRouteDeps {
  payments: PaymentService;
  /** Provider events (POST /payments/webhooks/{providerId}). */
  sync: ProviderSync;
  /** The console's payment view: one payment with its provider events and refunds. */
  details: PaymentDetails;
  /** The sandbox is on (development and uat): sandbox settle/fail routes and the page's Pay button exist. */
  sandbox: boolean;
  guards: RouteGuards;
}

export async function opsPaymentRoutes(app: App, deps: PaymentsRouteDeps): Promise<void> {
  const payments = deps.payments;
  await paymentListRoute(app, payments);
  await paymentDetailRoute(app, deps.details);
  const requireSandbox = async () => {
    if (!deps.sandbox) throw errors.notFound('Sandbox payments exist only in development and uat');
  };
  const state = async (p: PaymentRecord, outcome?: string, replayed?: boolean): Promise<PaymentState> => {
    return {
      paymentId: p.id,
      meetingId: p.meeting_id,
      invoiceNo: p.invoice_no,
      status: p.status,
      failedAttempts: p.failed_attempts,
      meetingStatus: (await payments.meetingStatus(p.meeting_id)) ?? 'unknown',
      ...(outcome ? { outcome } : {}),
      ...(replayed !== undefined ? { replayed } : {}),
    };
  };
  const responses = { 200: Envelope(PaymentState), 404: ErrorEnvelope, 409: ErrorEnvelope };

  // Both go through the payment inbox like a provider's notification would; an `eventId`
  // in the (optional) body makes a retry a replay that changes nothing twice.
  const notified =
    (kind: 'settle' | 'fail', via: string) => async (req: { params: { paymentId: string }; body?: { eventId?: string } | null }) => {
      const result = await payments.notify({
        provider: 'sandbox',
        eventId: req.body?.eventId ?? `ops-${randomUUID()}`,
        paymentId: req.params.paymentId,
        kind,
        via,
      });
      const payment = await payments.byId(req.params.paymentId);
      if (!payment) throw errors.notFound('Payment not found');
      return ok(await state(payment, result.outcome, result.replayed));
    };

  app.post(
    '/ops/v1/payments/:paymentId/settle',
    {
      onRequest: requireSandbox,
      preValidation: optionalBody,
      schema: {
        tags: ['ops'],
        summary: 'Sandbox: settle a payment as the payment page would',
        security: [{ opsToken: [] }],
        params: PaymentIdParams,
        body: PaymentNotice,
        response: responses,
      },
    },
    notified('settle', 'sandbox settle'),
  );

  app.post(
    '/ops/v1/payments/:paymentId/fail',
    {
      onRequest: requireSandbox,
      preValidation: optionalBody,
      schema: {
        tags: ['ops'],
        summary: 'Sandbox: a failed payment attempt (the booking stays unpaid)',
        security: [{ opsToken: [] }],
        params: PaymentIdParams,
        body: PaymentNotice,
        response: responses,
      },
    },
    notified('fail', 'sandbox fail'),
  );
}

/** GET /ops/v1/payments: what the console's sandbox screen lists. */
async function paymentListRoute(app: App, payments: PaymentService): Promise<void> {
  app.get(
    '/ops/v1/payments',
    {
      schema: {
        tags: ['ops'],
        summary: 'Payments, newest first (at most 500), optionally of one status',
        security: [{ opsToken: [] }],
        querystring: PaymentsQuery,
        response: { 200: Envelope(Type.Array(ConsolePayment)), 400: ErrorEnvelope, 401: ErrorEnvelope },
      },
    },
    async (req) =>
      ok(
        (await payments.list(req.query.status)).map((p): ConsolePayment => ({
          _id: p.id,
          meetingId: p.meetingId,
          status: p.status,
          amount: p.amount,
          currency: p.currency,
          expiresAt: new Date(p.expiresAt).toISOString(),
        })),
      ),
  );
}

/**
 * The page of a payment with what its policy must allow. The sandbox's payment gets the Pay button
 * (where the sandbox is on) and a QR of the page; a real provider's gets its PromptPay QR and no
 * button, and its card script's origin when it offers cards; anything else says payment is unavailable.
 */
async function pageFor(
  view: PaymentPageView,
  o: { lang: PageLang; nonce: string; token: string; sandbox: boolean },
  payments: PaymentService,
): Promise<{ page: string; formTargets: string[]; scriptOrigin?: string }> {
  const sandboxPayment = view.provider === 'sandbox';
  // The sandbox provider settles for free: its Pay button exists only where the sandbox does (development, uat).
  const canPay = o.sandbox && sandboxPayment;
  const promptpay = !sandboxPayment && view.state === 'payable' ? await promptpayQr(view) : undefined;
  const payable = view.state === 'payable' && (canPay || promptpay !== undefined);
  const qrSvg =
    payable && !promptpay
      ? await QRCode.toString(payments.pageUrl(view.paymentId), { type: 'svg', errorCorrectionLevel: 'M', margin: 1 })
      : undefined;
  const page = renderPaymentPage(view, {
    ...o,
    sandbox: o.sandbox && sandboxPayment,
    canPay,
    ...(qrSvg ? { qrSvg } : {}),
    ...(promptpay ? { promptpay } : {}),
  });
  const origin = payable && canPay ? redirectOrigin(view.redirectUrl) : undefined;
  const card = payable && !sandboxPayment ? view.display?.card?.scriptOrigin : undefined;
  return { page, formTargets: origin ? [origin] : [], ...(card ? { scriptOrigin: card } : {}) };
}

/** A provider's PromptPay QR for the page: drawn here from the EMVCo payload, or the provider's image as stored. */
async function promptpayQr(view: PaymentPageView): Promise<PromptPayQr | undefined> {
  const pp = view.display?.promptpay;
  if (pp?.payload) {
    return { svg: await QRCode.toString(pp.payload, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }) };
  }
  return pp?.image ? { image: pp.image } : undefined;
}

/** The spec's error envelope, as every other JSON error of the service. */
const STATUS_NOT_FOUND = { code: 'KS005', success: false, message: 'Payment not found' } as const;
const STATUS_UNAVAILABLE = { code: 'KS004', success: false, message: 'The payment cannot be read right now; retry' } as const;

/** A JSON answer of the status route: never cached, never indexed, no Referer. */
function statusJson(reply: FastifyReply, status: number, body: object): FastifyReply {
  return reply
    .status(status)
    .headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-robots-tag': 'noindex, nofollow' })
    .type('application/json; charset=utf-8')
    .send(body);
}

/**
 * GET /pay/{token}/status: what the page polls, under the page's capability (its token): the
 * payment's state and, once it has ended with money, where the payer goes next. JSON, never cached;
 * an unknown or forged token is a JSON 404 that says nothing more.
 */
async function paymentStatusRoute(app: App, payments: PaymentService): Promise<void> {
  app.get('/pay/:token/status', { schema: { hide: true } }, async (req, reply) => {
    const token = String((req.params as { token?: unknown }).token ?? '');
    const json = (status: number, body: object) => statusJson(reply, status, body);
    let view: PaymentPageView | undefined;
    try {
      view = await payments.pageView(token);
    } catch (err) {
      req.log.error({ err }, 'payment status failed');
      return json(503, STATUS_UNAVAILABLE);
    }
    if (!view) return json(404, STATUS_NOT_FOUND);
    const ended = view.state === 'settled' ? 'paid' : view.state === 'refunded' ? 'refunded' : undefined;
    const redirectUrl = ended ? (redirectTarget(view.redirectUrl, view.meetingId, ended) ?? null) : null;
    return json(200, { state: view.state, redirectUrl });
  });
}

/** GET /ops/v1/payments/{paymentId} and GET /ops/v1/meetings/{id}/payment: the console's payment view. */
async function paymentDetailRoute(app: App, details: PaymentDetails): Promise<void> {
  app.get(
    '/ops/v1/payments/:paymentId',
    {
      schema: {
        tags: ['ops'],
        summary: 'One payment: provider and reference, the provider events received for it, its voids and refunds',
        security: [{ opsToken: [] }],
        params: PaymentIdParams,
        response: { 200: Envelope(ConsolePaymentDetail), 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => {
      const detail = await details.detail(req.params.paymentId);
      if (!detail) throw errors.notFound('Payment not found');
      return ok(detail);
    },
  );
  app.get(
    '/ops/v1/meetings/:id/payment',
    {
      schema: {
        tags: ['ops'],
        summary: "A booking's newest payment, as GET /ops/v1/payments/{paymentId} shows it",
        security: [{ opsToken: [] }],
        params: IdParams,
        response: { 200: Envelope(ConsolePaymentDetail), 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => {
      const detail = await details.ofMeeting(req.params.id);
      if (!detail) throw errors.notFound('This booking has no payment');
      return ok(detail);
    },
  );
}

/** The hosted web payment page (`payment.webPaymentUrl`); public, hidden from the OpenAPI document. */
export async function paymentPageRoutes(app: App, deps: Pick<PaymentsRouteDeps, 'payments' | 'sandbox'>): Promise<void> {
  const payments = deps.payments;
  const input = (req: { params: unknown; query: unknown; headers: { 'accept-language'?: string } }) => ({
    token: String((req.params as { token?: unknown }).token ?? ''),
    lang: pageLanguage((req.query as { lang?: unknown } | undefined)?.lang, req.headers['accept-language']),
  });
  const html = (reply: FastifyReply, status: number, nonce: string, body: string, formTargets: string[] = [], scriptOrigin?: string) =>
    reply
      .status(status)
      .headers(pageHeaders(nonce, formTargets, scriptOrigin))
      .send(body);
  const notFound = (reply: FastifyReply, lang: PageLang) => {
    const nonce = newNonce();
    return html(reply, 404, nonce, renderMessagePage('not-found', lang, nonce));
  };
  const failed = (reply: FastifyReply, lang: PageLang, err: unknown, log: { error: (o: object, m: string) => void }) => {
    log.error({ err }, 'payment page failed');
    const nonce = newNonce();
    const status = err instanceof ServiceError && err.status === 503 ? 503 : 500;
    return html(reply, status, nonce, renderMessagePage('error', lang, nonce));
  };
  const seeOther = (reply: FastifyReply, location: string) =>
    reply.status(303).headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).header('location', location).send();

  const load = async (token: string): Promise<{ ok: true; view: PaymentPageView | undefined } | { ok: false; err: unknown }> => {
    try {
      return { ok: true, view: await payments.pageView(token) };
    } catch (err) {
      return { ok: false, err };
    }
  };

  app.get('/pay/:token', { schema: { hide: true } }, async (req, reply) => {
    const { token, lang } = input(req);
    const loaded = await load(token);
    if (!loaded.ok) return failed(reply, lang, loaded.err, req.log);
    const view = loaded.view;
    if (!view) return notFound(reply, lang);
    const nonce = newNonce();
    const { page, formTargets, scriptOrigin } = await pageFor(view, { lang, nonce, token, sandbox: deps.sandbox }, payments);
    return html(reply, 200, nonce, page, formTargets, scriptOrigin);
  });

  await paymentStatusRoute(app, payments);

  // The Pay button: settles exactly as the sandbox /settle does, then sends the payer on.
  app.post('/pay/:token', { schema: { hide: true } }, async (req, reply) => {
    const { token, lang } = input(req);
    const loaded = await load(token);
    if (!loaded.ok) return failed(reply, lang, loaded.err, req.log);
    const view = loaded.view;
    if (!view) return notFound(reply, lang);
    const back = pagePath(token, lang);
    // Expired, voided or refunded, or no provider that can take the money here: nothing to pay; the page says why.
    // A real provider's payment is never settled by this button, even where the sandbox is on.
    if ((view.state !== 'payable' && view.state !== 'settled') || !deps.sandbox || view.provider !== 'sandbox') {
      return seeOther(reply, back);
    }
    let outcome: string;
    try {
      // One notification per payment from the page: pressing Pay twice is a replay.
      outcome = (
        await payments.notify({
          provider: 'sandbox',
          eventId: `page-${view.paymentId}`,
          paymentId: view.paymentId,
          kind: 'settle',
          via: 'web payment page',
        })
      ).outcome;
    } catch (err) {
      // Voided or refunded meanwhile (the booking was cancelled): the page shows it.
      if (err instanceof ServiceError && (err.status === 409 || err.status === 404)) return seeOther(reply, back);
      return failed(reply, lang, err, req.log);
    }
    const next = redirectTarget(view.redirectUrl, view.meetingId, outcome === 'refunded' ? 'refunded' : 'paid');
    return seeOther(reply, next ?? back);
  });

  // Anything else under /pay (a mangled or overlong link) is the same HTML 404, not the API's JSON one;
  // an overlong token's status (too long for the route's parameter) is the status route's JSON 404.
  app.route({
    method: ['GET', 'POST'],
    url: '/pay/*',
    schema: { hide: true },
    handler: async (req, reply) =>
      req.method === 'GET' && req.url.split('?')[0]!.endsWith('/status')
        ? statusJson(reply, 404, STATUS_NOT_FOUND)
        : notFound(reply, input(req).lang),
  });
}

/** Largest provider event accepted (Stripe and Opn events are a few kilobytes). */
const PROVIDER_EVENT_LIMIT_BYTES = 512 * 1024;

/**
 * POST /payments/webhooks/{providerId}: events of a real provider. Public; only the
 * provider's signature authenticates it, checked over the raw bytes before anything
 * reads them (this scope keeps every body as bytes).
 */
export async function providerWebhookRoutes(app: App, deps: Pick<PaymentsRouteDeps, 'sync'>): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PROVIDER_EVENT_LIMIT_BYTES }, (_req, body, done) => done(null, body));
  app.post(
    '/payments/webhooks/:providerId',
    {
      bodyLimit: PROVIDER_EVENT_LIMIT_BYTES,
      schema: {
        tags: ['payments'],
        summary: "A payment provider's event (Stripe or Opn Payments), authenticated by the provider's signature",
        description:
          'Give this URL (GET /ops/v1/site shows it as paymentProviders[].webhookUrl) to the provider. The signature is checked ' +
          'over the raw body first: a missing or wrong one is 400 and changes nothing. An event about an object the service ' +
          'did not make, or of a type it does not act on, is acknowledged with 200 and changes nothing; an event id seen ' +
          'before changes nothing again.',
        // No bearer token: only the provider's signature authenticates it.
        security: [],
        params: ProviderIdParams,
        response: { 200: Envelope(ProviderEventReceipt), 400: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope },
      },
    },
    async (req) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      return ok(await deps.sync.receive(req.params.providerId, raw, req.headers));
    },
  );
}
