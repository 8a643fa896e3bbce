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

/**
 * Runs `work` on one connection held for it (PostgreSQL), so that reads it starts with
 * `ridingAlong` go out with its next statement in one message (pg-driver.ts); on SQLite,
 * whose statements cost no round trip, `work` simply runs on the database.
 */
export async function oneConnection<T>(db: Kysely<Database>, engine: Engine, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (engine === 'postgres') return db.connection().execute(work);
  return work(db);
}

/**
 * A write transaction; on SQLite it takes the write lock immediately, and
 * transactions that arrive together are committed together (group commit).
 */
export async function writeTransaction<T>(db: Kysely<Database>, engine: Engine, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (engine === 'postgres') return db.transaction().execute(work);
  let group = groups.get(db);
  if (!group) {
    group = new GroupCommit(db);
    groups.set(db, group);
  }
  return group.run(work);
}

/** The most transactions one SQLite commit carries. */
export const GROUP_COMMIT_MAX = 32;

interface Waiting {
  work: (trx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

const groups = new WeakMap<Kysely<Database>, GroupCommit>();

/**
 * SQLite group commit. The embedded database has one connection, so write
 * transactions run one after another anyway; most of a small transaction's cost
 * is its commit (the WAL append). Transactions that arrive in the same turn of
 * the event loop run inside one `BEGIN IMMEDIATE … COMMIT`, each within its own
 * savepoint:
 * - each sees the writes of those before it (they still run one at a time, in
 *   arrival order), so every rule checked under a lock holds as before;
 * - one that fails is rolled back to its savepoint alone and rejects; the others
 *   go on;
 * - none is answered before the commit that carries it: a transaction reports
 *   success only once it is durable, and if the commit fails, every transaction
 *   in it fails.
 */
class GroupCommit {
  private queue: Waiting[] = [];
  private running = false;

  constructor(private readonly db: Kysely<Database>) {}

  run<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.running) {
        this.running = true;
        // Let the requests already read off the sockets in this turn join the group.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, GROUP_COMMIT_MAX);
        await this.db.connection().execute((conn) => (batch.length === 1 ? this.single(conn, batch[0]) : this.group(conn, batch)));
      }
    } finally {
      this.running = false;
      if (this.queue.length > 0) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    }
  }

  private async single(conn: Kysely<Database>, item: Waiting): Promise<void> {
    try {
      await sql`begin immediate`.execute(conn);
    } catch (err) {
      item.reject(err);
      return;
    }
    let result: unknown;
    try {
      result = await item.work(conn);
      await sql`commit`.execute(conn);
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      item.reject(err);
      return;
    }
    item.resolve(result);
  }

  private async group(conn: Kysely<Database>, batch: Waiting[]): Promise<void> {
    try {
      await sql`begin immediate`.execute(conn);
    } catch (err) {
      for (const item of batch) item.reject(err);
      return;
    }
    const done: Array<{ item: Waiting; result: unknown }> = [];
    for (const [i, item] of batch.entries()) {
      try {
        await sql`savepoint group_commit`.execute(conn);
      } catch (err) {
        await this.abort(conn, [...done.map((d) => d.item), ...batch.slice(i)], err);
        return;
      }
      try {
        const result = await item.work(conn);
        await sql`release group_commit`.execute(conn);
        done.push({ item, result });
      } catch (err) {
        try {
          await sql`rollback to group_commit`.execute(conn);
          await sql`release group_commit`.execute(conn);
        } catch (undoErr) {
          item.reject(err);
          await this.abort(conn, [...done.map((d) => d.item), ...batch.slice(i + 1)], undoErr);
          return;
        }
        item.reject(err);
      }
    }
    try {
      await sql`commit`.execute(conn);
    } catch (err) {
      await this.abort(
        conn,
        done.map((d) => d.item),
        err,
      );
      return;
    }
    for (const d of done) d.item.resolve(d.result);
  }

  private async abort(conn: Kysely<Database>, items: Waiting[], err: unknown): Promise<void> {
    await sql`rollback`.execute(conn).catch(() => undefined);
    for (const item of items) item.reject(err);
  }
}
