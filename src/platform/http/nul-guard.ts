/**
 * Refuses the NUL character (U+0000) anywhere in a request's path parameters,
 * query or body (JSON strings and keys, text bodies) with 400 KS001, before any
 * route runs. PostgreSQL text cannot hold it (the statement fails, which surfaced
 * as 500, or 503 KS234 on the token endpoint); SQLite would store it. One rule for
 * both engines: no field of this API may contain it.
 */
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import { MAX_BODY_DEPTH } from './body-limits.js';

const NUL = '\u0000';

/** What `findFirst` found: the value `bad` picked, or a container nested deeper than allowed. */
export interface Found {
  /** JSON-ish path (`body.rooms[0].name`) of the value; of the container, for a bad key. */
  path: string;
  tooDeep: boolean;
}

/**
 * The first value in `value` that `bad` picks, keys included (`bad` sees each key
 * as a string), or the first container more than `maxDepth` levels deep. Shared by
 * the request guards (NUL and nesting here, non-finite numbers in finite-numbers.ts).
 *
 * Iterative (deep nesting cannot overflow the stack) and allocation-free per
 * element: it keeps, per level, the container, its keys (objects only) and the
 * position reached, reusing those slots; the path string is built only for what it
 * reports. A multi-megabyte array costs one pass and no garbage.
 */
export function findFirst(value: unknown, root: string, bad: (v: unknown) => boolean, maxDepth = Infinity): Found | undefined {
  if (bad(value)) return { path: root, tooDeep: false };
  if (!value || typeof value !== 'object') return undefined;
  const containers: unknown[] = [value];
  const keyLists: (string[] | null)[] = [Array.isArray(value) ? null : Object.keys(value)];
  const positions: number[] = [0];
  let depth = 0;
  const pathTo = (levels: number): string => {
    let out = root;
    for (let d = 0; d < levels; d++) {
      const keys = keyLists[d];
      const at = positions[d] - 1;
      out += keys ? `.${keys[at]}` : `[${at}]`;
    }
    return out;
  };
  while (depth >= 0) {
    const container = containers[depth] as Record<string, unknown> | unknown[];
    const keys = keyLists[depth];
    const at = positions[depth];
    const length = keys ? keys.length : (container as unknown[]).length;
    if (at >= length) {
      containers[depth] = undefined; // let it go
      depth--;
      continue;
    }
    positions[depth] = at + 1;
    let child: unknown;
    if (keys) {
      const key = keys[at];
      if (bad(key)) return { path: pathTo(depth), tooDeep: false };
      child = (container as Record<string, unknown>)[key];
    } else {
      child = (container as unknown[])[at];
    }
    if (bad(child)) return { path: pathTo(depth + 1), tooDeep: false };
    if (child && typeof child === 'object') {
      if (depth + 1 >= maxDepth) return { path: pathTo(depth + 1), tooDeep: true };
      depth++;
      containers[depth] = child;
      keyLists[depth] = Array.isArray(child) ? null : Object.keys(child);
      positions[depth] = 0;
    }
  }
  return undefined;
}

/** Path of the first value in `value` that `bad` picks (see findFirst), nesting unbounded. */
export function firstPath(value: unknown, root: string, bad: (v: unknown) => boolean): string | undefined {
  return findFirst(value, root, bad)?.path;
}

const hasNul = (v: unknown) => typeof v === 'string' && v.includes(NUL);
const firstNul = (value: unknown, root: string) => findFirst(value, root, hasNul, MAX_BODY_DEPTH);

/**
 * preValidation hook, synchronous (no promise per request): the NUL character,
 * and a body (or query) nested more than MAX_BODY_DEPTH levels, are 400 KS001
 * before validation. The HTML payment page answers mangled links itself (its own
 * 404 page).
 *
 * Path parameters and the query come from the request line, where Node's parser
 * refuses a raw NUL byte: one can only arrive percent-encoded (`%00`), so they are
 * walked only when the raw URL holds `%00`. The query parser makes no nesting
 * (values are strings or lists of strings), so the depth limit concerns the body.
 */
export function rejectNulCharacters(req: FastifyRequest, _reply: unknown, done: () => void): void {
  const fromUrl = req.raw.url?.includes('%00') === true;
  const body = req.body;
  if ((fromUrl || (body !== undefined && body !== null)) && !req.routeOptions.url?.startsWith('/pay/')) {
    const found = (fromUrl ? (firstNul(req.params, 'params') ?? firstNul(req.query, 'query')) : undefined) ?? firstNul(body, 'body');
    if (found?.tooDeep) throw errors.validation([`${found.path} is nested more than ${MAX_BODY_DEPTH} levels deep`]);
    if (found) throw errors.validation([`${found.path} must not contain the NUL character (U+0000)`]);
  }
  done();
}
