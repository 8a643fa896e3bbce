/**
 * The service's logger (pino), built so secrets never reach the log:
 *
 * - `redact` censors, wherever a log call passes them at the top level or one or
 *   two levels down: authorization and cookie headers, app_secret/client_secret,
 *   access and refresh tokens, PINs, card numbers, face images, webhook secrets
 *   and auth tokens, the ops token.
 * - The request serializer logs the method, the path (with the capability token
 *   of /pay/{token} and /calendar-feeds/{token} masked) and the query string with
 *   values of secret-looking parameters masked; never headers or bodies.
 * - The error serializer is pino's, minus database error fields that quote the
 *   offending values (PostgreSQL's `detail`, `where`, driver `parameters`).
 * - A mixin adds where the line came from (`logContext`):
 *   `reqId` on every line written while serving a request (through `request.log`
 *   or the root logger alike), `job` on a background job's lines, and, tracing on,
 *   `traceId`/`spanId` of the active span.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, trace, type Span } from '@opentelemetry/api';

export const CENSOR = '[redacted]';

/** Field names whose values are secrets (matched exactly by the redaction paths). */
export const SECRET_KEYS = [
  'authorization',
  'cookie',
  'set-cookie',
  'app_secret',
  'appSecret',
  'client_secret',
  'clientSecret',
  'access_token',
  'refresh_token',
  'accessToken',
  'refreshToken',
  'subject_token',
  'token',
  'secret',
  'password',
  'pinCode',
  'pin',
  'cardNumber',
  'cardNumbers',
  'cards',
  'card',
  'faceImage',
  'faceImages',
  'face',
  'faces',
  'image',
  'qrCardCode',
  'opsToken',
  'OPS_TOKEN',
  'secretsKey',
  'SECRETS_KEY',
  'feedUrl',
  'paymentUrl',
  'secretKey',
  'webhookSecret',
  'secret_key',
  'webhook_secret',
  'stripe-signature',
  'omise-signature',
  'headers',
] as const;

const paths = (key: string) => {
  const k = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
  const dot = k.startsWith('[') ? '' : '.';
  return [k, `*${dot}${k}`, `*.*${dot}${k}`];
};

/** Every redaction path: each secret key at the top level and one or two levels down, plus request and response headers. */
export const REDACT_PATHS = [
  ...SECRET_KEYS.flatMap(paths),
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  'req.headers["omise-signature"]',
  'res.headers["set-cookie"]',
];

/** Path segments that follow a capability-token segment (the next segment is masked). */
const TOKEN_PATH = /^\/(pay|calendar-feeds)\/[^/?#]+/;
const SECRET_PARAM = /token|secret|key|code|pin|password|signature|auth/i;

/** The request URL as logged: capability tokens in the path and secret-looking query values masked. */
export function logUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(TOKEN_PATH, (_m, prefix: string) => `/${prefix}/${CENSOR}`);
  if (q < 0) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && SECRET_PARAM.test(decodeURIComponentSafe(name)) ? `${name}=${CENSOR}` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remoteAddress?: string; remotePort?: number };
}

export const serializers = {
  req(req: LoggedRequest) {
    return {
      method: req.method,
      url: logUrl(req.url ?? ''),
      host: req.host,
      remoteAddress: req.ip ?? req.socket?.remoteAddress,
      remotePort: req.socket?.remotePort,
    };
  },
  err(err: unknown) {
    const out = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
    if (out && typeof out === 'object') {
      for (const field of ['detail', 'where', 'parameters', 'params', 'values']) if (field in out) out[field] = CENSOR;
    }
    return out;
  },
};

/**
 * Where a line comes from: one store per request, set by the server's request
 * wrapper (observability/tracing.ts `traceRequests`) before Fastify sees the
 * request, and one per job item (`runJobItem`). Read by the mixin, so lines logged
 * through the root logger by services and modules carry the request id too.
 */
export interface LogContext {
  /** Fastify's request id, set by its onRequest hook (http/request-context.ts). */
  reqId?: string;
  /** The background job's name. */
  job?: string;
  /** The request's SERVER span (tracing on). */
  span?: Span;
}

export const logContext = new AsyncLocalStorage<LogContext>();

/** Marks Fastify's per-request child loggers, whose bindings already hold `reqId` (the mixin then leaves it out). */
const BINDS_REQ_ID = Symbol('binds reqId');

/** Fastify's `childLoggerFactory`: its usual child logger, marked as binding the request id. */
export function requestChildLogger(logger: Logger, bindings: pino.Bindings, options: pino.ChildLoggerOptions): Logger {
  const child = logger.child(bindings, options);
  (child as unknown as Record<symbol, boolean>)[BINDS_REQ_ID] = true;
  return child;
}

/** The fields a line gets from its request or job context and the active span (a fresh object: pino merges into it). */
export function logFields(_obj: object, _level: number, logger?: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const store = logContext.getStore();
  if (store) {
    if (store.reqId !== undefined && !(logger as Record<symbol, boolean> | undefined)?.[BINDS_REQ_ID]) out.reqId = store.reqId;
    if (store.job !== undefined) out.job = store.job;
  }
  const sc = trace.getSpanContext(context.active());
  if (sc && trace.isSpanContextValid(sc)) {
    out.traceId = sc.traceId;
    out.spanId = sc.spanId;
  }
  return out;
}

export interface LoggerOptions {
  level: string;
}

/** The service logger: `npm start` writes to stdout; tests pass a stream to capture it. */
export function createLogger(config: LoggerOptions, stream?: DestinationStream): Logger {
  return pino(
    {
      level: config.level,
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      serializers,
      mixin: logFields,
    },
    stream,
  );
}
