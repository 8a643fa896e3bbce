/**
 * PostgreSQL with fewer round trips. Every statement to PostgreSQL is a network
 * round trip, so this driver (Kysely's driver contract over a pg pool) does three
 * things:
 *
 * 1. **Named prepared statements.** A parameterized statement runs under a name
 *    derived from its SQL text, so each pooled connection parses and plans it once
 *    (node-postgres sends Bind/Execute only on later runs). A connection names at
 *    most PREPARED_PER_CONNECTION distinct texts; others run unnamed.
 *
 * 2. **Write-behind inserts inside a transaction.** A plain
 *    `insert into "t" (…) values ($1, …)[, (…)]` (every value a parameter, no
 *    `on conflict`, no `returning`) in a transaction is not sent at once: it
 *    waits, and the waiting inserts go out together as one statement of
 *    data-modifying CTEs with the transaction's next statement or its commit.
 *    Such an insert either writes all its rows or fails, and a failure aborts the
 *    transaction in PostgreSQL anyway, so the caller learns the same thing one
 *    statement later: the error surfaces from the next statement (or the commit)
 *    and the transaction rolls back. Foreign keys are checked at the end of the
 *    combined statement, so rows may reference rows inserted beside them.
 *
 * 3. **`begin` rides with the first statement.** A transaction's `begin`, its
 *    waiting inserts and the statement that needs them are sent as one message of
 *    the simple query protocol when their parameters can be written as literals
 *    (strings escaped by pg's `escapeLiteral`, numbers and nulls, each where
 *    PostgreSQL types it from the other side); otherwise they go one by one as
 *    before. A create is then 6 round trips instead of 16 statements.
 *
 * 4. **A lock taken first rides too.** A transaction whose first statement is
 *    a row lock in the form `withAssetLock` issues
 *    (`select id from "t" where id = $1 for update`, whose rows nobody reads) sends
 *    it with `begin` and the next statement, so `begin`, the lock and the
 *    conflict read under it are one round trip. The lock is still taken before
 *    that statement runs (statements of one message run in order).
 *
 * Inserts outside a transaction, and any other statement, run as before.
 */
import { createHash } from 'node:crypto';
import { CompiledQuery, PostgresDialect, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type pg from 'pg';

/** Distinct statement texts a pooled connection keeps prepared. */
export const PREPARED_PER_CONNECTION = 500;
/** PostgreSQL's limit on parameters per statement. */
const MAX_PARAMETERS = 65_535;
/**
 * Largest insert (in parameters) that waits. A bulk insert (a site apply's
 * multi-row chunk) is worth its own round trip and runs at once: written out as
 * literals and combined with others it would cost the event loop and the server's
 * parser far more than the round trip it saves.
 */
export const WAIT_MAX_PARAMETERS = 2_000;

/** The row lock `withAssetLock` takes as a transaction's first statement (see 4. above): its rows are not read. */
export const ROW_LOCK = /^select id from "[a-z_]+" where id = \$1 for update$/;

/** A plain multi-row VALUES insert whose every value is a parameter. */
const PLAIN_INSERT =
  /^insert into "[a-z_][a-z0-9_]*" \("[a-z_][a-z0-9_]*"(?:, "[a-z_][a-z0-9_]*")*\) values (\(\$\d+(?:, \$\d+)*\)(?:, \(\$\d+(?:, \$\d+)*\))*)$/;

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

/** A value as an SQL literal of unknown type (PostgreSQL coerces it as it would a parameter), or null when it has none. */
function literalOf(value: unknown, escapeLiteral: (s: string) => string): string | null {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return value.includes('\0') ? null : escapeLiteral(value);
  if (typeof value === 'bigint') return `'${value}'`;
  if (typeof value === 'number' && Number.isFinite(value) && /^-?\d+(\.\d+)?$/.test(String(value))) return `'${value}'`;
  return null;
}

/**
 * The statement with its parameters written in as literals, for the simple query
 * protocol, or null when that is not plainly safe: the text must hold no string
 * literal or comment, and every parameter must stand where PostgreSQL takes its
 * type from the other side (a comparison, a list, a VALUES row, LIMIT/OFFSET).
 */
export function inlineParameters(sqlText: string, parameters: readonly unknown[], escapeLiteral: (s: string) => string): string | null {
  if (/'|--|\/\*|\$\$/.test(sqlText)) return null;
  let ok = true;
  const text = sqlText.replace(/\$(\d+)/g, (_, n: string, offset: number) => {
    const before = sqlText
      .slice(Math.max(0, offset - 8), offset)
      .trimEnd()
      .toLowerCase();
    if (!/(=|<|>|\(|,|\blimit|\boffset)$/.test(before)) ok = false;
    const literal = literalOf(parameters[Number(n) - 1], escapeLiteral);
    if (literal === null) ok = false;
    return literal ?? '';
  });
  return ok ? text : null;
}

class PgConnection implements DatabaseConnection {
  inTransaction = false;
  /** `begin` not yet sent: it goes out with the transaction's first statement. */
  private beginPending = false;
  /** The row lock taken as the transaction's first statement, not yet sent. */
  private lockPending: CompiledQuery | null = null;
  private pending: CompiledQuery[] = [];

  constructor(
    readonly client: pg.PoolClient,
    private readonly options: PgDriverOptions,
    private readonly escapeLiteral: (s: string) => string,
  ) {}

  private begin(): void {
    this.inTransaction = true;
    this.beginPending = true;
    this.lockPending = null;
    this.pending = [];
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Transaction control comes through here too (so statement logs still see it), and is handled here.
    if (query.parameters.length === 0) {
      if (query.sql === 'begin') {
        this.begin();
        return { rows: [] };
      }
      if (query.sql === 'commit' && this.inTransaction) {
        await this.commit();
        return { rows: [] };
      }
      if (query.sql === 'rollback' && this.inTransaction) {
        await this.rollback();
        return { rows: [] };
      }
    }
    if (this.beginPending && this.lockPending === null && this.pending.length === 0 && ROW_LOCK.test(query.sql)) {
      this.lockPending = query;
      return { rows: [] };
    }
    if (this.inTransaction) {
      const rows = plainInsertRows(query.sql);
      if (rows !== null && query.parameters.length <= WAIT_MAX_PARAMETERS) {
        this.pending.push(query);
        return { numAffectedRows: BigInt(rows), rows: [] };
      }
    }
    return this.withWaiting<R>(query);
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries is not supported');
  }

  private async commit(): Promise<void> {
    try {
      // A transaction that ran nothing costs no round trip.
      if (this.beginPending && this.pending.length === 0) return;
      await this.withWaiting(CompiledQuery.raw('commit'));
    } finally {
      this.reset();
    }
  }

  private async rollback(): Promise<void> {
    const sent = !this.beginPending;
    this.reset();
    if (sent) await this.run(CompiledQuery.raw('rollback'));
  }

  reset(): void {
    this.inTransaction = false;
    this.beginPending = false;
    this.lockPending = null;
    this.pending = [];
  }

  /**
   * Runs `query` after what waits (a `begin`, plain inserts): in one round trip
   * of the simple query protocol when every part can be written with literals,
   * else one round trip each.
   */
  private async withWaiting<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.beginPending && this.pending.length === 0) return this.run<R>(query);
    const parts: string[] = this.beginPending ? ['begin'] : [];
    const lock = this.lockPending;
    const inserts = this.waitingStatements();
    const before = lock ? [lock, ...inserts] : inserts;
    // A bulk statement keeps its parameters (see WAIT_MAX_PARAMETERS): what waits goes out before it, one by one.
    const texts =
      query.parameters.length > WAIT_MAX_PARAMETERS
        ? [null]
        : [...before, query].map((q) => inlineParameters(q.sql, q.parameters, this.escapeLiteral));
    this.beginPending = false;
    this.lockPending = null;
    this.pending = [];
    if (texts.every((t) => t !== null)) {
      const text = [...parts, ...texts].join(';\n');
      this.options.onRoundTrip?.(text);
      const results = (await this.client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
      return resultOf<R>(Array.isArray(results) ? results[results.length - 1] : results);
    }
    if (parts.length > 0) await this.run(CompiledQuery.raw('begin'));
    for (const q of before) await this.run(q);
    return this.run<R>(query);
  }

  /** The waiting inserts as statements to send: one combined statement per group that fits PostgreSQL's parameter limit. */
  private waitingStatements(): CompiledQuery[] {
    return this.groups().map((group) => {
      if (group.length === 1) return group[0];
      const combined = combineInserts(group);
      return CompiledQuery.raw(combined.sql, combined.parameters);
    });
  }

  private groups(): CompiledQuery[][] {
    const out: CompiledQuery[][] = [];
    let current: CompiledQuery[] = [];
    let params = 0;
    for (const q of this.pending) {
      if (current.length > 0 && params + q.parameters.length >= MAX_PARAMETERS) {
        out.push(current);
        current = [];
        params = 0;
      }
      current.push(q);
      params += q.parameters.length;
    }
    if (current.length > 0) out.push(current);
    return out;
  }

  private async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.options.onRoundTrip?.(query.sql);
    return resultOf<R>(await this.client.query(query.sql, [...query.parameters]));
  }
}

function resultOf<R>(result: pg.QueryResult): QueryResult<R> {
  const { command, rowCount, rows } = result;
  return {
    numAffectedRows:
      command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? BigInt(rowCount ?? 0) : undefined,
    rows: (rows ?? []) as R[],
  };
}

/** Kysely's driver contract over a pg pool, with the waiting described above. */
class PgDriver implements Driver {
  private readonly connections = new WeakMap<pg.PoolClient, PgConnection>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: PgDriverOptions,
    private readonly escapeLiteral: (s: string) => string,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect();
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new PgConnection(client, this.options, this.escapeLiteral);
      this.connections.set(client, connection);
    }
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as PgConnection;
    if (settings.isolationLevel || settings.accessMode) {
      let text = 'start transaction';
      if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) text += ` ${settings.accessMode}`;
      await c.executeQuery(CompiledQuery.raw(text));
      c.inTransaction = true;
      return;
    }
    await c.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as PgConnection;
    c.reset();
    c.client.release();
  }

  async destroy(): Promise<void> {
    await this.pool.end();
  }
}

/** Kysely's Postgres dialect (adapter, compiler, introspection) with the driver above. */
export class BatchingPostgresDialect extends PostgresDialect {
  constructor(
    private readonly pgPool: pg.Pool,
    private readonly escapeLiteral: (s: string) => string,
    private readonly options: PgDriverOptions = {},
  ) {
    super({ pool: pgPool });
  }

  override createDriver(): Driver {
    return new PgDriver(this.pgPool, this.options, this.escapeLiteral);
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
