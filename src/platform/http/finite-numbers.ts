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

/** JSON-ish path of the first non-finite number; iterative, so deep nesting cannot overflow the stack. */
export function firstNonFinite(value: unknown, root: string): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) stack.push([x, `${path}.${k}`]);
    }
  }
  return undefined;
}

/** preHandler hook: 400 KS001 naming the field. */
export async function rejectNonFiniteNumbers(req: FastifyRequest): Promise<void> {
  const found = firstNonFinite(req.body, 'body');
  if (found) throw errors.validation([`${found} must be a finite number`]);
}
