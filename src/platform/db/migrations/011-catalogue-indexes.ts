/**
 * 011: the desk listing read from one index. A desk search lists the matching desks
 * in (project, index, name, id) order with each row's `updated_at` (the catalogue
 * keeps the rows themselves in memory); with every column it reads in the index,
 * the listing is an index-only scan in listing order, with no sort and no table
 * look-ups. It replaces `desks_project_idx` (project_id, desk_index), its prefix.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('desks_listing_idx')
    .on('desks')
    .columns(['project_id', 'desk_index', 'name', 'id', 'is_public', 'updated_at'])
    .execute();
  await db.schema.dropIndex('desks_project_idx').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('desks_project_idx').on('desks').columns(['project_id', 'desk_index']).execute();
  await db.schema.dropIndex('desks_listing_idx').execute();
}
