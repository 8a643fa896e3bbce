/**
 * The authentication layer: resolves the bearer token of every public API call
 * to a Principal before validation or handlers run, and guards the ops API with
 * the operator token.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../modules/auth/principal.js';
import type { TokenService } from '../../modules/auth/token-service.js';
import { safeEqual } from '../crypto/secrets.js';
import { errors } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

export function bearerAuth(tokens: TokenService) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    req.principal = await tokens.authenticate(req.headers.authorization);
  };
}

export function opsAuth(opsToken: string) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m || !safeEqual(m[1], opsToken)) throw errors.unauthorized('A valid ops token is required');
  };
}
