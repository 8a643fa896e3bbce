/**
 * Refuses a non-finite number in a validated request body with 400 KS001.
 *
 * JSON itself cannot carry Infinity or NaN, but the validator coerces strings to
 * numbers where a schema asks for one, and it turns `"1e999"` or `"Infinity"` into
 * Infinity, which passes `type: integer` and any missing `maximum`. Such a value
 * would then reach storage (PostgreSQL refuses it: 500) or arithmetic. Runs after
 * validation (preHandler), so any non-finite number found came from coercion.
 */
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import { firstPath } from './nul-guard.js';

/** preHandler hook, synchronous (no promise per request): 400 KS001 naming the field. */
export function rejectNonFiniteNumbers(req: FastifyRequest, _reply: unknown, done: () => void): void {
  const body = req.body;
  if (body !== undefined && body !== null) {
    const found = firstPath(body, 'body', (v) => typeof v === 'number' && !Number.isFinite(v));
    if (found) throw errors.validation([`${found} must be a finite number`]);
  }
  done();
}
