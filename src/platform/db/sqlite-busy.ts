/**
 * Waiting for another connection's SQLite write lock without blocking the event
 * loop. better-sqlite3 runs SQLite's busy handler synchronously: with a long
 * `busy_timeout` the whole process (health probes included) stops while another
 * process holds the lock. So the connection's own busy timeout is a few
 * milliseconds (SQLITE_BUSY_TIMEOUT_MS), and a statement that still meets
 * SQLITE_BUSY is retried here after an asynchronous backoff (setTimeout, 5 ms
 * doubling to 100 ms), until SQLITE_BUSY_WAIT_MS have passed; then the
 * SQLITE_BUSY error surfaces, which the error mapping answers 503 with
 * Retry-After.
 *
 * Only a statement that ran outside any transaction is retried: an autocommit
 * statement or the `BEGIN IMMEDIATE` that opens one (either failed whole, so
 * running it again is safe). A statement inside a transaction is never retried.
 * That is why a Kysely `transaction()` begins with `BEGIN IMMEDIATE` here: it
 * takes the write lock up front (waited for as above) instead of meeting
 * SQLITE_BUSY in the middle of the transaction. While a statement waits it holds
 * the single connection, so this process's other statements wait behind it (the
 * event loop does not).
 */
import type SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDialect,
  type DialectAdapter,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';
import { isDatabaseBusy } from './unavailable.js';

/** SQLite's own (synchronous) busy wait per attempt. */
export const SQLITE_BUSY_TIMEOUT_MS = 5;
/** The most a statement waits in all for another connection's write lock before SQLITE_BUSY is answered (503). */
export const SQLITE_BUSY_WAIT_MS = 5000;

/** Delay before retry number `attempt` (0-based): 5 ms doubling, at most 100 ms. */
export function busyBackoffMs(attempt: number): number {
  return Math.min(100, 5 * 2 ** Math.min(attempt, 5));
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

class RetryingConnection implements DatabaseConnection {
  constructor(
    private readonly inner: DatabaseConnection,
    private readonly raw: SqliteDatabase.Database,
    private readonly waitMs: number,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      const inTransaction = this.raw.inTransaction;
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (err) {
        const left = this.waitMs - (performance.now() - started);
        if (inTransaction || left <= 0 || !isDatabaseBusy(err)) throw err;
        await delay(Math.min(busyBackoffMs(attempt), left));
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class RetryingDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, RetryingConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly raw: SqliteDatabase.Database,
    private readonly waitMs: number,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const conn = await this.inner.acquireConnection();
    let wrapped = this.wrapped.get(conn);
    if (!wrapped) {
      wrapped = new RetryingConnection(conn, this.raw, this.waitMs);
      this.wrapped.set(conn, wrapped);
    }
    return wrapped;
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  savepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    return this.inner.savepoint!(connection, name, compile);
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['savepoint']>>[2],
  ): Promise<void> {
    return this.inner.rollbackToSavepoint!(connection, name, compile);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    return this.inner.releaseSavepoint!(connection, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(this.unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  private unwrap(connection: DatabaseConnection): DatabaseConnection {
    return connection instanceof RetryingConnection ? (connection as unknown as { inner: DatabaseConnection }).inner : connection;
  }
}

/** Kysely's SQLite dialect whose statements wait for another connection's write lock asynchronously (see above). */
export class BusyRetrySqliteDialect extends SqliteDialect {
  constructor(
    config: SqliteDialectConfig,
    private readonly raw: SqliteDatabase.Database,
    private readonly waitMs = SQLITE_BUSY_WAIT_MS,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new RetryingDriver(super.createDriver(), this.raw, this.waitMs);
  }

  override createAdapter(): DialectAdapter {
    return new MigrationLockingSqliteAdapter();
  }
}

/**
 * SQLite's DDL is transactional: saying so makes Kysely's Migrator run the pending migrations,
 * and its reading of which have run, in one transaction, which begins with BEGIN IMMEDIATE here.
 * The write lock is then the migration lock across processes: a second instance starting at
 * once waits for it, then finds the migrations done (Kysely's own SQLite lock is a no-op).
 */
class MigrationLockingSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}
