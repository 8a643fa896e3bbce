/**
 * Throwaway databases for tests. TEST_DATABASE=postgres runs the suite on
 * PostgreSQL (a fresh database per call, dropped afterwards); otherwise each call
 * gets its own SQLite file in a temp directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
const ADMIN_URL = process.env.TEST_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Runs `fn` with a client on an administrative database (create and drop databases there). */
export async function withPgAdmin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (TEST_ENGINE === 'postgres') {
    const name = `booking_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
    await withPgAdmin(ADMIN_URL, (c) => c.query(`CREATE DATABASE ${name}`));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      drop: () => withPgAdmin(ADMIN_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'booking-test-'));
  return {
    url: join(dir, 'booking.sqlite'),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
