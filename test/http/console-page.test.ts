/** /console: the HTML shell under the strict console policy, its assets, and a clear message when it was not built. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { consoleRoutes } from '../../src/modules/console/routes.js';
import { securityHeaders } from '../../src/platform/http/security-headers.js';
import { buildConsole } from '../../scripts/build-console.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('/console', () => {
  let svc: TestService;
  beforeAll(async () => {
    await buildConsole();
    svc = await startTestService();
  });
  afterAll(async () => svc?.close());

  it('serves the shell with a policy that allows nothing inline, and the bundle from /console/assets', async () => {
    const page = await svc.request('GET', '/console', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.text).not.toMatch(/<script>|<style>| style=/);
    const js = await svc.request('GET', '/console/assets/console.js', { token: null });
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.text.length).toBeLessThan(150 * 1024);
    expect((await svc.request('GET', '/console/assets/..%2Findex.html', { token: null })).status).toBe(404);
    expect((await svc.request('GET', '/console/assets/nope.js', { token: null })).status).toBe(404);
  });

  it('says it is not built (503) instead of a blank page', async () => {
    const app = Fastify();
    app.addHook('onSend', securityHeaders());
    await consoleRoutes(app as never, `${mkdtempSync(`${tmpdir()}/console-`)}/`);
    const res = await app.inject({ method: 'GET', url: '/console' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build:console');
    await app.close();
  });
});
