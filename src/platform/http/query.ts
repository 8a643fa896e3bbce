/**
 * Query-string handling before validation.
 *
 * `guardQuery` (every route, registered in app.ts) reads the route's querystring
 * schema and:
 * - accepts `name[]` (and `name[0]`) as the same parameter as `name` for array
 *   parameters; refuses brackets on a single-valued parameter and unknown bracket
 *   parameters with 400, so a filter is never silently left unapplied;
 * - refuses a single-valued parameter given more than once (`limit=1&limit=2`);
 * - refuses a numeric parameter that is not a plain decimal number (`Infinity`,
 *   `1e309`, `NaN`, `0x10`): the validator's type coercion would turn those into
 *   non-finite numbers that slip past `minimum`/`maximum`;
 * - repairs a date-time whose `+` offset arrived unencoded (decoded as a space);
 * - lets array parameters take repeated keys and comma-separated lists.
 */
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors.js';

const BROKEN_OFFSET = /^(\d{4}-\d{2}-\d{2}T[\d:.]+) (\d{2}:?\d{2})$/;
const BRACKETED = /^(.+)\[\d*\]$/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

interface PropertySchema {
  type?: string;
  format?: string;
}

const asList = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Whether an object has no own enumerable key (without building the key list). */
function isEmpty(o: object): boolean {
  for (const key in o) if (Object.prototype.hasOwnProperty.call(o, key)) return false;
  return true;
}

/**
 * preValidation hook, synchronous (no promise per request): throws 400 KS001. A
 * request without a query string is passed at once; only one with a query reads
 * its route's querystring schema.
 */
export function guardQuery(req: FastifyRequest, _reply: unknown, done: () => void): void {
  const q = req.query as Record<string, unknown> | undefined;
  if (q && typeof q === 'object' && !isEmpty(q)) checkQuery(req, q);
  done();
}

function checkQuery(req: FastifyRequest, q: Record<string, unknown>): void {
  const schema = req.routeOptions.schema?.querystring as { properties?: Record<string, PropertySchema> } | undefined;
  if (!schema?.properties) return;
  const props = schema.properties;
  const has = (key: string) => Object.prototype.hasOwnProperty.call(props, key);
  const problems: string[] = [];
  for (const key of Object.keys(q)) {
    const bracket = BRACKETED.exec(key);
    if (bracket && !has(key)) {
      const base = bracket[1]!;
      if (has(base) && props[base]!.type === 'array') {
        q[base] = [...asList(q[base]), ...asList(q[key])];
        delete q[key];
      } else if (has(base)) problems.push(`query.${key} is not an allowed parameter: ${base} takes one value`);
      else problems.push(`query.${key} is not an allowed parameter`);
      continue;
    }
    if (!has(key)) continue;
    const prop = props[key]!;
    const value = q[key];
    if (prop.type === 'array') continue;
    if (Array.isArray(value)) {
      problems.push(`query.${key} must be given once`);
      continue;
    }
    if ((prop.type === 'integer' || prop.type === 'number') && typeof value === 'string' && !DECIMAL.test(value)) {
      problems.push(`query.${key} must be ${prop.type === 'integer' ? 'a whole number' : 'a finite number'}`);
    }
    if (prop.format === 'date-time' && typeof value === 'string') q[key] = value.replace(BROKEN_OFFSET, '$1+$2');
  }
  if (problems.length) throw errors.validation(problems);
  for (const [key, prop] of Object.entries(props)) {
    if (prop.type !== 'array' || q[key] === undefined) continue;
    q[key] = asList(q[key])
      .flatMap((v) => String(v).split(','))
      .map((v) => v.trim())
      .filter((v) => v !== '');
  }
}
