/**
 * 019: indexes that keep reads flat as bookings pile up (bench:scale, issue 30).
 * - `meetings(updated_at)` and `deliveries(updated_at)`: the console's change stream reads the rows
 *   changed after a cursor, oldest first, a few hundred at a time, and the latest change time when a
 *   listener starts; without them each poll (about once a second) scans and sorts every booking and
 *   every delivery ever made.
 * - `meetings(room_id, project_id, span_end_at)`: a room's calendar feed reads its bookings (in its
 *   project) whose span ends after the feed's window start; through `meetings_project_start_idx` it
 *   walked every booking of the project that started before the window's end (all of its history).
 *   Both equalities lead, so SQLite's planner (no statistics) prefers it to the project's index.
 * Additive only (a previous release ignores them). Built inside the migration's transaction on a live
 * table: see the README (bench:scale) for what they cost at a million bookings.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('meetings_updated_idx').ifNotExists().on('meetings').column('updated_at').execute();
  await db.schema.createIndex('deliveries_updated_idx').ifNotExists().on('deliveries').column('updated_at').execute();
  await db.schema
    .createIndex('meetings_room_span_idx')
    .ifNotExists()
    .on('meetings')
    .columns(['room_id', 'project_id', 'span_end_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('meetings_room_span_idx').ifExists().execute();
  await db.schema.dropIndex('deliveries_updated_idx').ifExists().execute();
  await db.schema.dropIndex('meetings_updated_idx').ifExists().execute();
}
