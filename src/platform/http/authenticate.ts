/**
 * Guards the ops API with the operator token, compared in constant time: the
 * SHA-256 digests of the presented and the configured token are compared with
 * crypto.timingSafeEqual, so neither the content nor the length of the
 * configured token shows in the time a refusal takes. The bearer-token layer of
 * the public API lives with the auth module (its routes.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** A matcher of presented tokens against `expected`, in time independent of either's content and length. */
export function tokenMatcher(expected: string): (presented: string) => boolean {
  const want = digest(expected);
  return (presented) => timingSafeEqual(digest(presented), want);
}

export function opsAuth(opsToken: string) {
  const matches = tokenMatcher(opsToken);
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    // Always one digest comparison, whether or not a token was presented.
    const ok = matches(m ? m[1]! : '');
    if (!m || !ok) throw errors.unauthorized('A valid ops token is required');
  };
}
