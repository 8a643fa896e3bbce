/**
 * Requests of the fuzz test: every operation of the running app's OpenAPI
 * document (plus the hidden payment page and room feed), and a fast-check
 * arbitrary of requests for each: path, query and body from the operation's
 * schemas and examples, then hostile variants (duplicate and bracket query
 * parameters, invalid JSON, wrong content types, deep nesting, a body over the
 * body limit, empty bodies, missing, garbage or swapped credentials).
 */
import fc from 'fast-check';
import {
  fromSchema,
  hostileQueryText,
  hostileStrings,
  impossibleDates,
  mutate,
  mutationArb,
  UNKNOWN_ID,
  type Mutation,
  type Pools,
  type Schema,
} from './values.js';

export interface Param {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  /** `METHOD /path/{param}` */
  key: string;
  method: string;
  path: string;
  params: Param[];
  body?: { contentType: string; schema: Schema; required: boolean };
  responses: Record<string, any>;
  auth: 'none' | 'bearer' | 'ops';
  /** HTML pages: their 4xx are HTML, not the JSON envelope. */
  html?: boolean;
  hidden?: boolean;
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of the document, and the hidden public pages. */
export function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const m of HTTP_METHODS) {
      const op = item[m];
      if (!op) continue;
      // The console's event stream never ends by itself; test/http/console-api.test.ts drives it.
      if (m === 'get' && path === '/ops/v1/stream') continue;
      const security = op.security ?? doc.security ?? [];
      const auth = security.length === 0 ? 'none' : security.some((s: any) => 'opsToken' in s) ? 'ops' : 'bearer';
      const content = op.requestBody?.content ?? {};
      const contentType = Object.keys(content)[0];
      ops.push({
        key: `${m.toUpperCase()} ${path}`,
        method: m.toUpperCase(),
        path,
        params: (op.parameters ?? [])
          .filter((p: any) => p.in === 'path' || p.in === 'query')
          .map((p: any) => ({ name: p.name, in: p.in, required: !!p.required, schema: p.schema ?? {} })),
        body: contentType ? { contentType, schema: content[contentType].schema ?? {}, required: !!op.requestBody.required } : undefined,
        responses: op.responses ?? {},
        auth,
      });
    }
  }
  const token: Param = { name: 'token', in: 'path', required: true, schema: { type: 'string' } };
  const lang: Param = { name: 'lang', in: 'query', required: false, schema: { type: 'string', enum: ['en', 'th'] } };
  ops.push(
    {
      key: 'GET /pay/{token}',
      method: 'GET',
      path: '/pay/{token}',
      params: [token, lang],
      responses: {},
      auth: 'none',
      html: true,
      hidden: true,
    },
    {
      key: 'POST /pay/{token}',
      method: 'POST',
      path: '/pay/{token}',
      params: [token, lang],
      responses: {},
      auth: 'none',
      html: true,
      hidden: true,
    },
    {
      key: 'GET /calendar-feeds/{token}',
      method: 'GET',
      path: '/calendar-feeds/{token}',
      params: [token],
      responses: {},
      auth: 'none',
      hidden: true,
    },
  );
  return ops;
}

// ---- the request ----------------------------------------------------------------

export type BodySpec =
  | { kind: 'none' }
  | { kind: 'text'; text: string }
  /** `depth` levels of `[` (or `{"a":`) nesting. */
  | { kind: 'deep'; depth: number; object: boolean }
  /** One byte over the service's body limit. */
  | { kind: 'oversize' };

/** Credentials, resolved when the request is sent (tokens are re-minted after a revoke). */
export type AuthSpec =
  | { kind: 'right'; which: number }
  | { kind: 'none' }
  | { kind: 'garbage'; value: string }
  | { kind: 'swapped'; which: number }
  | { kind: 'refresh' };

export interface FuzzRequest {
  op: string;
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  auth: AuthSpec;
  body: BodySpec;
}

/** Percent-encodes like encodeURIComponent, but never throws (a lone surrogate goes out as the UTF-8 of U+FFFD). */
export function pct(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.!~*'()]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const clip = (s: string, n = 200) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);

/** How fast-check prints a counterexample: method, path, query, headers, body (truncated). */
export function describe(r: FuzzRequest): string {
  const q = r.query.length ? `?${r.query.map(([k, v]) => `${k}=${v}`).join('&')}` : '';
  const body =
    r.body.kind === 'text'
      ? clip(JSON.stringify(r.body.text))
      : r.body.kind === 'deep'
        ? `<${r.body.depth} levels of ${r.body.object ? '{"a":' : '['}>`
        : r.body.kind === 'oversize'
          ? '<body over BODY_LIMIT_BYTES>'
          : '<none>';
  return `${r.method} ${clip(r.path + q, 200)} auth=${JSON.stringify(r.auth).slice(0, 120)} headers=${clip(JSON.stringify(r.headers), 200)} body=${body}`;
}

function withToString(r: FuzzRequest): FuzzRequest {
  Object.defineProperty(r, fc.toStringMethod, { value: () => describe(r), enumerable: false });
  return r;
}

// ---- path parameters --------------------------------------------------------------

function pathValue(op: Operation, p: Param, pools: Pools): fc.Arbitrary<string> {
  const n = p.name;
  let known: string[] = [];
  if (n === 'id') {
    known = op.path.startsWith('/meeting-rooms')
      ? pools.known.room
      : op.path.startsWith('/desks')
        ? pools.known.desk
        : op.path.includes('webhooks')
          ? pools.known.webhook
          : pools.known.meeting;
  } else if (n === 'token') {
    known = op.path.startsWith('/pay') ? pools.names.payToken : pools.names.feedToken.map((t) => (t.endsWith('.ics') ? t : `${t}.ics`));
  } else if (n === 'externalUserId') known = pools.names.externalUserId;
  else if (n === 'provider') known = pools.names.provider;
  else if (n === 'roomId') known = pools.known.room;
  else if (n === 'deviceId') known = pools.known.device;
  else if (n === 'paymentId') known = pools.known.payment;
  else if (n === 'inviteId') known = pools.known.invite;
  else if (n === 'deliveryId') known = pools.known.delivery;
  const good = known?.length ? fc.constantFrom(...known) : fc.constant(UNKNOWN_ID);
  const encoded = (a: fc.Arbitrary<string>) => a.map((s) => pct(s));
  return fc.oneof(
    { weight: 12, arbitrary: encoded(good) },
    { weight: 2, arbitrary: encoded(fc.constantFrom(...Object.values(pools.known).flat(), UNKNOWN_ID)) },
    { weight: 3, arbitrary: encoded(fc.constantFrom(...hostileStrings.filter((s) => s !== ''))) },
    { weight: 1, arbitrary: encoded(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 })) },
    // Raw (already "encoded") oddities: bad percent escapes, dot segments, encoded slashes and NUL.
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%ZZ',
        '%',
        '..',
        '.',
        '%2e%2e',
        'a%2Fb',
        '%00',
        '%C0%AE',
        '%F0%9F%98%80',
        'x'.repeat(600),
        'a;b=c',
        'a?b',
        '%3F',
      ),
    },
  );
}

// ---- query ----------------------------------------------------------------------

function queryValues(p: Param, pools: Pools): fc.Arbitrary<string[]> {
  const s = p.schema;
  if (s.type === 'array')
    return fc.array(fromSchema(s.items, pools, p.name), { minLength: 1, maxLength: 3 }).map((xs) => xs.map((x) => text(x)));
  return fromSchema(s, pools, p.name).map((x) => [text(x)]);
}

function text(x: unknown): string {
  return typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : (JSON.stringify(x) ?? '');
}

type QueryMutation =
  | { kind: 'hostile'; param: number; value: string }
  | { kind: 'duplicate'; param: number; value: string }
  | { kind: 'bracket'; param: number; value: string }
  | { kind: 'unknown'; name: string; value: string }
  | { kind: 'numeric'; param: number; value: string }
  | { kind: 'date'; param: number; value: string };

const queryMutationArb: fc.Arbitrary<QueryMutation> = fc.oneof(
  fc.record({ kind: fc.constant('hostile' as const), param: fc.nat(), value: hostileQueryText }),
  fc.record({
    kind: fc.constant('duplicate' as const),
    param: fc.nat(),
    value: fc.oneof(hostileQueryText, fc.constantFrom('active', 'cancelled', '10', '0')),
  }),
  fc.record({
    kind: fc.constant('bracket' as const),
    param: fc.nat(),
    value: fc.oneof(fc.constantFrom('cancelled', 'active', '', '1'), hostileQueryText),
  }),
  fc.record({
    kind: fc.constant('unknown' as const),
    name: fc.constantFrom('foo', 'limit', 'offset', '__proto__', 'constructor', '', 'x'.repeat(300), 'a[b]', 'a.b'),
    value: hostileQueryText,
  }),
  fc.record({
    kind: fc.constant('numeric' as const),
    param: fc.nat(),
    value: fc.constantFrom('Infinity', '-Infinity', 'NaN', '1e309', '1e308', '-1', '3001', '1.5', '9007199254740993', '0x10', ''),
  }),
  fc.record({ kind: fc.constant('date' as const), param: fc.nat(), value: fc.constantFrom(...impossibleDates) }),
);

function applyQueryMutation(op: Operation, q: [string, string][], m: QueryMutation): [string, string][] {
  const declared = op.params.filter((p) => p.in === 'query');
  if (m.kind === 'unknown') return [...q, [m.name, m.value]];
  if (!declared.length) return [...q, ['x', m.value]];
  const p = declared[m.param % declared.length];
  const without = q.filter(([k]) => k !== p.name);
  switch (m.kind) {
    case 'hostile':
    case 'numeric':
    case 'date':
      return [...without, [p.name, m.value]];
    case 'duplicate':
      return [...q, [p.name, m.value], [p.name, m.value]];
    case 'bracket':
      return [...without, [`${p.name}[]`, m.value]];
  }
}

// ---- body -------------------------------------------------------------------------

const WRONG_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=utf-16',
  'application/jsonx',
  'text/calendar',
  '',
  'application/json, text/plain',
  '*/*',
];

function bodyArb(op: Operation, pools: Pools, examples: fc.Arbitrary<unknown>[]): fc.Arbitrary<{ body: BodySpec; contentType?: string }> {
  const ct = op.body?.contentType ?? 'application/json';
  const json = (v: unknown) => ({
    body: v === undefined ? ({ kind: 'none' } as BodySpec) : ({ kind: 'text', text: JSON.stringify(v) } as BodySpec),
    contentType: 'application/json',
  });
  const valid: fc.Arbitrary<unknown> = examples.length
    ? fc.oneof({ weight: 3, arbitrary: fc.oneof(...examples) }, { weight: 2, arbitrary: fromSchema(op.body?.schema, pools) })
    : fromSchema(op.body?.schema ?? { type: 'object' }, pools);
  const structured: fc.Arbitrary<{ body: BodySpec; contentType?: string }> =
    ct === 'text/calendar'
      ? calendarBody(pools).map((t) => ({
          body: { kind: 'text', text: t } as BodySpec,
          contentType: 'text/calendar; charset=utf-8; method=REQUEST',
        }))
      : fc.tuple(valid, mutationArb).map(([v, m]: [unknown, Mutation]) => json(mutate(v, m)));
  const hostile = fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(
          '{',
          '{"a":',
          '[1,]',
          "{'a':1}",
          'nul',
          '{"a":1}{"b":2}',
          '\uFEFF{}',
          '{"a":"\\ud800"}',
          '1e309',
          '"x"',
          'true',
          '[]',
          '\u0000',
          '{"__proto__":{"x":1}}',
        )
        .map((t) => ({ body: { kind: 'text', text: t } as BodySpec, contentType: ct === 'text/calendar' ? 'application/json' : ct })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...WRONG_TYPES))
        .map(([v, type]) => ({ body: { kind: 'text', text: JSON.stringify(v) ?? '' } as BodySpec, contentType: type })),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(ct, 'application/json')
        .map((type) => ({ body: { kind: 'text', text: '' } as BodySpec, contentType: type })),
    },
    { weight: 1, arbitrary: fc.constant({ body: { kind: 'none' } as BodySpec, contentType: undefined }) },
    {
      weight: 1,
      arbitrary: fc
        .record({ depth: fc.constantFrom(10_000, 100, 1_000), object: fc.boolean() })
        .map(({ depth, object }) => ({ body: { kind: 'deep', depth, object } as BodySpec, contentType: 'application/json' })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(ct, 'application/json').map((type) => ({ body: { kind: 'oversize' } as BodySpec, contentType: type })),
    },
  );
  if (!op.body) {
    // No body documented: mostly none, sometimes one anyway.
    return fc.oneof(
      { weight: 6, arbitrary: fc.constant({ body: { kind: 'none' } as BodySpec, contentType: undefined }) },
      { weight: 1, arbitrary: structured },
      { weight: 1, arbitrary: hostile },
    );
  }
  return fc.oneof({ weight: 7, arbitrary: structured }, { weight: 3, arbitrary: hostile });
}

/**
 * SEQUENCE values outside RFC 5545's INTEGER range for a SEQUENCE (0..2147483647):
 * one past the top (PostgreSQL's int4 overflowed there), 2^32, 2^63, negatives and
 * numbers past what a double carries exactly.
 */
export const outOfRangeSequence: fc.Arbitrary<number | string> = fc.oneof(
  fc.constantFrom<number | string>(
    2147483648,
    4294967296,
    -1,
    -2147483648,
    -2147483649,
    '9223372036854775808',
    '99999999999999999999',
    '-99999999999999999999',
  ),
  fc.integer({ min: 2147483648, max: Number.MAX_SAFE_INTEGER }),
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -1 }),
);

/** An iTIP message to a room mailbox whose SEQUENCE is out of range, for a known UID or a new one, by any method. */
export function outOfRangeSequenceMessage(pools: Pools): fc.Arbitrary<{ text: string; seq: number | string; method: string }> {
  const rooms = [...(pools.names.email ?? [])].filter((e) => e.includes('@rooms.'));
  return fc
    .record({
      method: fc.constantFrom('REQUEST', 'CANCEL', 'REPLY'),
      uid: fc.constantFrom('fuzz-seed-1@google.com', 'fuzz-seq@google.com'),
      seq: outOfRangeSequence,
      start: fc.constantFrom(...pools.instants),
      hours: fc.integer({ min: 1, max: 3 }),
      rooms: fc.subarray(rooms, { minLength: 1 }),
    })
    .map((s) => ({
      seq: s.seq,
      method: s.method,
      text: buildIcal({
        method: s.method,
        uid: s.uid,
        seq: s.seq,
        start: s.start,
        end: new Date(Date.parse(s.start) + s.hours * 3_600_000).toISOString(),
        rooms: s.rooms,
        organizer: 'alice@example.com',
        summary: 'Planning',
        allDay: false,
      }),
    }));
}

/** iTIP messages over the known room mailboxes, valid-ish and hostile. */
function calendarBody(pools: Pools): fc.Arbitrary<string> {
  const instant = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...pools.instants) },
    { weight: 1, arbitrary: fc.constantFrom(...impossibleDates) },
  );
  const line = fc.oneof(fc.constantFrom(...hostileStrings.slice(0, 20)), fc.string({ maxLength: 20 }));
  const spec = fc.record({
    method: fc.constantFrom('REQUEST', 'CANCEL', 'REPLY', 'PUBLISH', 'BOGUS'),
    uid: fc.constantFrom('fuzz-seed-1@google.com', 'fuzz-a@google.com', 'fuzz-b@outlook.com', ''),
    seq: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 3 }) }, { weight: 1, arbitrary: outOfRangeSequence }),
    start: instant,
    end: instant,
    rooms: fc.subarray(
      [...(pools.names.email ?? [])].filter((e) => e.includes('@rooms.')),
      { minLength: 0 },
    ),
    organizer: fc.constantFrom('alice@example.com', 'ben@example.com', 'stranger@else.example', null),
    summary: fc.oneof(fc.constant('Planning'), line),
    rrule: fc.option(
      fc.constantFrom(
        'FREQ=DAILY;COUNT=3',
        'FREQ=WEEKLY;UNTIL=20300230T000000Z',
        'FREQ=SECONDLY;COUNT=100000',
        'FREQ=DAILY',
        'garbage',
        'FREQ=YEARLY;COUNT=1000',
      ),
      { nil: undefined },
    ),
    allDay: fc.boolean(),
  });
  const ical = fc.tuple(spec, fc.nat(), fc.constantFrom('keep', 'drop-line', 'truncate', 'lf', 'dup-line')).map(([s, n, how]) => {
    const lines = buildIcal(s).split('\r\n');
    const i = n % lines.length;
    if (how === 'drop-line') lines.splice(i, 1);
    if (how === 'truncate') return lines.slice(0, i).join('\r\n');
    if (how === 'dup-line') lines.splice(i, 0, lines[i]);
    return lines.join(how === 'lf' ? '\n' : '\r\n');
  });
  return fc.oneof(
    { weight: 8, arbitrary: ical },
    { weight: 1, arbitrary: fc.constantFrom('', 'BEGIN:VCALENDAR', 'not a calendar', '{"a":1}', 'BEGIN:VCALENDAR\r\nEND:VEVENT\r\n') },
  );
}

// Built here rather than with support/calendar.ts's builder so impossible dates pass through as written.
function buildIcal(s: {
  method: string;
  uid: string;
  seq: number | string;
  start: string;
  end: string;
  rooms: string[];
  organizer: string | null;
  summary: string;
  rrule?: string;
  allDay: boolean;
}): string {
  const stamp = (iso: string) => {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso.replace(/[-:]/g, '');
    const utc = d
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    return s.allDay ? utc.slice(0, 8) : utc;
  };
  const when = (name: string, iso: string) => (s.allDay ? `${name};VALUE=DATE:${stamp(iso)}` : `${name}:${stamp(iso)}`);
  return [
    'BEGIN:VCALENDAR',
    'PRODID:-//Google Inc//Google Calendar 70.9054//EN',
    'VERSION:2.0',
    `METHOD:${s.method}`,
    'BEGIN:VEVENT',
    when('DTSTART', s.start),
    when('DTEND', s.end),
    'DTSTAMP:20260101T000000Z',
    ...(s.organizer ? [`ORGANIZER;CN=Organizer:mailto:${s.organizer}`] : []),
    `UID:${s.uid}`,
    ...(s.rrule ? [`RRULE:${s.rrule}`] : []),
    ...s.rooms.map(
      (r) =>
        `ATTENDEE;CUTYPE=RESOURCE;ROLE=REQ-PARTICIPANT;PARTSTAT=${s.method === 'REPLY' ? 'DECLINED' : 'NEEDS-ACTION'};RSVP=TRUE:mailto:${r}`,
    ),
    'ATTENDEE;CUTYPE=INDIVIDUAL;PARTSTAT=ACCEPTED:mailto:guest@partner.example',
    `SEQUENCE:${s.seq}`,
    `STATUS:${s.method === 'CANCEL' ? 'CANCELLED' : 'CONFIRMED'}`,
    `SUMMARY:${s.summary.replace(/[\r\n]/g, ' ')}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

// ---- credentials ------------------------------------------------------------------

function authArb(op: Operation): fc.Arbitrary<AuthSpec> {
  const garbage = fc.constantFrom(
    'Bearer',
    'Bearer ',
    'Bearer garbage',
    'Basic dXNlcjpwYXNz',
    'bearer x.y.z',
    'Bearer eyJhbGciOiJub25lIn0.e30.',
    `Bearer ${'a'.repeat(100 * 1024)}`,
    'Bearer \u0000',
    'Token abc',
    'Bearer a b',
    'Bearer ffffffffffffffffffffffff',
    'Bearer test-ops-token-0123456789abcdef012345678',
  );
  const base: fc.Arbitrary<AuthSpec>[] = [
    fc.constant<AuthSpec>({ kind: 'none' }),
    garbage.map((value) => ({ kind: 'garbage', value }) as AuthSpec),
    fc.nat(3).map((which) => ({ kind: 'swapped', which }) as AuthSpec),
    fc.constant<AuthSpec>({ kind: 'refresh' }),
  ];
  return fc.oneof(
    { weight: 12, arbitrary: fc.nat(3).map((which) => ({ kind: 'right', which }) as AuthSpec) },
    { weight: op.auth === 'none' ? 1 : 2, arbitrary: fc.oneof(...base) },
  );
}

// ---- the request arbitrary ---------------------------------------------------------

export function requestArb(op: Operation, pools: Pools, examples: fc.Arbitrary<unknown>[] = []): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const pathArb = fc.tuple(...pathParams.map((p) => pathValue(op, p, pools))).map((values) => {
    let path = op.path;
    pathParams.forEach((p, i) => {
      path = path.replace(`{${p.name}}`, values[i] === '' ? 'x' : values[i]);
    });
    return path;
  });
  const queryArb = fc
    .tuple(
      ...queryParams.map((p) =>
        fc
          .option(queryValues(p, pools), { freq: p.required ? 10 : 2, nil: undefined })
          .map((v) => (p.required && v === undefined ? null : v)),
      ),
    )
    .map((vals) => {
      const q: [string, string][] = [];
      queryParams.forEach((p, i) => {
        const v = vals[i];
        if (v) for (const x of v) q.push([p.name, x]);
      });
      return q;
    });
  const qm = fc.array(queryMutationArb, { maxLength: 2 });
  const extraHeaders = fc.oneof(
    { weight: 8, arbitrary: fc.constant({} as Record<string, string>) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Record<string, string>>(
        { 'accept-language': 'th' },
        { 'accept-language': 'x'.repeat(5000) },
        { accept: 'text/html' },
        { 'x-forwarded-for': '1.2.3.4, ::1' },
        { 'content-encoding': 'gzip' },
        { origin: 'https://evil.example' },
        { 'transfer-encoding': 'chunked' },
      ),
    },
  );
  return fc
    .record({ path: pathArb, query: queryArb, qm, body: bodyArb(op, pools, examples), auth: authArb(op), extra: extraHeaders })
    .map(({ path, query, qm: muts, body, auth, extra }) => {
      let q = query;
      for (const m of muts) q = applyQueryMutation(op, q, m);
      const headers: Record<string, string> = { ...extra };
      if (body.contentType !== undefined && body.contentType !== '') headers['content-type'] = body.contentType;
      if (headers['transfer-encoding']) delete headers['transfer-encoding']; // fetch sets its own framing
      if (headers['content-encoding'] && body.body.kind === 'none') delete headers['content-encoding'];
      return withToString({ op: op.key, method: op.method, path, query: q, headers, auth, body: body.body });
    });
}

/** The query string, each key and value percent-encoded. */
export function queryString(q: [string, string][]): string {
  if (!q.length) return '';
  return `?${q.map(([k, v]) => `${pct(k).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${pct(v)}`).join('&')}`;
}

/** The body text to send. */
export function bodyText(b: BodySpec, bodyLimitBytes: number): string | undefined {
  switch (b.kind) {
    case 'none':
      return undefined;
    case 'text':
      return b.text;
    case 'deep':
      return b.object ? `${'{"a":'.repeat(b.depth)}1${'}'.repeat(b.depth)}` : `${'['.repeat(b.depth)}${']'.repeat(b.depth)}`;
    case 'oversize':
      return `{"x":"${'x'.repeat(bodyLimitBytes)}"}`;
  }
}
