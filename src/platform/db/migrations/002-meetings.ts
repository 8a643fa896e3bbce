/**
 * 002: bookings. `meetings` holds the booking record; `meeting_slots` is the hold
 * ledger that availability reads (one row per booked window, one per occurrence
 * of a recurring series); `meeting_histories` is the audit trail.
 * `meeting_attendees` indexes attendees for visibility and filters.
 * `projects.max_hold_ms` bounds how far back an overlap query must look.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('projects')
    .addColumn('max_hold_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  // The user an app books as when it books with its own (non-delegated) token.
  await db.schema.alterTable('apps').addColumn('service_user_id', 'text').execute();

  await db.schema
    .createTable('meetings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('asset_kind', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('room_id', 'text', (c) => c.references('rooms.id'))
    .addColumn('desk_id', 'text', (c) => c.references('desks.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('start_at', 'bigint', (c) => c.notNull())
    .addColumn('end_at', 'bigint', (c) => c.notNull())
    .addColumn('booked_end_at', 'bigint', (c) => c.notNull())
    .addColumn('span_end_at', 'bigint', (c) => c.notNull())
    .addColumn('all_day', 'integer', (c) => c.notNull())
    .addColumn('time_period', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('pin_enc', 'text', (c) => c.notNull())
    .addColumn('pin_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('organizer_user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('organizer', 'text', (c) => c.notNull())
    .addColumn('attendees', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text')
    .addColumn('booked_via', 'text')
    .addColumn('booked_by_user_id', 'text')
    .addColumn('payment', 'text')
    .addColumn('payment_due_at', 'bigint')
    .addColumn('billing_summaries', 'text', (c) => c.notNull())
    .addColumn('recurrence', 'text')
    .addColumn('cancel_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('meetings_project_start_idx').on('meetings').columns(['project_id', 'start_at']).execute();
  await db.schema.createIndex('meetings_organizer_idx').on('meetings').columns(['organizer_user_id', 'start_at']).execute();

  await db.schema
    .createTable('meeting_attendees')
    .addColumn('meeting_id', 'text', (c) => c.notNull().references('meetings.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('email_lower', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('meeting_attendees_pk', ['meeting_id', 'position'])
    .execute();
  await db.schema.createIndex('meeting_attendees_user_idx').on('meeting_attendees').column('user_id').execute();
  await db.schema.createIndex('meeting_attendees_email_idx').on('meeting_attendees').column('email_lower').execute();

  await db.schema
    .createTable('meeting_slots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('meeting_id', 'text', (c) => c.notNull().references('meetings.id'))
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('occurrence_index', 'integer', (c) => c.notNull())
    .addColumn('start_at', 'bigint', (c) => c.notNull())
    .addColumn('end_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('meeting_slots_asset_idx').on('meeting_slots').columns(['asset_id', 'start_at']).execute();
  await db.schema.createIndex('meeting_slots_project_idx').on('meeting_slots').columns(['project_id', 'start_at']).execute();
  await db.schema.createIndex('meeting_slots_meeting_idx').on('meeting_slots').column('meeting_id').execute();

  await db.schema
    .createTable('meeting_histories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('meeting_id', 'text', (c) => c.notNull().references('meetings.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('by', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('source_detail', 'text')
    .addColumn('reason', 'text')
    .addColumn('status_before', 'text')
    .addColumn('old_start_at', 'bigint')
    .addColumn('old_end_at', 'bigint')
    .addColumn('new_start_at', 'bigint')
    .addColumn('new_end_at', 'bigint')
    .addUniqueConstraint('meeting_histories_seq_uq', ['meeting_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('meeting_histories').ifExists().execute();
  await db.schema.dropTable('meeting_slots').ifExists().execute();
  await db.schema.dropTable('meeting_attendees').ifExists().execute();
  await db.schema.dropTable('meetings').ifExists().execute();
  await db.schema.alterTable('projects').dropColumn('max_hold_ms').execute();
  await db.schema.alterTable('apps').dropColumn('service_user_id').execute();
}
