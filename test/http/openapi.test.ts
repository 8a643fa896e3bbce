/** The OpenAPI description and the reference page each environment serves. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';

describe('OpenAPI and reference', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /openapi.json is OpenAPI 3.1.x for interface version 1.15.0', async () => {
    const res = await svc.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body.openapi).toMatch(/^3\.1\.\d+$/);
    expect(res.body.info.version).toBe('1.15.0');
    expect(res.body.info.title).toBeTypeOf('string');
  });

  it('describes the token endpoint and the sandbox clock', async () => {
    const { body } = await svc.request('GET', '/openapi.json');
    expect(Object.keys(body.paths)).toEqual(expect.arrayContaining(['/auth/accessToken', '/ops/v1/clock']));
    expect(body.paths['/auth/accessToken'].post).toBeDefined();
    expect(body.paths['/ops/v1/clock'].get).toBeDefined();
    expect(body.paths['/ops/v1/clock'].post).toBeDefined();
    // The token endpoint answers 201 with a non-enveloped token response.
    const created = body.paths['/auth/accessToken'].post.responses['201'];
    expect(created).toBeDefined();
    const schema = created.content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['access_token', 'expires_in']));
    expect(schema.properties).not.toHaveProperty('token_type');
    expect(schema.properties).not.toHaveProperty('code');
  });

  it('documents that the token endpoint needs no bearer token, and that API routes do', async () => {
    const { body } = await svc.request('GET', '/openapi.json');
    expect(body.paths['/auth/accessToken'].post.security).toEqual([]);
    const revoke = body.paths['/auth/revoke'].post.security ?? body.security;
    expect(revoke).toEqual([{ bearer: [] }]);
    expect(body.paths['/ops/v1/clock'].get.security).toEqual([{ opsToken: [] }]);
  });

  it('is served without a token', async () => {
    const res = await svc.request('GET', '/openapi.json', { token: null });
    expect(res.status).toBe(200);
  });

  it('GET /docs (following redirects) serves an HTML page', async () => {
    const res = await fetch(`${svc.url}/docs`, { redirect: 'follow' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toMatch(/<html/i);
  });
});
