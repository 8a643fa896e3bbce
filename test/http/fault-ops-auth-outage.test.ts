/**
 * The ops guard while PostgreSQL cannot be reached: console sessions and the
 * per-address count of wrong ops tokens live in the database, so a cookie or a
 * Bearer token is then neither accepted nor refused: 503 KS234 with Retry-After,
 * never 401 (which would sign the console out) and never 500. Once the database is
 * back, the same session works again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_TOKEN, startTestService, type HttpResult, type TestService } from '../support/test-service.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/delivery-audit.js';

function expectAuthUnavailable(res: HttpResult, what: string): void {
  expect(res.status, `${what}: ${res.text}`).toBe(503);
  expect(res.body?.code, `${what}: ${res.text}`).toBe('KS234');
  expect(res.body.message).toMatch(/temporarily unavailable/i);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe.runIf(TEST_ENGINE === 'postgres')('ops authentication while the database is down', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let svc: TestService;

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    svc = await startTestService({ database: { url: proxy.rewrite(database.url), drop: async () => undefined } });
  }, 60_000);

  afterAll(async () => {
    await proxy?.up();
    await svc?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('a session cookie and a Bearer token answer 503 KS234 with Retry-After, and the session works again afterwards', async () => {
    const signIn = await svc.request('POST', '/ops/v1/session', { body: { token: OPS_TOKEN } });
    expect(signIn.status, signIn.text).toBe(200);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = signIn.body.data.csrfToken;
    await proxy.down();
    try {
      expectAuthUnavailable(await svc.request('GET', '/ops/v1/site', { headers: { cookie } }), 'cookie read');
      expectAuthUnavailable(await svc.request('GET', '/ops/v1/session', { headers: { cookie } }), 'session');
      expectAuthUnavailable(
        await svc.request('POST', '/ops/v1/meetings/ffffffffffffffffffffffff/cancel', {
          headers: { cookie, 'x-csrf-token': csrf },
          body: {},
        }),
        'cookie write',
      );
      expectAuthUnavailable(await svc.request('DELETE', '/ops/v1/session', { headers: { cookie } }), 'sign-out');
      expectAuthUnavailable(await svc.request('GET', '/ops/v1/site', { token: OPS_TOKEN }), 'right Bearer');
      expectAuthUnavailable(await svc.request('GET', '/ops/v1/site', { token: 'wrong-token' }), 'wrong Bearer');
      expectAuthUnavailable(await svc.request('POST', '/ops/v1/session', { body: { token: OPS_TOKEN } }), 'sign-in');
    } finally {
      await proxy.up();
    }
    await until('ready again', async () => (await svc.request('GET', '/readyz')).status === 200, 15_000, 200);
    expect((await svc.request('GET', '/ops/v1/site', { headers: { cookie } })).status).toBe(200);
    expect((await svc.request('DELETE', '/ops/v1/session', { headers: { cookie } })).status).toBe(204);
    expect((await svc.request('GET', '/ops/v1/site', { headers: { cookie } })).status).toBe(401);
  }, 60_000);
});
