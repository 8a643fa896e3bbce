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
import { errors, ServiceError } from '../errors.js';
import { addressBucket, type RateLimiter } from '../rate-limit.js';
import { CSRF_HEADER, SESSION_COOKIE } from '../../contract/ops-console.js';
import { cookieValue, type ConsoleSessions } from './console-session.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** A matcher of presented tokens against `expected`, in time independent of either's content and length. */
export function tokenMatcher(expected: string): (presented: string) => boolean {
  const want = digest(expected);
  return (presented) => timingSafeEqual(digest(presented), want);
}

/**
 * Wrong ops tokens per client address (an IPv6 client by its /64), shared by the
 * ops guard's Bearer token and the console sign-in, in fixed windows on the real
 * clock shared by every instance (platform/rate-limit.ts). Once an address has used
 * up its failures it is answered 429 KS036 with Retry-After until the window ends,
 * **whatever token it presents** (a limited address learns nothing from a hit); no
 * other address is ever refused the right token. Nothing is counted when no token
 * is presented.
 */
export class OpsTokenFailures {
  constructor(private readonly limiter: RateLimiter) {}

  /** Returns when `matched` and the address is not limited; else throws 429 KS036 (limited) or 401 KS002 (a counted failure). */
  async admit(address: string, matched: boolean, refusal: string): Promise<void> {
    const key = `ops-token-fail:${addressBucket(address)}`;
    // The right token costs one read; a wrong one one counting write (and is 429 once past the limit).
    const d = await store(() => (matched ? this.limiter.peek(key) : this.limiter.hit(key)));
    if (!d.allowed)
      throw errors.tooManyRequests('Too many wrong ops tokens from this address; retry after the Retry-After seconds', d.retryAfterSeconds);
    if (!matched) throw errors.unauthorized(refusal);
  }
}

/** The counters live in the database: when it cannot be reached the token is neither accepted nor refused (503 KS234). */
async function store<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    throw errors.authUnavailable(
      'The service is temporarily unavailable: the ops token could not be checked (it was not refused); retry after the Retry-After seconds',
    );
  }
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
 * judged by it alone. With `failures`, a presented Bearer token goes through the
 * per-address limit of wrong ops tokens (OpsTokenFailures).
 */
export function opsAuth(opsToken: string, sessions?: ConsoleSessions, failures?: OpsTokenFailures) {
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
    const refusal = 'A valid ops token is required';
    if (!m) throw errors.unauthorized(refusal);
    if (failures) return failures.admit(req.ip, ok, refusal);
    if (!ok) throw errors.unauthorized(refusal);
  };
}
