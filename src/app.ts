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
import * as health from './modules/health/index.js';
import * as auth from './modules/auth/index.js';
import * as sandbox from './modules/sandbox/index.js';
import * as site from './modules/site/index.js';
import * as catalogueModule from './modules/catalogue/index.js';
import * as bookingModule from './modules/booking/index.js';
import { register as registerMembers } from './modules/members/index.js';
import { register as registerWebhooks } from './modules/webhooks/index.js';
import { register as registerDevices } from './modules/devices/index.js';
import { register as registerCalendarSync } from './modules/calendar-sync/index.js';
import { register as registerPayments } from './modules/payments/index.js';
import { register as registerVisitors } from './modules/visitors/index.js';
import * as operatorConsole from './modules/console/index.js';

export const API_VERSION = '1.15.0';

export interface BuildAppOptions {
  /** A pino logger for request logs; none in tests. */
  loggerInstance?: FastifyBaseLogger;
}

export async function buildApp(services: Services, options: BuildAppOptions = {}): Promise<App> {
  const { trustProxy, timeouts } = services.config;
  const app = Fastify({
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
  app.addHook('onRequest', async () => {
    if (closing) throw errors.upstreamUnavailable('The service is shutting down; retry after the Retry-After seconds');
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(errorBody('KS005', `No route ${req.method} ${req.url.split('?')[0]}`));
  });
  // Security headers and the CORS policy on every answer (platform/http: security-headers.ts, cors.ts).
  app.addHook('onSend', securityHeaders());
  registerCors(app, services.config.corsOrigins);
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
      servers: [{ url: services.config.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Access token from POST /auth/accessToken' },
          opsToken: { type: 'http', scheme: 'bearer', description: 'OPS_TOKEN of this deployment (wrong tokens are limited per client address: 429 KS036 with Retry-After)' },
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

  await health.register(app, { storage: services.storage });
  await auth.register(app, { tokens: services.tokens, tokenAttempts: services.tokenAttempts, config: services.config });
  // The operator console's page and bundle (its data comes from the ops API below).
  await operatorConsole.register(app);

  // The two guards modules put their routes behind (platform/http/module.ts).
  const guards: RouteGuards = {
    // Public API: a valid bearer token.
    api: auth.bearerAuth(services.tokens),
    // Operator surface: the ops token (wrong ones limited per address) or a console session (CSRF header on writes).
    ops: opsAuth(services.config.opsToken, services.consoleSessions, services.opsTokenFailures),
  };

  // The web payment page (public, its unguessable token is the capability) and the ops payment routes.
  await registerPayments(app, { payments: services.payments, sandbox: services.sandboxClock.enabled, guards });

  await catalogueModule.register(app, { catalogue: services.catalogue, guards });
  // The booking routes: /meetings behind the API guard, the console's /ops/v1 booking routes behind the ops guard.
  await bookingModule.register(app, { meetings: services.meetings, opsBookings: services.opsBookings, guards });
  await registerMembers(app, {
    guards, members: services.members, credentials: services.credentials, config: services.config,
    // Late-bound: tests replace services.partnerRateLimit after the app is built.
    partnerRateLimit: { hit: (key) => services.partnerRateLimit.hit(key) },
  });

  // The console's sign-in (the ops token in the body) and sign-out: outside the ops guard.
  await consoleSessionRoutes(app, {
    opsToken: services.config.opsToken, sessions: services.consoleSessions, failures: services.opsTokenFailures,
    secure: services.config.publicBaseUrl.startsWith('https:'),
  });

  // Webhook listeners and deliveries (ops guard).
  await registerWebhooks(app, { webhooks: services.webhooks, guards });

  await guarded(app, guards.ops, async (ops) => {
    await sandbox.register(ops, { sandboxClock: services.sandboxClock });
    await site.register(ops, { site: services.site, config: services.config });
    await changeStreamRoute(ops, services.changeFeed, services.consoleSessions);
  });
  // Calendar sync: the room feeds (public: the unguessable token in the address is the capability),
  // the room mailboxes' iTIP messages and the feed addresses (ops).
  await registerCalendarSync(app, { calendarSync: services.calendarSync, roomFeeds: services.roomFeeds, guards });
  await registerDevices(app, { guards, devices: services.devices });
  await registerVisitors(app, { guards, visitors: services.visitors });

  return app;
}
