/**
 * 009: calendar sync.
 * - `calendar_events`: per provider, room and iCalendar UID, the meeting the
 *   invitation became (null when none was stored), the SEQUENCE and DTSTAMP last
 *   applied (older messages change nothing), and the hash of the last message with
 *   the reply it got (the same message again gets the same answer).
 * - `room_feeds`: each room's secret, revocable iCalendar feed address: the token
 *   sealed (so the ops API can show the address again) and its keyed tag (lookups).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('calendar_events')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('room_id', 'text', (c) => c.notNull())
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('meeting_id', 'text')
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('dtstamp', 'bigint')
    .addColumn('last_hash', 'text', (c) => c.notNull())
    .addColumn('last_reply', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('calendar_events_pk', ['provider', 'room_id', 'uid'])
    .execute();
  await db.schema.createIndex('calendar_events_meeting_idx').on('calendar_events').column('meeting_id').execute();

  await db.schema
    .createTable('room_feeds')
    .addColumn('room_id', 'text', (c) => c.primaryKey())
    .addColumn('token_enc', 'text', (c) => c.notNull())
    .addColumn('token_tag', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('room_feeds').execute();
  await db.schema.dropTable('calendar_events').execute();
}
