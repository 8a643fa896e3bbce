/**
 * Throwaway databases for the bench subjects, made and dropped by the parent
 * process (so a crashed child never leaves one behind):
 * - SQLite: a file in a fresh temp directory, removed afterwards;
 * - PostgreSQL: a fresh database on BENCH_PG_ADMIN_URL (default
 *   postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards (WITH FORCE).
 * BENCH_DATABASE_URL names an existing, empty database to use instead for its
 * engine (it is left in place).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type Engine = 'sqlite' | 'postgres';

export interface BenchDatabase {
  engine: Engine;
  url: string;
  /** Where it lives, for the report (no credentials). */
  where: string;
  drop(): Promise<void>;
}

const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const isPostgres = (url: string) => /^postgres(ql)?:\/\//.test(url);

/** BENCH_ENGINES (comma-separated), else the engine of BENCH_DATABASE_URL, else SQLite. */
export function benchEngines(): Engine[] {
  const listed = (process.env.BENCH_ENGINES ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (!listed.length) return [process.env.BENCH_DATABASE_URL && isPostgres(process.env.BENCH_DATABASE_URL) ? 'postgres' : 'sqlite'];
  for (const e of listed) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`BENCH_ENGINES: unknown engine ${e} (sqlite, postgres)`);
  return [...new Set(listed)] as Engine[];
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A temp directory removed by the returned function. */
export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function createBenchDatabase(engine: Engine): Promise<BenchDatabase> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given && isPostgres(given) === (engine === 'postgres')) {
    return { engine, url: given, where: `${engine === 'postgres' ? new URL(given).pathname.slice(1) : given} (BENCH_DATABASE_URL, kept)`, drop: async () => undefined };
  }
  if (engine === 'postgres') {
    const name = `booking_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    let dropped = false;
    return {
      engine, url: url.toString(), where: `throwaway database ${name} on ${url.host}`,
      drop: async () => {
        if (dropped) return;
        dropped = true;
        await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      },
    };
  }
  const tmp = tempDir('booking-bench-db-');
  return { engine, url: join(tmp.dir, 'bench.sqlite'), where: `throwaway SQLite file in ${tmp.dir}`, drop: async () => tmp.remove() };
}
