/**
 * Error envelope and error mapping over real HTTP: malformed bodies, wrong media
 * types, oversized bodies, unknown routes, internal faults and validation messages.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { expectError } from '../support/fixtures.js';

const SECRET_TEXT = 'postgres://admin:hunter2-SECRET-PASSWORD@db.internal:5432/booking';

function expectNoLeak(text: string): void {
  expect(text).not.toContain('hunter2');
  expect(text).not.toContain('SECRET-PASSWORD');
  expect(text).not.toContain('db.internal');
  // No stack frames.
  expect(text).not.toMatch(/\bat .+\(.*:\d+:\d+\)/);
  expect(text).not.toMatch(/\.ts:\d+/);
  expect(text).not.toContain('"stack"');
}

describe('error envelope', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { BODY_LIMIT_BYTES: '2048' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  describe('request bodies', () => {
    it('malformed JSON → 400 KS001 with an array message', async () => {
      const res = await svc.request('POST', '/auth/accessToken', {
        raw: '{"grant_type": "app_credentials", "app_id": ',
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'KS001');
    });

    it('malformed JSON on an ops route → 400 KS001 (after auth)', async () => {
      const res = await svc.request('POST', '/ops/v1/clock', {
        raw: '{advanceMinutes: 5}',
        token: 'test-ops-token-0123456789abcdef0123456789',
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'KS001');
    });

    it('empty JSON body where a body is required → 400 KS001 "body must be a JSON object"', async () => {
      for (const raw of ['', '  \n']) {
        const res = await svc.request('POST', '/auth/accessToken', { raw, headers: { 'content-type': 'application/json' } });
        expectError(res, 400, 'KS001');
        expect(res.body.message).toEqual(['body must be a JSON object']);
      }
    });

    it('wrong content type (text/plain) to a JSON route → 415 enveloped', async () => {
      const res = await svc.request('POST', '/auth/accessToken', {
        raw: JSON.stringify({ grant_type: 'app_credentials', app_id: 'x', app_secret: 'y' }),
        headers: { 'content-type': 'text/plain' },
      });
      expect(res.status, res.text).toBe(415);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'message', 'success']);
      expect(res.body.success).toBe(false);
      expect(res.body.code).toMatch(/^KS\d{3}$/);
    });

    it('an unsupported content type (application/xml) → 415 enveloped', async () => {
      const res = await svc.request('POST', '/auth/accessToken', {
        raw: '<grant/>',
        headers: { 'content-type': 'application/xml' },
      });
      expect(res.status, res.text).toBe(415);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'message', 'success']);
      expect(res.body.success).toBe(false);
    });

    it("oversized body (over the token endpoint's few KB) → 413 enveloped", async () => {
      const res = await svc.request('POST', '/auth/accessToken', {
        body: { grant_type: 'app_credentials', app_id: 'x', app_secret: 'y'.repeat(16 * 1024) },
      });
      expect(res.status, res.text).toBe(413);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'message', 'success']);
      expect(res.body.success).toBe(false);
      expect(res.body.code).toMatch(/^KS\d{3}$/);
    });

    it('a body just under the limit is accepted by the parser', async () => {
      const res = await svc.request('POST', '/auth/accessToken', {
        body: { grant_type: 'app_credentials', app_id: 'x', app_secret: 'y'.repeat(1500) },
      });
      // Parsed and processed: unknown app → 401, not 413.
      expectError(res, 401, 'KS002');
    });
  });

  describe('routing', () => {
    it('unknown route → 404 KS005 enveloped', async () => {
      const res = await svc.request('GET', '/no/such/route');
      expectError(res, 404, 'KS005');
    });

    it('unknown method on a known path → 404 KS005 enveloped', async () => {
      const res = await svc.request('DELETE', '/healthz');
      expectError(res, 404, 'KS005');
    });

    it('unknown ops route with the ops token → 404 KS005', async () => {
      const res = await svc.ops('GET', '/ops/v1/no-such-thing');
      expectError(res, 404, 'KS005');
    });
  });

  describe('internal faults never leak details', () => {
    const restore: (() => void)[] = [];
    afterEach(() => {
      while (restore.length) restore.pop()!();
    });

    it('readiness with a failing database → 5xx KS004 without the error text or a stack', async () => {
      const storage = svc.services.storage;
      const original = storage.ping;
      storage.ping = async () => {
        throw new Error(`could not connect to ${SECRET_TEXT}`);
      };
      restore.push(() => {
        storage.ping = original;
      });
      const res = await svc.request('GET', '/readyz');
      expect(res.status).toBeGreaterThanOrEqual(500);
      expectError(res, res.status, 'KS004');
      expectNoLeak(res.text);
    });

    it('an unexpected exception in a handler → 500 KS004 "internal", no error text, no stack', async () => {
      const settings = svc.services.settings;
      const originalGet = settings.get;
      const originalSet = settings.set;
      settings.get = async () => {
        throw new Error(`boom reading ${SECRET_TEXT}`);
      };
      settings.set = async () => {
        throw new Error(`boom writing ${SECRET_TEXT}`);
      };
      restore.push(() => {
        settings.get = originalGet;
        settings.set = originalSet;
      });
      const get = await svc.ops('GET', '/ops/v1/clock');
      expectError(get, 500, 'KS004');
      expectNoLeak(get.text);
      const post = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 1 });
      expectError(post, 500, 'KS004');
      expectNoLeak(post.text);
    });

    it('a thrown non-Error value → 500 KS004', async () => {
      const storage = svc.services.storage;
      const settings = svc.services.settings;
      const original = settings.get;
      settings.get = async () => {
        throw { secret: SECRET_TEXT };
      };
      restore.push(() => {
        settings.get = original;
      });
      const res = await svc.ops('GET', '/ops/v1/clock');
      expectError(res, 500, 'KS004');
      expectNoLeak(res.text);
      // The service still works afterwards.
      restore.pop()!();
      expect((await svc.ops('GET', '/ops/v1/clock')).status).toBe(200);
      expect(storage).toBeDefined();
    });
  });

  describe('validation messages', () => {
    it('one message per violated constraint: advanceMinutes -5 plus an unknown field → two messages', async () => {
      const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: -5, bogus: true });
      expectError(res, 400, 'KS001');
      expect(res.body.message).toHaveLength(2);
      expect(res.body.message.some((m: string) => m.includes('advanceMinutes'))).toBe(true);
      expect(res.body.message.some((m: string) => m.includes('bogus'))).toBe(true);
    });

    it('wrong types on two fields → two messages', async () => {
      const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 'soon', set: 'yesterday' });
      expectError(res, 400, 'KS001');
      expect(res.body.message).toHaveLength(2);
      expect(res.body.message.some((m: string) => m.includes('advanceMinutes'))).toBe(true);
      expect(res.body.message.some((m: string) => m.includes('set'))).toBe(true);
    });

    it('both advanceMinutes and set → 400 KS001 with an array message', async () => {
      const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 5, set: new Date(Date.now() + 3_600_000).toISOString() });
      expectError(res, 400, 'KS001');
    });

    it('token endpoint: two missing fields → two messages naming them', async () => {
      const res = await svc.request('POST', '/auth/accessToken', { body: { grant_type: 'app_credentials' } });
      expectError(res, 400, 'KS001');
      expect(res.body.message).toHaveLength(2);
      expect(res.body.message.some((m: string) => m.includes('app_id'))).toBe(true);
      expect(res.body.message.some((m: string) => m.includes('app_secret'))).toBe(true);
    });

    it('token endpoint: missing grant_type → 400 KS001', async () => {
      const res = await svc.request('POST', '/auth/accessToken', { body: { app_id: 'a', app_secret: 'b' } });
      expectError(res, 400, 'KS001');
      expect(res.body.message.some((m: string) => m.includes('grant_type'))).toBe(true);
    });

    it('a JSON array body where an object is expected → 400 KS001', async () => {
      const res = await svc.request('POST', '/auth/accessToken', { body: [1, 2, 3] });
      expectError(res, 400, 'KS001');
    });
  });

  describe('auth errors on the ops surface', () => {
    it('401 KS002 bodies carry exactly code/success/message', async () => {
      const res = await svc.request('GET', '/ops/v1/clock');
      expectError(res, 401, 'KS002');
      expect(res.body.message).toBeTypeOf('string');
    });
  });
});
