/**
 * Moving sealed values under the current secrets key (SECRETS_KEY rotation, docs/operations.md).
 *
 * Each module that stores sealed values (or keyed tags of secrets) describes its table as a
 * `SealedTable` from its repository; `resealTables` walks every table page by page, seals each
 * value again under the current key and recomputes each tag, and writes a row back only where
 * it still holds what was read (compare-and-set), so it runs while instances serve: a value
 * written meanwhile was sealed under the current key already.
 */
import type { SecretBox } from './secrets.js';

/** One row: its key (the table's primary key columns, in order) and its sealed and tag columns. */
export interface SealedRow {
  key: readonly string[];
  values: Readonly<Record<string, string | null>>;
}

export interface SealedTable {
  /** `table.column` of every sealed column and tag column the table holds (checked against the schema by a unit test). */
  readonly columns: readonly string[];
  /** Columns holding a keyed tag of a sealed column's plain text. */
  readonly tags?: readonly { column: string; of: string; purpose: string }[];
  /** Rows after `after` in key order (from the start when null), at most `limit`. */
  page(after: readonly string[] | null, limit: number): Promise<SealedRow[]>;
  /** Writes `next` to the row with `key` if it still holds `prev`; false when it changed meanwhile. */
  swap(key: readonly string[], prev: Readonly<Record<string, string | null>>, next: Record<string, string | null>): Promise<boolean>;
}

export interface ResealReport {
  /** `table.column` → rows whose value or tag was rewritten. */
  resealed: Record<string, number>;
  /** Rows that changed while being resealed (left as written: sealed under the current key by their writer). */
  skipped: number;
  /** `table.column` → values no key opens (sealed under a key this process was not given): left as they are. */
  unreadable: Record<string, number>;
}

const PAGE = 200;

/** The row's new values, or null when everything in it is under the current key already. */
export function resealRow(row: SealedRow, table: Pick<SealedTable, 'tags'>, box: SecretBox): Record<string, string | null> | null {
  const next: Record<string, string | null> = {};
  const tagColumns = new Set((table.tags ?? []).map((t) => t.column));
  for (const [column, value] of Object.entries(row.values)) {
    if (value === null || tagColumns.has(column)) continue;
    const again = box.reseal(value);
    if (again !== null) next[column] = again;
  }
  for (const t of table.tags ?? []) {
    const sealed = row.values[t.of];
    if (sealed === null || sealed === undefined) continue;
    const tag = box.tag(t.purpose, box.open(sealed));
    if (tag !== row.values[t.column]) next[t.column] = tag;
  }
  return Object.keys(next).length === 0 ? null : next;
}

export async function resealTables(tables: readonly SealedTable[], box: SecretBox): Promise<ResealReport> {
  const report: ResealReport = { resealed: {}, skipped: 0, unreadable: {} };
  for (const table of tables) {
    const name = (column: string) => table.columns.find((c) => c.endsWith(`.${column}`)) ?? column;
    let after: readonly string[] | null = null;
    for (;;) {
      const rows = await table.page(after, PAGE);
      for (const row of rows) {
        let next: Record<string, string | null> | null;
        try {
          next = resealRow(row, table, box);
        } catch {
          const column = table.columns[0]!;
          report.unreadable[column] = (report.unreadable[column] ?? 0) + 1;
          continue;
        }
        if (!next) continue;
        if (!(await table.swap(row.key, row.values, next))) {
          report.skipped++;
          continue;
        }
        for (const column of Object.keys(next)) report.resealed[name(column)] = (report.resealed[name(column)] ?? 0) + 1;
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.key;
    }
  }
  return report;
}
