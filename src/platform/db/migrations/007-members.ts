/**
 * 007: partner member provisioning.
 * - `member_groups`: the access groups a member holds (granted by an app's
 *   preconfigured groups); devices of those groups must hold the member.
 * - `unit_residents`: a member bound to a residential unit (a room with an
 *   addressNo), owner or participant; at most one unit per member and project.
 * - `cards`: physical and generated (virtual) access cards, by decoded 4-byte UID.
 * - `faces`: a member's face photo, sealed (encrypted) at rest, with the consent.
 * - `access_changes`: the device-enrollment outbox: every change of a member's
 *   access (groups, cards, face, offboarding) in the transaction that made it.
 * - `rate_limits`: request counters per key and window, shared by all instances.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('member_groups')
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('access_group_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('member_groups_pk', ['user_id', 'access_group_id'])
    .execute();
  await db.schema.createIndex('member_groups_group_idx').on('member_groups').column('access_group_id').execute();

  await db.schema
    .createTable('unit_residents')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('room_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('unit_residents_pk', ['project_id', 'user_id'])
    .execute();
  await db.schema.createIndex('unit_residents_room_idx').on('unit_residents').column('room_id').execute();

  await db.schema
    .createTable('cards')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    /** Decoded 4-byte UID, 8 uppercase hex digits (virtual cards: their random UID). */
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('generated', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('cards_user_idx').on('cards').columns(['user_id', 'project_id', 'status']).execute();
  await db.schema.createIndex('cards_uid_idx').on('cards').columns(['project_id', 'uid']).execute();

  await db.schema
    .createTable('faces')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    /** The image, sealed with the secrets key (never stored or logged in the clear). */
    .addColumn('image_enc', 'text', (c) => c.notNull())
    .addColumn('mime', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('consent_at', 'bigint', (c) => c.notNull())
    .addColumn('consent_text', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('faces_pk', ['project_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('access_changes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    /** What changed: groups, cards, face, offboarded, reactivated. */
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('processed_at', 'bigint')
    .execute();
  await db.schema.createIndex('access_changes_pending_idx').on('access_changes').columns(['processed_at', 'created_at']).execute();

  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limits_pk', ['key', 'window_start'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['rate_limits', 'access_changes', 'faces', 'cards', 'unit_residents', 'member_groups'])
    await db.schema.dropTable(t).execute();
}
