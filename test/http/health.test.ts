import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
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

  it('GET /readyz is 503 with Retry-After while a migration has not run, and ready again once it has', async () => {
    const db = svc.services.storage.db;
    const last = (
      await sql<{ name: string; timestamp: string }>`select name, timestamp from kysely_migration order by name desc limit 1`.execute(db)
    ).rows[0];
    await sql`delete from kysely_migration where name = ${last.name}`.execute(db);
    try {
      const res = await svc.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'KS004', success: false, message: expect.stringMatching(/migration/) });
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      // Liveness is about the process only.
      expect((await svc.request('GET', '/healthz')).status).toBe(200);
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${last.name}, ${last.timestamp})`.execute(db);
    }
    expect((await svc.request('GET', '/readyz')).status).toBe(200);
  });
});
