/**
 * Refuses the NUL character (U+0000) anywhere in a request's path parameters,
 * query or body (JSON strings and keys, text bodies) with 400 KS001, before any
 * route runs. PostgreSQL text cannot hold it (the statement fails, which surfaced
 * as 500, or 503 KS234 on the token endpoint); SQLite would store it. One rule for
 * both engines: no field of this API may contain it.
 */
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors.js';

const NUL = '\u0000';

/** JSON-ish path of the first string (or key) holding NUL; iterative, so deep nesting cannot overflow the stack. */
export function firstNul(value: unknown, root: string): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes(NUL)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes(NUL)) return path;
        stack.push([x, `${path}.${k}`]);
      }
    }
  }
  return undefined;
}

/** preValidation hook. The HTML payment page answers mangled links itself (its own 404 page). */
export async function rejectNulCharacters(req: FastifyRequest): Promise<void> {
  if (req.routeOptions.url?.startsWith('/pay/')) return;
  const found = firstNul(req.params, 'params') ?? firstNul(req.query, 'query') ?? firstNul(req.body, 'body');
  if (found) throw errors.validation([`${found} must not contain the NUL character (U+0000)`]);
}
