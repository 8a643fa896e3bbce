/** The invitations calendar sync has seen (calendar_events): per provider, room and UID. */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { CalendarEventTable, Database } from '../../platform/db/schema.js';

/** What calendar sync remembers of one invitation (provider, room, UID). */
export interface CalendarEvent {
  provider: string;
  roomId: string;
  uid: string;
  /** The meeting the invitation made (a booking, or a `rejected` meeting), or null. */
  meetingId: string | null;
  /** The highest SEQUENCE applied. */
  sequence: number;
  /** The DTSTAMP of the last message applied (epoch ms), or null. */
  dtstamp: number | null;
  /** The hash of the last message applied (the same message again is a duplicate). */
  lastHash: string;
  /** The room's last iTIP REPLY (a stale or repeated message is answered with it). */
  lastReply: string;
  createdAt: number;
  updatedAt: number;
}

const toEvent = (r: Selectable<CalendarEventTable>): CalendarEvent => ({
  provider: r.provider,
  roomId: r.room_id,
  uid: r.uid,
  meetingId: r.meeting_id,
  sequence: Number(r.sequence),
  dtstamp: r.dtstamp === null ? null : Number(r.dtstamp),
  lastHash: r.last_hash,
  lastReply: r.last_reply,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export class CalendarRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async event(provider: string, roomId: string, uid: string, db: Db = this.db): Promise<CalendarEvent | undefined> {
    const row = await db
      .selectFrom('calendar_events')
      .selectAll()
      .where('provider', '=', provider)
      .where('room_id', '=', roomId)
      .where('uid', '=', uid)
      .executeTakeFirst();
    return row && toEvent(row);
  }

  /** Rooms that have seen this UID from this provider. */
  async roomsOf(provider: string, uid: string, db: Db = this.db): Promise<string[]> {
    const rows = await db.selectFrom('calendar_events').select('room_id').where('provider', '=', provider).where('uid', '=', uid).execute();
    return rows.map((r) => r.room_id);
  }

  async put(e: CalendarEvent, db: Db = this.db): Promise<void> {
    const row: Selectable<CalendarEventTable> = {
      provider: e.provider,
      room_id: e.roomId,
      uid: e.uid,
      meeting_id: e.meetingId,
      sequence: e.sequence,
      dtstamp: e.dtstamp,
      last_hash: e.lastHash,
      last_reply: e.lastReply,
      created_at: e.createdAt,
      updated_at: e.updatedAt,
    };
    // The conflict key and the creation time stay as first stored; everything else is updated.
    const { provider: _provider, room_id: _room, uid: _uid, created_at: _created, ...set } = row;
    await db
      .insertInto('calendar_events')
      .values(row)
      .onConflict((oc) => oc.columns(['provider', 'room_id', 'uid']).doUpdateSet(set))
      .execute();
  }
}
