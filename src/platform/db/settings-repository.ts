/** Small key/value settings persisted in the database (sandbox clock offset, generated keys). */
import type { Kysely } from 'kysely';
import type { Db } from './db.js';
import type { Database } from './schema.js';

export class SettingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(name: string, db: Db = this.db): Promise<string | undefined> {
    const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
    return row?.value;
  }

  async set(name: string, value: string, db: Db = this.db): Promise<void> {
    await db
      .insertInto('settings')
      .values({ name, value })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
      .execute();
  }

  async delete(name: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom('settings').where('name', '=', name).execute();
  }

  /** Stores `value` only if the setting is absent; returns whichever value is stored. */
  async getOrInit(name: string, value: string, db: Db = this.db): Promise<string> {
    await db
      .insertInto('settings')
      .values({ name, value })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return (await this.get(name, db)) ?? value;
  }
}
