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

/**
 * JSON-ish path (`body.rooms[0].name`) of the first value in `value` that `bad`
 * picks, keys included (`bad` sees each key as a string). Iterative, so deep
 * nesting cannot overflow the stack. Shared by the request guards (NUL here,
 * non-finite numbers in finite-numbers.ts).
 */
export function firstPath(value: unknown, root: string, bad: (v: unknown) => boolean): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (bad(v)) return path;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (bad(k)) return path;
        stack.push([x, `${path}.${k}`]);
      }
    }
  }
  return undefined;
}

const hasNul = (v: unknown) => typeof v === 'string' && v.includes(NUL);
const firstNul = (value: unknown, root: string) => firstPath(value, root, hasNul);

/** preValidation hook. The HTML payment page answers mangled links itself (its own 404 page). */
export async function rejectNulCharacters(req: FastifyRequest): Promise<void> {
  if (req.routeOptions.url?.startsWith('/pay/')) return;
  const found = firstNul(req.params, 'params') ?? firstNul(req.query, 'query') ?? firstNul(req.body, 'body');
  if (found) throw errors.validation([`${found} must not contain the NUL character (U+0000)`]);
}
