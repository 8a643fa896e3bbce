/**
 * 020: device sync at building scale. Planning a subject reads its targets on every
 * device (`device_targets` by subject); the primary key leads with the device, so
 * without this index each plan read the whole table (every member × every device):
 * quadratic over a from-scratch sync of a building.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('device_targets_subject_idx')
    .ifNotExists()
    .on('device_targets')
    .columns(['subject_kind', 'subject_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('device_targets_subject_idx').ifExists().execute();
}
