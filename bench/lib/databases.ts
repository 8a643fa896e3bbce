/**
 * Throwaway databases for the bench subjects, made and dropped by the parent
 * process (so a crashed child never leaves one behind):
 * - SQLite: a file in a fresh temp directory, removed afterwards;
 * - PostgreSQL: a fresh database on BENCH_PG_ADMIN_URL (default
 *   postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards (WITH FORCE).
 * BENCH_DATABASE_URL names an existing, empty database to use instead for its
 * engine (it is left in place).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { withPgAdmin } from '../../test/support/test-database.js';

export type Engine = 'sqlite' | 'postgres';

export interface BenchDatabase {
  engine: Engine;
  url: string;
  /** Where it lives, for the report (no credentials). */
  where: string;
  /**
   * PostgreSQL on this machine: the CPU time (ms) used so far by the server
   * processes connected to this database (its backends, from /proc), or undefined
   * where it cannot be read. Background processes shared by every database (WAL
   * writer, checkpointer) are not counted.
   */
  serverCpuMs?(): Promise<number | undefined>;
  drop(): Promise<void>;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process, in ms (Linux /proc; clock ticks of 10 ms). */
function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

async function backendsCpuMs(adminUrl: string, database: string): Promise<number | undefined> {
  if (process.platform !== 'linux') return undefined;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    );
    let total = 0;
    for (const r of rows) {
      const ms = processCpuMs(r.pid);
      if (ms === undefined) return undefined;
      total += ms;
    }
    return total;
  } finally {
    await client.end();
  }
}

const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const isPostgres = (url: string) => /^postgres(ql)?:\/\//.test(url);

/** BENCH_ENGINES (comma-separated), else the engine of BENCH_DATABASE_URL, else SQLite. */
export function benchEngines(): Engine[] {
  const listed = (process.env.BENCH_ENGINES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!listed.length) return [process.env.BENCH_DATABASE_URL && isPostgres(process.env.BENCH_DATABASE_URL) ? 'postgres' : 'sqlite'];
  for (const e of listed) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`BENCH_ENGINES: unknown engine ${e} (sqlite, postgres)`);
  return [...new Set(listed)] as Engine[];
}

/** A temp directory removed by the returned function. */
export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `o.throwaway`: a new database even when BENCH_DATABASE_URL names one (a second party on the same server). */
export async function createBenchDatabase(engine: Engine, o: { throwaway?: boolean } = {}): Promise<BenchDatabase> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given && !o.throwaway && isPostgres(given) === (engine === 'postgres')) {
    const name = engine === 'postgres' ? new URL(given).pathname.slice(1) : given;
    return {
      engine,
      url: given,
      where: `${name} (BENCH_DATABASE_URL, kept)`,
      drop: async () => undefined,
      ...(engine === 'postgres' ? { serverCpuMs: () => backendsCpuMs(given, name) } : {}),
    };
  }
  if (engine === 'postgres') {
    const name = `booking_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    await withPgAdmin(ADMIN_URL, (c) => c.query(`CREATE DATABASE ${name}`));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    let dropped = false;
    return {
      engine,
      url: url.toString(),
      where: `throwaway database ${name} on ${url.host}`,
      serverCpuMs: () => backendsCpuMs(ADMIN_URL, name),
      drop: async () => {
        if (dropped) return;
        dropped = true;
        await withPgAdmin(ADMIN_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      },
    };
  }
  const tmp = tempDir('booking-bench-db-');
  return { engine, url: join(tmp.dir, 'bench.sqlite'), where: `throwaway SQLite file in ${tmp.dir}`, drop: async () => tmp.remove() };
}
