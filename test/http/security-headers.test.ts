/**
 * Response headers (platform/http/security-headers.ts) and the CORS policy
 * (platform/http/cors.ts, docs/decisions.md):
 * - every answer: x-content-type-options nosniff, no x-powered-by, and
 *   cache-control no-store unless the route chose its own (the token endpoint,
 *   meetings with their PIN, partner members, ops answers, errors, 404s);
 * - HTML pages: a strict CSP (the payment page keeps its own nonce policy; /docs
 *   allows only its own scripts and styles from 'self', and loads no inline
 *   script), referrer-policy no-referrer, x-frame-options DENY, frame-ancestors;
 * - CORS closed by default (a preflight is 204 without any allow header); with
 *   CORS_ORIGINS, an allowed origin gets its origin back, vary: origin, the
 *   methods, headers and max-age; another origin gets nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_TOKEN, startTestService, type TestService, type HttpResult } from '../support/test-service.js';
import { applySite, appToken, actAsToken, idOf, type SiteIds } from '../support/fixtures.js';
import { TZ, webhookSite } from '../support/webhook-site.js';
import { at, dayAhead } from '../support/catalogue.js';
import { seedPaidBooking } from '../support/payments.js';
import { DOCS_CSP } from '../../src/platform/http/security-headers.js';

const everyResponse = (res: HttpResult, what: string) => {
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.has('x-powered-by'), what).toBe(false);
};
const noStore = (res: HttpResult, what: string) => {
  everyResponse(res, what);
  expect(res.headers.get('cache-control'), what).toBe('no-store');
};

describe('security headers', () => {
  let svc: TestService;
  let ids: SiteIds;
  let alice: string;

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(
      svc,
      webhookSite({
        rooms: [
          { key: 'lotus', name: 'Lotus', chargeRate: { perHour: 100, perDay: 800 } },
          { key: 'orchid', name: 'Orchid' },
        ],
      }),
    );
    alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('the token endpoint, its refusals, authenticated API answers and ops answers are no-store', async () => {
    const token = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'app_credentials', app_id: 'portal-dev', app_secret: 'portal-secret-0123456789abcdef-0123456789' },
    });
    expect(token.status).toBe(201);
    noStore(token, 'token');
    noStore(
      await svc.request('POST', '/auth/accessToken', {
        body: { grant_type: 'app_credentials', app_id: 'portal-dev', app_secret: 'wrong' },
      }),
      'token 401',
    );
    noStore(await svc.request('GET', '/auth/whoami', { token: alice }), 'whoami');
    noStore(await svc.request('GET', '/meeting-rooms', { token: alice }), 'rooms');
    noStore(await svc.request('GET', '/meetings', { token: null }), '401');
    noStore(await svc.request('GET', '/nowhere'), '404');
    noStore(await svc.ops('GET', '/ops/v1/clock'), 'ops');
    noStore(await svc.request('GET', '/healthz'), 'health');
  });

  it('a meeting answer carrying its PIN is no-store, on create and on read', async () => {
    const D = await dayAhead(svc, TZ, 2);
    const created = await svc.request('POST', '/meetings', {
      token: alice,
      body: { meetingRoomId: idOf(ids, 'orchid'), title: 'pin', startDateTime: at(D, '09:00'), endDateTime: at(D, '10:00') },
    });
    expect(created.status, created.text).toBe(201);
    noStore(created, 'create');
    const pin = created.body.data.pinCode as string;
    expect(pin).toMatch(/^\d+$/);
    const read = await svc.request('GET', `/meetings/${created.body.data._id}`, { token: alice });
    expect(read.body.data.pinCode).toBe(pin);
    noStore(read, 'read');
  });

  it('/docs: a strict CSP allowing only its own scripts and styles, and every asset it names is served from this origin', async () => {
    const page = await svc.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    everyResponse(page, '/docs');
    expect(page.headers.get('content-security-policy')).toBe(DOCS_CSP);
    expect(DOCS_CSP).toContain("frame-ancestors 'none'");
    expect(DOCS_CSP).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    // No inline script (which 'self' would block): every script has a src.
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const attrs of scripts) expect(attrs).toMatch(/\bsrc="/);
    expect(page.text).not.toMatch(/<style\b|\sstyle="|\son[a-z]+="/);
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    for (const asset of assets) {
      expect(asset, 'same origin').toMatch(/^\/docs\//);
      const res = await svc.request('GET', asset);
      expect(res.status, asset).toBe(200);
      everyResponse(res, asset);
    }
    // What the UI fetches: its initializer names ./json under /docs.
    const json = await svc.request('GET', '/docs/json');
    expect(json.status).toBe(200);
  });

  it('the payment page keeps its own nonce policy, with no-store, no-referrer and DENY', async () => {
    const D = await dayAhead(svc, TZ, 2);
    const portal = (await appToken(svc)).access_token;
    expect(portal).toBeTruthy();
    const p = await seedPaidBooking(svc, {
      projectId: idOf(ids, 'tower'),
      assetKind: 'room',
      assetId: idOf(ids, 'lotus'),
      organizerUserId: idOf(ids, 'alice'),
      appId: idOf(ids, 'portal'),
      title: 'paid',
      start: at(D, '14:00'),
      end: at(D, '15:00'),
      redirectUrl: 'https://app.example/done',
    });
    const url = new URL(p.payment.webPaymentUrl!);
    const page = await svc.request('GET', url.pathname + url.search);
    expect(page.status, page.text).toBe(200);
    everyResponse(page, 'payment page');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'nonce-[^']+'; script-src 'nonce-[^']+'/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe('CORS', () => {
  let closed: TestService;
  let open: TestService;
  const preflight = (svc: TestService, origin: string, path = '/meetings') =>
    svc.request('OPTIONS', path, {
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
  const accessControl = (res: HttpResult) => [...res.headers.keys()].filter((k) => k.startsWith('access-control-'));

  beforeAll(async () => {
    closed = await startTestService();
    open = await startTestService({ env: { CORS_ORIGINS: 'https://app.example.com, https://admin.example.com:8443' } });
  });
  afterAll(async () => {
    await closed?.close();
    await open?.close();
  });

  it('closed by default: a preflight is answered 204 with no allow headers, and no answer names an origin', async () => {
    const res = await preflight(closed, 'https://app.example.com');
    expect(res.status).toBe(204);
    expect(accessControl(res)).toEqual([]);
    everyResponse(res, 'preflight');
    const get = await closed.request('GET', '/healthz', { headers: { origin: 'https://app.example.com' } });
    expect(get.status).toBe(200);
    expect(accessControl(get)).toEqual([]);
  });

  it('an OPTIONS request that is not a preflight is 404 KS005, as any unknown route', async () => {
    const res = await closed.request('OPTIONS', '/meetings');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'KS005', success: false });
  });

  it('an allowed origin gets its preflight answered with methods, headers and max-age, and its origin on answers', async () => {
    for (const origin of ['https://app.example.com', 'https://admin.example.com:8443']) {
      const res = await preflight(open, origin, '/partner/members/x');
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, PATCH, DELETE');
      expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
      expect(res.headers.get('access-control-max-age')).toBe('600');
      expect(res.headers.has('access-control-allow-credentials')).toBe(false);
      expect(res.headers.get('vary')).toMatch(/\borigin\b/i);
    }
    const get = await open.request('GET', '/meetings', { headers: { origin: 'https://app.example.com' } });
    expect(get.status).toBe(401);
    expect(get.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(get.headers.get('access-control-expose-headers')).toBe('location, retry-after');
    expect(get.headers.get('vary')).toMatch(/\borigin\b/i);
    expect(get.headers.has('access-control-allow-credentials')).toBe(false);
  });

  it('an origin not on the list gets nothing, in the preflight or the answer', async () => {
    for (const origin of ['https://evil.example', 'http://app.example.com', 'https://app.example.com:444', 'null']) {
      const res = await preflight(open, origin);
      expect(res.status, origin).toBe(204);
      expect(accessControl(res), origin).toEqual([]);
      const get = await open.request('GET', '/healthz', { headers: { origin } });
      expect(accessControl(get), origin).toEqual([]);
      expect(get.headers.get('vary'), origin).toMatch(/\borigin\b/i);
    }
  });

  it('CORS is for the public API only: the ops surface gets no access-control header, even for an allowed origin', async () => {
    const origin = 'https://app.example.com';
    for (const path of [
      '/ops/v1/apply',
      '/ops/v1/session',
      '/ops/v1/meetings/abc/cancel',
      '/ops/v1/changes',
      '/ops/v1/clock?x=1',
      '/OPS/v1/apply',
      '/ops',
    ]) {
      const res = await preflight(open, origin, path);
      expect(res.status, path).toBe(204);
      expect(accessControl(res), path).toEqual([]);
    }
    const get = await open.request('GET', '/ops/v1/clock', { token: OPS_TOKEN, headers: { origin } });
    expect(get.status).toBe(200);
    expect(accessControl(get)).toEqual([]);
    const refused = await open.request('GET', '/ops/v1/clock', { headers: { origin } });
    expect(refused.status).toBe(401);
    expect(accessControl(refused)).toEqual([]);
    // The public API keeps it.
    expect((await preflight(open, origin, '/meetings')).headers.get('access-control-allow-origin')).toBe(origin);
  });

  it('CORS_ORIGINS refuses a wildcard or a path', async () => {
    const { loadConfig, ConfigError } = await import('../../src/platform/config.js');
    for (const bad of ['*', 'https://app.example.com/path', 'app.example.com', 'ftp://x.example']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(ConfigError);
    }
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example/, https://a.example' }).corsOrigins).toEqual(['https://a.example']);
  });
});
