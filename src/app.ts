/**
 * Builds the HTTP application: framework set-up, the error mapping, the OpenAPI
 * document and reference page, and every route module in its auth scope.
 */
import Fastify, { type FastifyBaseLogger, type FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Services } from './services.js';
import type { App } from './platform/http/types.js';
import { guarded, type RouteGuards } from './platform/http/module.js';
import { errorBody } from './platform/http/envelope.js';
import { clientErrorHandler, toErrorResponse } from './platform/http/error-mapping.js';
import { errors } from './platform/errors.js';
import { opsAuth } from './platform/http/authenticate.js';
import { consoleSessionRoutes } from './platform/http/console-session.js';
import { changeStreamRoute } from './platform/http/change-stream.js';
import { securityHeaders } from './platform/http/security-headers.js';
import { registerCors } from './platform/http/cors.js';
import { registerCompression } from './platform/http/compression.js';
import { registerStrictFormats } from './platform/http/formats.js';
import { stopValidationEarly } from './platform/http/validation.js';
import { guardQuery } from './platform/http/query.js';
import { registerJsonBodyParser } from './platform/http/json-body.js';
import { JSON_BODY_LIMIT_BYTES } from './platform/http/body-limits.js';
import { INSTANT_TEXT } from './platform/time/instant.js';
import { webhookDocs } from './contract/webhook-docs.js';
import { rejectNulCharacters } from './platform/http/nul-guard.js';
import { rejectNonFiniteNumbers } from './platform/http/finite-numbers.js';
import { describeOperation } from './platform/http/openapi-operations.js';
import { registerMetrics } from './platform/http/metrics-route.js';
import { registerLoadShedding } from './platform/http/load-shedding.js';
import * as health from './modules/health/index.js';
import * as auth from './modules/auth/index.js';
import * as sandbox from './modules/sandbox/index.js';
import * as site from './modules/site/index.js';
import * as catalogue from './modules/catalogue/index.js';
import * as booking from './modules/booking/index.js';
import * as members from './modules/members/index.js';
import * as webhooks from './modules/webhooks/index.js';
import * as devices from './modules/devices/index.js';
import * as calendarSync from './modules/calendar-sync/index.js';
import * as payments from './modules/payments/index.js';
import * as visitors from './modules/visitors/index.js';
import * as analytics from './modules/analytics/index.js';
import * as operatorConsole from './modules/console/index.js';
import type { Config } from './platform/config.js';
import { requestChildLogger } from './platform/logging.js';
import { traceRequests } from './platform/observability/tracing.js';
import { registerRequestContext } from './platform/http/request-context.js';

export const API_VERSION = '1.15.0';

export interface BuildAppOptions {
  /** A pino logger for request logs; none in tests. */
  loggerInstance?: FastifyBaseLogger;
}

export async function buildApp(services: Services, options: BuildAppOptions = {}): Promise<App> {
  const app = createFastify(services.config, options);
  // Each request in its log context (request id on every line) and, tracing on, its span (platform/observability).
  traceRequests(app.server);
  registerRequestContext(app);
  // Request loggers marked as binding reqId themselves: the logger's mixin leaves it out of their lines (no duplicate key).
  if (options.loggerInstance) app.setChildLoggerFactory(requestChildLogger as never);
  mapErrors(app);
  // Load shedding first (it refuses before any other work), then request metrics and /metrics (platform/http).
  await registerLoadShedding(app, services.config.loadShedding);
  registerMetrics(app, services.metrics, services.config.metrics);
  await registerRequestHandling(app, services.config);
  await registerApiReference(app, services.config);
  await registerModules(app, services);
  return app;
}

/** The framework with its limits, timeouts, validator set-up and framework-level error answers. */
function createFastify(config: Config, options: BuildAppOptions): App {
  const { trustProxy, timeouts } = config;
  return Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: false }),
    // Sized per route (platform/http/body-limits.ts): this default for ordinary JSON, larger only where a route needs it.
    bodyLimit: JSON_BODY_LIMIT_BYTES,
    ajv: {
      customOptions: { allErrors: true, removeAdditional: false, coerceTypes: 'array', useDefaults: true },
      // The date-time grammar; and a first-problem pass so a request with many problems stops early (validation.ts).
      onCreate: (ajv) => {
        registerStrictFormats(ajv);
        stopValidationEarly(ajv as unknown as Parameters<typeof stopValidationEarly>[0]);
      },
    },
    // Requests arriving while closing are answered by the hook below (the envelope, with Retry-After).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Connection timeouts (README): an idle kept-alive socket is closed; headers or a body that do not arrive in time get
    // 408 KS001 (clientErrorHandler). Node checks pending requests every connectionsCheckingInterval.
    keepAliveTimeout: timeouts.keepAliveMs,
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.connectionMs,
    http: {
      requestTimeout: timeouts.requestMs,
      headersTimeout: timeouts.headersMs,
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(timeouts.headersMs / 4))),
    },
    // X-Forwarded-For only from the proxies TRUST_PROXY names (none by default): the client address counts token failures.
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    // Path parameters up to 512 characters reach validation (partner externalUserId: at most 128, else 400).
    // A router option: passed under routerOptions (top-level router options are deprecated, FSTDEP022).
    routerOptions: { maxParamLength: 512 },
    // Router and HTTP-parser errors (bad percent-encoding, an overlong parameter, headers over the limit) get the envelope too.
    frameworkErrors: (err, _req, reply) => {
      const res = toErrorResponse(err);
      (reply as FastifyReply).status(res.status).send(res.body);
    },
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>() as App;
}

/** Every error leaves through one mapping; requests arriving while shutting down get 503; unknown routes 404. */
function mapErrors(app: App): void {
  app.setErrorHandler((err, req, reply) => {
    const res = toErrorResponse(err);
    if (res.internal) req.log.error({ err }, 'request failed');
    for (const [name, value] of Object.entries(res.headers ?? {})) reply.header(name, value);
    // A body over the route's limit: Fastify would close at once, and the reset of a connection still carrying the
    // unread upload can overtake the 413. Kept open, Node discards the rest of the body unparsed (bounded by
    // REQUEST_TIMEOUT_MS) and the client reads its answer.
    if (res.status === 413) reply.removeHeader('connection');
    reply.status(res.status).send(res.body);
  });
  // Shutting down: a request arriving on a kept-alive connection gets 503 KS004 with Retry-After (in-flight ones finish).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // (Synchronous hooks here and in platform/http: no promise per request for checks that wait for nothing.)
  app.addHook('onRequest', (_req, _reply, done) => {
    if (closing) throw errors.upstreamUnavailable('The service is shutting down; retry after the Retry-After seconds');
    done();
  });
  // Every answer sent while closing ends its connection: a kept-alive connection (a proxy's) that was busy when the
  // close began would otherwise stay open, idle, until KEEP_ALIVE_TIMEOUT_MS, and the close would wait for it.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(errorBody('KS005', `No route ${req.method} ${req.url.split('?')[0]}`));
  });
}

/** Headers, CORS and compression on every answer; query, NUL and number guards; the body parsers. */
async function registerRequestHandling(app: App, config: Config): Promise<void> {
  // Security headers and the CORS policy on every answer (platform/http: security-headers.ts, cors.ts).
  app.addHook('onSend', securityHeaders());
  registerCors(app, config.corsOrigins);
  // Large answers compressed as Accept-Encoding allows (platform/http/compression.ts); before any route is added.
  await registerCompression(app);

  // Bracket array parameters, repeated single-valued ones, non-decimal numbers (platform/http/query.ts).
  app.addHook('preValidation', guardQuery);

  // No field may contain U+0000 (PostgreSQL text cannot hold it): 400 before any route runs.
  app.addHook('preValidation', rejectNulCharacters);
  // A number the validator coerced from text such as "1e999" is Infinity: 400 (platform/http/finite-numbers.ts).
  app.addHook('preHandler', rejectNonFiniteNumbers);

  // JSON (and form-encoded, for the OAuth-style token endpoint) only: anything else is 415.
  app.removeContentTypeParser('text/plain');
  // An empty or whitespace-only JSON body counts as no body (platform/http/json-body.ts).
  registerJsonBodyParser(app);
  await app.register(formbody);
}

/** The OpenAPI document (/openapi.json) and its reference page (/docs, where / leads). */
async function registerApiReference(app: App, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Room and Desk Booking Service',
        version: API_VERSION,
        description:
          'Public booking API plus the operator (ops) surface. Every JSON response except the token endpoint is enveloped as {code, success, message, data, meta?}. ' +
          `Request date-times (format date-time) must be ${INSTANT_TEXT}: seconds may be left out (they are dropped anyway), a leap second (:60) is refused.`,
      },
      servers: [{ url: config.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Access token from POST /auth/accessToken' },
          opsToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'OPS_TOKEN of this deployment (wrong tokens are limited per client address: 429 KS036 with Retry-After)',
          },
        },
      },
      security: [{ bearer: [] }],
      // Every event type's delivery, from the payload schemas of the contract (contract/webhook-docs.ts).
      webhooks: webhookDocs(),
    },
    // operationId, description and examples of every operation (platform/http/openapi-operations.ts).
    transform: ({ schema, url, route }) => ({ schema: describeOperation(String(route.method), url, schema) ?? schema, url }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The service's root has no page of its own: a browser opening it lands on the API reference.
  app.get('/', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/docs', 302));
}

/** Every module's routes, each behind the guard it needs (platform/http/module.ts). */
async function registerModules(app: App, services: Services): Promise<void> {
  const guards: RouteGuards = {
    // Public API: a valid bearer token.
    api: auth.bearerAuth(services.tokens),
    // Operator surface: the ops token (wrong ones limited per address) or a console session (CSRF header on writes).
    ops: opsAuth(services.config.opsToken, services.consoleSessions, services.opsTokenFailures),
  };
  const { config } = services;
  // Public: liveness, the token endpoint, the console's page and bundle.
  await health.register(app, { storage: services.storage });
  await auth.register(app, { tokens: services.tokens, tokenAttempts: services.tokenAttempts, config });
  await operatorConsole.register(app);
  // The console's sign-in (the ops token in the body) and sign-out: outside the ops guard.
  await consoleSessionRoutes(app, {
    opsToken: config.opsToken,
    sessions: services.consoleSessions,
    failures: services.opsTokenFailures,
    secure: config.publicBaseUrl.startsWith('https:'),
  });

  await catalogue.register(app, { catalogue: services.catalogue, guards });
  // /meetings behind the API guard, the console's /ops/v1 booking routes behind the ops guard.
  await booking.register(app, { meetings: services.meetings, opsBookings: services.opsBookings, guards });
  await members.register(app, {
    guards,
    members: services.members,
    credentials: services.credentials,
    config,
    // Late-bound: tests replace services.partnerRateLimit after the app is built.
    partnerRateLimit: { hit: (key) => services.partnerRateLimit.hit(key) },
  });
  // The web payment page (public, its unguessable token is the capability) and the ops payment routes.
  await payments.register(app, {
    payments: services.payments,
    sync: services.paymentSync,
    details: services.paymentDetails,
    sandbox: services.sandboxClock.enabled,
    guards,
  });
  await webhooks.register(app, { webhooks: services.webhooks, guards });
  // The room feeds (public: the unguessable token in the address is the capability), iTIP messages and feed addresses (ops).
  await calendarSync.register(app, {
    calendarSync: services.calendarSync,
    roomFeeds: services.roomFeeds,
    connected: services.calendarConnections,
    guards,
  });
  await devices.register(app, {
    guards,
    devices: services.devices,
    entries: services.entries,
    isapi: services.isapiEvents,
    zkteco: services.zkteco,
  });
  await visitors.register(app, { guards, visitors: services.visitors });
  await analytics.register(app, { guards, analytics: services.analytics });
  await guarded(app, guards.ops, async (ops) => {
    await sandbox.register(ops, { sandboxClock: services.sandboxClock });
    await site.register(ops, { site: services.site, config });
    await changeStreamRoute(ops, services.changeFeed, services.consoleSessions);
  });
}
