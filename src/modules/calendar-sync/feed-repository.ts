/**
 * Persistence of room feeds (`room_feeds`): per room, its feed token sealed (so the
 * ops API can show the address again) and the token's keyed tag (the lookup key of
 * the public route). Every method takes the caller's transaction as its last argument.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Database, RoomFeedTable } from '../../platform/db/schema.js';

export type RoomFeedRow = Selectable<RoomFeedTable>;

const asRow = (r: RoomFeedRow | undefined): RoomFeedRow | undefined => (r ? { ...r, created_at: Number(r.created_at) } : undefined);

export class FeedRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async byRoom(roomId: string, db: Db = this.db): Promise<RoomFeedRow | undefined> {
    return asRow(await db.selectFrom('room_feeds').selectAll().where('room_id', '=', roomId).executeTakeFirst());
  }

  async byTag(tag: string, db: Db = this.db): Promise<RoomFeedRow | undefined> {
    return asRow(await db.selectFrom('room_feeds').selectAll().where('token_tag', '=', tag).executeTakeFirst());
  }

  /** Stores the room's first feed; a feed another request stored first is kept (read it back). */
  async insertIfAbsent(row: RoomFeedRow, db: Db = this.db): Promise<void> {
    await db.insertInto('room_feeds').values(row).onConflict((oc) => oc.column('room_id').doNothing()).execute();
  }

  /** Stores the room's feed, replacing the one it had (the old token stops working). */
  async replace(row: RoomFeedRow, db: Db = this.db): Promise<void> {
    await db
      .insertInto('room_feeds')
      .values(row)
      .onConflict((oc) => oc.column('room_id').doUpdateSet({ token_enc: row.token_enc, token_tag: row.token_tag, created_at: row.created_at }))
      .execute();
  }

  /** Deletes the room's feed; whether there was one. */
  async delete(roomId: string, db: Db = this.db): Promise<boolean> {
    const res = await db.deleteFrom('room_feeds').where('room_id', '=', roomId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
