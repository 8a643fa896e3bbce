/**
 * The caller cache: a resolved bearer token is reused for a short while
 * (CALLER_CACHE_MS) without reading the token store, and never past what the
 * caller may see:
 * - a repeated call reads nothing to authenticate;
 * - revoking in this instance, a site apply and a membership change take effect
 *   on the very next request;
 * - a revocation made by another instance is seen within CALLER_CACHE_MS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { actAsToken, appToken, applySite, expectError, siteDocument, sleep } from '../support/fixtures.js';
import { statementCounter } from '../support/statements.js';
import { CallerCache } from '../../src/modules/auth/caller-cache.js';
import type { Principal } from '../../src/modules/auth/principal.js';

const whoami = (svc: TestService, token: string) => svc.request('GET', '/auth/whoami', { token });

describe('caller cache over HTTP', () => {
  const counter = statementCounter();
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    a = await startTestService({ onQuery: counter.record, noWorkers: true });
    // A second instance on the same database, with a short cache.
    b = await startTestService({
      database: a.database,
      keepDatabase: true,
      noWorkers: true,
      env: { CALLER_CACHE_MS: '400', REFRESH_REUSE_GRACE_SECONDS: '0' },
    });
    await applySite(a);
    // The sandbox clock re-reads its offset every second: stop it on the counted instance so every statement counted is the request's.
    await a.services.sandboxClock.stop();
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a repeated call with the same token reads nothing to authenticate; a wrong secret for a cached id is still 401', async () => {
    const t = await appToken(a);
    const first = await counter.counted(() => whoami(a, t.access_token));
    expect(first.result.status).toBe(200);
    expect(first.statements.length).toBeGreaterThan(0);
    const second = await counter.counted(() => whoami(a, t.access_token));
    expect(second.result.status).toBe(200);
    expect(second.result.body).toEqual(first.result.body);
    expect(second.statements).toEqual([]);
    // Same token id, another secret: never answered from the cache.
    const forged = t.access_token.replace(/_[A-Za-z0-9_-]{43}$/, `_${'A'.repeat(43)}`);
    expect(forged).not.toBe(t.access_token);
    expectError(await whoami(a, forged), 401, 'KS002');
  });

  it('revoking in this instance: the next request is 401', async () => {
    const t = await appToken(a);
    expect((await whoami(a, t.access_token)).status).toBe(200);
    expect((await a.request('POST', '/auth/revoke', { token: t.access_token })).status).toBe(200);
    expectError(await whoami(a, t.access_token), 401, 'KS002');
  });

  it('revoking in another instance: seen within CALLER_CACHE_MS', async () => {
    const t = await appToken(a);
    expect((await whoami(b, t.access_token)).status).toBe(200); // cached in b
    expect((await a.request('POST', '/auth/revoke', { token: t.access_token })).status).toBe(200);
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 3000) {
      status = (await whoami(b, t.access_token)).status;
      if (status === 200) await sleep(25);
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(400 + 300);
  });

  it('a rotated refresh token presented again after the grace window revokes the family: a cached access token is 401 at once', async () => {
    const t = await appToken(b);
    expect((await whoami(b, t.access_token)).status).toBe(200); // cached in b
    const rotated = await b.request('POST', '/auth/accessToken', { body: { grant_type: 'refresh_token', refresh_token: t.refresh_token } });
    expect(rotated.status, rotated.text).toBe(201);
    // b runs with REFRESH_REUSE_GRACE_SECONDS=0: the old refresh token again is theft.
    await sleep(5);
    expectError(
      await b.request('POST', '/auth/accessToken', { body: { grant_type: 'refresh_token', refresh_token: t.refresh_token } }),
      401,
      'KS002',
    );
    expectError(await whoami(b, t.access_token), 401, 'KS002');
  });

  it("a site apply that changes an app's roles is seen on the next request", async () => {
    const t = await appToken(a);
    const before = await whoami(a, t.access_token);
    expect(before.body.data.projects[0].permissions).toEqual(['MEETING_UPDATE']);
    const doc = siteDocument();
    doc.apps[0].projectRoles = [{ project: 'tower', permissions: [] }];
    await applySite(a, doc);
    const after = await whoami(a, t.access_token);
    expect(after.body.data.projects[0].permissions).toEqual([]);
    await applySite(a);
    expect((await whoami(a, t.access_token)).body.data.projects[0].permissions).toEqual(['MEETING_UPDATE']);
  });

  it('a member made admin by a site apply: an act_as token carries the new permissions at once', async () => {
    const t = await actAsToken(a, { subject: 'ext-alice' });
    expect((await whoami(a, t.access_token)).body.data.projects[0].permissions).toEqual([]);
    const doc = siteDocument();
    doc.users[0].memberships = [
      { project: 'tower', role: 'admin' },
      { project: 'annex', role: 'member' },
    ];
    await applySite(a, doc);
    expect((await whoami(a, t.access_token)).body.data.projects[0].permissions).toEqual(['MEETING_UPDATE']);
    await applySite(a);
    expect((await whoami(a, t.access_token)).body.data.projects[0].permissions).toEqual([]);
  });
});

describe('CallerCache', () => {
  const principal = (familyId: string) => ({ familyId, tokenId: 't', projects: new Map() }) as unknown as Principal;

  it("answers only the matching secret, within its lifetime and the token's", () => {
    const cache = new CallerCache(1000);
    cache.set('t1', { principal: principal('f1'), secretHash: 'h1', expiresAt: 5000 }, 0, cache.mark());
    expect(cache.get('t1', 'h1', 999)).toBeDefined();
    expect(cache.get('t1', 'h2', 999)).toBeUndefined();
    expect(cache.get('t1', 'h1', 1000)).toBeUndefined();
    cache.set('t2', { principal: principal('f1'), secretHash: 'h1', expiresAt: 500 }, 0, cache.mark());
    expect(cache.get('t2', 'h1', 499)).toBeDefined();
    expect(cache.get('t2', 'h1', 500)).toBeUndefined();
  });

  it('is bounded, oldest out first', () => {
    const cache = new CallerCache(1000, 3);
    for (const id of ['a', 'b', 'c', 'd']) cache.set(id, { principal: principal(id), secretHash: 'h', expiresAt: 9e9 }, 0, cache.mark());
    expect(cache.size).toBe(3);
    expect(cache.get('a', 'h', 1)).toBeUndefined();
    expect(cache.get('d', 'h', 1)).toBeDefined();
  });

  it('forgets a family, or everything; a caller read across an invalidation is not stored', () => {
    const cache = new CallerCache(1000);
    cache.set('a', { principal: principal('f1'), secretHash: 'h', expiresAt: 9e9 }, 0, cache.mark());
    cache.set('b', { principal: principal('f2'), secretHash: 'h', expiresAt: 9e9 }, 0, cache.mark());
    cache.forgetFamily('f1');
    expect(cache.get('a', 'h', 1)).toBeUndefined();
    expect(cache.get('b', 'h', 1)).toBeDefined();
    const mark = cache.mark();
    cache.clear();
    cache.set('c', { principal: principal('f3'), secretHash: 'h', expiresAt: 9e9 }, 0, mark);
    expect(cache.get('c', 'h', 1)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('a lifetime of 0 stores nothing', () => {
    const cache = new CallerCache(0);
    cache.set('a', { principal: principal('f1'), secretHash: 'h', expiresAt: 9e9 }, 0, cache.mark());
    expect(cache.size).toBe(0);
  });
});
