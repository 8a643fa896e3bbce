/**
 * Opens the database named by DATABASE_URL: PostgreSQL for postgres:// URLs,
 * otherwise an embedded SQLite file. Runs pending migrations before returning.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type pg from 'pg';
import { Kysely, Migrator, sql, type KyselyConfig, type LogEvent, type Migration } from 'kysely';
import { BatchingPostgresDialect, nameStatements } from './pg-driver.js';
import type { Database } from './schema.js';
import { migrations as knownMigrations, providerOf } from './migrations/index.js';
import { databaseUrlError, isConnectFailure } from './connect-error.js';
import { BusyRetrySqliteDialect, busyBackoffMs, SQLITE_BUSY_TIMEOUT_MS } from './sqlite-busy.js';
import { isDatabaseBusy } from './unavailable.js';
import { isPostgresUrl } from '../config.js';

export { SQLITE_BUSY_WAIT_MS } from './sqlite-busy.js';

export type Engine = 'sqlite' | 'postgres';

export interface Storage {
  db: Kysely<Database>;
  engine: Engine;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Names of the migrations this code knows that the database has not run (read from the database; throws when it is unreachable). */
  pendingMigrations(): Promise<string[]>;
  /**
   * Adds a listener told of every statement once it finished (metrics, traces). It runs in
   * the async context of the caller of the statement, so the active request or job is known.
   */
  observeQueries(listener: QueryObserver): void;
  /** What opening the database did to its schema (main.ts logs it). */
  migrations: MigrationReport;
  close(): Promise<void>;
}

/** What `migrate` did: the migrations it applied, and those the database ran that this code does not know. */
export interface MigrationReport {
  /** Applied by this call, in order (empty when the schema was already current). */
  applied: string[];
  /**
   * Run on the database by a newer release (a rolling upgrade: this release serves beside it, since
   * migrations are written expand-then-contract). Non-empty only when every migration this code knows has run.
   */
  unknown: string[];
}

/** One finished statement: its SQL text, how long it took and whether it failed. */
export interface QueryEvent {
  sql: string;
  durationMs: number;
  failed: boolean;
}

export type QueryObserver = (event: QueryEvent) => void;

/** The PostgreSQL client library, loaded only when a PostgreSQL URL is opened (SQLite never holds it). */
async function loadPg(): Promise<typeof pg> {
  const driver = (await import('pg')).default;
  // int8 (bigint) columns hold epoch milliseconds, well inside the safe-integer range.
  driver.types.setTypeParser(20, (v: string) => Number(v));
  // float8 / numeric
  driver.types.setTypeParser(1700, (v: string) => Number(v));
  return driver;
}

export { isPostgresUrl };

export interface StorageOptions {
  /** Called with the SQL text of every statement executed (a statement counter in tests). */
  onQuery?: (sql: string) => void;
  /** PostgreSQL: called with the SQL of every round trip sent (waiting inserts go out together). */
  onRoundTrip?: (sql: string) => void;
  /** The migrations this code knows (default: all of migrations/index.ts; tests pass an older release's subset). */
  migrations?: Readonly<Record<string, Migration>>;
}

/** The statement listeners of one database: the test hook of `StorageOptions.onQuery` and those added by `observeQueries`. */
class QueryListeners {
  readonly list: QueryObserver[] = [];

  constructor(options: StorageOptions) {
    const onQuery = options.onQuery;
    if (onQuery) this.list.push((e) => onQuery(e.sql));
  }

  readonly log: KyselyConfig['log'] = (event: LogEvent) => {
    const list = this.list;
    if (list.length === 0) return;
    const e: QueryEvent = { sql: event.query.sql, durationMs: event.queryDurationMillis, failed: event.level === 'error' };
    for (const l of list) l(e);
  };
}

/** How long opening a SQLite file waits for another process's write lock (its migrations) before giving up. */
const OPEN_BUSY_TIMEOUT_MS = 120_000;

/**
 * Runs an open-time pragma, waiting for other processes' locks. SQLite skips the busy handler in a few
 * cases (another process switching the same new file to WAL at the same moment answers SQLITE_BUSY at
 * once), so a busy answer is retried here after a short pause until OPEN_BUSY_TIMEOUT_MS have passed.
 * A synchronous pause: this runs before anything is served.
 */
function pragmaWhenFree(conn: SqliteDatabase.Database, pragma: string): void {
  const started = performance.now();
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; ; attempt++) {
    try {
      conn.pragma(pragma);
      return;
    } catch (err) {
      if (!isDatabaseBusy(err) || performance.now() - started > OPEN_BUSY_TIMEOUT_MS) throw err;
      Atomics.wait(pause, 0, 0, busyBackoffMs(attempt));
    }
  }
}

function openSqlite(path: string, listeners: QueryListeners): Kysely<Database> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const conn = new SqliteDatabase(path);
  // Switching to WAL needs the database to itself for a moment: another process starting at once may hold its
  // write lock for a while (migrating, under load). Nothing is served yet, so waiting here blocks no request.
  conn.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
  pragmaWhenFree(conn, 'journal_mode = WAL');
  // A few milliseconds: SQLite's busy wait blocks the event loop. Longer waits are retried asynchronously (sqlite-busy.ts).
  conn.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  conn.pragma('foreign_keys = ON');
  conn.pragma('synchronous = NORMAL');
  return new Kysely<Database>({ dialect: new BusyRetrySqliteDialect({ database: withStatementCache(conn) }, conn), log: listeners.log });
}

/** Prepared statements kept per connection, by SQL text (most recently used first out when full). */
export const STATEMENT_CACHE_SIZE = 1000;

/**
 * Kysely's SQLite driver prepares every statement on every execution; preparing is
 * a real share of a request's CPU. This hands it the connection with `prepare`
 * answered from a cache keyed by the SQL text. Statements run to completion
 * synchronously (nothing here streams), so one statement is never in use twice at
 * once, and SQLite re-prepares a cached statement itself after a schema change.
 */
export function withStatementCache(conn: SqliteDatabase.Database, max = STATEMENT_CACHE_SIZE) {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    prepare(sqlText: string): SqliteDatabase.Statement {
      let stmt = cache.get(sqlText);
      if (stmt) {
        cache.delete(sqlText); // most recently used moves to the back
      } else {
        stmt = conn.prepare(sqlText);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
      }
      cache.set(sqlText, stmt);
      return stmt;
    },
    close(): void {
      cache.clear();
      conn.close();
    },
  };
}

async function openPostgres(url: string, options: StorageOptions, listeners: QueryListeners): Promise<Kysely<Database>> {
  const driver = await loadPg();
  const pool = new driver.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 15_000,
  });
  // A client losing its connection must not crash the process: an idle one reports to the pool, one checked out
  // (between statements of a transaction, say) to this listener; the statement in flight fails with the error anyway.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    nameStatements(client);
  });
  return new Kysely<Database>({
    dialect: new BatchingPostgresDialect(pool, driver.escapeLiteral, { onRoundTrip: options.onRoundTrip }),
    log: listeners.log,
  });
}

/** How long a start waits for another instance's migrations (the lock) before it gives up. */
const MIGRATION_LOCK_WAIT_MS = 120_000;

/**
 * Applies the pending migrations, forward only, under a lock so that one instance runs them:
 * PostgreSQL's advisory lock (Kysely's Migrator) and, on SQLite, the write lock of the one
 * BEGIN IMMEDIATE transaction they run in (sqlite-busy.ts), waited for up to MIGRATION_LOCK_WAIT_MS.
 *
 * A database migrated by a newer release (it ran migrations this code does not know) is served
 * as it is when every migration this code knows has run (reported in `unknown`), and refused
 * when one of them is missing: that database was not migrated through this release's schema.
 */
export async function migrate(db: Kysely<Database>, set: Readonly<Record<string, Migration>> = knownMigrations): Promise<MigrationReport> {
  const known = Object.keys(set).sort();
  const newer = await newerDatabase(db, known);
  if (newer) return newer;
  const started = performance.now();
  for (let attempt = 0; ; attempt++) {
    const { error, results } = await new Migrator({ db, provider: providerOf(set) }).migrateToLatest();
    const failed = results?.find((r) => r.status === 'Error');
    if (!error && !failed) {
      return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName), unknown: [] };
    }
    // A newer release may have migrated the database while this start waited for the lock.
    const after = await newerDatabase(db, known).catch(() => null);
    if (after) return after;
    if (isDatabaseBusy(error) && performance.now() - started < MIGRATION_LOCK_WAIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
      continue;
    }
    throw new Error(`migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`, { cause: error });
  }
}

/** The migrations the database has run (none when it has no migration table yet). */
async function executedMigrations(db: Kysely<Database>): Promise<string[]> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    return rows.map((r) => r.name);
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    if (e.code === '42P01' || /no such table/i.test(String(e.message))) return [];
    throw err;
  }
}

/** The report of a database a newer release migrated, null when it ran no migration unknown here; throws when it is not servable. */
async function newerDatabase(db: Kysely<Database>, known: string[]): Promise<MigrationReport | null> {
  const executed = await executedMigrations(db);
  const unknown = executed.filter((name) => !known.includes(name)).sort();
  if (unknown.length === 0) return null;
  const missing = known.filter((name) => !executed.includes(name));
  if (missing.length > 0) {
    throw new Error(
      `refusing to start: the database ran migrations this release does not know (${unknown.join(', ')}) ` +
        `but not all those it knows (missing: ${missing.join(', ')}); start the release that migrated it`,
    );
  }
  return { applied: [], unknown };
}

export async function openStorage(databaseUrl: string, options: StorageOptions = {}): Promise<Storage> {
  const engine: Engine = isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite';
  let db: Kysely<Database>;
  const listeners = new QueryListeners(options);
  const set = options.migrations ?? knownMigrations;
  try {
    db = engine === 'postgres' ? await openPostgres(databaseUrl, options, listeners) : openSqlite(databaseUrl, listeners);
  } catch (err) {
    throw isConnectFailure(err) ? databaseUrlError(databaseUrl, err) : err;
  }
  let report: MigrationReport;
  try {
    report = await migrate(db, set);
  } catch (err) {
    await db.destroy().catch(() => {});
    // The first statement is the first connection: a refused one is DATABASE_URL's fault, and says so.
    const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
    if (!isConnectFailure(cause)) throw err;
    throw databaseUrlError(databaseUrl, cause);
  }
  let closed = false;
  return {
    db,
    engine,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    pendingMigrations: async () => {
      const migrations = await new Migrator({ db, provider: providerOf(set) }).getMigrations();
      return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
    },
    observeQueries: (listener) => {
      listeners.list.push(listener);
    },
    migrations: report,
    close: async () => {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
