/**
 * 011: the catalogue's per-search reads answered from indexes alone (index-only
 * scans; on PostgreSQL once the visibility map is set, i.e. after (auto)vacuum).
 *
 * - `desks_listing_idx`: a desk search lists the matching desks in (project, index,
 *   name, id) order with each row's `updated_at`, and probes count/latest/sum of
 *   `updated_at` per project; both read this index in order, with no sort and no
 *   table look-ups. It replaces `desks_project_idx` (project_id, desk_index), its prefix.
 * - `meeting_slots_search_idx`: the holds near a search window by project and start
 *   time, with the end and asset a search reads. It replaces
 *   `meeting_slots_project_idx` (project_id, start_at), its prefix, so a booking
 *   still writes the same number of index entries.
 * - `rooms_version_idx`: the room snapshot's count/latest/sum probe of `updated_at`
 *   per project, run on every room search.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('desks_listing_idx')
    .on('desks')
    .columns(['project_id', 'desk_index', 'name', 'id', 'is_public', 'updated_at'])
    .execute();
  await db.schema.dropIndex('desks_project_idx').execute();
  await db.schema
    .createIndex('meeting_slots_search_idx')
    .on('meeting_slots')
    .columns(['project_id', 'start_at', 'end_at', 'asset_id'])
    .execute();
  await db.schema.dropIndex('meeting_slots_project_idx').execute();
  await db.schema.createIndex('rooms_version_idx').on('rooms').columns(['project_id', 'updated_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('rooms_version_idx').execute();
  await db.schema.createIndex('meeting_slots_project_idx').on('meeting_slots').columns(['project_id', 'start_at']).execute();
  await db.schema.dropIndex('meeting_slots_search_idx').execute();
  await db.schema.createIndex('desks_project_idx').on('desks').columns(['project_id', 'desk_index']).execute();
  await db.schema.dropIndex('desks_listing_idx').execute();
}
