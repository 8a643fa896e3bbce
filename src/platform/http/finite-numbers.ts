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

/** preHandler hook: 400 KS001 naming the field. */
export async function rejectNonFiniteNumbers(req: FastifyRequest): Promise<void> {
  const found = firstPath(req.body, 'body', (v) => typeof v === 'number' && !Number.isFinite(v));
  if (found) throw errors.validation([`${found} must be a finite number`]);
}
