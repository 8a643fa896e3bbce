/** What repository methods run against, and running a unit of work in a transaction. */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** The database itself or a transaction (or locked connection) on it. */
export type Db = Kysely<Database> | Transaction<Database>;

/**
 * Runs `work` in the caller's transaction, or in a new one when `db` is the root
 * database. Any handle other than `root` is taken to be already inside a
 * transaction (on SQLite that includes writeTransaction's connection), so no
 * nested BEGIN is ever issued on the single connection.
 */
export function inTransaction<T>(root: Kysely<Database>, db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db === root ? root.transaction().execute(work) : work(db);
}
