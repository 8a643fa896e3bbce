/**
 * POST /auth/accessToken (app_credentials, refresh_token, act_as), bearer
 * authentication of public routes, environment binding and the 503 KS234
 * behaviour when the token store is unavailable — all over real HTTP.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import {
  HUB_APP_ID,
  HUB_SECRET,
  MEETING_UPDATE,
  PLAIN_APP_ID,
  PLAIN_SECRET,
  PORTAL_APP_ID,
  PORTAL_SECRET,
  UNKNOWN_ID,
  actAsRequest,
  actAsToken,
  appToken,
  applySite,
  expectError,
  idOf,
  refreshRequest,
  sleep,
  tokenRequest,
  type SiteIds,
  type TokenResponseBody,
} from '../support/fixtures.js';
import { hasPermission, type Principal } from '../../src/modules/auth/principal.js';
import type { TokenRepository } from '../../src/modules/auth/token-repository.js';

const TOKEN_GRANT_KEYS = ['access_token', 'expires_in', 'refresh_token', 'refresh_token_expires_in'];

/** Routes outside the bearer scope that the OpenAPI description does not list as such. */
const NO_BEARER_PATHS = new Set(['/openapi.json']);

/**
 * Every registered route that needs a bearer token, from the service's own OpenAPI
 * description: operations whose effective security names `bearer` (routes documented
 * with `security: []` or the ops token are not in the list).
 */
function bearerRoutes(svc: TestService): { method: string; path: string }[] {
  type Op = { security?: Record<string, unknown>[] };
  const doc = svc.app.swagger() as { paths?: Record<string, Record<string, Op>>; security?: Record<string, unknown>[] };
  const out: { method: string; path: string }[] = [];
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    if (NO_BEARER_PATHS.has(path) || path.startsWith('/docs')) continue;
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const security = op.security ?? doc.security ?? [];
      if (!security.some((req) => 'bearer' in req)) continue;
      out.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, UNKNOWN_ID) });
    }
  }
  return out;
}

async function expectEveryBearerRoute401(svc: TestService, auth: { token?: string; authorization?: string }): Promise<void> {
  const routes = bearerRoutes(svc);
  expect(routes).toContainEqual({ method: 'POST', path: '/auth/revoke' });
  for (const r of routes) {
    const res = await svc.request(r.method, r.path, {
      token: auth.token,
      headers: auth.authorization ? { authorization: auth.authorization } : {},
    });
    expectError(res, 401, 'KS002');
  }
}

/** Non-destructive check that an access token authenticates (the same code path every public route runs). */
async function principalOf(svc: TestService, accessToken: string): Promise<Principal> {
  return svc.services.tokens.authenticate(`Bearer ${accessToken}`);
}

/** Non-destructive HTTP check of an access token: GET /auth/whoami → 'ok', or "<status> <code>". */
async function authStatus(svc: TestService, accessToken: string): Promise<string> {
  const res = await svc.request('GET', '/auth/whoami', { token: accessToken });
  return res.status === 200 ? 'ok' : `${res.status} ${res.body?.code}`;
}

function expectTokenResponse(res: { status: number; body: any; text: string }, withRefresh: boolean): TokenResponseBody {
  expect(res.status, res.text).toBe(201);
  const body = res.body as TokenResponseBody;
  // Not enveloped, no token_type.
  expect(body).not.toHaveProperty('code');
  expect(body).not.toHaveProperty('success');
  expect(body).not.toHaveProperty('data');
  expect(body).not.toHaveProperty('token_type');
  for (const k of Object.keys(body)) expect(TOKEN_GRANT_KEYS).toContain(k);
  expect(body.access_token).toBeTypeOf('string');
  expect(body.access_token.length).toBeGreaterThan(20);
  expect(Number.isInteger(body.expires_in)).toBe(true);
  expect(body.expires_in).toBeGreaterThan(0);
  if (withRefresh) {
    expect(body.refresh_token).toBeTypeOf('string');
    expect(body.refresh_token).not.toBe(body.access_token);
    expect(Number.isInteger(body.refresh_token_expires_in)).toBe(true);
    expect(body.refresh_token_expires_in).toBeGreaterThan(0);
  } else {
    expect(body).not.toHaveProperty('refresh_token');
    expect(body).not.toHaveProperty('refresh_token_expires_in');
  }
  return body;
}

async function appDbId(svc: TestService, clientId: string, env = 'development'): Promise<string> {
  const row = await svc.services.storage.db
    .selectFrom('apps')
    .select('id')
    .where('client_id', '=', clientId)
    .where('env', '=', env)
    .executeTakeFirstOrThrow();
  return row.id;
}

async function countRows(svc: TestService, table: 'users' | 'memberships' | 'app_links'): Promise<number> {
  const row = await svc.services.storage.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('token endpoint', () => {
  let svc: TestService;
  let ids: SiteIds;
  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc);
  });
  afterAll(async () => {
    await svc?.close();
  });

  describe('app_credentials', () => {
    it('201 with a non-enveloped token response (access + refresh, integer lifetimes, no token_type)', async () => {
      const res = await tokenRequest(svc, { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET });
      const body = expectTokenResponse(res, true);
      expect(res.headers.get('cache-control')).toMatch(/no-store/);
      expect(body.expires_in).toBe(svc.services.config.tokens.accessSeconds);
      expect(body.refresh_token_expires_in).toBe(svc.services.config.tokens.refreshSeconds);
      const p = await principalOf(svc, body.access_token);
      expect(p.kind).toBe('app');
      expect(p.clientId).toBe(PORTAL_APP_ID);
      expect(p.userId).toBeNull();
    });

    it('each grant issues fresh tokens', async () => {
      const a = await appToken(svc);
      const b = await appToken(svc);
      expect(a.access_token).not.toBe(b.access_token);
      expect(a.refresh_token).not.toBe(b.refresh_token);
    });

    it('a plain app token carries the app roles on its projects only', async () => {
      const p = await principalOf(svc, (await appToken(svc)).access_token);
      const tower = idOf(ids, 'tower', 'projects');
      const annex = idOf(ids, 'annex', 'projects');
      expect([...p.projects.keys()]).toEqual([tower]);
      expect(hasPermission(p, tower, MEETING_UPDATE)).toBe(true);
      expect(hasPermission(p, annex, MEETING_UPDATE)).toBe(false);
    });

    it('wrong secret → 401 KS002 enveloped', async () => {
      const res = await tokenRequest(svc, { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: `${PORTAL_SECRET}x` });
      expectError(res, 401, 'KS002');
    });

    it('unknown app → 401 KS002 enveloped', async () => {
      const res = await tokenRequest(svc, { grant_type: 'app_credentials', app_id: 'no-such-app', app_secret: PORTAL_SECRET });
      expectError(res, 401, 'KS002');
    });

    it("another app's secret → 401 KS002", async () => {
      const res = await tokenRequest(svc, { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: HUB_SECRET });
      expectError(res, 401, 'KS002');
    });

    it('missing app_id and app_secret → 400 KS001, one message per missing field', async () => {
      const res = await tokenRequest(svc, { grant_type: 'app_credentials' });
      expectError(res, 400, 'KS001');
      expect(res.body.message).toHaveLength(2);
      expect(res.body.message.filter((m: string) => m.includes('app_id'))).toHaveLength(1);
      expect(res.body.message.filter((m: string) => m.includes('app_secret'))).toHaveLength(1);
    });

    it('missing app_secret only → 400 KS001 with one message', async () => {
      const res = await tokenRequest(svc, { grant_type: 'app_credentials', app_id: PORTAL_APP_ID });
      expectError(res, 400, 'KS001');
      expect(res.body.message).toHaveLength(1);
      expect(res.body.message[0]).toContain('app_secret');
    });

    it('empty strings count as missing', async () => {
      const res = await tokenRequest(svc, { grant_type: 'app_credentials', app_id: '', app_secret: '' });
      expectError(res, 400, 'KS001');
      expect(res.body.message).toHaveLength(2);
    });

    it('missing grant_type → 400 KS001', async () => {
      const res = await tokenRequest(svc, { app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET });
      expectError(res, 400, 'KS001');
    });

    it.each(['client_credentials', 'password', 'APP_CREDENTIALS', ''])('unknown grant_type %j → 400 KS001', async (grant) => {
      const res = await tokenRequest(svc, { grant_type: grant, app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET });
      expectError(res, 400, 'KS001');
    });

    it('form-urlencoded body works', async () => {
      const form = new URLSearchParams({ grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET });
      const res = await svc.request('POST', '/auth/accessToken', {
        raw: form.toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      const body = expectTokenResponse(res, true);
      expect(await authStatus(svc, body.access_token)).toBe('ok');
    });

    it('form-urlencoded errors are the same as JSON ones', async () => {
      const bad = new URLSearchParams({ grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: 'wrong-secret' });
      const res = await svc.request('POST', '/auth/accessToken', {
        raw: bad.toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectError(res, 401, 'KS002');
      const missing = await svc.request('POST', '/auth/accessToken', {
        raw: 'grant_type=app_credentials',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectError(missing, 400, 'KS001');
      expect(missing.body.message).toHaveLength(2);
    });
  });

  describe('bearer authentication of public routes', () => {
    it('the public route list includes POST /auth/revoke and GET /auth/whoami, and no ops route', () => {
      const routes = bearerRoutes(svc);
      expect(routes).toContainEqual({ method: 'POST', path: '/auth/revoke' });
      expect(routes).toContainEqual({ method: 'GET', path: '/auth/whoami' });
      expect(routes.filter((r) => r.path.startsWith('/ops/'))).toEqual([]);
    });

    it('no bearer → 401 KS002', async () => {
      await expectEveryBearerRoute401(svc, {});
    });

    it('garbage bearer → 401 KS002', async () => {
      await expectEveryBearerRoute401(svc, { token: 'garbage' });
    });

    it('well-formed but unknown access token → 401 KS002', async () => {
      await expectEveryBearerRoute401(svc, { token: `kat_${UNKNOWN_ID}_${'A'.repeat(43)}` });
    });

    it('a real token id with a wrong secret → 401 KS002', async () => {
      const t = await appToken(svc);
      const forged = t.access_token.replace(/_[A-Za-z0-9_-]{43}$/, `_${'B'.repeat(43)}`);
      expect(forged).not.toBe(t.access_token);
      await expectEveryBearerRoute401(svc, { token: forged });
      expect(await authStatus(svc, t.access_token)).toBe('ok');
    });

    it('a refresh token used as a bearer → 401 KS002', async () => {
      const t = await appToken(svc);
      await expectEveryBearerRoute401(svc, { token: t.refresh_token! });
    });

    it('a non-Bearer scheme → 401 KS002', async () => {
      const t = await appToken(svc);
      await expectEveryBearerRoute401(svc, { authorization: `Basic ${t.access_token}` });
      await expectEveryBearerRoute401(svc, { authorization: 'Bearer' });
    });

    it('revoked token → 401 KS002 everywhere, and its refresh token is revoked too', async () => {
      const t = await appToken(svc);
      const other = await appToken(svc);
      const revoke = await svc.request('POST', '/auth/revoke', { token: t.access_token });
      expect(revoke.status, revoke.text).toBe(200);
      expect(revoke.body).toEqual({ code: 'KS000', success: true, message: expect.any(String), data: { revoked: true } });
      await expectEveryBearerRoute401(svc, { token: t.access_token });
      expectError(await refreshRequest(svc, t.refresh_token!), 401, 'KS002');
      // Another family of the same app is untouched.
      expect(await authStatus(svc, other.access_token)).toBe('ok');
    });

    it('a revoked act_as token → 401 KS002', async () => {
      const t = await actAsToken(svc, { subject: 'ext-alice' });
      expect((await svc.request('POST', '/auth/revoke', { token: t.access_token })).status).toBe(200);
      await expectEveryBearerRoute401(svc, { token: t.access_token });
    });
  });

  describe('refresh_token', () => {
    it('returns a new pair; both tokens differ and the new access token works', async () => {
      const first = await appToken(svc);
      const res = await refreshRequest(svc, first.refresh_token!);
      const next = expectTokenResponse(res, true);
      expect(next.access_token).not.toBe(first.access_token);
      expect(next.refresh_token).not.toBe(first.refresh_token);
      const p = await principalOf(svc, next.access_token);
      expect(p.kind).toBe('app');
      expect(p.clientId).toBe(PORTAL_APP_ID);
      // The newest refresh token rotates again.
      const third = expectTokenResponse(await refreshRequest(svc, next.refresh_token!), true);
      expect(third.refresh_token).not.toBe(next.refresh_token);
      // Over HTTP: the newest access token is accepted by a bearer route.
      const revoke = await svc.request('POST', '/auth/revoke', { token: third.access_token });
      expect(revoke.status, revoke.text).toBe(200);
    });

    it('the rotated refresh token presented again within the grace window → 503 KS234, nothing revoked', async () => {
      const first = await appToken(svc);
      const next = expectTokenResponse(await refreshRequest(svc, first.refresh_token!), true);
      const again = await refreshRequest(svc, first.refresh_token!);
      expectError(again, 503, 'KS234');
      // The new pair still works.
      expect(await authStatus(svc, next.access_token)).toBe('ok');
      const after = expectTokenResponse(await refreshRequest(svc, next.refresh_token!), true);
      expect((await svc.request('POST', '/auth/revoke', { token: after.access_token })).status).toBe(200);
    });

    it('two concurrent refreshes of the same token: one wins, the other gets 503 KS234', async () => {
      const first = await appToken(svc);
      const results = await Promise.all([refreshRequest(svc, first.refresh_token!), refreshRequest(svc, first.refresh_token!)]);
      const won = results.filter((r) => r.status === 201);
      const lost = results.filter((r) => r.status !== 201);
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expectError(lost[0], 503, 'KS234');
      expect(await authStatus(svc, won[0].body.access_token)).toBe('ok');
    });

    it('refresh with an access token → 401 KS002', async () => {
      const t = await appToken(svc);
      expectError(await refreshRequest(svc, t.access_token), 401, 'KS002');
      expect(await authStatus(svc, t.access_token)).toBe('ok');
    });

    it('refresh with garbage or an unknown token → 401 KS002', async () => {
      expectError(await refreshRequest(svc, 'garbage'), 401, 'KS002');
      expectError(await refreshRequest(svc, `krt_${UNKNOWN_ID}_${'A'.repeat(43)}`), 401, 'KS002');
    });

    it('missing refresh_token → 400 KS001 with one message', async () => {
      const res = await tokenRequest(svc, { grant_type: 'refresh_token' });
      expectError(res, 400, 'KS001');
      expect(res.body.message).toHaveLength(1);
      expect(res.body.message[0]).toContain('refresh_token');
    });

    it('refresh works with a form-urlencoded body', async () => {
      const t = await appToken(svc);
      const res = await svc.request('POST', '/auth/accessToken', {
        raw: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: t.refresh_token! }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectTokenResponse(res, true);
    });
  });

  describe('act_as', () => {
    it.each(['act_as', 'urn:ietf:params:oauth:grant-type:token-exchange'])(
      '%s → 201 with access_token and expires_in, no refresh token',
      async (grantType) => {
        const res = await actAsRequest(svc, { subject: 'ext-alice', grantType });
        const body = expectTokenResponse(res, false);
        expect(body.expires_in).toBe(svc.services.config.tokens.actAsSeconds);
        const p = await principalOf(svc, body.access_token);
        expect(p.kind).toBe('member');
        expect(p.grant).toBe('act_as');
        expect(p.userId).toBe(idOf(ids, 'alice', 'users'));
        expect(p.clientId).toBe(PORTAL_APP_ID);
      },
    );

    it('the act_as token is short-lived compared with the app token', async () => {
      const app = await appToken(svc);
      const del = await actAsToken(svc, { subject: 'ext-alice' });
      expect(del.expires_in).toBeLessThanOrEqual(app.expires_in);
    });

    it('an act_as access token cannot be refreshed', async () => {
      const del = await actAsToken(svc, { subject: 'ext-alice' });
      expectError(await refreshRequest(svc, del.access_token), 401, 'KS002');
    });

    it('app not provisioned for act_as → 403 KS221', async () => {
      const res = await actAsRequest(svc, { appId: PLAIN_APP_ID, secret: PLAIN_SECRET, subject: 'ext-someone' });
      expectError(res, 403, 'KS221');
      const svcMember = await actAsRequest(svc, {
        appId: PLAIN_APP_ID,
        secret: PLAIN_SECRET,
        subject: idOf(ids, 'alice', 'users'),
        subjectType: 'service_member_id',
      });
      expectError(svcMember, 403, 'KS221');
    });

    it('wrong app secret → 401 KS002 (and nothing is created)', async () => {
      const users = await countRows(svc, 'users');
      expectError(await actAsRequest(svc, { secret: `${PORTAL_SECRET}-wrong`, subject: 'ext-wrong-secret' }), 401, 'KS002');
      expectError(await actAsRequest(svc, { appId: 'no-such-app', subject: 'ext-wrong-secret' }), 401, 'KS002');
      expect(await countRows(svc, 'users')).toBe(users);
    });

    it('missing app_id, app_secret and subject → 400 KS001 with three messages', async () => {
      const res = await tokenRequest(svc, { grant_type: 'act_as' });
      expectError(res, 400, 'KS001');
      expect(res.body.message).toHaveLength(3);
      for (const f of ['app_id', 'app_secret', 'subject']) {
        expect(res.body.message.some((m: string) => m.includes(f))).toBe(true);
      }
    });

    it('unknown subject_type → 400 KS001', async () => {
      const res = await tokenRequest(svc, {
        grant_type: 'act_as',
        app_id: PORTAL_APP_ID,
        app_secret: PORTAL_SECRET,
        subject: 'ext-alice',
        subject_type: 'email',
      });
      expectError(res, 400, 'KS001');
    });

    it('subject over 128 characters → 400 KS001; exactly 128 is accepted', async () => {
      expectError(await actAsRequest(svc, { subject: 'x'.repeat(129) }), 400, 'KS001');
      expectError(await actAsRequest(svc, { subject: 'x'.repeat(129), subjectType: 'service_member_id' }), 400, 'KS001');
      expectTokenResponse(await actAsRequest(svc, { subject: 'y'.repeat(128) }), false);
    });

    it('external_user_id on a single-project app: first use creates a federated visitor linked to the app; same subject → same member', async () => {
      const subject = 'ext-first-use-1';
      const portalId = await appDbId(svc, PORTAL_APP_ID);
      const tower = idOf(ids, 'tower', 'projects');
      const [users0, memberships0, links0] = [
        await countRows(svc, 'users'),
        await countRows(svc, 'memberships'),
        await countRows(svc, 'app_links'),
      ];

      const first = expectTokenResponse(await actAsRequest(svc, { subject }), false);
      const second = expectTokenResponse(await actAsRequest(svc, { subject, subjectType: 'external_user_id' }), false);
      const third = expectTokenResponse(
        await actAsRequest(svc, { subject, grantType: 'urn:ietf:params:oauth:grant-type:token-exchange' }),
        false,
      );

      const db = svc.services.storage.db;
      const links = await db.selectFrom('app_links').selectAll().where('external_user_id', '=', subject).execute();
      expect(links).toHaveLength(1);
      expect(links[0].app_id).toBe(portalId);
      const userId = links[0].user_id;

      const memberships = await db.selectFrom('memberships').selectAll().where('user_id', '=', userId).execute();
      expect(memberships).toHaveLength(1);
      expect(memberships[0]).toMatchObject({ project_id: tower, user_type: 'visitor', source: 'federated', status: 'active' });

      expect(await db.selectFrom('users').select('id').where('id', '=', userId).execute()).toHaveLength(1);
      expect(await countRows(svc, 'users')).toBe(users0 + 1);
      expect(await countRows(svc, 'memberships')).toBe(memberships0 + 1);
      expect(await countRows(svc, 'app_links')).toBe(links0 + 1);

      for (const t of [first, second, third]) {
        const p = await principalOf(svc, t.access_token);
        expect(p.userId).toBe(userId);
        expect(p.kind).toBe('member');
        expect([...p.projects.keys()]).toEqual([tower]);
      }
      // The federated member can then be named by service_member_id through the same app.
      const bySvcId = expectTokenResponse(await actAsRequest(svc, { subject: userId, subjectType: 'service_member_id' }), false);
      expect((await principalOf(svc, bySvcId.access_token)).userId).toBe(userId);
    });

    it('the linked subject of an applied link resolves to that user, and creates nothing', async () => {
      const users0 = await countRows(svc, 'users');
      const t = await actAsToken(svc, { subject: 'ext-bob' });
      expect((await principalOf(svc, t.access_token)).userId).toBe(idOf(ids, 'bob', 'users'));
      expect(await countRows(svc, 'users')).toBe(users0);
    });

    // On SQLite the in-process driver serializes the grant's queries, so the race mostly shows on
    // PostgreSQL; several rounds make a lost-race bug (e.g. a duplicate-key error surfacing as 503,
    // or a second member) very likely to show there.
    it.each([1, 2, 3])('concurrent first use (10 parallel requests, round %i) yields exactly one member', async (round) => {
      const subject = `ext-concurrent-first-use-${round}`;
      const users0 = await countRows(svc, 'users');
      const results = await Promise.all(Array.from({ length: 10 }, () => actAsRequest(svc, { subject })));
      for (const r of results) expectTokenResponse(r, false);

      const db = svc.services.storage.db;
      const links = await db.selectFrom('app_links').selectAll().where('external_user_id', '=', subject).execute();
      expect(links).toHaveLength(1);
      const memberships = await db.selectFrom('memberships').selectAll().where('user_id', '=', links[0].user_id).execute();
      expect(memberships).toHaveLength(1);
      expect(memberships[0]).toMatchObject({ user_type: 'visitor', source: 'federated' });
      // No orphan users from lost races.
      expect(await countRows(svc, 'users')).toBe(users0 + 1);

      const principals = await Promise.all(results.map((r) => principalOf(svc, r.body.access_token)));
      expect(new Set(principals.map((p) => p.userId))).toEqual(new Set([links[0].user_id]));
    });

    it('external_user_id on a multi-project app → 403 KS221 (and nothing is created)', async () => {
      const users0 = await countRows(svc, 'users');
      expectError(await actAsRequest(svc, { appId: HUB_APP_ID, secret: HUB_SECRET, subject: 'ext-multi-new' }), 403, 'KS221');
      // Even a subject linked to the hub app is refused by external_user_id.
      expectError(await actAsRequest(svc, { appId: HUB_APP_ID, secret: HUB_SECRET, subject: 'hub-alice' }), 403, 'KS221');
      expect(await countRows(svc, 'users')).toBe(users0);
    });

    it('service_member_id naming a linked member → 201 (multi-project and single-project apps)', async () => {
      const alice = idOf(ids, 'alice', 'users');
      const hub = expectTokenResponse(
        await actAsRequest(svc, { appId: HUB_APP_ID, secret: HUB_SECRET, subject: alice, subjectType: 'service_member_id' }),
        false,
      );
      expect((await principalOf(svc, hub.access_token)).userId).toBe(alice);
      const portal = expectTokenResponse(await actAsRequest(svc, { subject: alice, subjectType: 'service_member_id' }), false);
      expect((await principalOf(svc, portal.access_token)).userId).toBe(alice);
    });

    it('service_member_id naming an existing but unlinked user → 403 KS221', async () => {
      const carol = idOf(ids, 'carol', 'users');
      expectError(await actAsRequest(svc, { subject: carol, subjectType: 'service_member_id' }), 403, 'KS221');
      expectError(
        await actAsRequest(svc, { appId: HUB_APP_ID, secret: HUB_SECRET, subject: carol, subjectType: 'service_member_id' }),
        403,
        'KS221',
      );
    });

    it('service_member_id naming an unknown id → 401 KS223', async () => {
      expectError(await actAsRequest(svc, { subject: UNKNOWN_ID, subjectType: 'service_member_id' }), 401, 'KS223');
      expectError(await actAsRequest(svc, { subject: 'not-an-object-id', subjectType: 'service_member_id' }), 401, 'KS223');
    });

    it('service_member_id with a wrong app secret → 401 KS002 (checked before the subject)', async () => {
      expectError(
        await actAsRequest(svc, {
          secret: 'wrong-secret-wrong-secret-wrong-secret',
          subject: UNKNOWN_ID,
          subjectType: 'service_member_id',
        }),
        401,
        'KS002',
      );
    });

    describe('authority is the intersection of member scope and app scope', () => {
      it('a plain member acting through an app with MEETING_UPDATE does not get MEETING_UPDATE', async () => {
        const tower = idOf(ids, 'tower', 'projects');
        const annex = idOf(ids, 'annex', 'projects');
        const t = await actAsToken(svc, { subject: 'ext-alice' });
        const p = await svc.services.tokens.authenticate(`Bearer ${t.access_token}`);
        expect(p.kind).toBe('member');
        expect(p.projects.has(tower)).toBe(true);
        expect(hasPermission(p, tower, MEETING_UPDATE)).toBe(false);
        // alice is a member of annex too, but the portal app's scope is tower only.
        expect(p.projects.has(annex)).toBe(false);
        expect(hasPermission(p, annex, MEETING_UPDATE)).toBe(false);
      });

      it("an admin member acting through the app gets MEETING_UPDATE, only inside the app's projects", async () => {
        const tower = idOf(ids, 'tower', 'projects');
        const annex = idOf(ids, 'annex', 'projects');
        const t = await actAsToken(svc, { subject: 'ext-bob' });
        const p = await svc.services.tokens.authenticate(`Bearer ${t.access_token}`);
        expect(hasPermission(p, tower, MEETING_UPDATE)).toBe(true);
        // Admin holds every permission on tower, but the app holds only MEETING_UPDATE.
        expect(hasPermission(p, tower, 'SOMETHING_THE_APP_LACKS')).toBe(false);
        expect(p.projects.has(annex)).toBe(false);
        expect([...p.projects.keys()]).toEqual([tower]);
      });

      it('over HTTP, GET /auth/whoami shows the same intersection', async () => {
        const tower = idOf(ids, 'tower', 'projects');
        const alice = await actAsToken(svc, { subject: 'ext-alice' });
        const bob = await actAsToken(svc, { subject: 'ext-bob' });
        const a = await svc.request('GET', '/auth/whoami', { token: alice.access_token });
        expect(a.status, a.text).toBe(200);
        expect(a.body.data).toMatchObject({ kind: 'member', appId: PORTAL_APP_ID, userId: idOf(ids, 'alice', 'users') });
        expect(a.body.data.projects).toEqual([{ projectId: tower, permissions: [] }]);
        const b = await svc.request('GET', '/auth/whoami', { token: bob.access_token });
        expect(b.status, b.text).toBe(200);
        expect(b.body.data.projects).toEqual([{ projectId: tower, permissions: [MEETING_UPDATE] }]);
      });

      it('through a multi-project app the member sees every shared project, with the same intersection', async () => {
        const tower = idOf(ids, 'tower', 'projects');
        const annex = idOf(ids, 'annex', 'projects');
        const asBob = await actAsToken(svc, {
          appId: HUB_APP_ID,
          secret: HUB_SECRET,
          subject: idOf(ids, 'bob', 'users'),
          subjectType: 'service_member_id',
        });
        const bob = await svc.services.tokens.authenticate(`Bearer ${asBob.access_token}`);
        expect(new Set(bob.projects.keys())).toEqual(new Set([tower, annex]));
        expect(hasPermission(bob, tower, MEETING_UPDATE)).toBe(true);
        expect(hasPermission(bob, annex, MEETING_UPDATE)).toBe(true);

        const asAlice = await actAsToken(svc, {
          appId: HUB_APP_ID,
          secret: HUB_SECRET,
          subject: idOf(ids, 'alice', 'users'),
          subjectType: 'service_member_id',
        });
        const alice = await svc.services.tokens.authenticate(`Bearer ${asAlice.access_token}`);
        expect(new Set(alice.projects.keys())).toEqual(new Set([tower, annex]));
        expect(hasPermission(alice, tower, MEETING_UPDATE)).toBe(false);
        expect(hasPermission(alice, annex, MEETING_UPDATE)).toBe(false);
      });
    });
  });

  describe('token store unavailable → 503 KS234, never 401', () => {
    let realRepo: TokenRepository;
    beforeAll(() => {
      realRepo = svc.services.tokens.repo;
    });
    afterEach(() => {
      svc.services.tokens.repo = realRepo;
    });

    function faultyRepo(behaviour: 'reject' | 'hang'): TokenRepository {
      return new Proxy(realRepo, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== 'function') return value;
          return () =>
            behaviour === 'reject'
              ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432 (simulated outage)'))
              : new Promise(() => {});
        },
      });
    }

    it('a failing store: authenticated call and every grant answer 503 KS234; tokens survive the outage', async () => {
      const before = await appToken(svc);
      const delegated = await actAsToken(svc, { subject: 'ext-alice' });

      svc.services.tokens.repo = faultyRepo('reject');
      expectError(await svc.request('POST', '/auth/revoke', { token: before.access_token }), 503, 'KS234');
      expectError(await svc.request('POST', '/auth/revoke', { token: delegated.access_token }), 503, 'KS234');
      expectError(
        await tokenRequest(svc, { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET }),
        503,
        'KS234',
      );
      expectError(await refreshRequest(svc, before.refresh_token!), 503, 'KS234');
      expectError(await actAsRequest(svc, { subject: 'ext-alice' }), 503, 'KS234');
      expectError(await actAsRequest(svc, { subject: 'ext-during-outage' }), 503, 'KS234');

      svc.services.tokens.repo = realRepo;
      // Nothing was revoked or rotated: the same tokens still work.
      expect(await authStatus(svc, before.access_token)).toBe('ok');
      expect(await authStatus(svc, delegated.access_token)).toBe('ok');
      const next = expectTokenResponse(await refreshRequest(svc, before.refresh_token!), true);
      expect((await svc.request('POST', '/auth/revoke', { token: before.access_token })).status).toBe(200);
      expect((await svc.request('POST', '/auth/revoke', { token: delegated.access_token })).status).toBe(200);
      expect(next.access_token).toBeTypeOf('string');
    });

    it('a hanging store times out after ~5 s with 503 KS234; tokens survive', { timeout: 30_000 }, async () => {
      const before = await appToken(svc);
      svc.services.tokens.repo = faultyRepo('hang');

      const started = Date.now();
      const [call, grant] = await Promise.all([
        svc.request('POST', '/auth/revoke', { token: before.access_token }),
        tokenRequest(svc, { grant_type: 'refresh_token', refresh_token: before.refresh_token! }),
      ]);
      const elapsed = Date.now() - started;
      expectError(call, 503, 'KS234');
      expectError(grant, 503, 'KS234');
      expect(elapsed).toBeGreaterThanOrEqual(4_500);
      expect(elapsed).toBeLessThan(15_000);

      svc.services.tokens.repo = realRepo;
      expect(await authStatus(svc, before.access_token)).toBe('ok');
      expectTokenResponse(await refreshRequest(svc, before.refresh_token!), true);
      expect((await svc.request('POST', '/auth/revoke', { token: before.access_token })).status).toBe(200);
    });
  });
});

describe('token lifetimes and refresh reuse', () => {
  describe('expired access token (ACCESS_TOKEN_TTL_SECONDS=1)', () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService({ env: { ACCESS_TOKEN_TTL_SECONDS: '1' } });
      await applySite(svc);
    });
    afterAll(async () => {
      await svc?.close();
    });

    it('expires_in reports the configured lifetime and the token stops working after it', async () => {
      const live = await appToken(svc);
      const expiring = await appToken(svc);
      expect(expiring.expires_in).toBe(1);
      expect(await authStatus(svc, expiring.access_token)).toBe('ok');
      expect((await svc.request('POST', '/auth/revoke', { token: live.access_token })).status).toBe(200);
      await sleep(1_200);
      await expectEveryBearerRoute401(svc, { token: expiring.access_token });
      // The refresh token outlives the access token and yields a working pair.
      const next = expectTokenResponse(await refreshRequest(svc, expiring.refresh_token!), true);
      expect(await authStatus(svc, next.access_token)).toBe('ok');
    });
  });

  describe('rotated refresh token presented after the grace window (REFRESH_REUSE_GRACE_SECONDS=0)', () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService({ env: { REFRESH_REUSE_GRACE_SECONDS: '0' } });
      await applySite(svc);
    });
    afterAll(async () => {
      await svc?.close();
    });

    it('→ 401 KS002 and the whole family is revoked', async () => {
      const first = await appToken(svc);
      const second = expectTokenResponse(await refreshRequest(svc, first.refresh_token!), true);
      const newest = expectTokenResponse(await refreshRequest(svc, second.refresh_token!), true);
      const unrelated = await appToken(svc);
      expect(await authStatus(svc, newest.access_token)).toBe('ok');
      await sleep(20);

      expectError(await refreshRequest(svc, first.refresh_token!), 401, 'KS002');

      // Every token of the family is dead, newest included.
      for (const t of [first.access_token, second.access_token, newest.access_token]) {
        expectError(await svc.request('POST', '/auth/revoke', { token: t }), 401, 'KS002');
      }
      expectError(await refreshRequest(svc, newest.refresh_token!), 401, 'KS002');
      expectError(await refreshRequest(svc, second.refresh_token!), 401, 'KS002');
      // Other families are not affected.
      expect(await authStatus(svc, unrelated.access_token)).toBe('ok');
      expectTokenResponse(await refreshRequest(svc, unrelated.refresh_token!), true);
    });
  });
});

describe('environment binding', () => {
  it('tokens and app secrets issued under development are rejected by a uat service on the same database', async () => {
    const dev = await startTestService({ keepDatabase: true });
    let uat: TestService | undefined;
    try {
      await applySite(dev);
      const t = await appToken(dev);
      const delegated = await actAsToken(dev, { subject: 'ext-alice' });

      uat = await startTestService({ database: dev.database, env: { BOOKING_ENV: 'uat' } });
      expect(uat.services.config.env).toBe('uat');

      expectError(await uat.request('POST', '/auth/revoke', { token: t.access_token }), 401, 'KS002');
      expectError(await uat.request('POST', '/auth/revoke', { token: delegated.access_token }), 401, 'KS002');
      expectError(await refreshRequest(uat, t.refresh_token!), 401, 'KS002');
      expectError(
        await tokenRequest(uat, { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET }),
        401,
        'KS002',
      );
      expectError(await actAsRequest(uat, { subject: 'ext-alice' }), 401, 'KS002');

      // Still valid where they were issued: the uat attempts revoked nothing.
      expect(await authStatus(dev, t.access_token)).toBe('ok');
      expectTokenResponse(await refreshRequest(dev, t.refresh_token!), true);
    } finally {
      await dev.close();
      if (uat) await uat.close();
      else await dev.database.drop();
    }
  });
});
