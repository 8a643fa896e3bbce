/**
 * The sandbox clock over HTTP: GET/POST /ops/v1/clock, forward-only moves, the
 * advance hooks, persistence across restarts, production lock-out and ops auth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_TOKEN, startTestService, type TestService } from '../support/test-service.js';
import { readStoredOffset } from '../../src/platform/clock/sandbox-clock.js';
import { expectError } from '../support/fixtures.js';

const MINUTE = 60_000;
const SLACK_MS = 5_000;
const PROD_SECRETS_KEY = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

function messages400(res: { status: number; body: any }): string[] {
  expectError(res as never, 400, 'KS001');
  return res.body.message;
}

async function clockState(svc: TestService): Promise<{ now: string; offsetMs: number }> {
  const res = await svc.ops('GET', '/ops/v1/clock');
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describe('sandbox clock', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /ops/v1/clock → enveloped {now, offsetMs}', async () => {
    const before = Date.now();
    const res = await svc.ops('GET', '/ops/v1/clock');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      code: 'KS000',
      success: true,
      message: expect.any(String),
      data: { now: expect.any(String), offsetMs: expect.any(Number) },
    });
    expect(Number.isInteger(res.body.data.offsetMs)).toBe(true);
    expect(res.body.data.offsetMs).toBeGreaterThanOrEqual(0);
    const now = Date.parse(res.body.data.now);
    expect(Number.isNaN(now)).toBe(false);
    expect(res.body.data.now).toMatch(/Z$|[+-]\d\d:\d\d$/);
    expect(Math.abs(now - (before + res.body.data.offsetMs))).toBeLessThan(SLACK_MS);
  });

  it('advanceMinutes moves now forward by that many minutes', async () => {
    const before = await clockState(svc);
    const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 90 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.code).toBe('KS000');
    const moved = Date.parse(res.body.data.now) - Date.parse(before.now);
    expect(moved).toBeGreaterThanOrEqual(90 * MINUTE);
    expect(moved).toBeLessThan(90 * MINUTE + SLACK_MS);
    // The offset grows by exactly the requested minutes.
    expect(res.body.data.offsetMs - before.offsetMs).toBe(90 * MINUTE);
    // A later GET agrees with the move.
    const after = await clockState(svc);
    expect(after.offsetMs).toBe(res.body.data.offsetMs);
    // Service time is what the rest of the service sees.
    expect(Math.abs(svc.services.clock.now() - Date.parse(after.now))).toBeLessThan(SLACK_MS);
  });

  it('set moves the clock to that instant', async () => {
    const before = await clockState(svc);
    const target = new Date(Date.parse(before.now) + 3 * 86_400_000).toISOString();
    const res = await svc.ops('POST', '/ops/v1/clock', { set: target });
    expect(res.status, res.text).toBe(200);
    const now = Date.parse(res.body.data.now);
    expect(now).toBeGreaterThanOrEqual(Date.parse(target));
    expect(now - Date.parse(target)).toBeLessThan(SLACK_MS);
  });

  it('set with an explicit non-UTC offset is honoured', async () => {
    const before = await clockState(svc);
    const targetMs = Date.parse(before.now) + 2 * 3_600_000;
    // Same instant written in +07:00.
    const local = new Date(targetMs + 7 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '+07:00');
    const res = await svc.ops('POST', '/ops/v1/clock', { set: local });
    expect(res.status, res.text).toBe(200);
    expect(Math.abs(Date.parse(res.body.data.now) - Math.floor(targetMs / 1000) * 1000)).toBeLessThan(SLACK_MS);
  });

  it('set to an earlier instant → 400 KS001 and nothing changes', async () => {
    const before = await clockState(svc);
    const earlier = new Date(Date.parse(before.now) - 3_600_000).toISOString();
    const res = await svc.ops('POST', '/ops/v1/clock', { set: earlier });
    expectError(res, 400, 'KS001');
    const after = await clockState(svc);
    expect(after.offsetMs).toBe(before.offsetMs);
    expect(await svc.services.settings.get('sandbox_clock_offset_ms')).toBe(String(before.offsetMs));
  });

  it.each([0, -5, -0.5])('advanceMinutes %s → 400 KS001 and nothing changes', async (n) => {
    const before = await clockState(svc);
    const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: n });
    expectError(res, 400, 'KS001');
    expect((await clockState(svc)).offsetMs).toBe(before.offsetMs);
  });

  it('an empty body or neither field → 400 KS001', async () => {
    expectError(await svc.ops('POST', '/ops/v1/clock', {}), 400, 'KS001');
  });

  it('a set that is not a date-time → 400 KS001', async () => {
    expectError(await svc.ops('POST', '/ops/v1/clock', { set: 'next tuesday' }), 400, 'KS001');
  });

  it('advance hooks run before POST answers, receiving (from, to)', async () => {
    const calls: { from: number; to: number; finishedAt: number }[] = [];
    svc.services.sandboxClock.onAdvance(async (from, to) => {
      await new Promise((r) => setTimeout(r, 300));
      calls.push({ from, to, finishedAt: Date.now() });
    });
    const before = await clockState(svc);
    const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 15 });
    const answeredAt = Date.now();
    expect(res.status, res.text).toBe(200);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call.finishedAt).toBeLessThanOrEqual(answeredAt);
    expect(call.to - call.from).toBe(15 * MINUTE);
    expect(Math.abs(call.from - Date.parse(before.now))).toBeLessThan(SLACK_MS);
    // `to` is the new service time the response reports (give or take the hook's own run time).
    const reported = Date.parse(res.body.data.now);
    expect(reported).toBeGreaterThanOrEqual(call.to);
    expect(reported - call.to).toBeLessThan(SLACK_MS);
  });

  it('concurrent advances are serialized and each applies in full', async () => {
    const before = await clockState(svc);
    const results = await Promise.all(Array.from({ length: 5 }, () => svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 10 })));
    for (const r of results) expect(r.status, r.text).toBe(200);
    const after = await clockState(svc);
    expect(after.offsetMs - before.offsetMs).toBe(50 * MINUTE);
    // Each answer reports a distinct point in time, 10 minutes apart once sorted.
    const offsets = results.map((r) => r.body.data.offsetMs as number).sort((x, y) => x - y);
    for (let i = 1; i < offsets.length; i++) expect(offsets[i] - offsets[i - 1]).toBe(10 * MINUTE);
  });

  describe('ops auth', () => {
    it('without the ops token → 401 KS002 on both routes', async () => {
      expectError(await svc.request('GET', '/ops/v1/clock'), 401, 'KS002');
      expectError(await svc.request('POST', '/ops/v1/clock', { body: { advanceMinutes: 5 } }), 401, 'KS002');
    });

    it('with a wrong token → 401 KS002, and the clock does not move', async () => {
      const before = await clockState(svc);
      expectError(await svc.request('GET', '/ops/v1/clock', { token: 'not-the-ops-token' }), 401, 'KS002');
      expectError(
        await svc.request('POST', '/ops/v1/clock', { token: 'test-ops-token-0123456789abcdef012345678X', body: { advanceMinutes: 5 } }),
        401,
        'KS002',
      );
      expect((await clockState(svc)).offsetMs).toBe(before.offsetMs);
    });

    it('a non-bearer Authorization header → 401 KS002', async () => {
      const res = await svc.request('GET', '/ops/v1/clock', { headers: { authorization: 'Basic b3BzOm9wcw==' } });
      expectError(res, 401, 'KS002');
    });

    it('an invalid body without the ops token → 401 (auth before validation)', async () => {
      expectError(await svc.request('POST', '/ops/v1/clock', { body: { advanceMinutes: -1 } }), 401, 'KS002');
    });
  });
});

describe('sandbox clock persistence', () => {
  it('the offset survives a restart on the same database', async () => {
    const first = await startTestService({ keepDatabase: true });
    let second: TestService | undefined;
    try {
      const moved = await first.ops('POST', '/ops/v1/clock', { advanceMinutes: 120 });
      expect(moved.status, moved.text).toBe(200);
      const offset = moved.body.data.offsetMs as number;
      expect(offset).toBeGreaterThanOrEqual(120 * MINUTE - SLACK_MS);
      await first.close();

      second = await startTestService({ database: first.database });
      const state = await clockState(second);
      expect(state.offsetMs).toBeGreaterThanOrEqual(offset);
      expect(state.offsetMs - offset).toBeLessThan(SLACK_MS);
      expect(Date.parse(state.now) - Date.now()).toBeGreaterThanOrEqual(120 * MINUTE - SLACK_MS);
      // Service time (used by booking rules) starts with the persisted offset too.
      expect(second.services.clock.now() - Date.now()).toBeGreaterThanOrEqual(120 * MINUTE - SLACK_MS);
    } finally {
      if (second) await second.close();
      else await first.database.drop();
    }
  });

  it('a second instance on the same database sees the move', async () => {
    const a = await startTestService({ keepDatabase: true });
    const b = await startTestService({ database: a.database, keepDatabase: true });
    try {
      const moved = await a.ops('POST', '/ops/v1/clock', { advanceMinutes: 45 });
      expect(moved.status).toBe(200);
      const seen = await clockState(b);
      expect(seen.offsetMs).toBeGreaterThanOrEqual(moved.body.data.offsetMs);
    } finally {
      await b.close();
      await a.close();
      await a.database.drop();
    }
  });
});

describe('sandbox clock in production', () => {
  let prod: TestService;
  beforeAll(async () => {
    prod = await startTestService({ env: { BOOKING_ENV: 'production', SECRETS_KEY: PROD_SECRETS_KEY } });
  });
  afterAll(async () => {
    await prod.close();
  });

  it('GET /ops/v1/clock → 404 KS005', async () => {
    expectError(await prod.ops('GET', '/ops/v1/clock'), 404, 'KS005');
  });

  it('POST /ops/v1/clock → 404 KS005 and service time does not move', async () => {
    expectError(await prod.ops('POST', '/ops/v1/clock', { advanceMinutes: 60 }), 404, 'KS005');
    expect(Math.abs(prod.services.clock.now() - Date.now())).toBeLessThan(SLACK_MS);
    expect(await prod.services.settings.get('sandbox_clock_offset_ms')).toBeUndefined();
  });

  it('still needs the ops token (401 before 404)', async () => {
    expectError(await prod.request('GET', '/ops/v1/clock'), 401, 'KS002');
  });
});

describe('sandbox clock: bounds, reset and a corrupt offset', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });
  const raw = (text: string) =>
    svc.request('POST', '/ops/v1/clock', { token: OPS_TOKEN, raw: text, headers: { 'content-type': 'application/json' } });

  it('a leap second in set → 400 KS001 naming the field, nothing stored, the service keeps working', async () => {
    const before = await clockState(svc);
    const res = await svc.ops('POST', '/ops/v1/clock', { set: '2030-12-31T23:59:60Z' });
    expectError(res, 400, 'KS001');
    expect(res.body.message.join(' ')).toMatch(/body\.set must be an ISO 8601 date-time.*no leap second/);
    expect((await clockState(svc)).offsetMs).toBe(before.offsetMs);
    expect(readStoredOffset(await svc.services.settings.get('sandbox_clock_offset_ms'))).toBe(before.offsetMs);
    expect((await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 1 })).status).toBe(200);
  });

  it.each(['2030-02-30T10:00:00Z', '2030-12-31T24:00:00Z', '2030-12-31T23:60:00Z', '2030-12-31T23:59:00', '20301231T235900Z'])(
    'an impossible or offset-less set %s → 400 KS001',
    async (set) => {
      expectError(await svc.ops('POST', '/ops/v1/clock', { set }), 400, 'KS001');
    },
  );

  it.each([1e308, 9007199254740992, 100000000000, 52_596_001])('advanceMinutes %s → 400 naming the bound, nothing moves', async (n) => {
    const before = await clockState(svc);
    const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: n });
    expectError(res, 400, 'KS001');
    expect(res.body.message).toEqual(['body.advanceMinutes must be <= 52596000']);
    expect((await clockState(svc)).offsetMs).toBe(before.offsetMs);
  });

  it('advanceMinutes 1e309 (Infinity once parsed) → 400', async () => {
    const res = await raw('{"advanceMinutes": 1e309}');
    expectError(res, 400, 'KS001');
    expect(res.body.message).toEqual(['body.advanceMinutes must be a finite number']);
  });

  it.each(['Infinity', '1e999', '-Infinity'])('advanceMinutes as the string %j → 400, nothing moves', async (text) => {
    const before = await clockState(svc);
    const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: text });
    expect(messages400(res)).toEqual([expect.stringMatching(/^body\.advanceMinutes must be/)]);
    expect((await clockState(svc)).offsetMs).toBe(before.offsetMs);
  });

  it('exactly one of advanceMinutes, set or reset', async () => {
    const now = (await clockState(svc)).now;
    for (const body of [
      { advanceMinutes: 5, reset: true },
      { set: now, reset: true },
      { advanceMinutes: 5, set: now },
    ]) {
      const res = await svc.ops('POST', '/ops/v1/clock', body);
      expectError(res, 400, 'KS001');
      expect(res.body.message).toEqual(['body must contain exactly one of advanceMinutes, set or reset']);
    }
    expectError(await svc.ops('POST', '/ops/v1/clock', { reset: false }), 400, 'KS001');
  });

  it('set more than 100 years ahead → 400 naming the bound; 99 years is fine; reset starts over', async () => {
    const year = 365.25 * 86_400_000;
    const far = new Date(Date.now() + 101 * year).toISOString();
    const res = await svc.ops('POST', '/ops/v1/clock', { set: far });
    expectError(res, 400, 'KS001');
    expect(res.body.message[0]).toMatch(/at most 100 years \(52596000 minutes\) ahead of the machine clock/);

    const near = new Date(Date.now() + 99 * year).toISOString();
    const moved = await svc.ops('POST', '/ops/v1/clock', { set: near });
    expect(moved.status, moved.text).toBe(200);
    // Another 2 years would pass the bound.
    const more = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 2 * 525_960 });
    expectError(more, 400, 'KS001');

    const reset = await svc.ops('POST', '/ops/v1/clock', { reset: true });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.data.offsetMs).toBe(0);
    expect(Math.abs(Date.parse(reset.body.data.now) - Date.now())).toBeLessThan(SLACK_MS);
    expect(await svc.services.settings.get('sandbox_clock_offset_ms')).toBe('0');
    expect((await clockState(svc)).offsetMs).toBe(0);
    expect(Math.abs(svc.services.clock.now() - Date.now())).toBeLessThan(SLACK_MS);
  });

  it('the OpenAPI document states the bound and the reset', async () => {
    const doc = (await svc.request('GET', '/openapi.json')).body;
    const op = doc.paths['/ops/v1/clock'].post;
    expect(op.summary).toMatch(/reset/);
    expect(op.description).toMatch(/reset: true/);
    const schema = op.requestBody.content['application/json'].schema;
    expect(schema.properties.advanceMinutes.maximum).toBe(52_596_000);
    expect(schema.properties.reset.enum ?? [schema.properties.reset.const]).toEqual([true]);
  });
});

describe('sandbox clock: a stored offset across restarts and instances', () => {
  it.each(['NaN', 'Infinity', '-Infinity', 'garbage', '1e400', '-5', '9007199254740993', String(10 ** 14)])(
    'a corrupt stored offset %s reads as 0 and reset repairs it',
    async (bad) => {
      const first = await startTestService({ keepDatabase: true });
      let second: TestService | undefined;
      try {
        await first.services.settings.set('sandbox_clock_offset_ms', bad);
        await first.close();
        second = await startTestService({ database: first.database });
        const state = await clockState(second);
        expect(state.offsetMs).toBe(0);
        expect(Math.abs(Date.parse(state.now) - Date.now())).toBeLessThan(SLACK_MS);
        // The service works: it answers an advance, and reset writes a good value.
        expect((await second.ops('POST', '/ops/v1/clock', { advanceMinutes: 10 })).body.data.offsetMs).toBe(10 * MINUTE);
        expect((await second.ops('POST', '/ops/v1/clock', { reset: true })).body.data.offsetMs).toBe(0);
        expect(await second.services.settings.get('sandbox_clock_offset_ms')).toBe('0');
      } finally {
        if (second) await second.close();
        else await first.database.drop();
      }
    },
  );

  it('a reset is picked up by another instance, and a reset offset stays reset after a restart', async () => {
    const a = await startTestService({ keepDatabase: true });
    const b = await startTestService({ database: a.database, keepDatabase: true });
    let c: TestService | undefined;
    try {
      const moved = await a.ops('POST', '/ops/v1/clock', { advanceMinutes: 600 });
      expect(moved.status).toBe(200);
      expect((await clockState(b)).offsetMs).toBe(600 * MINUTE);
      expect((await a.ops('POST', '/ops/v1/clock', { reset: true })).body.data.offsetMs).toBe(0);
      // b had the higher offset; the reset's generation makes it step back.
      expect((await clockState(b)).offsetMs).toBe(0);
      expect(Math.abs(b.services.clock.now() - Date.now())).toBeLessThan(SLACK_MS);
      // After the reset, moves go forward again from 0 on both.
      expect((await b.ops('POST', '/ops/v1/clock', { advanceMinutes: 30 })).body.data.offsetMs).toBe(30 * MINUTE);
      expect((await clockState(a)).offsetMs).toBe(30 * MINUTE);
      await b.close();
      await a.close();
      c = await startTestService({ database: a.database });
      expect((await clockState(c)).offsetMs).toBe(30 * MINUTE);
    } finally {
      if (c) await c.close();
      else await a.database.drop();
    }
  });
});
