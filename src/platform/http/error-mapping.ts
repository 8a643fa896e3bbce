/**
 * The one place where failures become HTTP responses. Everything that leaves the
 * service as an error passes through `toErrorResponse`.
 */
import type { Socket } from 'node:net';
import type { FastifyError } from 'fastify';
import { DEFAULT_RETRY_AFTER_429_S, DEFAULT_RETRY_AFTER_503_S, SERVICE_UNAVAILABLE, ServiceError } from '../errors.js';
import { errorBody } from './envelope.js';
import { INSTANT_TEXT } from '../time/instant.js';
import { HTTP_URL_PATTERN } from '../../contract/common.js';
import { isDatabaseFull, isDatabaseUnavailable } from '../db/unavailable.js';
import { TRUNCATED_KEYWORD } from './validation.js';

/** How many problems one 400 KS001 lists; the rest are counted in one final entry. */
export const MAX_LISTED_PROBLEMS = 100;

/**
 * The first MAX_LISTED_PROBLEMS messages, then one entry counting the rest ("… and 199900 more").
 * `more`: the list stopped early (validation-level truncation): the count is unknown.
 */
export function capMessages(messages: string[], more = false): string[] {
  if (messages.length <= MAX_LISTED_PROBLEMS && !more) return messages;
  const listed = messages.slice(0, MAX_LISTED_PROBLEMS);
  const rest = messages.length - listed.length;
  if (more)
    listed.push(`… and possibly more problems: the request is too large to list them all${rest > 0 ? ` (${rest} more found)` : ''}`);
  else listed.push(`… and ${rest} more`);
  return listed;
}

interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

const FORMAT_TEXT: Record<string, string> = {
  'date-time': INSTANT_TEXT,
  email: 'an email address',
  uri: 'an absolute URI',
};

function jsonPath(prefix: string, instancePath: string | undefined): string {
  const parts = (instancePath ?? '').split('/').filter(Boolean);
  let out = prefix;
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`;
  return out;
}

interface AjvSchemaError extends AjvLikeError {
  schemaPath?: string;
}

/**
 * A value that matches no branch of a union of literals (an `anyOf` of `const`s)
 * yields one error per branch plus the `anyOf` itself. Those become one `enum`
 * error listing the allowed values; any other `anyOf` is left as it is.
 */
function collapseLiteralUnions(errs: AjvSchemaError[]): AjvLikeError[] {
  const dropped = new Set<AjvSchemaError>();
  const replaced = new Map<AjvSchemaError, AjvLikeError>();
  for (const union of errs) {
    if (union.keyword !== 'anyOf') continue;
    const branches = errs.filter(
      (e) =>
        e !== union &&
        e.instancePath === union.instancePath &&
        (union.schemaPath === undefined || e.schemaPath === undefined || e.schemaPath.startsWith(`${union.schemaPath}/`)),
    );
    const literal = (e: AjvLikeError) => e.keyword === 'const' || e.keyword === 'enum' || e.keyword === 'type';
    if (branches.length === 0 || !branches.every(literal)) continue;
    const values = branches.flatMap((e) =>
      e.keyword === 'const' ? [e.params?.allowedValue] : e.keyword === 'enum' ? ((e.params?.allowedValues as unknown[]) ?? []) : [],
    );
    if (values.length === 0) continue;
    for (const b of branches) dropped.add(b);
    replaced.set(union, { instancePath: union.instancePath, keyword: 'enum', params: { allowedValues: [...new Set(values)] } });
  }
  return errs.filter((e) => !dropped.has(e)).map((e) => replaced.get(e) ?? e);
}

/**
 * One readable message per violated constraint (one per bad value of a union of
 * literals), at most MAX_LISTED_PROBLEMS and a final entry counting the rest.
 */
export function formatValidationErrors(errs: AjvLikeError[], context: string): string[] {
  const truncated = errs.some((e) => e.keyword === TRUNCATED_KEYWORD);
  return capMessages(validationMessages(truncated ? errs.filter((e) => e.keyword !== TRUNCATED_KEYWORD) : errs, context), truncated);
}

function validationMessages(errs: AjvLikeError[], context: string): string[] {
  const where = context === 'querystring' ? 'query' : context;
  const messages = collapseLiteralUnions(errs).map((e) => {
    const path = jsonPath(where, e.instancePath);
    const params = e.params ?? {};
    switch (e.keyword) {
      case 'required':
        return `${path}.${String(params.missingProperty)} is required`;
      case 'additionalProperties':
        return `${path}.${String(params.additionalProperty)} is not an allowed field`;
      case 'enum':
        return `${path} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
      case 'const':
        return `${path} must be ${JSON.stringify(params.allowedValue)}`;
      case 'type':
        if (path === 'body' && params.type === 'object') return 'body must be a JSON object';
        if (params.type === 'number') return `${path} must be a finite number`;
        if (params.type === 'integer') return `${path} must be a whole number`;
        return `${path} ${e.message ?? 'is invalid'}`;
      case 'format':
        return `${path} must be ${FORMAT_TEXT[String(params.format)] ?? `a valid ${String(params.format)}`}`;
      case 'pattern':
        if (params.pattern === HTTP_URL_PATTERN) return `${path} must be an http or https URL`;
        return /0-9a-f\]\{24\}/.test(String(params.pattern)) ? `${path} must be a 24-character hexadecimal id` : `${path} ${e.message}`;
      default:
        return `${path} ${e.message ?? 'is invalid'}`;
    }
  });
  return [...new Set(messages)];
}

export interface ErrorResponse {
  status: number;
  body: ReturnType<typeof errorBody>;
  /** True when the failure is ours (logged at error level). */
  internal: boolean;
  /** Response headers (`retry-after` on every 503 and 429). */
  headers?: Record<string, string>;
}

/** Retry-After of a full disk: freeing space takes an operator. */
const RETRY_AFTER_FULL_S = 30;

/** Maps a failure to its response, with `retry-after` on every 503 and 429. */
export function toErrorResponse(err: unknown): ErrorResponse {
  const res = mapError(err);
  if (res.status !== 503 && res.status !== 429) return res;
  const explicit = err instanceof ServiceError ? err.retryAfterSeconds : undefined;
  const seconds =
    explicit ?? (isDatabaseFull(err) ? RETRY_AFTER_FULL_S : res.status === 429 ? DEFAULT_RETRY_AFTER_429_S : DEFAULT_RETRY_AFTER_503_S);
  return { ...res, headers: { ...res.headers, 'retry-after': String(Math.max(1, Math.ceil(seconds))) } };
}

function mapError(err: unknown): ErrorResponse {
  if (err instanceof ServiceError) {
    const detail = Array.isArray(err.detail) ? capMessages(err.detail) : err.detail;
    return { status: err.status, body: errorBody(err.code, detail, err.data), internal: err.status >= 500 && err.code === 'KS004' };
  }
  const fe = err as FastifyError & { validation?: AjvLikeError[]; validationContext?: string };
  if (fe && Array.isArray(fe.validation)) {
    return {
      status: 400,
      body: errorBody('KS001', formatValidationErrors(fe.validation, fe.validationContext ?? 'body')),
      internal: false,
    };
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: errorBody('KS001', ['Content-Type must be application/json']), internal: false };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: errorBody('KS001', ['request body is too large']), internal: false };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: errorBody('KS001', ['body must not be empty when Content-Type is application/json']), internal: false };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, body: errorBody('KS001', ['body is not valid JSON']), internal: false };
    // Router errors (fastify `frameworkErrors`), before any route runs.
    case 'FST_ERR_BAD_URL':
      return { status: 400, body: errorBody('KS001', ['the URL path is not validly percent-encoded']), internal: false };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 414, body: errorBody('KS001', ['a path parameter is too long']), internal: false };
  }
  if (fe instanceof SyntaxError || fe?.statusCode === 400) {
    // JSON.parse failures surface as a SyntaxError with status 400.
    return {
      status: 400,
      body: errorBody('KS001', [fe instanceof SyntaxError ? 'body is not valid JSON' : String(fe.message)]),
      internal: false,
    };
  }
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, body: errorBody('KS001', [String(fe.message)]), internal: false };
  }
  // The database cannot serve us now (platform/db/unavailable.ts says which failures those are): retryable.
  if (isDatabaseUnavailable(err) || isDatabaseFull(err)) {
    return { status: 503, body: errorBody('KS004', SERVICE_UNAVAILABLE), internal: true };
  }
  return { status: 500, body: errorBody('KS004', 'Internal server error'), internal: true };
}

/**
 * Errors Node's HTTP parser raises before a request exists (fastify
 * `clientErrorHandler`): headers or URL over the size limit, a malformed request,
 * a client too slow to send one. Answered with the envelope, then the connection closes.
 */
export function clientErrorResponse(err: { code?: string }): { status: number; text: string; body: ReturnType<typeof errorBody> } {
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      text: 'Request Header Fields Too Large',
      body: errorBody('KS001', ['request headers (including the URL) are too large']),
    };
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, text: 'Request Timeout', body: errorBody('KS001', ['the request was not received in time']) };
  return { status: 400, text: 'Bad Request', body: errorBody('KS001', ['the request is not valid HTTP']) };
}

export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const res = clientErrorResponse(err);
    const body = JSON.stringify(res.body);
    socket.write(
      `HTTP/1.1 ${res.status} ${res.text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
