/**
 * POST /auth/accessToken (the three grants), POST /auth/revoke, GET /auth/whoami,
 * and the bearer-token hook every public API route runs before validation.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/types.js';
import type { Config } from '../../platform/config.js';
import { ok } from '../../platform/http/envelope.js';
import { bodyLimit } from '../../platform/http/body-limits.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { Revoked, TokenRequest, TokenResponse, WhoAmI } from '../../contract/auth.js';
import type { Principal } from './principal.js';
import type { TokenService } from './token-service.js';
import { isBadCredentials, type TokenAttempts } from './token-attempts.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

/**
 * Resolves the bearer token of a public API call to its Principal (401/503 otherwise).
 * Synchronous when the caller cache answers (no promise per request); a malformed
 * header throws 401 at once, which Fastify's hook runner hands to the error mapping.
 */
export function bearerAuth(tokens: TokenService) {
  return (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    const caller = tokens.caller(req.headers.authorization);
    if (caller instanceof Promise) {
      caller.then((principal) => {
        req.principal = principal;
        done();
      }, done);
      return;
    }
    req.principal = caller;
    done();
  };
}

/** What the token routes use. */
export interface AuthRouteDeps {
  tokens: TokenService;
  tokenAttempts: TokenAttempts;
  /** Body limits (the token endpoint's own is fixed; platform/http/body-limits.ts). */
  config: Pick<Config, 'bodyLimitBytes' | 'applyBodyLimitBytes'>;
}

export async function tokenRoutes(app: App, deps: AuthRouteDeps): Promise<void> {
  app.post(
    '/auth/accessToken',
    {
      // Unauthenticated: a grant is a few short fields, so a few KB (platform/http/body-limits.ts).
      bodyLimit: bodyLimit('token', deps.config),
      schema: {
        tags: ['auth'],
        summary: 'Obtain an access token (app_credentials, refresh_token or act_as)',
        // The token endpoint needs no bearer token; without this it inherits the global bearer requirement in OpenAPI.
        security: [],
        body: TokenRequest,
        response: {
          201: TokenResponse,
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
          429: ErrorEnvelope,
          503: ErrorEnvelope,
        },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      // Brute force: failed app_secret attempts are limited per app_id and per client address (token-attempts.ts).
      const appId =
        req.body.app_secret !== undefined && typeof req.body.app_id === 'string' && req.body.app_id !== '' ? req.body.app_id : null;
      if (appId !== null) await deps.tokenAttempts.check(appId, req.ip); // 429 KS036 with Retry-After
      let token;
      try {
        token = await deps.tokens.grant(req.body);
      } catch (err) {
        if (appId !== null && isBadCredentials(err)) await deps.tokenAttempts.failed(appId, req.ip);
        throw err;
      }
      return reply.status(201).send(token);
    },
  );

  app.post(
    '/auth/revoke',
    {
      onRequest: bearerAuth(deps.tokens),
      schema: {
        tags: ['auth'],
        summary: 'Revoke the calling token and every token issued with it (its refresh chain)',
        security: [{ bearer: [] }],
        response: { 200: Envelope(Revoked), 401: ErrorEnvelope, 503: ErrorEnvelope },
      },
    },
    async (req) => {
      await deps.tokens.revoke(req.principal);
      return ok({ revoked: true });
    },
  );

  app.get(
    '/auth/whoami',
    {
      onRequest: bearerAuth(deps.tokens),
      schema: {
        tags: ['auth'],
        summary: 'Describe the calling token: the app, the member it acts for, and its project scope',
        security: [{ bearer: [] }],
        response: {
          200: Envelope(WhoAmI),
          401: ErrorEnvelope,
          503: ErrorEnvelope,
        },
      },
    },
    // Synchronous (no promise per request): the principal is already resolved.
    (req, reply) => {
      const p = req.principal;
      void reply.send(
        ok({
          kind: p.kind,
          appId: p.clientId,
          userId: p.userId,
          projects: [...p.projects].map(([projectId, scope]) => ({ projectId, permissions: [...scope.permissions].sort() })),
        }),
      );
    },
  );
}
