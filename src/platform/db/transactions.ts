/**
 * Write transactions that serialize bookings per asset, on both engines.
 *
 * - PostgreSQL: a transaction that first takes a row lock on the asset
 *   (`SELECT … FOR UPDATE`), so concurrent bookings of one asset — from any
 *   service instance — run one after another while other assets proceed.
 * - SQLite: `BEGIN IMMEDIATE` takes the database write lock up front (the
 *   driver's single connection already serializes this process; the immediate
 *   lock also serializes other processes on the same file).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Engine } from './database.js';

export type AssetTable = 'rooms' | 'desks';

/** The table of an asset kind ('room' or 'desk'). */
export const assetTable = (kind: string): AssetTable => (kind === 'room' ? 'rooms' : 'desks');

export async function withAssetLock<T>(
  db: Kysely<Database>,
  engine: Engine,
  asset: { table: AssetTable; id: string },
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  if (engine === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql`select id from ${sql.table(asset.table)} where id = ${asset.id} for update`.execute(trx);
      return work(trx);
    });
  }
  return writeTransaction(db, engine, work);
}

/** A write transaction; on SQLite it takes the write lock immediately. */
export async function writeTransaction<T>(db: Kysely<Database>, engine: Engine, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (engine === 'postgres') return db.transaction().execute(work);
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const result = await work(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}
