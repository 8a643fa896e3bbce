/** The invitations calendar sync has seen (calendar_events): per provider, room and UID. */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { CalendarEventTable, Database } from '../../platform/db/schema.js';

export type CalendarEventRow = Selectable<CalendarEventTable>;

export class CalendarRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async event(provider: string, roomId: string, uid: string, db: Db = this.db): Promise<CalendarEventRow | undefined> {
    return db.selectFrom('calendar_events').selectAll()
      .where('provider', '=', provider).where('room_id', '=', roomId).where('uid', '=', uid).executeTakeFirst();
  }

  /** Rooms that have seen this UID from this provider. */
  async roomsOf(provider: string, uid: string, db: Db = this.db): Promise<string[]> {
    const rows = await db.selectFrom('calendar_events').select('room_id').where('provider', '=', provider).where('uid', '=', uid).execute();
    return rows.map((r) => r.room_id);
  }

  async put(row: CalendarEventRow, db: Db = this.db): Promise<void> {
    const { provider, room_id, uid, created_at: _created, ...set } = row;
    await db.insertInto('calendar_events').values(row)
      .onConflict((oc) => oc.columns(['provider', 'room_id', 'uid']).doUpdateSet(set))
      .execute();
  }
}
