/**
 * Brute force at the token endpoint (modules/auth/token-attempts.ts): failed
 * app_secret attempts are counted per (app_id, client address) and per client
 * address in fixed windows shared by every instance; past a limit that address
 * gets 429 KS036 with Retry-After, even for the right secret, until the window
 * ends, while the right secret from another address still works (no one can lock
 * an app's owner out by knowing its app_id). Successful grants are not counted.
 * And the ops token is compared over SHA-256 digests with timingSafeEqual
 * (equal-length buffers whatever was presented).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OPS_TOKEN, startTestService, type TestService } from '../support/test-service.js';
import {
  actAsRequest,
  applySite,
  expectError,
  HUB_APP_ID,
  HUB_SECRET,
  PLAIN_APP_ID,
  PLAIN_SECRET,
  PORTAL_APP_ID,
  PORTAL_SECRET,
} from '../support/fixtures.js';

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

  it('ten wrong secrets from one address limit that address for the app; the right secret and act_as from another address still work', async () => {
    // The defaults: 10 failures per (app, address), 30 per address, 300 s windows.
    svc = await startTestService({ env: { TRUST_PROXY: '127.0.0.1' } });
    await applySite(svc);
    const attacker = '203.0.113.66';
    const owner = '198.51.100.7';
    // Successes are not counted.
    for (let i = 0; i < 5; i++) expect((await grant(svc, PORTAL_APP_ID, PORTAL_SECRET, attacker)).status).toBe(201);
    for (let i = 0; i < 10; i++) expectError(await grant(svc, PORTAL_APP_ID, `wrong-${i}`, attacker), 401, 'KS002');
    // The attacker's address is limited for this app, even with the right secret (a hit teaches nothing).
    for (const secret of ['wrong-again', PORTAL_SECRET]) {
      const res = await grant(svc, PORTAL_APP_ID, secret, attacker);
      expectError(res, 429, 'KS036');
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(300);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const actAsFromAttacker = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'act_as', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET, subject: 'ext-alice' },
      headers: { 'x-forwarded-for': attacker },
    });
    expectError(actAsFromAttacker, 429, 'KS036');
    // The owner, from another address: the right secret works, and so does act_as.
    const token = await grant(svc, PORTAL_APP_ID, PORTAL_SECRET, owner);
    expect(token.status, token.text).toBe(201);
    expect(token.body.access_token).toBeTruthy();
    const actAs = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'act_as', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET, subject: 'ext-alice' },
      headers: { 'x-forwarded-for': owner },
    });
    expect(actAs.status, actAs.text).toBe(201);
    const whoami = await svc.request('GET', '/auth/whoami', { token: actAs.body.access_token });
    expect(whoami.status, whoami.text).toBe(200);
    expect(whoami.body.data.kind).toBe('member');
    // A wrong secret from the owner's address is its own count: 401, not 429.
    expectError(await grant(svc, PORTAL_APP_ID, 'typo', owner), 401, 'KS002');
    // The attacker's address may still use another app (its per-address budget is not used up).
    expect((await grant(svc, HUB_APP_ID, HUB_SECRET, attacker)).status).toBe(201);
    // An unknown app_id is counted and limited too (no difference between unknown and known apps).
    for (let i = 0; i < 10; i++) expectError(await grant(svc, 'no-such-app', 'x', '203.0.113.60'), 401, 'KS002');
    expectError(await grant(svc, 'no-such-app', 'x', '203.0.113.60'), 429, 'KS036');
  });

  it('failures spread over many addresses never refuse the right secret from a fresh one', async () => {
    svc = await startTestService({ env: { TOKEN_FAILURES_PER_APP: '2', TOKEN_FAILURES_PER_ADDRESS: '2', TRUST_PROXY: '127.0.0.1' } });
    await applySite(svc);
    for (let i = 0; i < 8; i++) {
      for (let j = 0; j < 2; j++) expectError(await grant(svc, PORTAL_APP_ID, `wrong-${i}-${j}`, `192.0.2.${i + 1}`), 401, 'KS002');
      expectError(await grant(svc, PORTAL_APP_ID, PORTAL_SECRET, `192.0.2.${i + 1}`), 429, 'KS036');
    }
    expect((await grant(svc, PORTAL_APP_ID, PORTAL_SECRET, '198.51.100.200')).status).toBe(201);
    expect((await actAsRequest(svc, { subject: 'ext-alice' })).status).toBe(201);
  });

  it('an IPv6 client counts by its /64: fresh addresses in the same /64 stay limited, another /64 is not', async () => {
    svc = await startTestService({ env: { TOKEN_FAILURES_PER_APP: '3', TOKEN_FAILURES_PER_ADDRESS: '100', TRUST_PROXY: '127.0.0.1' } });
    await applySite(svc);
    for (let i = 1; i <= 3; i++) expectError(await grant(svc, PORTAL_APP_ID, 'wrong', `2001:db8:1:2::${i}`), 401, 'KS002');
    expectError(await grant(svc, PORTAL_APP_ID, PORTAL_SECRET, '2001:db8:1:2:ffff::99'), 429, 'KS036');
    expect((await grant(svc, PORTAL_APP_ID, PORTAL_SECRET, '2001:db8:1:3::1')).status).toBe(201);
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

  it('the counts are shared by instances over one database (the same address on both)', async () => {
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
      for (const auth of [
        undefined,
        'Bearer',
        `Bearer ${OPS_TOKEN.slice(0, -1)}`,
        `Bearer ${OPS_TOKEN}0`,
        `Bearer ${OPS_TOKEN.toUpperCase()}`,
        `Basic ${OPS_TOKEN}`,
      ]) {
        const res = await svc.request('GET', '/ops/v1/clock', { headers: auth ? { authorization: auth } : {} });
        expectError(res, 401, 'KS002');
      }
      expect((await svc.request('GET', '/ops/v1/clock', { headers: { authorization: `Bearer ${OPS_TOKEN}` } })).status).toBe(200);
    } finally {
      await svc.close();
    }
  });
});

describe('wrong ops tokens are limited per address (Bearer and console sign-in share the count)', () => {
  let svc: TestService | undefined;
  let other: TestService | undefined;
  afterEach(async () => {
    await other?.close();
    await svc?.close();
    svc = other = undefined;
  });
  const opsCall = (on: TestService, token: string | null, from: string) =>
    on.request('GET', '/ops/v1/clock', {
      headers: { 'x-forwarded-for': from, ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    });
  const signIn = (on: TestService, token: string, from: string) =>
    on.request('POST', '/ops/v1/session', { body: { token }, headers: { 'x-forwarded-for': from } });
  const expectLimited = (res: Awaited<ReturnType<typeof opsCall>>) => {
    expectError(res, 429, 'KS036');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(300);
  };

  it('past the limit of wrong Bearer tokens an address gets 429 with Retry-After, even with the right token; other addresses never', async () => {
    svc = await startTestService({ env: { TOKEN_FAILURES_PER_ADDRESS: '3', TRUST_PROXY: '127.0.0.1' } });
    const attacker = '203.0.113.9';
    for (let i = 0; i < 3; i++) expectError(await opsCall(svc, `wrong-${i}`, attacker), 401, 'KS002');
    expectLimited(await opsCall(svc, 'wrong-again', attacker));
    expectLimited(await opsCall(svc, OPS_TOKEN, attacker));
    expectLimited(await signIn(svc, OPS_TOKEN, attacker));
    // Another address: the right token, as a Bearer token and at sign-in.
    expect((await opsCall(svc, OPS_TOKEN, '198.51.100.20')).status).toBe(200);
    const session = await signIn(svc, OPS_TOKEN, '198.51.100.20');
    expect(session.status, session.text).toBe(200);
    // The same attacker's IPv6 neighbourhood is one client; another /64 is not.
    for (let i = 1; i <= 3; i++) expectError(await opsCall(svc, 'wrong', `2001:db8:5:6::${i}`), 401, 'KS002');
    expectLimited(await opsCall(svc, OPS_TOKEN, '2001:db8:5:6::77'));
    expect((await opsCall(svc, OPS_TOKEN, '2001:db8:5:7::1')).status).toBe(200);
    // Requests with no token at all are refused but not counted.
    for (let i = 0; i < 6; i++) expectError(await opsCall(svc, null, '198.51.100.30'), 401, 'KS002');
    expect((await opsCall(svc, OPS_TOKEN, '198.51.100.30')).status).toBe(200);
  });

  it('wrong sign-ins and wrong Bearer tokens count together, on every instance; the right token signs in from another address', async () => {
    const env = { TOKEN_FAILURES_PER_ADDRESS: '3', TRUST_PROXY: '127.0.0.1' };
    svc = await startTestService({ env });
    other = await startTestService({ database: svc.database, keepDatabase: true, env });
    const attacker = '192.0.2.40';
    expectError(await signIn(svc, 'wrong-1', attacker), 401, 'KS002');
    expectError(await opsCall(other, 'wrong-2', attacker), 401, 'KS002');
    expectError(await signIn(other, 'wrong-3', attacker), 401, 'KS002');
    // The address is limited on both instances, for the right token too.
    expectLimited(await signIn(svc, OPS_TOKEN, attacker));
    expectLimited(await opsCall(svc, OPS_TOKEN, attacker));
    expectLimited(await opsCall(other, OPS_TOKEN, attacker));
    // The operator, elsewhere, signs in and works.
    const ok = await signIn(other, OPS_TOKEN, '192.0.2.41');
    expect(ok.status, ok.text).toBe(200);
    const cookie = ok.headers.get('set-cookie')!.split(';')[0]!;
    expect((await svc.request('GET', '/ops/v1/site', { headers: { cookie, 'x-forwarded-for': '192.0.2.41' } })).status).toBe(200);
  });
});
