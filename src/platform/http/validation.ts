/**
 * How request validation stops early. The validator runs with `allErrors` so one
 * answer lists every problem of a request (a site document's mistakes all at
 * once), but listing them costs time per problem: 200,000 unknown keys made
 * 200,000 errors. Each schema is therefore compiled twice, and a request is
 * checked first by the validator that stops at the first problem:
 *  - valid (the usual case): done, at the cost of one pass;
 *  - invalid, and the input has at most FULL_CHECK_MAX_NODES values: the full
 *    validator lists every problem (at most that many; the error mapping shows
 *    the first 100 and counts the rest);
 *  - invalid and larger: the first problem only, marked as not the only one
 *    (error-mapping.ts adds "… and possibly more: …").
 */
import addFormats from 'ajv-formats';
import { registerStrictFormats } from './formats.js';

/** Values (object entries and array elements, all levels) up to which an invalid request gets every problem listed. */
export const FULL_CHECK_MAX_NODES = 10_000;

/** The keyword of the marker error that says the list stopped early. */
export const TRUNCATED_KEYWORD = 'truncated';

type ValidateFn = ((data: unknown) => boolean | Promise<unknown>) & { errors?: unknown[] | null };

interface AjvInstance {
  opts: Record<string, unknown>;
  compile(schema: unknown): ValidateFn;
  addFormat(name: string, format: unknown): unknown;
}

/** Whether `value` holds more than `max` values (entries and elements at every level); stops counting past `max`. */
export function exceedsNodes(value: unknown, max: number): boolean {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    const children: unknown[] = Array.isArray(v) ? v : Object.values(v as object);
    count += children.length;
    if (count > max) return true;
    for (const c of children) if (c && typeof c === 'object') stack.push(c);
  }
  return false;
}

/**
 * Fastify's `ajv.onCreate`: gives the validator's `compile` the first-problem
 * pass described above. The second instance is built from the same class and
 * options (no separate dependency), with the same formats.
 */
export function stopValidationEarly(ajv: AjvInstance): void {
  const Ajv = ajv.constructor as new (opts: Record<string, unknown>) => AjvInstance;
  const firstOnly = new Ajv({ ...ajv.opts, allErrors: false });
  addFormats.default(firstOnly as unknown as Parameters<typeof addFormats.default>[0]);
  registerStrictFormats(firstOnly);
  const compileAll = ajv.compile.bind(ajv);
  ajv.compile = (schema: unknown): ValidateFn => {
    const all = compileAll(schema);
    const first = firstOnly.compile(schema);
    const validate: ValidateFn = (data: unknown) => {
      if (first(data) === true) {
        validate.errors = null;
        return true;
      }
      if (exceedsNodes(data, FULL_CHECK_MAX_NODES)) {
        validate.errors = [...(first.errors ?? []), { keyword: TRUNCATED_KEYWORD, instancePath: '', params: {} }];
        return false;
      }
      const valid = all(data);
      validate.errors = all.errors;
      return valid as boolean;
    };
    return validate;
  };
}
