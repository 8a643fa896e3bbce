/**
 * The operator console's session: the ops token exchanged for an HttpOnly,
 * SameSite=Strict cookie (POST /ops/v1/session), read back (GET), ended (DELETE).
 *
 * The cookie is a signed, expiring value — `v1.<expiresAtMs>.<random>.<mac>` — with
 * an HMAC key derived from OPS_TOKEN: any instance checks it without a table, and
 * rotating OPS_TOKEN ends every session. The CSRF token is an HMAC of the session
 * value under a second derived key, so any instance can check the `x-csrf-token`
 * header a cookie-authenticated write must carry. Expiry runs on the real clock.
 */
import { Type } from 'typebox';
import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from '../crypto/secrets.js';
import { errors } from '../errors.js';
import type { Clock } from '../clock/clock.js';
import type { RateLimiter } from '../rate-limit.js';
import { CSRF_HEADER, SESSION_COOKIE, SESSION_SECONDS, SessionBody, SessionStarted } from '../../contract/ops-console.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { ok } from './envelope.js';
import { tokenMatcher } from './authenticate.js';
import type { App } from './types.js';
import { TOKEN_BODY_LIMIT_BYTES } from './body-limits.js';

const mac = (key: Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest('base64url');

export class ConsoleSessions {
  private readonly signKey: Buffer;
  private readonly csrfKey: Buffer;

  constructor(opsToken: string, private readonly clock: Clock) {
    this.signKey = createHmac('sha256', opsToken).update('console-session-v1').digest();
    this.csrfKey = createHmac('sha256', opsToken).update('console-csrf-v1').digest();
  }

  /** A new session value and its CSRF token. */
  issue(): { value: string; csrfToken: string; expiresAt: number } {
    const expiresAt = this.clock.now() + SESSION_SECONDS * 1000;
    const body = `v1.${expiresAt}.${randomBytes(16).toString('base64url')}`;
    const value = `${body}.${mac(this.signKey, body)}`;
    return { value, csrfToken: this.csrfOf(value), expiresAt };
  }

  csrfOf(value: string): string {
    return mac(this.csrfKey, value);
  }

  /** The session's expiry when `value` is a genuine, unexpired session; else null. */
  verify(value: string | undefined): number | null {
    if (!value || value.length > 200) return null;
    const m = /^(v1\.(\d{1,15})\.[A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!m || !safeEqual(mac(this.signKey, m[1]!), m[3]!)) return null;
    const expiresAt = Number(m[2]);
    return expiresAt > this.clock.now() ? expiresAt : null;
  }
}

/** The value of cookie `name` in a Cookie header, if present. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface SessionRouteOptions {
  opsToken: string;
  sessions: ConsoleSessions;
  /** Failed sign-ins per client address (real time, shared by instances): 429 KS036 once used up. */
  failures: RateLimiter;
  /** Adds `Secure` to the cookie (PUBLIC_BASE_URL is https). */
  secure: boolean;
}

/** POST/GET/DELETE /ops/v1/session (outside the ops guard: POST authenticates by the body's token). */
export async function consoleSessionRoutes(app: App, o: SessionRouteOptions): Promise<void> {
  const matches = tokenMatcher(o.opsToken);
  const cookie = (value: string, maxAge: number) =>
    `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${o.secure ? '; Secure' : ''}`;
  const security = [{ opsToken: [] }];

  app.post('/ops/v1/session', {
    bodyLimit: TOKEN_BODY_LIMIT_BYTES,
    schema: {
      tags: ['ops'], summary: 'Console sign-in: the ops token for an HttpOnly, SameSite=Strict session cookie and its CSRF token',
      description: `Cookie ${SESSION_COOKIE}, 12 hours. With the cookie, every request other than GET/HEAD must carry ${CSRF_HEADER}. ` +
        'A wrong token is 401 KS002; too many from one address are 429 KS036 with Retry-After.',
      security: [],
      body: SessionBody,
      response: { 200: Envelope(SessionStarted), 400: ErrorEnvelope, 401: ErrorEnvelope, 429: ErrorEnvelope },
    },
  }, async (req, reply) => {
    const key = `ops-session-fail:${req.ip}`;
    const state = await o.failures.peek(key);
    if (!state.allowed) throw errors.tooManyRequests('Too many failed sign-ins; retry after the Retry-After seconds', state.retryAfterSeconds);
    if (!matches(req.body.token)) {
      await o.failures.hit(key);
      throw errors.unauthorized('Wrong ops token');
    }
    const s = o.sessions.issue();
    reply.header('set-cookie', cookie(s.value, SESSION_SECONDS));
    return ok({ csrfToken: s.csrfToken, expiresAt: new Date(s.expiresAt).toISOString() });
  });

  app.get('/ops/v1/session', {
    schema: {
      tags: ['ops'],
      summary: 'The console session: when it ends and its CSRF token (401 without a valid one)',
      description: 'Lets a reloaded console page carry on without signing in again. Only a same-origin page can read the answer (CORS is closed by default), and the cookie alone never authorizes a write.',
      security,
      response: { 200: Envelope(SessionStarted), 401: ErrorEnvelope },
    },
  }, async (req) => {
    const value = cookieValue(req.headers.cookie, SESSION_COOKIE);
    const expiresAt = o.sessions.verify(value);
    if (expiresAt === null || value === undefined) throw errors.unauthorized('No console session; sign in with POST /ops/v1/session');
    return ok({ csrfToken: o.sessions.csrfOf(value), expiresAt: new Date(expiresAt).toISOString() });
  });

  app.delete('/ops/v1/session', {
    schema: { tags: ['ops'], summary: 'Console sign-out: clears the cookie', security, response: { 204: Type.Null({ description: 'Signed out, no body' }) } },
  }, async (_req, reply) => {
    reply.header('set-cookie', cookie('', 0));
    return reply.status(204).send(null);
  });
}
