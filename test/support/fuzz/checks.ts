/**
 * The properties the fuzz test checks on every response, and what they need:
 * the documented error codes, response-schema validators built from the running
 * app's OpenAPI document, and a snapshot of the booking state (meetings, events,
 * deliveries) that a refused request must leave as it was.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Kysely } from 'kysely';
import type { Database } from '../../../src/platform/db/schema.js';
import type { HttpResult } from '../test-service.js';
import type { FuzzRequest, Operation } from './requests.js';

// CommonJS packages: the constructor and the plugin sit on `default`.
const Ajv2020 = ((Ajv2020Module as any).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as typeof addFormatsModule.default;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const CODE_RE = /\b(KS\d{3}|MEETING_\d{3})\b/g;

/**
 * The spec's error tables (shared/api-spec.md "Errors": the general codes and the
 * booking business codes), written out here so the test needs no copy of the spec.
 */
export const SPEC_ERROR_CODES = [
  'KS001',
  'KS002',
  'KS003',
  'KS004',
  'KS005',
  'KS006',
  'KS012',
  'KS036',
  'KS072',
  'KS221',
  'KS223',
  'KS234',
  'MEETING_003',
  'MEETING_004',
  'MEETING_005',
  'MEETING_006',
  'MEETING_011',
  'MEETING_039',
  'MEETING_040',
  'MEETING_041',
  'MEETING_042',
  'MEETING_043',
  'MEETING_049',
];

/** Documented codes: the spec's tables, the service's docs (docs/*.md), its error catalogue (src/platform/errors.ts) and its OpenAPI text. */
export function documentedCodes(openapi: unknown): Set<string> {
  const codes = new Set(SPEC_ERROR_CODES);
  const add = (text: string) => {
    for (const m of text.matchAll(CODE_RE)) codes.add(m[1]);
  };
  const docs = join(ROOT, 'docs');
  for (const f of readdirSync(docs)) if (f.endsWith('.md')) add(readFileSync(join(docs, f), 'utf8'));
  add(readFileSync(join(ROOT, 'src/platform/errors.ts'), 'utf8'));
  add(JSON.stringify(openapi));
  codes.delete('KS000'); // success, never an error code
  return codes;
}

export class ResponseSchemas {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly cache = new Map<string, ((v: unknown) => boolean) & { errors?: unknown }>();

  constructor() {
    addFormats(this.ajv as never);
  }

  /** Validation errors of `body` against the operation's documented JSON schema for `status`; null when valid or undocumented. */
  check(op: Operation, status: number, body: unknown): string | null {
    const schema = op.responses[String(status)]?.content?.['application/json']?.schema;
    if (!schema) return null;
    const key = `${op.key} ${status}`;
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema) as never;
      this.cache.set(key, validate!);
    }
    if (validate!(body)) return null;
    return this.ajv.errorsText(validate!.errors as never, { separator: '; ' }).slice(0, 600);
  }
}

// ---- state --------------------------------------------------------------------------

export interface StateSnapshot {
  meetings: { count: number; maxId: string; hash: string };
  events: { count: number; maxId: string; hash: string };
  deliveries: { count: number; maxId: string; hash: string };
}

const hash = (rows: unknown[]) => createHash('sha256').update(JSON.stringify(rows)).digest('hex').slice(0, 16);
const maxId = (rows: { id: string }[]) => rows.reduce((m, r) => (r.id > m ? r.id : m), '');

/**
 * Counts, largest ids and a hash of every row of meetings, events and deliveries.
 * Left out, on purpose: `meetings.pin_failures`, the wrong-PIN counter that a
 * refused request (404 MEETING_042, 429 MEETING_039) must record — that is how the
 * PIN lock works (spec: "PIN locked").
 */
export async function stateSnapshot(db: Kysely<Database>): Promise<StateSnapshot> {
  const meetings = (await db.selectFrom('meetings').selectAll().orderBy('id').execute()).map(
    ({ pin_failures: _pinFailures, ...rest }) => rest,
  );
  const events = await db.selectFrom('events').selectAll().orderBy('id').execute();
  const deliveries = await db.selectFrom('deliveries').selectAll().orderBy('id').execute();
  const part = (rows: any[]) => ({ count: rows.length, maxId: maxId(rows), hash: hash(rows) });
  return { meetings: part(meetings), events: part(events), deliveries: part(deliveries) };
}

export function stateDiff(a: StateSnapshot, b: StateSnapshot): string | null {
  const changed = (Object.keys(a) as (keyof StateSnapshot)[]).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
  return changed.length ? changed.map((k) => `${k}: ${JSON.stringify(a[k])} -> ${JSON.stringify(b[k])}`).join('; ') : null;
}

// ---- the properties ------------------------------------------------------------------

export interface Verdict {
  /** A short class for grouping failures (e.g. `500`, `envelope`, `schema`, `state`). */
  kind: string;
  detail: string;
}

const ENVELOPE_KEYS = new Set(['code', 'success', 'message', 'data']);

/** The properties of one response that need no state: no 5xx, the error envelope, the 2xx schema. */
export function checkResponse(
  op: Operation,
  req: FuzzRequest,
  res: HttpResult,
  codes: Set<string>,
  schemas: ResponseSchemas,
): Verdict | null {
  const s = res.status;
  const text = res.text.slice(0, 400);
  if (s >= 500) return { kind: `${s}`, detail: `${s} ${text}` };
  if (s >= 400) {
    // The hosted payment page answers a human with HTML, also for a missing page.
    if (op.html && /text\/html/.test(res.headers.get('content-type') ?? '')) return null;
    if (!/application\/json/.test(res.headers.get('content-type') ?? ''))
      return { kind: 'envelope', detail: `${s} content-type ${res.headers.get('content-type')} ${text}` };
    const b = res.body as any;
    if (!b || typeof b !== 'object' || Array.isArray(b)) return { kind: 'envelope', detail: `${s} not a JSON object: ${text}` };
    const extra = Object.keys(b).filter((k) => !ENVELOPE_KEYS.has(k));
    if (extra.length) return { kind: 'envelope', detail: `${s} extra keys ${extra.join(',')}: ${text}` };
    if (b.success !== false) return { kind: 'envelope', detail: `${s} success is ${JSON.stringify(b.success)}: ${text}` };
    if (typeof b.code !== 'string' || !codes.has(b.code))
      return { kind: 'code', detail: `${s} undocumented code ${JSON.stringify(b.code)}: ${text}` };
    if (b.code === 'KS001') {
      if (!Array.isArray(b.message) || !b.message.length || b.message.some((m: unknown) => typeof m !== 'string' || !m))
        return { kind: 'envelope', detail: `${s} KS001 message is not a non-empty array of strings: ${text}` };
    } else if (typeof b.message !== 'string' && !Array.isArray(b.message))
      return { kind: 'envelope', detail: `${s} message is ${typeof b.message}: ${text}` };
    if ('data' in b && !(b.code === 'KS006')) return { kind: 'envelope', detail: `${s} ${b.code} carries data: ${text}` };
    return null;
  }
  if (s >= 200 && s < 300) {
    if (!op.hidden) {
      const documented = Object.keys(op.responses).filter((k) => /^2\d\d$/.test(k));
      if (documented.length && !documented.includes(String(s)))
        return { kind: 'status', detail: `${s} is not a documented success status (${documented.join(',')}): ${text}` };
    }
    const bad = schemas.check(op, s, res.body);
    if (bad) return { kind: 'schema', detail: `${s} does not match the response schema: ${bad} body: ${text}` };
    return null;
  }
  if (s >= 300 && s < 400) {
    // Only the payment page's Pay button redirects (303 to the page or the return URL).
    if (op.key === 'POST /pay/{token}' && s === 303) return null;
    // A path of dot segments (`/desks/%2e%2e`) is resolved by the client to `/`, which redirects to the reference.
    if (s === 302 && res.headers.get('location') === '/docs' && new URL(req.path, 'http://fuzz.invalid').pathname === '/') return null;
    return { kind: 'redirect', detail: `${s} location=${res.headers.get('location')}` };
  }
  return { kind: 'status', detail: `unexpected status ${s}: ${text}` };
}

/**
 * Refused requests that legitimately record state in the snapshotted tables. Empty:
 * the wrong-PIN counter is left out of the snapshot instead (see stateSnapshot),
 * and a rejected calendar invitation is stored with a 200, not a 4xx.
 */
export function refusalMayRecord(_op: Operation, _res: HttpResult): boolean {
  return false;
}
