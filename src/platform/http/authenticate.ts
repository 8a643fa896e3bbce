/**
 * Guards the ops API with the operator token, compared in constant time: the
 * SHA-256 digests of the presented and the configured token are compared with
 * crypto.timingSafeEqual, so neither the content nor the length of the
 * configured token shows in the time a refusal takes; or the console's session
 * cookie (with its CSRF header on writes). The bearer-token layer of
 * the public API lives with the auth module (its routes.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import { CSRF_HEADER, SESSION_COOKIE } from '../../contract/ops-console.js';
import { cookieValue, type ConsoleSessions } from './console-session.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** A matcher of presented tokens against `expected`, in time independent of either's content and length. */
export function tokenMatcher(expected: string): (presented: string) => boolean {
  const want = digest(expected);
  return (presented) => timingSafeEqual(digest(presented), want);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The ops scope's guard: `Authorization: Bearer <OPS_TOKEN>`, or (with `sessions`)
 * the console session cookie, which needs `x-csrf-token` on anything but GET/HEAD
 * (platform/http/console-session.ts). A request with an Authorization header is
 * judged by it alone.
 */
export function opsAuth(opsToken: string, sessions?: ConsoleSessions) {
  const matches = tokenMatcher(opsToken);
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const auth = req.headers.authorization;
    const cookie = sessions && auth === undefined ? cookieValue(req.headers.cookie, SESSION_COOKIE) : undefined;
    if (sessions && cookie !== undefined) {
      if ((await sessions.verify(cookie)) === null) throw errors.unauthorized('The console session is missing or expired; sign in again');
      if (SAFE_METHODS.has(req.method)) return;
      const sent = req.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !sameText(sent, sessions.csrfOf(cookie))) {
        throw errors.forbidden(`A cookie-authenticated ${req.method} needs the session's ${CSRF_HEADER} header`);
      }
      return;
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth ?? '');
    // Always one digest comparison, whether or not a token was presented.
    const ok = matches(m ? m[1]! : '');
    if (!m || !ok) throw errors.unauthorized('A valid ops token is required');
  };
}
