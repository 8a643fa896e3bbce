/**
 * The operator console's session: the ops token exchanged for an HttpOnly,
 * SameSite=Strict cookie (POST /ops/v1/session), read back (GET), ended (DELETE).
 *
 * The cookie is `v2.<id>.<mac>`: a random 256-bit session id and an HMAC under a key
 * derived from OPS_TOKEN and BOOKING_ENV. The session itself is a stored row
 * (console_sessions: the SHA-256 of the id, never the id; the environment; the
 * expiry; the revocation), so a cookie counts only while its row says so:
 * - sign-out revokes the row, and every instance over the database refuses the
 *   cookie from the next request on (nothing is cached);
 * - a restart keeps valid sessions and revoked ones stay revoked;
 * - a cookie minted under another BOOKING_ENV fails the MAC (and the row's env);
 * - rotating OPS_TOKEN still ends every session (the MAC key changes).
 * The MAC lets a forged cookie be refused without a read. The CSRF token is an
 * HMAC of the cookie value under a second derived key. Expiry (12 h) runs on the
 * real clock.
 */
import { Type } from 'typebox';
import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual, sha256Hex } from '../crypto/secrets.js';
import { errors, ServiceError } from '../errors.js';
import type { Clock } from '../clock/clock.js';
import type { ConsoleSessionRepository } from '../db/console-session-repository.js';
import { CSRF_HEADER, SESSION_COOKIE, SESSION_SECONDS, SessionBody, SessionStarted } from '../../contract/ops-console.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { ok } from './envelope.js';
import { tokenMatcher, type OpsTokenFailures } from './authenticate.js';
import type { App } from './types.js';
import { TOKEN_BODY_LIMIT_BYTES } from './body-limits.js';

const mac = (key: Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest('base64url');
const COOKIE_FORMAT = /^(v2\.([A-Za-z0-9_-]{43}))\.([A-Za-z0-9_-]{43})$/;

/** The sessions live in the database: when it cannot be reached a cookie is neither accepted nor refused (503 KS234). */
async function store<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    throw errors.authUnavailable(
      'The service is temporarily unavailable: the console session could not be checked or stored (nothing was decided); retry after the Retry-After seconds',
    );
  }
}

export class ConsoleSessions {
  private readonly signKey: Buffer;
  private readonly csrfKey: Buffer;

  constructor(
    opsToken: string,
    private readonly env: string,
    private readonly repo: ConsoleSessionRepository,
    private readonly clock: Clock,
  ) {
    this.signKey = createHmac('sha256', opsToken).update(`console-session-v2:${env}`).digest();
    this.csrfKey = createHmac('sha256', opsToken).update(`console-csrf-v2:${env}`).digest();
  }

  /** A new stored session: the cookie value and its CSRF token. Purges sessions that have ended. */
  async issue(): Promise<{ value: string; csrfToken: string; expiresAt: number }> {
    const now = this.clock.now();
    const expiresAt = now + SESSION_SECONDS * 1000;
    const id = randomBytes(32).toString('base64url');
    const body = `v2.${id}`;
    const value = `${body}.${mac(this.signKey, body)}`;
    await store(async () => {
      await this.repo.purgeExpired(now);
      await this.repo.insert({ idHash: sha256Hex(id), env: this.env, createdAt: now, expiresAt });
    });
    return { value, csrfToken: this.csrfOf(value), expiresAt };
  }

  csrfOf(value: string): string {
    return mac(this.csrfKey, value);
  }

  /** The session id of a cookie this deployment and environment signed; null for anything else (no read). */
  private idOf(value: string | undefined): string | null {
    if (!value || value.length > 200) return null;
    const m = COOKIE_FORMAT.exec(value);
    if (!m || !safeEqual(mac(this.signKey, m[1]!), m[3]!)) return null;
    return m[2]!;
  }

  /** The session's expiry when `value` is a stored, unrevoked, unexpired session of this environment; else null. */
  async verify(value: string | undefined): Promise<number | null> {
    const id = this.idOf(value);
    if (id === null) return null;
    const hash = sha256Hex(id);
    const row = await store(() => this.repo.find(hash));
    if (!row || !safeEqual(row.idHash, hash) || row.env !== this.env || row.revokedAt !== null) return null;
    return row.expiresAt > this.clock.now() ? row.expiresAt : null;
  }

  /** Ends the session of `value` for every instance (nothing for a cookie this deployment did not sign). */
  async revoke(value: string | undefined): Promise<void> {
    const id = this.idOf(value);
    if (id === null) return;
    await store(() => this.repo.revoke(sha256Hex(id), this.clock.now()));
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
  /** Wrong ops tokens per client address, shared with the ops guard's Bearer tokens: 429 KS036 once used up. */
  failures: OpsTokenFailures;
  /** Adds `Secure` to the cookie (PUBLIC_BASE_URL is https). */
  secure: boolean;
}

/** POST/GET/DELETE /ops/v1/session (outside the ops guard: POST authenticates by the body's token). */
export async function consoleSessionRoutes(app: App, o: SessionRouteOptions): Promise<void> {
  const matches = tokenMatcher(o.opsToken);
  const cookie = (value: string, maxAge: number) =>
    `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${o.secure ? '; Secure' : ''}`;
  const security = [{ opsToken: [] }];

  app.post(
    '/ops/v1/session',
    {
      bodyLimit: TOKEN_BODY_LIMIT_BYTES,
      schema: {
        tags: ['ops'],
        summary: 'Console sign-in: the ops token for an HttpOnly, SameSite=Strict session cookie and its CSRF token',
        description:
          `Cookie ${SESSION_COOKIE}, 12 hours. With the cookie, every request other than GET/HEAD must carry ${CSRF_HEADER}. ` +
          'A wrong token is 401 KS002. Wrong ops tokens (here or as a Bearer token) are limited per client address: past the limit that address ' +
          'gets 429 KS036 with Retry-After, even with the right token, until the window ends; other addresses are not affected.',
        security: [],
        body: SessionBody,
        response: { 200: Envelope(SessionStarted), 400: ErrorEnvelope, 401: ErrorEnvelope, 429: ErrorEnvelope, 503: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      // The limit is per address: a limited address is refused even the right token (429); other addresses never are.
      await o.failures.admit(req.ip, matches(req.body.token), 'Wrong ops token');
      const s = await o.sessions.issue();
      reply.header('set-cookie', cookie(s.value, SESSION_SECONDS));
      return ok({ csrfToken: s.csrfToken, expiresAt: new Date(s.expiresAt).toISOString() });
    },
  );

  app.get(
    '/ops/v1/session',
    {
      schema: {
        tags: ['ops'],
        summary: 'The console session: when it ends and its CSRF token (401 without a valid one)',
        description:
          'Lets a reloaded console page carry on without signing in again. Only a same-origin page can read the answer (CORS is closed by default), and the cookie alone never authorizes a write.',
        security,
        response: { 200: Envelope(SessionStarted), 401: ErrorEnvelope, 503: ErrorEnvelope },
      },
    },
    async (req) => {
      const value = cookieValue(req.headers.cookie, SESSION_COOKIE);
      const expiresAt = await o.sessions.verify(value);
      if (expiresAt === null || value === undefined) throw errors.unauthorized('No console session; sign in with POST /ops/v1/session');
      return ok({ csrfToken: o.sessions.csrfOf(value), expiresAt: new Date(expiresAt).toISOString() });
    },
  );

  app.delete(
    '/ops/v1/session',
    {
      schema: {
        tags: ['ops'],
        summary: 'Console sign-out: ends the session on every instance and clears the cookie',
        description:
          'The session is revoked in the store: its cookie is refused (401) from the next request on, by every instance, also after a restart.',
        security,
        response: { 204: Type.Null({ description: 'Signed out, no body' }), 503: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      await o.sessions.revoke(cookieValue(req.headers.cookie, SESSION_COOKIE));
      reply.header('set-cookie', cookie('', 0));
      return reply.status(204).send(null);
    },
  );
}
