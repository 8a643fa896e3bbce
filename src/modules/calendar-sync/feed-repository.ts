/**
 * Persistence of room feeds (`room_feeds`): per room, its feed token sealed (so the
 * ops API can show the address again) and the token's keyed tag (the lookup key of
 * the public route). Every method takes the caller's transaction as its last argument.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Database, RoomFeedTable } from '../../platform/db/schema.js';
import { sealedTable } from '../../platform/db/sealed-table-repository.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';

/** A room's feed as stored: its token sealed, and the token's keyed tag. */
export interface StoredRoomFeed {
  roomId: string;
  /** The feed token, sealed with the secret box. */
  tokenEnc: string;
  /** `SecretBox.tag('room-feed', token)`: how the public route finds the feed. */
  tokenTag: string;
  createdAt: number;
}

const asFeed = (r: Selectable<RoomFeedTable> | undefined): StoredRoomFeed | undefined =>
  r ? { roomId: r.room_id, tokenEnc: r.token_enc, tokenTag: r.token_tag, createdAt: Number(r.created_at) } : undefined;

const asRow = (f: StoredRoomFeed): Selectable<RoomFeedTable> => ({
  room_id: f.roomId,
  token_enc: f.tokenEnc,
  token_tag: f.tokenTag,
  created_at: f.createdAt,
});

export class FeedRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async byRoom(roomId: string, db: Db = this.db): Promise<StoredRoomFeed | undefined> {
    return asFeed(await db.selectFrom('room_feeds').selectAll().where('room_id', '=', roomId).executeTakeFirst());
  }

  /** The feed with one of these tags (one per secrets key, see SecretBox.tags). */
  async byTag(tags: readonly string[], db: Db = this.db): Promise<StoredRoomFeed | undefined> {
    return asFeed(await db.selectFrom('room_feeds').selectAll().where('token_tag', 'in', tags).executeTakeFirst());
  }

  /** Stores the room's first feed; a feed another request stored first is kept (read it back). */
  async insertIfAbsent(feed: StoredRoomFeed, db: Db = this.db): Promise<void> {
    await db
      .insertInto('room_feeds')
      .values(asRow(feed))
      .onConflict((oc) => oc.column('room_id').doNothing())
      .execute();
  }

  /** Stores the room's feed, replacing the one it had (the old token stops working). */
  async replace(feed: StoredRoomFeed, db: Db = this.db): Promise<void> {
    const row = asRow(feed);
    await db
      .insertInto('room_feeds')
      .values(row)
      .onConflict((oc) =>
        oc.column('room_id').doUpdateSet({ token_enc: row.token_enc, token_tag: row.token_tag, created_at: row.created_at }),
      )
      .execute();
  }

  /** Deletes the room's feed; whether there was one. */
  async delete(roomId: string, db: Db = this.db): Promise<boolean> {
    const res = await db.deleteFrom('room_feeds').where('room_id', '=', roomId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}

/** The purpose of a feed token's keyed tag (`SecretBox.tag`), the lookup key of the public route. */
export const ROOM_FEED_TAG_PURPOSE = 'room-feed';

/** Calendar sync's sealed columns (SECRETS_KEY rotation): each feed's token and its keyed tag. */
export function sealedCalendarColumns(db: Kysely<Database>): SealedTable[] {
  return [
    sealedTable(db, {
      table: 'room_feeds',
      key: ['room_id'],
      sealed: ['token_enc'],
      tags: [{ column: 'token_tag', of: 'token_enc', purpose: ROOM_FEED_TAG_PURPOSE }],
    }),
    // Graph's clientState / Google's channel token of each connected room's subscription.
    sealedTable(db, { table: 'calendar_rooms', key: ['connection_id', 'room_id'], sealed: ['client_state_enc'] }),
  ];
}
