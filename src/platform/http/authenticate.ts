/**
 * Guards the ops API with the operator token (compared in constant time). The
 * bearer-token layer of the public API lives with the auth module (its routes.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../crypto/secrets.js';
import { errors } from '../errors.js';

export function opsAuth(opsToken: string) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m || !safeEqual(m[1], opsToken)) throw errors.unauthorized('A valid ops token is required');
  };
}
