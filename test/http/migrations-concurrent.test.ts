/**
 * Migrations run by one instance under a lock: processes started at once on an EMPTY
 * database all succeed, exactly one of them applies the migrations (all of them), and
 * the schema is the one consistent set (each migration recorded once, none pending).
 *
 * On PostgreSQL the lock is Kysely's advisory lock around one transaction; on SQLite it
 * is the write lock of the one BEGIN IMMEDIATE transaction the migrations run in
 * (sqlite-busy.ts). Also: `src/main.ts --migrate-only` from two processes at once, which
 * exits 0 in both, logs `migrations applied` in one, and serves nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { openStorage } from '../../src/platform/db/database.js';
import { migrations } from '../../src/platform/db/migrations/index.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RACER = fileURLToPath(new URL('../support/migrate-process.ts', import.meta.url));
const ALL = Object.keys(migrations).sort();

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `args` under node with tsx; resolves `ready` once it printed "ready" (when `gated`), and `exit` when it exits. */
function start(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const ready = new Promise<void>((resolve) =>
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.startsWith('ready\n')) resolve();
    }),
  );
  const exit = new Promise<Exit>((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, ready, exit };
}

async function expectOneConsistentSchema(database: TestDatabase): Promise<void> {
  const storage = await openStorage(database.url);
  try {
    expect(storage.migrations).toEqual({ applied: [], unknown: [] });
    expect(await storage.pendingMigrations()).toEqual([]);
    const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(storage.db);
    expect(rows.map((r) => r.name)).toEqual(ALL);
    // The newest migration's table is there and usable.
    await sql`select count(*) from face_variants`.execute(storage.db);
  } finally {
    await storage.close();
  }
}

describe(`migrations from several processes at once on an empty database (${TEST_ENGINE})`, () => {
  const databases: TestDatabase[] = [];

  afterEach(async () => {
    for (const d of databases.splice(0)) await d.drop();
  });

  it('released together, all succeed and exactly one applies every migration', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const database = await createTestDatabase();
      databases.push(database);
      const racers = Array.from({ length: 3 }, () => start([RACER], { MIGRATE_PROCESS_DATABASE_URL: database.url }));
      await Promise.all(racers.map((r) => r.ready));
      for (const r of racers) r.child.stdin.end('go\n');
      const exits = await Promise.all(racers.map((r) => r.exit));
      const reports = exits.map((e) => {
        expect(e.code, `${e.stdout}\n${e.stderr}`).toBe(0);
        return JSON.parse(e.stdout.split('\n')[1]!) as { applied: string[]; unknown: string[] };
      });
      const appliers = reports.filter((r) => r.applied.length > 0);
      expect(appliers, JSON.stringify(reports)).toHaveLength(1);
      expect(appliers[0]!.applied).toEqual(ALL);
      await expectOneConsistentSchema(database);
    }
  });

  it('main.ts --migrate-only twice at once: both exit 0, one logs "migrations applied", neither serves', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const env = { DATABASE_URL: database.url, LOG_LEVEL: 'info', PORT: '0', DEMO: '1', BOOKING_ENV: 'development' };
    const exits = await Promise.all(
      [start(['src/main.ts', '--migrate-only'], env), start(['src/main.ts', '--migrate-only'], env)].map((p) => p.exit),
    );
    for (const e of exits) {
      expect(e.code, e.stderr).toBe(0);
      expect(e.stdout).not.toContain('listening on');
    }
    const logged = exits.filter((e) => e.stdout.includes('"msg":"migrations applied"'));
    expect(logged).toHaveLength(1);
    const line = logged[0]!.stdout.split('\n').find((l) => l.includes('"msg":"migrations applied"'))!;
    expect(JSON.parse(line).migrations).toEqual(ALL);
    await expectOneConsistentSchema(database);
    // No demo site was applied.
    const storage = await openStorage(database.url);
    try {
      const { rows } = await sql<{ n: number }>`select count(*) as n from apps`.execute(storage.db);
      expect(Number(rows[0]!.n)).toBe(0);
    } finally {
      await storage.close();
    }
  });
});
