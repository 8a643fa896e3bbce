/**
 * Opens the database named by DATABASE_URL: PostgreSQL for postgres:// URLs,
 * otherwise an embedded SQLite file. Runs pending migrations before returning.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type pg from 'pg';
import { Kysely, Migrator, sql, type KyselyConfig, type LogEvent } from 'kysely';
import { BatchingPostgresDialect, nameStatements } from './pg-driver.js';
import type { Database } from './schema.js';
import { migrationProvider } from './migrations/index.js';
import { databaseUrlError, isConnectFailure } from './connect-error.js';
import { BusyRetrySqliteDialect, SQLITE_BUSY_TIMEOUT_MS } from './sqlite-busy.js';

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
  close(): Promise<void>;
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

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

export interface StorageOptions {
  /** Called with the SQL text of every statement executed (a statement counter in tests). */
  onQuery?: (sql: string) => void;
  /** PostgreSQL: called with the SQL of every round trip sent (waiting inserts go out together). */
  onRoundTrip?: (sql: string) => void;
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

function openSqlite(path: string, listeners: QueryListeners): Kysely<Database> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const conn = new SqliteDatabase(path);
  conn.pragma('journal_mode = WAL');
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

export async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`, { cause: error });
  }
}

export async function openStorage(databaseUrl: string, options: StorageOptions = {}): Promise<Storage> {
  const engine: Engine = isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite';
  let db: Kysely<Database>;
  const listeners = new QueryListeners(options);
  try {
    db = engine === 'postgres' ? await openPostgres(databaseUrl, options, listeners) : openSqlite(databaseUrl, listeners);
  } catch (err) {
    throw isConnectFailure(err) ? databaseUrlError(databaseUrl, err) : err;
  }
  try {
    await migrate(db);
  } catch (err) {
    // The first statement is the first connection: a refused one is DATABASE_URL's fault, and says so.
    const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
    if (!isConnectFailure(cause)) throw err;
    await db.destroy().catch(() => {});
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
      const migrations = await new Migrator({ db, provider: migrationProvider }).getMigrations();
      return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
    },
    observeQueries: (listener) => {
      listeners.list.push(listener);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
