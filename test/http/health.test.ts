import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';

describe('health and readiness', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /healthz answers without a token', async () => {
    const res = await svc.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ code: 'KS000', success: true, message: expect.any(String), data: { status: 'ok' } });
  });

  it('GET /readyz checks the database', async () => {
    const res = await svc.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('ready');
  });
});
