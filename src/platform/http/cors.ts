/**
 * CORS: closed by default, an allow-list by configuration (CORS_ORIGINS).
 *
 * - A request whose Origin is on the list gets `access-control-allow-origin:
 *   <that origin>` (never "*", never credentials: the API authenticates with
 *   bearer tokens, not cookies) and `access-control-expose-headers` for
 *   Location and Retry-After. With a list configured, every answer carries
 *   `vary: origin`.
 * - A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
 *   answered 204 by the service itself, for any path: with the allowed methods
 *   and headers (authorization, content-type) and a max-age when the origin is
 *   allowed, and with no access-control-* headers at all otherwise (the browser
 *   then refuses the real request). Any other OPTIONS request is 404 KS005 as
 *   before (no route).
 * - CORS is for the public API only: the operator surface (`/ops…`, used by the
 *   same-origin console and by server-side tools) never gets an access-control
 *   header, whatever the origin; its preflights are answered as for an origin not
 *   on the list.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './types.js';
import { errorBody } from './envelope.js';

export const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
export const ALLOWED_HEADERS = 'authorization, content-type';
export const EXPOSED_HEADERS = 'location, retry-after';
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Whether a request path is on the operator surface (no CORS there). Case-insensitive, like the router's worst case. */
export function isOpsPath(url: string): boolean {
  const path = url.split('?')[0]!.toLowerCase();
  return path === '/ops' || path.startsWith('/ops/');
}

export function registerCors(app: App, origins: readonly string[]): void {
  const allowed = new Set(origins);
  const isAllowed = (origin: string | undefined, url: string): origin is string =>
    origin !== undefined && allowed.has(origin) && !isOpsPath(url);

  // No list: no CORS header on any answer, and no hook to run. Else one synchronous onSend hook (no promise per answer).
  if (allowed.size > 0) {
    app.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, p: unknown) => void) => {
      reply.header('vary', appendVary(reply.getHeader('vary'), 'origin'));
      const origin = req.headers.origin;
      if (isAllowed(origin, req.url) && !reply.hasHeader('access-control-allow-origin')) {
        reply.header('access-control-allow-origin', origin);
        reply.header('access-control-expose-headers', EXPOSED_HEADERS);
      }
      done(null, payload);
    });
  }

  app.route({
    method: 'OPTIONS',
    url: '*',
    schema: { hide: true },
    handler: async (req, reply) => {
      const origin = req.headers.origin;
      if (!origin || !req.headers['access-control-request-method']) {
        return reply.status(404).send(errorBody('KS005', `No route OPTIONS ${req.url.split('?')[0]}`));
      }
      if (isAllowed(origin, req.url)) {
        reply.headers({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': ALLOWED_METHODS,
          'access-control-allow-headers': ALLOWED_HEADERS,
          'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
        });
      }
      return reply.status(204).send();
    },
  });
}

function appendVary(current: unknown, name: string): string {
  const text = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.some((n) => n === '*' || n.toLowerCase() === name)) return text;
  return [...names, name].join(', ');
}
