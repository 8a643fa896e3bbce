/**
 * Brute force at the token endpoint (modules/auth/token-attempts.ts): failed
 * app_secret attempts are counted per app_id and per client address in fixed
 * windows shared by every instance; past the limit the endpoint answers 429
 * KS036 with Retry-After, even for the right secret, until the window ends.
 * Successful grants are not counted. And the ops token is compared over SHA-256
 * digests with timingSafeEqual (equal-length buffers whatever was presented).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, expectError, HUB_APP_ID, HUB_SECRET, PLAIN_APP_ID, PLAIN_SECRET, PORTAL_APP_ID, PORTAL_SECRET } from '../support/fixtures.js';

const grant = (svc: TestService, appId: string, secret: string, from?: string) =>
  svc.request('POST', '/auth/accessToken', {
    body: { grant_type: 'app_credentials', app_id: appId, app_secret: secret },
    ...(from ? { headers: { 'x-forwarded-for': from } } : {}),
  });

describe('token endpoint brute force', () => {
  let svc: TestService | undefined;
  let other: TestService | undefined;
  afterEach(async () => {
    await other?.close();
    await svc?.close();
    svc = other = undefined;
  });

  it('per app_id: after the limit of failures, 429 KS036 with Retry-After, even with the right secret, from any address', async () => {
    svc = await startTestService({ env: { TOKEN_FAILURES_PER_APP: '3', TOKEN_FAILURES_PER_ADDRESS: '100', TOKEN_FAILURE_WINDOW_SECONDS: '300' } });
    await applySite(svc);
    // Successes are not counted.
    for (let i = 0; i < 5; i++) expect((await grant(svc, PORTAL_APP_ID, PORTAL_SECRET, '203.0.113.1')).status).toBe(201);
    for (let i = 0; i < 3; i++) expectError(await grant(svc, PORTAL_APP_ID, `wrong-${i}`, `203.0.113.${10 + i}`), 401, 'KS002');
    for (const [secret, from] of [['wrong-again', '203.0.113.50'], [PORTAL_SECRET, '203.0.113.1'], [PORTAL_SECRET, '198.51.100.7']]) {
      const res = await grant(svc, PORTAL_APP_ID, secret!, from);
      expectError(res, 429, 'KS036');
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(300);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    // Another app is not affected.
    expect((await grant(svc, HUB_APP_ID, HUB_SECRET, '203.0.113.10')).status).toBe(201);
    // An unknown app_id is counted and locked too (no difference between unknown and known apps).
    for (let i = 0; i < 3; i++) expectError(await grant(svc, 'no-such-app', 'x', '203.0.113.60'), 401, 'KS002');
    expectError(await grant(svc, 'no-such-app', 'x', '203.0.113.61'), 429, 'KS036');
  });

  it('per address: failures against many apps from one address lock that address, not others', async () => {
    svc = await startTestService({ env: { TOKEN_FAILURES_PER_APP: '100', TOKEN_FAILURES_PER_ADDRESS: '4', TRUST_PROXY: '127.0.0.1' } });
    await applySite(svc);
    const attacker = '192.0.2.66';
    const apps = [PORTAL_APP_ID, HUB_APP_ID, PLAIN_APP_ID, 'guess-1'];
    for (const app of apps) expectError(await grant(svc, app, 'wrong', attacker), 401, 'KS002');
    const locked = await grant(svc, PLAIN_APP_ID, PLAIN_SECRET, attacker);
    expectError(locked, 429, 'KS036');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The same apps from another address still work.
    expect((await grant(svc, PLAIN_APP_ID, PLAIN_SECRET, '192.0.2.67')).status).toBe(201);
  });

  it('without TRUST_PROXY a client cannot pick its own address with X-Forwarded-For', async () => {
    svc = await startTestService({ env: { TOKEN_FAILURES_PER_APP: '100', TOKEN_FAILURES_PER_ADDRESS: '3' } });
    await applySite(svc);
    for (let i = 0; i < 3; i++) expectError(await grant(svc, `guess-${i}`, 'wrong', `192.0.2.${i + 1}`), 401, 'KS002');
    // Every failure counted against the connection's address, whatever the header said.
    expectError(await grant(svc, PLAIN_APP_ID, PLAIN_SECRET, '192.0.2.99'), 429, 'KS036');
  });

  it('the counts are shared by instances over one database', async () => {
    svc = await startTestService({ env: { TOKEN_FAILURES_PER_APP: '2' } });
    await applySite(svc);
    other = await startTestService({ database: svc.database, keepDatabase: true, env: { TOKEN_FAILURES_PER_APP: '2' } });
    expectError(await grant(svc, PORTAL_APP_ID, 'wrong-1'), 401, 'KS002');
    expectError(await grant(other, PORTAL_APP_ID, 'wrong-2'), 401, 'KS002');
    expectError(await grant(svc, PORTAL_APP_ID, PORTAL_SECRET), 429, 'KS036');
    expectError(await grant(other, PORTAL_APP_ID, PORTAL_SECRET), 429, 'KS036');
  });
});

describe('ops token comparison', () => {
  it('compares SHA-256 digests with timingSafeEqual: equal 32-byte buffers whatever the presented length', async () => {
    const calls: [number, number][] = [];
    vi.resetModules();
    vi.doMock('node:crypto', async (importOriginal) => {
      const real = await importOriginal<typeof import('node:crypto')>();
      return {
        ...real,
        timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
          calls.push([a.byteLength, b.byteLength]);
          return real.timingSafeEqual(a, b);
        },
      };
    });
    try {
      const { tokenMatcher } = await import('../../src/platform/http/authenticate.js');
      const expected = 'ops-token-0123456789abcdef0123456789abcdef';
      const matches = tokenMatcher(expected);
      expect(matches(expected)).toBe(true);
      for (const wrong of ['', 'o', expected.slice(0, -1), `${expected}x`, expected.replace(/f$/, 'e'), 'x'.repeat(10_000)]) {
        expect(matches(wrong), wrong.slice(0, 20)).toBe(false);
      }
      expect(calls).toHaveLength(7);
      for (const [a, b] of calls) expect([a, b]).toEqual([32, 32]);
    } finally {
      vi.doUnmock('node:crypto');
      vi.resetModules();
    }
  });

  it('the ops API refuses a wrong, shorter, longer or missing token and accepts the right one', async () => {
    const svc = await startTestService();
    try {
      const { OPS_TOKEN } = await import('../support/test-service.js');
      for (const auth of [undefined, 'Bearer', `Bearer ${OPS_TOKEN.slice(0, -1)}`, `Bearer ${OPS_TOKEN}0`, `Bearer ${OPS_TOKEN.toUpperCase()}`, `Basic ${OPS_TOKEN}`]) {
        const res = await svc.request('GET', '/ops/v1/clock', { headers: auth ? { authorization: auth } : {} });
        expectError(res, 401, 'KS002');
      }
      expect((await svc.request('GET', '/ops/v1/clock', { headers: { authorization: `Bearer ${OPS_TOKEN}` } })).status).toBe(200);
    } finally {
      await svc.close();
    }
  });
});
