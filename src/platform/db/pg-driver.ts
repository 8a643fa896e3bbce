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
 * 5. **A read may ride along.** A select marked with `ridingAlong`, in a
 *    transaction or on a connection held for several statements (`oneConnection`
 *    in transactions.ts), is not sent at once: its statement returns at once and
 *    its rows come later through `aheadOf(result)`. It goes out in the message of
 *    the connection's next statement, so a read its caller needs only later (the
 *    listeners an event is queued for, the organizer read beside the asset) costs
 *    no round trip of its own; when nothing follows it in the event loop's turn,
 *    or the connection is released, it is sent alone. (Kysely runs a connection's
 *    statements one after another, so the read cannot simply wait: the next
 *    statement would wait for it.)
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

/** Selects that may wait for the transaction's next statement (see 5. above). */
const RIDING = new WeakSet<CompiledQuery>();

const AHEAD = Symbol('rows to come');

/**
 * Marks a select as one that may ride with the transaction's next statement on
 * PostgreSQL (elsewhere, and outside a transaction, it runs at once as usual).
 * Read its rows with `aheadOf(result)`.
 */
export function ridingAlong<Q extends CompiledQuery>(query: Q): Q {
  RIDING.add(query);
  return query;
}

/** The result of a statement run with `ridingAlong`: the rows still to come, or those it already has. */
export function aheadOf<R>(result: QueryResult<R>): Promise<QueryResult<R>> {
  return (result as { [AHEAD]?: Promise<QueryResult<R>> })[AHEAD] ?? Promise.resolve(result);
}

/** A statement waiting for the next message of its transaction: a plain insert, or a riding read with its caller. */
interface Waiting {
  query: CompiledQuery;
  read?: { resolve: (r: QueryResult<unknown>) => void; reject: (e: unknown) => void };
}

/** What goes out before a statement: one waiting statement, or a run of inserts to send as one (`combineInserts`). */
type Outgoing = (Waiting & { inserts?: undefined }) | { inserts: CompiledQuery[]; query?: undefined; read?: undefined };

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

/**
 * `combineInserts(queries)` with its parameters written in as literals (`inlineParameters`), built from each
 * insert's own template instead of renumbering and templating the combined text; one insert as itself (as
 * `combinedQuery` sends it); null when one insert may not take literals.
 */
export function inlineCombined(queries: readonly CompiledQuery[], escapeLiteral: (s: string) => string): string | null {
  if (queries.length === 1) return inlineParameters(queries[0].sql, queries[0].parameters, escapeLiteral);
  let text = 'with ';
  for (let i = 0; i < queries.length; i++) {
    const part = inlineParameters(queries[i].sql, queries[i].parameters, escapeLiteral);
    if (part === null) return null;
    text += `${i === 0 ? '' : ', '}w${i} as (${part})`;
  }
  return text + ' select 1';
}

/** A value as an SQL literal of unknown type (PostgreSQL coerces it as it would a parameter), or null when it has none. */
function literalOf(value: unknown, escapeLiteral: (s: string) => string): string | null {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return value.includes('\0') ? null : escapeLiteral(value);
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return `'${value}'`;
    return Number.isFinite(value) && /^-?\d+(\.\d+)?$/.test(String(value)) ? `'${value}'` : null;
  }
  if (typeof value === 'bigint') return `'${value}'`;
  return null;
}

/** A statement cut at its parameters: text pieces around them and, between each two, which parameter stands there. */
interface Template {
  pieces: string[];
  /** 0-based parameter index of each gap between pieces. */
  slots: number[];
}

/** Templates by statement text (null: the text may not take literals); emptied when full. */
const templates = new Map<string, Template | null>();
const TEMPLATES_MAX = 2_000;

/** The text's template, or null when a literal is not plainly safe somewhere in it (see `inlineParameters`). */
function templateOf(sqlText: string): Template | null {
  let t = templates.get(sqlText);
  if (t !== undefined) return t;
  t = { pieces: [], slots: [] };
  if (/'|--|\/\*|\$\$/.test(sqlText)) t = null;
  else {
    const re = /\$(\d+)/g;
    let last = 0;
    for (let m = re.exec(sqlText); m; m = re.exec(sqlText)) {
      const before = sqlText
        .slice(Math.max(0, m.index - 8), m.index)
        .trimEnd()
        .toLowerCase();
      if (!/(=|<|>|\(|,|\blimit|\boffset)$/.test(before)) {
        t = null;
        break;
      }
      t.pieces.push(sqlText.slice(last, m.index));
      t.slots.push(Number(m[1]) - 1);
      last = m.index + m[0].length;
    }
    t?.pieces.push(sqlText.slice(last));
  }
  if (templates.size >= TEMPLATES_MAX) templates.clear();
  templates.set(sqlText, t);
  return t;
}

/**
 * The statement with its parameters written in as literals, for the simple query
 * protocol, or null when that is not plainly safe: the text must hold no string
 * literal or comment, and every parameter must stand where PostgreSQL takes its
 * type from the other side (a comparison, a list, a VALUES row, LIMIT/OFFSET).
 * Where a text's parameters stand is worked out once per text.
 */
export function inlineParameters(sqlText: string, parameters: readonly unknown[], escapeLiteral: (s: string) => string): string | null {
  const t = templateOf(sqlText);
  if (t === null) return null;
  let text = t.pieces[0];
  for (let i = 0; i < t.slots.length; i++) {
    const literal = literalOf(parameters[t.slots[i]], escapeLiteral);
    if (literal === null) return null;
    text += literal + t.pieces[i + 1];
  }
  return text;
}

class PgConnection implements DatabaseConnection {
  inTransaction = false;
  /** `begin` not yet sent: it goes out with the transaction's first statement. */
  private beginPending = false;
  /** The row lock taken as the transaction's first statement, not yet sent. */
  private lockPending: CompiledQuery | null = null;
  private pending: Waiting[] = [];
  /** A flush of riding reads is planned for the end of this turn of the event loop. */
  private flushPlanned = false;

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
        this.pending.push({ query });
        return { numAffectedRows: BigInt(rows), rows: [] };
      }
    }
    if (RIDING.has(query)) return { rows: [], [AHEAD]: this.ride<R>(query) } as QueryResult<R>;
    return this.withWaiting<R>(query);
  }

  /** Queues a riding read; it goes out with the next statement, or alone once this turn's work is done. */
  private ride<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = new Promise<QueryResult<R>>((resolve, reject) => {
      this.pending.push({ query, read: { resolve: resolve as (r: QueryResult<unknown>) => void, reject } });
    });
    if (!this.flushPlanned) {
      this.flushPlanned = true;
      setImmediate(() => {
        this.flushPlanned = false;
        void this.sendRiding();
      });
    }
    return result;
  }

  /**
   * Sends what waits up to its last riding read (nothing followed it in this turn, or the
   * connection is being released); inserts queued after that read keep waiting for the
   * transaction's next statement.
   */
  async sendRiding(): Promise<void> {
    let last = this.pending.length - 1;
    while (last >= 0 && !this.pending[last].read) last--;
    if (last < 0) return;
    const { query, read } = this.pending[last];
    const after = this.pending.slice(last + 1);
    this.pending = this.pending.slice(0, last);
    // withWaiting takes what waits before its first await; what came after the read waits on.
    const sent = this.withWaiting(query);
    this.pending.push(...after);
    try {
      read!.resolve(await sent);
    } catch (err) {
      read!.reject(err);
    }
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
    const reads = this.pending;
    this.inTransaction = false;
    this.beginPending = false;
    this.lockPending = null;
    this.pending = [];
    if (reads.length > 0) settleUnsent(reads, new Error('the transaction ended before this read was sent'));
  }

  /**
   * Runs `query` after what waits (a `begin`, a lock, plain inserts, riding reads):
   * in one round trip of the simple query protocol when every part can be written
   * with literals, else one round trip each.
   */
  private async withWaiting<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.beginPending && this.pending.length === 0) return this.run<R>(query);
    const parts: string[] = this.beginPending ? ['begin'] : [];
    const lock = this.lockPending;
    const waiting = this.waitingStatements();
    const before: Outgoing[] = lock ? [{ query: lock }, ...waiting] : waiting;
    this.beginPending = false;
    this.lockPending = null;
    this.pending = [];
    // A bulk statement keeps its parameters (see WAIT_MAX_PARAMETERS): what waits goes out before it, one by one.
    const texts =
      query.parameters.length > WAIT_MAX_PARAMETERS
        ? [null]
        : [...before.map((w) => this.inline(w)), inlineParameters(query.sql, query.parameters, this.escapeLiteral)];
    try {
      if (texts.every((t) => t !== null)) {
        const text = [...parts, ...texts].join(';\n');
        this.options.onRoundTrip?.(text);
        const sent = (await this.client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
        const results = Array.isArray(sent) ? sent : [sent];
        // One result per statement sent: `begin` first, then `before` in order, then `query`.
        before.forEach((w, i) => w.read?.resolve(resultOf(results[parts.length + i])));
        return resultOf<R>(results[results.length - 1]);
      }
      if (parts.length > 0) await this.run(CompiledQuery.raw('begin'));
      for (const w of before) {
        const r = await this.run(w.inserts ? combinedQuery(w.inserts) : w.query);
        if (w.read) w.read.resolve(r);
      }
      return await this.run<R>(query);
    } catch (err) {
      settleUnsent(before, err);
      throw err;
    }
  }

  /** A statement that goes out before another, with its parameters as literals, or null when it may not take them. */
  private inline(w: Outgoing): string | null {
    return w.inserts
      ? inlineCombined(w.inserts, this.escapeLiteral)
      : inlineParameters(w.query.sql, w.query.parameters, this.escapeLiteral);
  }

  /**
   * What waits as statements to send, in order: each run of consecutive inserts as one
   * combined statement per group that fits PostgreSQL's parameter limit, riding reads as they are.
   */
  private waitingStatements(): Outgoing[] {
    const out: Outgoing[] = [];
    let run: CompiledQuery[] = [];
    const endRun = () => {
      for (const group of groups(run)) out.push({ inserts: group });
      run = [];
    };
    for (const w of this.pending) {
      if (w.read) {
        endRun();
        out.push(w);
      } else {
        run.push(w.query);
      }
    }
    endRun();
    return out;
  }

  private async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.options.onRoundTrip?.(query.sql);
    return resultOf<R>(await this.client.query(query.sql, [...query.parameters]));
  }
}

/** A run of inserts as one statement (one insert as itself). */
function combinedQuery(inserts: readonly CompiledQuery[]): CompiledQuery {
  if (inserts.length === 1) return inserts[0];
  const combined = combineInserts(inserts);
  return CompiledQuery.raw(combined.sql, combined.parameters);
}

/** Inserts grouped so that each group fits PostgreSQL's parameter limit. */
function groups(queries: readonly CompiledQuery[]): CompiledQuery[][] {
  const out: CompiledQuery[][] = [];
  let current: CompiledQuery[] = [];
  let params = 0;
  for (const q of queries) {
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

/** Rejects the riding reads among `waiting` that have not been answered. */
function settleUnsent(waiting: readonly Outgoing[], err: unknown): void {
  for (const w of waiting) w.read?.reject(err);
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
    // Riding reads of a held connection that nothing followed go out before it returns to the pool.
    if (!c.inTransaction) await c.sendRiding();
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
