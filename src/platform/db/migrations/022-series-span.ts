/**
 * 022: `meetings_series_span_idx`, a partial index of the series rows (`recurrence is not null`) by project and
 * span end. GET /meetings reads a window in two parts (meeting-repository `list`): single bookings by a
 * two-sided range of the start-time index (a single booking is no longer than its project's longest hold), and
 * series rows, whose span runs to their last occurrence, through this index. Before it, the read walked every
 * booking of the project that started before the window's end: all of its history. Partial, so it holds only
 * the series rows and costs nothing on a single booking's insert. Additive only (a previous release ignores it).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('meetings_series_span_idx')
    .ifNotExists()
    .on('meetings')
    .columns(['project_id', 'span_end_at'])
    .where(sql.ref('recurrence'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('meetings_series_span_idx').ifExists().execute();
}
