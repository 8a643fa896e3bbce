/**
 * 018: utilisation analytics.
 * - `meeting_histories` (booking): `analytics_at`, when the analytics job took the entry into its figures
 *   (null: not yet). A booking change writes its history entry as before (no new statement on the write
 *   path); the job finds the bookings to refresh through the partial index on the entries still null.
 * - `access_entries` (devices): `analytics_at`, the same for walk-ins.
 * - `meetings` (booking): an index on (asset_id, span_end_at).
 * - `projects` (site): `analytics_named_reports`, the site document's `analytics.namedReports` (0/1).
 * - `analytics_occurrences` (analytics): what each occurrence of a booking adds to the figures (its
 *   buckets of minutes and counts per local day and hour), so a changed booking is taken out and put
 *   back exactly.
 * - `analytics_rollups` (analytics): the sums per level (asset or project; day, month, day-hour or
 *   month-weekhour), kept by the job and rebuilt by `npm run analytics:rebuild`.
 * - `analytics_assets` (analytics): each asset's opening hours, time zone and status per local day it
 *   took effect, so a change of hours does not rewrite the past.
 * - `analytics_state` (analytics): the job's lease (one instance refreshes at a time).
 * Additive only: a previous release ignores all of it.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('meeting_histories').addColumn('analytics_at', 'bigint').execute();
  await db.schema
    .createIndex('meeting_histories_analytics_idx')
    .on('meeting_histories')
    .column('meeting_id')
    .where(sql.ref('analytics_at'), 'is', null)
    .execute();
  // A booking's asset and span: the bookings a change of an asset's hours touches, and the rebuild asset by asset.
  await db.schema.createIndex('meetings_asset_span_idx').on('meetings').columns(['asset_id', 'span_end_at']).execute();
  await db.schema.alterTable('access_entries').addColumn('analytics_at', 'bigint').execute();
  await db.schema
    .createIndex('access_entries_analytics_idx')
    .on('access_entries')
    .column('id')
    .where((w) => w.and([w(sql.ref('outcome'), '=', sql.lit('walk-in')), w(sql.ref('analytics_at'), 'is', null)]))
    .execute();
  await db.schema.alterTable('projects').addColumn('analytics_named_reports', 'integer').execute();

  await db.schema
    .createTable('analytics_occurrences')
    .addColumn('meeting_id', 'text', (c) => c.notNull())
    .addColumn('occurrence_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('asset_kind', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('organizer_user_id', 'text', (c) => c.notNull())
    .addColumn('start_at', 'bigint', (c) => c.notNull())
    /** 1 when the occurrence counts and was not cancelled before its start (it reaches its start). */
    .addColumn('held', 'integer', (c) => c.notNull())
    /** Its booked minutes, and 1/0: a no-show, checked in (the per-organizer report sums these). */
    .addColumn('booked', 'bigint', (c) => c.notNull())
    .addColumn('no_show', 'integer', (c) => c.notNull())
    .addColumn('checked_in', 'integer', (c) => c.notNull())
    /** JSON: the buckets it adds (see modules/analytics/rules/booking-figures.ts). */
    .addColumn('buckets', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_occurrences_pk', ['meeting_id', 'occurrence_id'])
    .execute();
  await db.schema
    .createIndex('analytics_occurrences_start_idx')
    .on('analytics_occurrences')
    .columns(['project_id', 'asset_kind', 'start_at'])
    .execute();

  await db.schema
    .createTable('analytics_rollups')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('asset_kind', 'text', (c) => c.notNull())
    /** ad (asset-day), am (asset-month), adh (asset-day-hour), amw (asset-month-weekhour), pd, pdh (project-…). */
    .addColumn('level', 'text', (c) => c.notNull())
    /** '' at project levels. */
    .addColumn('asset_id', 'text', (c) => c.notNull())
    /** YYYY-MM-DD or YYYY-MM (local). */
    .addColumn('period', 'text', (c) => c.notNull())
    /** The local hour (day-hour levels), (ISO weekday - 1) * 24 + hour (weekhour levels), else -1. */
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('booked', 'bigint', (c) => c.notNull())
    .addColumn('occupied', 'bigint', (c) => c.notNull())
    .addColumn('released', 'bigint', (c) => c.notNull())
    .addColumn('bookings', 'bigint', (c) => c.notNull())
    .addColumn('check_ins', 'bigint', (c) => c.notNull())
    .addColumn('no_shows', 'bigint', (c) => c.notNull())
    .addColumn('cancellations', 'bigint', (c) => c.notNull())
    .addColumn('walk_ins', 'bigint', (c) => c.notNull())
    .addColumn('held', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_rollups_pk', ['project_id', 'asset_kind', 'level', 'asset_id', 'period', 'slot'])
    .execute();

  await db.schema
    .createTable('analytics_assets')
    .addColumn('asset_id', 'text', (c) => c.notNull())
    /** The local day (YYYY-MM-DD) this version took effect. */
    .addColumn('from_day', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('asset_kind', 'text', (c) => c.notNull())
    /** JSON: per ISO weekday the open intervals in local minutes (breaks taken out). */
    .addColumn('hours', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    /** The asset's and project's updated_at this version was read from. */
    .addColumn('source_mark', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_assets_pk', ['asset_id', 'from_day'])
    .execute();
  await db.schema.createIndex('analytics_assets_project_idx').on('analytics_assets').columns(['project_id', 'asset_kind']).execute();

  await db.schema
    .createTable('analytics_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('analytics_state').execute();
  await db.schema.dropTable('analytics_assets').execute();
  await db.schema.dropTable('analytics_rollups').execute();
  await db.schema.dropTable('analytics_occurrences').execute();
  await db.schema.dropIndex('access_entries_analytics_idx').execute();
  await db.schema.dropIndex('meetings_asset_span_idx').execute();
  await db.schema.dropIndex('meeting_histories_analytics_idx').execute();
}
