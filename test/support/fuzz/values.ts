/**
 * Value generators of the fuzz test: arbitraries derived from an operation's JSON
 * schemas (valid-ish values, with known real ids where a schema names an id), and
 * hostile values (wrong types, 100 KB strings, NUL, emoji, RTL override, huge and
 * non-finite numbers, impossible dates).
 */
import fc from 'fast-check';

export type Schema = Record<string, any>;

/** What the generators draw real values from (see world.ts). */
export interface Pools {
  known: Record<string, string[]>;
  names: Record<string, string[]>;
  /** Service-local instants around the seeded bookings (ISO with offset). */
  instants: string[];
}

export const UNKNOWN_ID = 'ffffffffffffffffffffffff';
const ID_RE = /0-9a-f\]\{24\}/;

// ---- hostile values -------------------------------------------------------

const KB100 = 'x'.repeat(100 * 1024);
export const hostileStrings: string[] = [
  '',
  ' ',
  KB100,
  '\u0000',
  'a\u0000b',
  '\u202Eevil\u202C',
  '😀'.repeat(50),
  '\uD800',
  '\uFFFF',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  "'; DROP TABLE meetings; --",
  '../../etc/passwd',
  '%00',
  '%',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '${jndi:ldap://x}',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e309',
  '-1e309',
  '9007199254740993',
  '0x10',
  '1_000',
  ' 1',
  '1 ',
  '+1',
  '1.5',
  '-0',
  'a'.repeat(129),
  'a'.repeat(513),
  'ä'.repeat(1000),
  '\t\n\r',
  'constructor',
  '__proto__',
  'hasOwnProperty',
  UNKNOWN_ID,
  'FFFFFFFFFFFFFFFFFFFFFFFF',
  '000000000000000000000000',
  'ffffffffffffffffffffffff0',
];

/** Impossible or edge-case instants (RFC 3339 grammar allows some of them). */
export const impossibleDates: string[] = [
  '2027-02-30T10:00:00Z',
  '2027-02-29T10:00:00+07:00',
  '2027-13-01T10:00:00Z',
  '2027-00-10T10:00:00Z',
  '2027-04-31T10:00:00Z',
  '2027-01-01T24:00:00Z',
  '2027-01-01T24:00:00+07:00',
  '2030-12-31T23:59:60Z',
  '2027-06-30T23:59:60+07:00',
  '2027-01-01T23:60:00Z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '99999-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '1969-12-31T23:59:59Z',
  '1900-01-01T00:00:00Z',
  '2027-01-01T10:00:00+24:00',
  '2027-01-01T10:00:00+14:01',
  '2027-01-01T10:00:00-12:59',
  '2027-01-01T10:00:00',
  '2027-01-01',
  '2027-01-01T10:00Z',
  '2027-01-01T10:00+07:00',
  '2027-01-01T10:00:00.123456789Z',
  '2027-01-01t10:00:00z',
  '2027-01-01 10:00:00Z',
  '20270101T100000Z',
  '2027-W01-1T10:00:00Z',
  'tomorrow',
  'now',
  '1700000000000',
];

export const hugeNumbers: unknown[] = [
  0,
  -1,
  -0,
  1e308,
  -1e308,
  9007199254740992,
  -9007199254740992,
  2 ** 31,
  2 ** 53 + 1,
  1e21,
  0.5,
  -0.0001,
  3001,
  1e-300,
  100000000000,
];

export const hostileAny: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...hostileStrings),
  fc.constantFrom(...impossibleDates),
  fc.constantFrom(...hugeNumbers),
  fc.constantFrom(
    null,
    true,
    false,
    [],
    {},
    [null],
    { '': 1 },
    [[[[]]]],
    { __proto__: { polluted: 1 } },
    { constructor: { prototype: { x: 1 } } },
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.double(),
  fc.integer(),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Hostile query-string text (a query value is always text). */
export const hostileQueryText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...hostileStrings),
  fc.constantFrom(...impossibleDates),
  fc.constantFrom(
    'Infinity',
    '-Infinity',
    'NaN',
    '1e309',
    '-1e309',
    '1e308',
    '3001',
    '-1',
    '1.5',
    '9007199254740993',
    '',
    '[]',
    '{}',
    'true',
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

// ---- schema-derived values --------------------------------------------------

function idPool(name: string, pools: Pools): string[] {
  const n = name.toLowerCase();
  const pick = (k: string) => pools.known[k] ?? [];
  if (/meetingroom|roomid|^room/.test(n)) return pick('room');
  if (/desk/.test(n)) return pick('desk');
  if (/project/.test(n)) return pick('project');
  if (/organizer|host|user/.test(n)) return pick('user');
  if (/zone/.test(n)) return pick('zone');
  if (/floor/.test(n)) return pick('floor');
  if (/brand/.test(n)) return pick('brand');
  if (/payment/.test(n)) return pick('payment');
  if (/device/.test(n)) return pick('device');
  if (/invite/.test(n)) return pick('invite');
  if (/delivery/.test(n)) return pick('delivery');
  if (/webhook/.test(n)) return pick('webhook');
  if (/meeting|^id$/.test(n)) return pick('meeting');
  return Object.values(pools.known).flat();
}

export function anyKnownId(pools: Pools): fc.Arbitrary<string> {
  const all = Object.values(pools.known).flat();
  return all.length ? fc.constantFrom(...all) : fc.constant(UNKNOWN_ID);
}

/** A 24-hex id: a known id of the kind the name suggests most of the time, else any id. */
export function idArb(name: string, pools: Pools): fc.Arbitrary<string> {
  const pool = idPool(name, pools);
  return fc.oneof(
    { weight: 6, arbitrary: pool.length ? fc.constantFrom(...pool) : fc.constant(UNKNOWN_ID) },
    { weight: 2, arbitrary: anyKnownId(pools) },
    { weight: 1, arbitrary: fc.constant(UNKNOWN_ID) },
    { weight: 1, arbitrary: fc.stringMatching(/^[0-9a-f]{24}$/) },
  );
}

function dateTimeArb(pools: Pools): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: pools.instants.length ? fc.constantFrom(...pools.instants) : fc.constant(new Date().toISOString()) },
    {
      weight: 3,
      arbitrary: fc
        .date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString()),
    },
    { weight: 1, arbitrary: fc.constantFrom(...impossibleDates) },
  );
}

function stringArb(s: Schema, name: string, pools: Pools): fc.Arbitrary<string> {
  if (s.format === 'date-time') return dateTimeArb(pools);
  if (s.format === 'email') return fc.oneof(fc.constantFrom(...(pools.names.email ?? ['a@example.com'])), fc.emailAddress());
  if (s.format === 'uri')
    return fc.oneof(fc.constantFrom('http://127.0.0.1:9/x', 'https://example.com/return', 'http://[::1]:9/'), fc.webUrl());
  if (typeof s.pattern === 'string' && ID_RE.test(s.pattern)) return idArb(name, pools);
  const n = name.toLowerCase();
  const named: string[] = [];
  if (/externaluserid|subject/.test(n)) named.push(...(pools.names.externalUserId ?? []));
  if (/email/.test(n)) named.push(...(pools.names.email ?? []));
  if (/pin/.test(n)) named.push(...(pools.names.pin ?? []), '000000', '123456');
  if (/card/.test(n)) named.push(...(pools.names.cardCode ?? []));
  if (/provider/.test(n)) named.push(...(pools.names.provider ?? []));
  const minLength = s.minLength ?? 0;
  const maxLength = Math.min(s.maxLength ?? 40, minLength + 60);
  let plain: fc.Arbitrary<string> = fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength, maxLength }) },
  );
  if (typeof s.pattern === 'string') {
    try {
      plain = fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length >= minLength && x.length <= (s.maxLength ?? Infinity));
    } catch {
      // a pattern fast-check cannot generate from: plain strings
    }
  }
  return named.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...named) }, { weight: 2, arbitrary: plain }) : plain;
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  let min =
    typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (integer ? 1 : 1e-6) : -1000;
  let max =
    typeof s.maximum === 'number'
      ? s.maximum
      : typeof s.exclusiveMaximum === 'number'
        ? s.exclusiveMaximum - (integer ? 1 : 1e-6)
        : min + 5000;
  // Valid-ish values stay small (a valid clock advance should not run 100 years ahead).
  if (max - min > 100_000) max = min + 100_000;
  if (min > max) min = max;
  return integer
    ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
    : fc.oneof(fc.integer({ min: Math.ceil(min), max: Math.floor(max) }), fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
}

/** Valid-ish value for `schema` (field `name` guides the choice of real ids and names). */
export function fromSchema(schema: Schema | undefined, pools: Pools, name = '', depth = 0): fc.Arbitrary<unknown> {
  const s = schema ?? {};
  if (depth > 6) return fc.constant(null);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...s.enum);
  if ('const' in s) return fc.constant(s.const);
  const branches = s.anyOf ?? s.oneOf;
  if (Array.isArray(branches) && branches.length) return fc.oneof(...branches.map((b: Schema) => fromSchema(b, pools, name, depth + 1)));
  if (Array.isArray(s.allOf) && s.allOf.length) {
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    for (const part of s.allOf) {
      Object.assign(merged.properties, part.properties ?? {});
      merged.required.push(...(part.required ?? []));
    }
    return fromSchema(merged, pools, name, depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : [];
  if (type.length > 1) return fc.oneof(...type.map((t: string) => fromSchema({ ...s, type: t }, pools, name, depth + 1)));
  switch (type[0]) {
    case 'string':
      return stringArb(s, name, pools);
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = s.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 3, 3));
      return fc.array(fromSchema(s.items, pools, name, depth + 1), { minLength, maxLength });
    }
    case 'object': {
      const props: Record<string, Schema> = s.properties ?? {};
      const required: string[] = s.required ?? [];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = fromSchema(v, pools, k, depth + 1);
      if (!Object.keys(model).length) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      return fc.record(model, { requiredKeys: required.filter((k) => k in model) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

// ---- mutations of a valid-ish JSON value -------------------------------------

/** Paths (keys, indexes) of every node of a JSON value, the root first. */
export function paths(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (out.length > 200) return out;
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...prefix, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...prefix, k], out);
  return out;
}

export type Mutation =
  | { kind: 'none' }
  | { kind: 'set'; at: number; value: unknown }
  | { kind: 'delete'; at: number }
  | { kind: 'add'; at: number; key: string; value: unknown };

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: fc.constant<Mutation>({ kind: 'none' }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: hostileAny }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      at: fc.nat(),
      key: fc.constantFrom('extra', '__proto__', 'constructor', '', 'x'.repeat(300)),
      value: hostileAny,
    }),
  },
);

function clone<T>(v: T): T {
  return v === undefined ? v : JSON.parse(JSON.stringify(v));
}

export function mutate(value: unknown, m: Mutation): unknown {
  if (m.kind === 'none') return value;
  const all = paths(value);
  const target = all[m.at % all.length];
  if (target.length === 0) {
    if (m.kind === 'set') return m.value;
    if (m.kind === 'delete') return undefined;
  }
  const root = clone(value) as any;
  const parentPath = m.kind === 'add' ? target : target.slice(0, -1);
  let node = root;
  for (const p of parentPath) node = node?.[p];
  if (node === null || typeof node !== 'object') return m.kind === 'add' ? root : root;
  if (m.kind === 'add') {
    if (Array.isArray(node)) node.push(m.value);
    else Object.defineProperty(node, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
    return root;
  }
  const last = target[target.length - 1];
  if (m.kind === 'set') node[last as any] = m.value;
  else if (Array.isArray(node)) node.splice(last as number, 1);
  else delete node[last as any];
  return root;
}
