/**
 * Errors raised before any route runs — by the router (a bad percent-escape, an
 * overlong path parameter) or by Node's HTTP parser (headers or URL over the size
 * limit) — leave with the error envelope like every other error. Found by the
 * route fuzzer (test/http/fuzz.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { OPS_TOKEN, startTestService, type TestService } from '../support/test-service.js';
import { expectError } from '../support/fixtures.js';

describe('framework errors get the envelope', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a bad percent-escape in the path: 400 KS001', async () => {
    const res = await svc.request('GET', '/ops/v1/devices/%ZZ', { token: OPS_TOKEN });
    expectError(res, 400, 'KS001');
    expect(res.body.message).toEqual(['the URL path is not validly percent-encoded']);
  });

  it('a path parameter over the router limit: 414 KS001', async () => {
    const res = await svc.request('GET', `/desks/${'a'.repeat(600)}`, { token: OPS_TOKEN });
    expectError(res, 414, 'KS001');
    expect(res.text).not.toContain('aaaa');
  });

  it('a URL over the header size limit: 431 KS001', async () => {
    const res = await svc.request('GET', `/meetings?x=${'x'.repeat(100 * 1024)}`);
    expectError(res, 431, 'KS001');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('an authorization header over the limit: 431 KS001', async () => {
    const res = await svc.request('POST', '/auth/revoke', { headers: { authorization: `Bearer ${'a'.repeat(100 * 1024)}` } });
    expectError(res, 431, 'KS001');
  });

  it('a request that is not HTTP: 400 KS001', async () => {
    const { port } = new URL(svc.url);
    const text = await new Promise<string>((resolve, reject) => {
      let out = '';
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      socket.on('data', (d) => (out += d.toString()));
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ code: 'KS001', success: false, message: ['the request is not valid HTTP'] });
  });
});
