/**
 * 008: building devices and visitors.
 * - `devices` gain a display location (English and Thai) and the card format their
 *   readers expect (null: decimal-reversed).
 * - `access_changes` (the device-enrollment outbox) now names the kind of subject
 *   whose access changed: a partner `member` (user_id = the user) or a `visitor`
 *   (user_id = the invite).
 * - `device_state`: per device, the sync cursor (next sequence number), the retry
 *   schedule and lease, reachability, and the instant of the last acknowledgement.
 * - `device_targets`: what the service last decided each device must hold, per subject.
 * - `device_commands`: the durable, ordered per-device queue of changes.
 * - `device_enrollments`: what each device holds, as it acknowledged it.
 * - `visitor_invites`, `visitor_entries`: the visitor management feature.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('devices').addColumn('location_en', 'text').execute();
  await db.schema.alterTable('devices').addColumn('location_th', 'text').execute();
  await db.schema.alterTable('devices').addColumn('card_format', 'text').execute();
  await db.schema
    .alterTable('access_changes')
    .addColumn('subject_kind', 'text', (c) => c.notNull().defaultTo('member'))
    .execute();

  await db.schema
    .createTable('device_state')
    .addColumn('device_id', 'text', (c) => c.primaryKey())
    .addColumn('online', 'integer', (c) => c.notNull())
    .addColumn('next_seq', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_until', 'bigint')
    .addColumn('last_synced_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('device_targets')
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('subject_kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('device_targets_pk', ['device_id', 'subject_kind', 'subject_id'])
    .execute();

  await db.schema
    .createTable('device_commands')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('subject_kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    /** upsert (state = the subject's whole credential set on this device) or remove. */
    .addColumn('op', 'text', (c) => c.notNull())
    .addColumn('state', 'text')
    /** pending | done | failed (bad input: recorded, never retried) */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('done_at', 'bigint')
    .execute();
  await db.schema.createIndex('device_commands_seq_idx').on('device_commands').columns(['device_id', 'seq']).unique().execute();
  await db.schema.createIndex('device_commands_queue_idx').on('device_commands').columns(['device_id', 'status', 'seq']).execute();
  await db.schema
    .createIndex('device_commands_subject_idx')
    .on('device_commands')
    .columns(['device_id', 'subject_kind', 'subject_id', 'status'])
    .execute();

  await db.schema
    .createTable('device_enrollments')
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('subject_kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('device_enrollments_pk', ['device_id', 'subject_kind', 'subject_id'])
    .execute();

  await db.schema
    .createTable('visitor_invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('host_user_id', 'text', (c) => c.notNull())
    .addColumn('visitor_name', 'text', (c) => c.notNull())
    .addColumn('visitor_email', 'text')
    .addColumn('start_at', 'bigint', (c) => c.notNull())
    /** The end of the window: the given end, or the end of the property-local start day. */
    .addColumn('end_at', 'bigint', (c) => c.notNull())
    /** 1 when the invite was made with an end time, 0 for a null endDateTime. */
    .addColumn('end_given', 'integer', (c) => c.notNull())
    .addColumn('license_plate', 'text')
    /** The plate normalized for matching (upper case, no spaces or dashes). */
    .addColumn('plate_key', 'text')
    .addColumn('visit_purpose', 'text')
    /** The QR card code, sealed; `qr_tag` is its keyed hash, for lookups. */
    .addColumn('qr_enc', 'text', (c) => c.notNull())
    .addColumn('qr_tag', 'text', (c) => c.notNull())
    .addColumn('cancelled_at', 'bigint')
    /** When the code was withdrawn from the devices (window over or cancelled). */
    .addColumn('withdrawn_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('visitor_invites_qr_idx').on('visitor_invites').columns(['project_id', 'qr_tag']).execute();
  await db.schema.createIndex('visitor_invites_plate_idx').on('visitor_invites').columns(['project_id', 'plate_key']).execute();
  await db.schema.createIndex('visitor_invites_withdraw_idx').on('visitor_invites').columns(['withdrawn_at', 'end_at']).execute();

  await db.schema
    .createTable('visitor_entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('invite_id', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    /** card | license-plate */
    .addColumn('entry_type', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('visitor_entries_invite_idx').on('visitor_entries').columns(['invite_id', 'at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['visitor_entries', 'visitor_invites', 'device_enrollments', 'device_commands', 'device_targets', 'device_state'])
    await db.schema.dropTable(t).execute();
  await db.schema.alterTable('access_changes').dropColumn('subject_kind').execute();
  for (const c of ['card_format', 'location_th', 'location_en']) await db.schema.alterTable('devices').dropColumn(c).execute();
}
