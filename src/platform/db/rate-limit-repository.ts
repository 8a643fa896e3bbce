/** Request counters per key and fixed window, shared by every instance (table rate_limits). */
import { sql, type Kysely } from 'kysely';
import type { Db } from './db.js';
import type { Database } from './schema.js';

export class RateLimitRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Counts one request in the window and answers the count so far (one statement, atomic on both engines). */
  async hit(key: string, windowStart: number, db: Db = this.db): Promise<number> {
    const row = await db
      .insertInto('rate_limits')
      .values({ key, window_start: windowStart, count: 1 })
      .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet({ count: sql<number>`rate_limits.count + 1` }))
      .returning('count')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** The count of the key's window so far (0 if none), without counting. */
  async count(key: string, windowStart: number, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('rate_limits')
      .select('count')
      .where('key', '=', key)
      .where('window_start', '=', windowStart)
      .executeTakeFirst();
    return row ? Number(row.count) : 0;
  }

  /** Drops the key's windows that started before `windowStart`. */
  async purgeBefore(key: string, windowStart: number, db: Db = this.db): Promise<void> {
    await db.deleteFrom('rate_limits').where('key', '=', key).where('window_start', '<', windowStart).execute();
  }
}
