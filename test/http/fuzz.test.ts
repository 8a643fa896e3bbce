/**
 * Property-based fuzzing of every route (issue 16, section 2). Reads the running
 * app's /openapi.json and, for every operation (public and /ops/v1, plus the
 * hidden payment page and room feed), sends fast-check-generated requests:
 * schema-derived and hand-written valid-ish values over real ids, and hostile
 * ones. Properties of every response:
 * - never a 5xx;
 * - every 4xx is the JSON envelope {code, success:false, message} with a documented
 *   code, message an array for KS001;
 * - a refused request (4xx) changes nothing in meetings, events and deliveries;
 * - every 2xx has a documented status and matches its response schema;
 * - afterwards the service still answers /healthz and an authenticated GET.
 *
 * Fixed seed and a bounded number of runs in `npm test`; FUZZ_SEED and FUZZ_RUNS
 * (total runs, spread over the operations) override; `npm run fuzz` runs 20,000.
 * Operation i uses seed FUZZ_SEED + i; a failure prints the seed, the path and the
 * shrunk request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OPS_TOKEN } from '../support/test-service.js';
import { startWorld, type World } from '../support/fuzz/world.js';
import { examplesFor, instantsOf } from '../support/fuzz/examples.js';
import {
  bodyText,
  describe as describeRequest,
  operationsOf,
  outOfRangeSequenceMessage,
  queryString,
  requestArb,
  type FuzzRequest,
  type Operation,
} from '../support/fuzz/requests.js';
import {
  checkResponse,
  documentedCodes,
  refusalMayRecord,
  ResponseSchemas,
  stateDiff,
  stateSnapshot,
  type Verdict,
} from '../support/fuzz/checks.js';
import type { HttpResult } from '../support/test-service.js';
import type { Pools } from '../support/fuzz/values.js';

const SEED = Number(process.env.FUZZ_SEED ?? 16_2026);
const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 2_000);

/** How far the sandbox clock may run ahead (the issue asks for a ±100 years bound). */
const CLOCK_RANGE_MS = 100 * 365.25 * 86_400_000;

interface Outcome {
  verdict: Verdict | null;
  res?: HttpResult;
}

describe('fuzz: every route of the OpenAPI document', () => {
  let w: World;
  let ops: Operation[];
  let codes: Set<string>;
  const schemas = new ResponseSchemas();
  let bigBody: string | undefined;
  /** Responses by operation and status (printed with FUZZ_STATS=1: does the fuzzer reach past validation?). */
  const stats: Record<string, Record<number, number>> = {};
  const samples: Record<string, Set<string>> = {};

  beforeAll(async () => {
    w = await startWorld();
    const res = await w.svc.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    // The site apply and the clock go last: they may reshape the site or move time past the seeded bookings.
    const last = ['POST /ops/v1/apply', 'POST /ops/v1/clock'];
    ops = operationsOf(res.body).sort((a, b) => last.indexOf(a.key) - last.indexOf(b.key));
    codes = documentedCodes(res.body);
  });
  afterAll(async () => {
    await w?.close();
  });

  function authorization(op: Operation, req: FuzzRequest): string | undefined {
    const t = w.tokens;
    const publicTokens = op.path.startsWith('/partner/') ? [t.partner, t.partner, t.partner, t.hub] : [t.alice, t.bob, t.portal, t.hub];
    const a = req.auth;
    switch (a.kind) {
      case 'none':
        return undefined;
      case 'garbage':
        return a.value;
      case 'refresh':
        return `Bearer ${t.refresh}`;
      case 'right':
        if (op.auth === 'ops') return `Bearer ${OPS_TOKEN}`;
        if (op.auth === 'bearer') return `Bearer ${publicTokens[a.which]}`;
        return a.which === 3 ? `Bearer ${t.alice}` : undefined;
      case 'swapped':
        return op.auth === 'ops' ? `Bearer ${publicTokens[a.which]}` : `Bearer ${OPS_TOKEN}`;
    }
  }

  async function send(op: Operation, req: FuzzRequest): Promise<HttpResult | Error> {
    const headers: Record<string, string> = { ...req.headers };
    const auth = authorization(op, req);
    if (auth !== undefined) headers.authorization = auth;
    let body =
      req.body.kind === 'oversize'
        ? (bigBody ??= bodyText(req.body, w.svc.services.config.bodyLimitBytes))
        : bodyText(req.body, w.svc.services.config.bodyLimitBytes);
    if (body !== undefined && (req.method === 'GET' || req.method === 'HEAD')) body = undefined; // fetch refuses a GET body
    try {
      const res = await fetch(w.svc.url + req.path + queryString(req.query), { method: req.method, headers, body, redirect: 'manual' });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    } catch (err) {
      return err as Error;
    }
  }

  async function exercise(op: Operation, req: FuzzRequest): Promise<Outcome> {
    const db = w.svc.services.storage.db;
    // Work an earlier request queued (a delivery attempt, a device sync) finishes before the snapshot.
    await w.svc.services.jobs.drain(undefined, 10_000);
    const before = await stateSnapshot(db);
    const res = await send(op, req);
    if (res instanceof Error) {
      // The client could not send it (fetch refuses a NUL in a header value): nothing reached the service.
      if (res instanceof TypeError && /header|Headers|ByteString/i.test(String(res.message) + String((res as any).cause?.message ?? '')))
        return { verdict: null };
      const health = await w.svc.request('GET', '/healthz').catch((e: Error) => e);
      // Over the body limit the server may answer 413 and close before the client finished uploading.
      if (req.body.kind === 'oversize' && !(health instanceof Error) && health.status === 200) return { verdict: null };
      return { verdict: { kind: 'transport', detail: `${res.message} ${String((res as any).cause?.message ?? '')}` } };
    }
    const tally = (stats[op.key] ??= {});
    tally[res.status] = (tally[res.status] ?? 0) + 1;
    if (process.env.FUZZ_STATS && res.status >= 400) {
      const seen = (samples[`${op.key} ${res.status}`] ??= new Set());
      if (seen.size < 4) seen.add(res.text.slice(0, 160));
    }
    let verdict = checkResponse(op, req, res, codes, schemas);
    if (!verdict && op.key === 'POST /ops/v1/clock' && res.status === 200) {
      const now = Date.parse((res.body as any)?.data?.now);
      if (!(Math.abs(now - Date.now()) <= CLOCK_RANGE_MS))
        verdict = { kind: 'clock-range', detail: `the clock moved out of ±100 years: ${res.text.slice(0, 200)}` };
    }
    if (!verdict && res.status >= 400 && res.status < 500 && !refusalMayRecord(op, res)) {
      const diff = stateDiff(before, await stateSnapshot(db));
      if (diff) verdict = { kind: 'state', detail: `${res.status} ${res.text.slice(0, 200)} changed ${diff}` };
    }
    if (res.status >= 200 && res.status < 300) await afterSuccess(op, res);
    return { verdict, res };
  }

  /** Lets work a success queued finish, and keeps the world usable (fresh tokens after a revoke, new ids to aim at). */
  async function afterSuccess(op: Operation, res: HttpResult): Promise<void> {
    if (op.key === 'POST /auth/revoke' || op.key === 'POST /auth/accessToken' || op.key === 'POST /ops/v1/apply') {
      await w.refreshTokens().catch(() => undefined);
    }
    const id = (res.body as any)?.data?._id;
    if (op.key === 'POST /meetings' && typeof id === 'string' && w.known.meeting.length < 40) w.known.meeting.push(id);
  }

  it('covers every operation of the document, the payment page and the room feed', () => {
    const keys = ops.map((o) => o.key);
    expect(keys.length).toBeGreaterThan(40);
    expect(keys).toEqual(
      expect.arrayContaining([
        'POST /auth/accessToken',
        'POST /meetings',
        'PUT /partner/members/{externalUserId}',
        'POST /ops/v1/clock',
        'POST /ops/v1/calendar-sync/{provider}/messages',
        'GET /pay/{token}',
        'POST /pay/{token}',
        'GET /calendar-feeds/{token}',
        'POST /ops/v1/visitors/invites',
        'POST /ops/v1/devices/{deviceId}/scans',
        'GET /ops/v1/webhooks/{id}/deliveries',
      ]),
    );
    expect(ops.find((o) => o.key === 'POST /ops/v1/calendar-sync/{provider}/messages')?.body?.contentType).toBe('text/calendar');
  });

  it('the properties can fail: a state change, a bare error body, an undocumented code, a 2xx off its schema', async () => {
    const db = w.svc.services.storage.db;
    const before = await stateSnapshot(db);
    const res = await w.svc.request('POST', '/meetings', {
      token: w.tokens.alice,
      body: { meetingRoomId: w.id('iris'), title: 'Probe', startDateTime: w.t('20:00', 3), endDateTime: w.t('21:00', 3) },
    });
    expect(res.status, res.text).toBe(201);
    expect(stateDiff(before, await stateSnapshot(db))).toMatch(/meetings/);
    const op = ops.find((o) => o.key === 'GET /meetings/{id}')!;
    const req = {
      op: op.key,
      method: 'GET',
      path: '/meetings/x',
      query: [],
      headers: {},
      auth: { kind: 'none' },
      body: { kind: 'none' },
    } as FuzzRequest;
    const fake = (status: number, body: unknown): HttpResult => ({
      status,
      body,
      text: JSON.stringify(body),
      headers: new Headers({ 'content-type': 'application/json' }),
    });
    expect(checkResponse(op, req, fake(400, { error: 'Bad Request', statusCode: 400 }), codes, schemas)?.kind).toBe('envelope');
    expect(checkResponse(op, req, fake(404, { code: 'KS999', success: false, message: 'x' }), codes, schemas)?.kind).toBe('code');
    expect(checkResponse(op, req, fake(400, { code: 'KS001', success: false, message: 'not an array' }), codes, schemas)?.kind).toBe(
      'envelope',
    );
    expect(
      checkResponse(op, req, fake(200, { code: 'KS000', success: true, message: 'Success', data: { _id: 5 } }), codes, schemas)?.kind,
    ).toBe('schema');
    expect(checkResponse(op, req, fake(502, {}), codes, schemas)?.kind).toBe('502');
    expect(
      checkResponse(
        op,
        req,
        fake(200, (await w.svc.request('GET', `/meetings/${res.body.data._id}`, { token: w.tokens.alice })).body),
        codes,
        schemas,
      ),
    ).toBeNull();
  });

  it(
    'no request breaks a property',
    async () => {
      const perOp = Math.max(5, Math.ceil(TOTAL_RUNS / ops.length));
      const examples = examplesFor(w);
      const instants = instantsOf(w);
      const failures: string[] = [];
      const started = Date.now();
      for (const [i, op] of ops.entries()) {
        const pools: Pools = { known: w.known, names: w.names, instants };
        const seed = SEED + i;
        const prop = fc.asyncProperty(requestArb(op, pools, examples[op.key] ?? []), async (req) => {
          const { verdict } = await exercise(op, req);
          if (!verdict) return;
          throw new Error(`[${verdict.kind}] ${verdict.detail}\n  request: ${describeRequest(req)}`);
        });
        const result = await fc.check(prop, { seed, numRuns: perOp });
        if (result.failed) {
          const error = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
          const example = result.counterexample ? describeRequest(result.counterexample[0]) : '(none)';
          failures.push(
            `${op.key}: seed ${result.seed}, path "${result.counterexamplePath}" (FUZZ_SEED=${SEED}, operation #${i}), ` +
              `after ${result.numRuns} runs and ${result.numShrinks} shrinks\n  ${error}\n  shrunk: ${example}`,
          );
        }
      }
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      console.log(`fuzz: ${ops.length} operations x ${perOp} runs, seeds ${SEED}..${SEED + ops.length - 1}, ${secs}s`);
      if (process.env.FUZZ_STATS) {
        for (const [k, v] of Object.entries(stats)) console.log(`  ${k}: ${JSON.stringify(v)}`);
        for (const [k, v] of Object.entries(samples)) console.log(`  ${k}\n    ${[...v].join('\n    ')}`);
      }
      expect(failures, `${failures.length} operation(s) failed:\n\n${failures.join('\n\n')}`).toEqual([]);
    },
    30 * 60_000,
  );

  it('the calendar route refuses SEQUENCE values outside RFC 5545 (400 KS001, nothing changes), on every engine', async () => {
    const op = ops.find((o) => o.key === 'POST /ops/v1/calendar-sync/{provider}/messages')!;
    const pools: Pools = { known: w.known, names: w.names, instants: instantsOf(w) };
    const prop = fc.asyncProperty(outOfRangeSequenceMessage(pools), fc.constantFrom('google', 'microsoft'), async (m, provider) => {
      const req: FuzzRequest = {
        op: op.key,
        method: 'POST',
        path: `/ops/v1/calendar-sync/${provider}/messages`,
        query: [],
        headers: { 'content-type': 'text/calendar; charset=utf-8; method=REQUEST' },
        auth: { kind: 'right', which: 0 },
        body: { kind: 'text', text: m.text },
      };
      const { verdict, res } = await exercise(op, req);
      if (verdict) throw new Error(`[${verdict.kind}] ${verdict.detail}\n  SEQUENCE:${m.seq} ${m.method}`);
      expect(res!.status, `SEQUENCE:${m.seq} ${m.method}: ${res!.text}`).toBe(400);
      expect((res!.body as any).message.join(' ')).toMatch(/SEQUENCE -?\d+ is out of range/);
    });
    await fc.assert(prop, { seed: SEED, numRuns: Math.max(20, Math.ceil(TOTAL_RUNS / 50)) });
  });

  it('afterwards the service still answers /healthz and an authenticated GET', async () => {
    expect((await w.svc.request('GET', '/healthz')).status).toBe(200);
    await w.refreshTokens();
    const res = await w.svc.request('GET', `/meeting-rooms?projectId=${w.id('tower')}`, { token: w.tokens.portal });
    expect(res.status, res.text).toBe(200);
    expect(res.body.success).toBe(true);
  });
});
