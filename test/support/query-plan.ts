/**
 * Reading the plan a repository's statement gets: `capturingDb` hands a repository a
 * database that records the statements it builds, `planOf` explains one of them on
 * the test's engine (SQLite's `explain query plan` details; PostgreSQL's `explain`
 * with sequential scans off, since an empty table makes one cheapest whatever the
 * indexes), as lines of text.
 */
import { CompiledQuery, sql, type Kysely, type KyselyPlugin, type RootOperationNode } from 'kysely';
import type { Storage } from '../../src/platform/db/database.js';
import type { Database } from '../../src/platform/db/schema.js';

/** A database that records every statement built through it (a subquery is recorded on its own, before its statement). */
export function capturingDb(db: Kysely<Database>): { db: Kysely<Database>; nodes: RootOperationNode[] } {
  const nodes: RootOperationNode[] = [];
  const capture: KyselyPlugin = {
    transformQuery: (args) => {
      nodes.push(args.node);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(capture), nodes };
}

/** The plan of a recorded statement, as text lines. */
export async function planOf(storage: Pick<Storage, 'db' | 'engine'>, node: RootOperationNode): Promise<string> {
  const { db, engine } = storage;
  const compiled = db.getExecutor().compileQuery(node, { queryId: 'plan' } as never);
  if (engine === 'sqlite') {
    const plan = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
    );
    return plan.rows.map((r) => r.detail).join('\n');
  }
  return db.connection().execute(async (conn) => {
    await sql`set enable_seqscan = off`.execute(conn);
    try {
      const plan = await conn.executeQuery<{ 'QUERY PLAN': string }>(
        CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
      );
      return plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await sql`reset enable_seqscan`.execute(conn);
    }
  });
}
