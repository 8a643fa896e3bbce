/**
 * 004: limits on promo codes. `valid_from`/`valid_until` bound when a code may be
 * used (epoch ms, null = open); `max_uses` caps its uses (null = no cap) and
 * `used_count` counts them (kept by payments, never by the site apply).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per statement: SQLite adds a single column per ALTER TABLE.
  await db.schema.alterTable('promo_codes').addColumn('valid_from', 'bigint').execute();
  await db.schema.alterTable('promo_codes').addColumn('valid_until', 'bigint').execute();
  await db.schema.alterTable('promo_codes').addColumn('max_uses', 'integer').execute();
  await db.schema
    .alterTable('promo_codes')
    .addColumn('used_count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['used_count', 'max_uses', 'valid_until', 'valid_from']) {
    await db.schema.alterTable('promo_codes').dropColumn(column).execute();
  }
}
