/**
 * Statements for hot paths, without building and compiling a Kysely query per call.
 *
 * Building a query with Kysely's builder and compiling it costs tens of
 * microseconds: about as much CPU as SQLite takes to run a short statement. Paths
 * that run for every request (a booking's create) or every delivery use these
 * instead:
 *
 * - `PreparedStatements`: a query built with Kysely once per database, with
 *   `slot(i)` standing for the i-th value, then run with fresh values;
 * - `insertRows`: a plain `insert into "t" ("a", …) values ($1, …)` written
 *   directly from the rows' keys (the text cached per table, columns and row count),
 *   as Kysely would compile it: columns whose value is `undefined` are left out.
 *
 * Both go through the database's executor, so drivers, statement logs and
 * transactions see them as any other statement.
 */
import { CompiledQuery, PostgresAdapter, type Insertable, type Kysely, type QueryResult } from 'kysely';
import type { Db } from './db.js';
import type { Database } from './schema.js';
import { aheadOf, ridingAlong } from './pg-driver.js';

/** Stands for the i-th value of a statement while it is built. */
class Slot {
  constructor(readonly index: number) {}
}

/** A value given at execution; typed `never` so it fits whatever the builder expects there. */
export const slot = (index: number): never => new Slot(index) as unknown as never;

/** Queries built once per database and run with fresh values. A name tells apart shapes that differ (a list's length). */
export class PreparedStatements {
  private readonly compiled = new Map<string, CompiledQuery>();

  constructor(private readonly root: Kysely<Database>) {}

  run<R>(db: Db, name: string, build: (root: Kysely<Database>) => CompiledQuery<R>, values: readonly unknown[]): Promise<QueryResult<R>> {
    return db.executeQuery<R>(this.query(name, build, values));
  }

  /** The rows of a prepared select. */
  async rows<R>(db: Db, name: string, build: (root: Kysely<Database>) => CompiledQuery<R>, values: readonly unknown[]): Promise<R[]> {
    return (await this.run(db, name, build, values)).rows;
  }

  /**
   * Starts a prepared select that may ride with the transaction's next statement
   * (pg-driver.ts, `ridingAlong`); resolves once started, with its rows to come.
   */
  async rowsAhead<R>(
    db: Db,
    name: string,
    build: (root: Kysely<Database>) => CompiledQuery<R>,
    values: readonly unknown[],
  ): Promise<{ rows: Promise<R[]> }> {
    const query = this.query(name, build, values);
    // Only PostgreSQL has a round trip to save; elsewhere the read simply runs.
    if (!isPostgres(db)) return { rows: Promise.resolve((await db.executeQuery<R>(query)).rows) };
    const started = await db.executeQuery<R>(ridingAlong(query));
    return { rows: aheadOf(started).then((r) => r.rows) };
  }

  private query<R>(name: string, build: (root: Kysely<Database>) => CompiledQuery<R>, values: readonly unknown[]): CompiledQuery<R> {
    let c = this.compiled.get(name);
    if (!c) {
      c = build(this.root);
      this.compiled.set(name, c);
    }
    const parameters = c.parameters.map((p) => (p instanceof Slot ? values[p.index] : p));
    return { ...c, parameters } as CompiledQuery<R>;
  }
}

const insertTexts = new Map<string, string>();
const postgresAdapters = new WeakMap<object, boolean>();

function isPostgres(db: Db): boolean {
  const adapter = db.getExecutor().adapter;
  let pg = postgresAdapters.get(adapter);
  if (pg === undefined) {
    pg = adapter instanceof PostgresAdapter;
    postgresAdapters.set(adapter, pg);
  }
  return pg;
}

/** Row counts up to which an insert's text is kept (longer, rarer bulk inserts are written each time). */
const CACHED_ROWS = 16;

/** The rows' values in column order, or null when some row's defined columns differ from `columns`. */
function valuesOf(rows: readonly object[], columns: readonly string[]): unknown[] | null {
  const values: unknown[] = [];
  for (const row of rows) {
    const r = row as Record<string, unknown>;
    let defined = 0;
    for (const k in r) if (r[k] !== undefined) defined++;
    if (defined !== columns.length) return null;
    for (const c of columns) {
      const v = r[c];
      if (v === undefined) return null;
      values.push(v);
    }
  }
  return values;
}

function insertText(pg: boolean, table: string, columns: readonly string[], count: number): string {
  let n = 0;
  const row = () => `(${columns.map(() => (pg ? `$${++n}` : '?')).join(', ')})`;
  return `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: count }, row).join(', ')}`;
}

/**
 * Inserts `rows` into `table` with one plain statement, as Kysely would compile it.
 * Rows whose defined columns differ from the first row's go through Kysely's
 * builder, which fills the gaps with defaults.
 */
export async function insertRows<T extends keyof Database & string>(
  db: Db,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  if (rows.length === 0) return;
  const first = rows[0] as Record<string, unknown>;
  const columns = Object.keys(first).filter((k) => first[k] !== undefined);
  const parameters = valuesOf(rows, columns);
  if (parameters === null) {
    await db
      .insertInto(table)
      .values(rows as never)
      .execute();
    return;
  }
  const pg = isPostgres(db);
  let text: string | undefined;
  if (rows.length <= CACHED_ROWS) {
    const key = `${pg ? 'p' : 's'}|${table}|${rows.length}|${columns.join(',')}`;
    text = insertTexts.get(key);
    if (text === undefined) insertTexts.set(key, (text = insertText(pg, table, columns, rows.length)));
  } else {
    text = insertText(pg, table, columns, rows.length);
  }
  await db.executeQuery(CompiledQuery.raw(text, parameters));
}
