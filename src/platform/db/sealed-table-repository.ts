/**
 * The SQL of `SealedTable` (platform/crypto/reseal.ts) for one table: keyset pages over its
 * primary key and a compare-and-set write of its sealed and tag columns. A module builds it in
 * its own repository for its own table (the table name is the module's; nothing here names one).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { SealedRow, SealedTable } from '../crypto/reseal.js';

export interface SealedTableSpec<T extends keyof Database> {
  table: T;
  /** Primary key columns, in order. */
  key: readonly (keyof Database[T] & string)[];
  /** Sealed columns (SecretBox.seal values; null allowed). */
  sealed: readonly (keyof Database[T] & string)[];
  /** Tag columns: `SecretBox.tag(purpose, plain text of column \`of\`)`. */
  tags?: readonly { column: keyof Database[T] & string; of: keyof Database[T] & string; purpose: string }[];
}

// The table is chosen by the caller: Kysely cannot type it, the spec's keyof constraints do.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;
type Values = Readonly<Record<string, string | null>>;

export function sealedTable<T extends keyof Database>(db: Kysely<Database>, spec: SealedTableSpec<T>): SealedTable {
  const any = db as AnyDb;
  const table: string = spec.table;
  const keys: string[] = [...spec.key];
  const tags = spec.tags ?? [];
  const valueColumns: string[] = [...spec.sealed, ...tags.map((t) => t.column)];
  return {
    columns: valueColumns.map((c) => `${spec.table}.${c}`),
    tags,
    async page(after, limit) {
      let q = any
        .selectFrom(table)
        .select([...keys, ...valueColumns])
        .limit(limit);
      for (const k of keys) q = q.orderBy(k);
      if (after) q = q.where(sql<boolean>`(${sql.join(keys.map((k) => sql.ref(k)))}) > (${sql.join([...after])})`);
      const rows = (await q.execute()) as Record<string, string | null>[];
      return rows.map((r): SealedRow => ({
        key: keys.map((k) => String(r[k])),
        values: Object.fromEntries(valueColumns.map((c) => [c, r[c] ?? null])),
      }));
    },
    async swap(key, prev: Values, next) {
      let q = any.updateTable(table).set(next);
      keys.forEach((k, i) => (q = q.where(k, '=', key[i]!)));
      for (const c of Object.keys(next)) {
        const was = prev[c];
        q = was === null || was === undefined ? q.where(c, 'is', null) : q.where(c, '=', was);
      }
      const res = await q.executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
  };
}
