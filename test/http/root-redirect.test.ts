/** The service's root address sends a browser to the API reference. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';

describe('GET /', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('answers 302 to /docs, without a token', async () => {
    const res = await fetch(`${svc.url}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/docs');
  });

  it('followed, it ends on the HTML reference page', async () => {
    const res = await fetch(`${svc.url}/`, { redirect: 'follow' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('HEAD / redirects too; an unknown path still answers the 404 envelope', async () => {
    const head = await fetch(`${svc.url}/`, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(302);
    const missing = await svc.request('GET', '/no-such-page');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ success: false, code: 'KS005' });
  });
});
