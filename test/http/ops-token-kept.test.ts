/**
 * development without OPS_TOKEN: the generated ops token survives a restart on the
 * same database (console sessions and scripts keep working); OPS_TOKEN, when set,
 * is the token. The kept token is not stored in plain text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startMainProcess, type MainProcess } from '../support/main-process.js';
import { openStorage } from '../../src/platform/db/database.js';

const SET_TOKEN = 'ops-token-from-env-0123456789abcdef0123456789';

async function start(db: TestDatabase, opsToken: string): Promise<{ svc: MainProcess; printed: string }> {
  // No SECRETS_KEY either: the generated key is kept in the database as well.
  const svc = await startMainProcess({ database: db, opsToken, secretsKey: '', env: { LOG_LEVEL: 'warn' } });
  const printed = /ops token:\s+(.+)/.exec(svc.stdout())![1].trim();
  return { svc, printed };
}

describe('the generated development ops token is kept across restarts', () => {
  let db: TestDatabase;
  let running: MainProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await running?.kill('SIGKILL');
    await db.drop();
  });

  it('a restart prints and accepts the same token; OPS_TOKEN overrides it; unset again, the kept one is back', async () => {
    const first = await start(db, '');
    running = first.svc;
    expect(first.printed).toMatch(/^ops_\S{20,}$/);
    expect((await first.svc.request('GET', '/ops/v1/clock', { token: first.printed })).status).toBe(200);
    await first.svc.kill('SIGTERM');

    const second = await start(db, '');
    running = second.svc;
    expect(second.printed).toBe(first.printed);
    expect((await second.svc.request('GET', '/ops/v1/clock', { token: first.printed })).status).toBe(200);
    expect((await second.svc.request('GET', '/ops/v1/clock', { token: 'ops_wrong' })).status).toBe(401);
    await second.svc.kill('SIGTERM');

    const withEnv = await start(db, SET_TOKEN);
    running = withEnv.svc;
    expect(withEnv.printed).toBe('(from OPS_TOKEN)');
    expect((await withEnv.svc.request('GET', '/ops/v1/clock', { token: SET_TOKEN })).status).toBe(200);
    expect((await withEnv.svc.request('GET', '/ops/v1/clock', { token: first.printed })).status).toBe(401);
    await withEnv.svc.kill('SIGTERM');

    const third = await start(db, '');
    running = third.svc;
    expect(third.printed).toBe(first.printed);
    expect((await third.svc.request('GET', '/ops/v1/clock', { token: third.printed })).status).toBe(200);
    await third.svc.kill('SIGTERM');
    running = undefined;

    // Kept sealed: no stored setting holds the token's text.
    const storage = await openStorage(db.url);
    try {
      const rows = await storage.db.selectFrom('settings').select(['name', 'value']).execute();
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(r.value).not.toContain(first.printed.slice(4));
    } finally {
      await storage.close();
    }
  }, 120_000);
});
