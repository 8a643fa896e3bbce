/**
 * PostgreSQL with fewer round trips. Every statement to PostgreSQL is a network
 * round trip, so this dialect wraps Kysely's Postgres driver with two things:
 *
 * 1. **Named prepared statements.** A parameterized statement runs under a name
 *    derived from its SQL text, so each pooled connection parses and plans it once
 *    (node-postgres sends Bind/Execute only on later runs). A connection names at
 *    most PREPARED_PER_CONNECTION distinct texts; others run unnamed.
 *
 * 2. **Write-behind inserts inside a transaction.** A plain
 *    `insert into "t" (…) values ($1, …)[, (…)]` (every value a parameter, no
 *    `on conflict`, no `returning`) in a transaction is not sent at once: it waits,
 *    and the waiting inserts are sent together as one statement of data-modifying
 *    CTEs just before the transaction's next statement or its commit. Such an
 *    insert either writes all its rows or fails, and a failure aborts the
 *    transaction in PostgreSQL anyway, so the caller learns the same thing, one
 *    statement later: the error surfaces from the next statement (or the commit)
 *    and the transaction rolls back. Foreign keys are checked at the end of the
 *    combined statement, so rows may reference rows inserted beside them.
 *    Inserts outside a transaction, and any other statement, run as before.
 */
import { createHash } from 'node:crypto';
import {
  CompiledQuery,
  PostgresDialect,
  type DatabaseConnection,
  type Driver,
  type PostgresDialectConfig,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';

/** Distinct statement texts a pooled connection keeps prepared. */
export const PREPARED_PER_CONNECTION = 500;
/** PostgreSQL's limit on parameters per statement. */
const MAX_PARAMETERS = 65_535;

/** A plain multi-row VALUES insert whose every value is a parameter. */
const PLAIN_INSERT = /^insert into "[a-z_][a-z0-9_]*" \("[a-z_][a-z0-9_]*"(?:, "[a-z_][a-z0-9_]*")*\) values (\(\$\d+(?:, \$\d+)*\)(?:, \(\$\d+(?:, \$\d+)*\))*)$/;

export interface PgDriverOptions {
  /** Sees the SQL of every round trip actually sent (tests count them). */
  onRoundTrip?: (sql: string) => void;
}

/** Rows of a plain insert, or null when it is not one that may wait. */
export function plainInsertRows(sqlText: string): number | null {
  const m = PLAIN_INSERT.exec(sqlText);
  if (!m) return null;
  return m[1].split('), (').length;
}

/**
 * Inserts combined into one statement: `with w0 as (insert …), w1 as (insert …) select 1`,
 * their parameters renumbered in order.
 */
export function combineInserts(queries: readonly CompiledQuery[]): { sql: string; parameters: unknown[] } {
  const parameters: unknown[] = [];
  const parts = queries.map((q, i) => {
    const offset = parameters.length;
    parameters.push(...q.parameters);
    return `w${i} as (${q.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`;
  });
  return { sql: `with ${parts.join(', ')} select 1`, parameters };
}

class BatchingConnection implements DatabaseConnection {
  inTransaction = false;
  private pending: CompiledQuery[] = [];

  constructor(
    readonly inner: DatabaseConnection,
    private readonly options: PgDriverOptions,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction) {
      const rows = plainInsertRows(query.sql);
      if (rows !== null && query.parameters.length < MAX_PARAMETERS) {
        this.pending.push(query);
        return { numAffectedRows: BigInt(rows), rows: [] };
      }
    }
    await this.flush();
    return this.send<R>(query);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.pending.length > 0) throw new Error('streamQuery inside a transaction with waiting inserts is not supported');
    return this.inner.streamQuery<R>(query, chunkSize);
  }

  /** Sends the waiting inserts (one statement, or a few when parameters run out). */
  async flush(): Promise<void> {
    while (this.pending.length > 0) {
      let n = 0;
      let params = 0;
      while (n < this.pending.length && params + this.pending[n].parameters.length < MAX_PARAMETERS) {
        params += this.pending[n].parameters.length;
        n++;
      }
      const batch = this.pending.splice(0, Math.max(n, 1));
      if (batch.length === 1) {
        await this.send(batch[0]);
      } else {
        const combined = combineInserts(batch);
        await this.send(CompiledQuery.raw(combined.sql, combined.parameters));
      }
    }
  }

  /** Forgets waiting inserts (the transaction is being rolled back). */
  discard(): void {
    this.pending = [];
  }

  private send<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.options.onRoundTrip?.(query.sql);
    return this.inner.executeQuery<R>(query);
  }
}

class BatchingDriver implements Driver {
  private readonly wrappers = new WeakMap<DatabaseConnection, BatchingConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly options: PgDriverOptions,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const conn = await this.inner.acquireConnection();
    let wrapper = this.wrappers.get(conn);
    if (!wrapper) {
      wrapper = new BatchingConnection(conn, this.options);
      this.wrappers.set(conn, wrapper);
    }
    return wrapper;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as BatchingConnection;
    await this.inner.beginTransaction(c, settings);
    c.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as BatchingConnection;
    try {
      await c.flush();
    } finally {
      c.inTransaction = false;
    }
    await this.inner.commitTransaction(c);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as BatchingConnection;
    c.discard();
    c.inTransaction = false;
    await this.inner.rollbackTransaction(c);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as BatchingConnection;
    c.discard();
    c.inTransaction = false;
    await this.inner.releaseConnection(c.inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** Kysely's Postgres dialect with named prepared statements and write-behind inserts in transactions. */
export class BatchingPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly options: PgDriverOptions = {},
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new BatchingDriver(super.createDriver(), this.options);
  }
}

const NAMED = Symbol('named statements');
type NamingClient = pg.PoolClient & { [NAMED]?: Set<string> };

/**
 * Makes a pooled client run parameterized statements as named prepared
 * statements (once per client and text), up to PREPARED_PER_CONNECTION texts.
 */
export function nameStatements(client: pg.PoolClient): void {
  const c = client as NamingClient;
  if (c[NAMED]) return;
  const names = new Set<string>();
  c[NAMED] = names;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined) {
      const name = 's' + createHash('sha1').update(text).digest('base64url');
      if (names.has(name) || names.size < PREPARED_PER_CONNECTION) {
        names.add(name);
        return query({ name, text, values });
      }
    }
    return query(text, values, callback);
  };
}
