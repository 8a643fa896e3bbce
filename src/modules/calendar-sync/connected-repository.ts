/**
 * SQL of connected room calendars: the connections (read; the site module writes
 * them), each connected room's subscription and sync state (`calendar_rooms`), the
 * links between provider events and bookings (`calendar_links`) and the writes owed
 * to providers (`calendar_outbox`). Times here are real time unless a name says otherwise.
 */
import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type {
  CalendarConnectionTable,
  CalendarLinkTable,
  CalendarOutboxTable,
  CalendarRoomTable,
  Database,
} from '../../platform/db/schema.js';

export type ConnectionRow = Selectable<CalendarConnectionTable>;
export type ConnectedRoomRow = Selectable<CalendarRoomTable>;
export type LinkRow = Selectable<CalendarLinkTable>;
export type OutboxRow = Selectable<CalendarOutboxTable>;

export class ConnectedRepository {
  constructor(private readonly db: Kysely<Database>) {}

  // --- connections (site's table, read) -----------------------------------------

  connections(db: Db = this.db): Promise<ConnectionRow[]> {
    return db.selectFrom('calendar_connections').selectAll().orderBy('id').execute();
  }

  /** By id or key. */
  connection(idOrKey: string, db: Db = this.db): Promise<ConnectionRow | undefined> {
    return db
      .selectFrom('calendar_connections')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', idOrKey), eb('key', '=', idOrKey)]))
      .executeTakeFirst();
  }

  // --- connected rooms ----------------------------------------------------------

  roomsOf(connectionId: string, db: Db = this.db): Promise<ConnectedRoomRow[]> {
    return db.selectFrom('calendar_rooms').selectAll().where('connection_id', '=', connectionId).orderBy('room_id').execute();
  }

  allRooms(db: Db = this.db): Promise<ConnectedRoomRow[]> {
    return db.selectFrom('calendar_rooms').selectAll().execute();
  }

  room(connectionId: string, roomId: string, db: Db = this.db): Promise<ConnectedRoomRow | undefined> {
    return db
      .selectFrom('calendar_rooms')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .where('room_id', '=', roomId)
      .executeTakeFirst();
  }

  bySubscription(connectionId: string, subscriptionId: string, db: Db = this.db): Promise<ConnectedRoomRow | undefined> {
    return db
      .selectFrom('calendar_rooms')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .where('subscription_id', '=', subscriptionId)
      .executeTakeFirst();
  }

  async insertRoom(
    row: ConnectedRoomRow | Omit<ConnectedRoomRow, 'subscribe_attempts' | 'sync_attempts' | 'changes_in' | 'changes_out'>,
    db: Db = this.db,
  ): Promise<void> {
    await db
      .insertInto('calendar_rooms')
      .values(row)
      .onConflict((oc) => oc.columns(['connection_id', 'room_id']).doNothing())
      .execute();
  }

  async updateRoom(connectionId: string, roomId: string, set: Updateable<CalendarRoomTable>, db: Db = this.db): Promise<void> {
    await db.updateTable('calendar_rooms').set(set).where('connection_id', '=', connectionId).where('room_id', '=', roomId).execute();
  }

  async deleteRoom(connectionId: string, roomId: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom('calendar_rooms').where('connection_id', '=', connectionId).where('room_id', '=', roomId).execute();
  }

  /** A pull is wanted now (a notification): sooner than any pull already due; `full` drops the cursor. */
  async requestSync(connectionId: string, roomId: string, now: number, full: boolean, db: Db = this.db): Promise<void> {
    await db
      .updateTable('calendar_rooms')
      .set((eb) => ({
        sync_due_at: eb.fn.coalesce(eb.case().when('sync_due_at', '<', now).then(eb.ref('sync_due_at')).else(now).end(), eb.val(now)),
        ...(full ? { cursor: null, cursor_at: null } : {}),
      }))
      .where('connection_id', '=', connectionId)
      .where('room_id', '=', roomId)
      .execute();
  }

  /** Subscription work is wanted now (renew, re-create). */
  async requestSubscribe(
    connectionId: string,
    roomId: string,
    now: number,
    set: Updateable<CalendarRoomTable> = {},
    db: Db = this.db,
  ): Promise<void> {
    await this.updateRoom(connectionId, roomId, { subscribe_due_at: now, ...set }, db);
  }

  dueSubscriptions(realNow: number, limit: number, db: Db = this.db): Promise<ConnectedRoomRow[]> {
    return db
      .selectFrom('calendar_rooms')
      .selectAll()
      .where('subscribe_due_at', '<=', realNow)
      .where((eb) => eb.or([eb('subscribe_lease_until', 'is', null), eb('subscribe_lease_until', '<', realNow)]))
      .orderBy('subscribe_due_at')
      .limit(limit)
      .execute();
  }

  dueSyncs(realNow: number, limit: number, db: Db = this.db): Promise<ConnectedRoomRow[]> {
    return db
      .selectFrom('calendar_rooms')
      .selectAll()
      .where('sync_due_at', '<=', realNow)
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('sync_lease_until', 'is', null), eb('sync_lease_until', '<', realNow)]))
      .orderBy('sync_due_at')
      .limit(limit)
      .execute();
  }

  /** Takes the room's subscription work or pull until `until` (one instance at a time). */
  async claimRoom(row: ConnectedRoomRow, what: 'subscribe' | 'sync', realNow: number, until: number, db: Db = this.db): Promise<boolean> {
    const due = what === 'subscribe' ? 'subscribe_due_at' : 'sync_due_at';
    const lease = what === 'subscribe' ? 'subscribe_lease_until' : 'sync_lease_until';
    const res = await db
      .updateTable('calendar_rooms')
      .set({ [lease]: until, [due]: null })
      .where('connection_id', '=', row.connection_id)
      .where('room_id', '=', row.room_id)
      .where(due, '=', row[due]!)
      .where((eb) => eb.or([eb(lease, 'is', null), eb(lease, '<', realNow)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Ends a claim; `retryAt` makes it due again (kept when something asked for it sooner meanwhile). */
  async releaseRoom(
    row: ConnectedRoomRow,
    what: 'subscribe' | 'sync',
    set: Updateable<CalendarRoomTable>,
    retryAt: number | null,
    db: Db = this.db,
  ): Promise<void> {
    const due = what === 'subscribe' ? 'subscribe_due_at' : 'sync_due_at';
    const lease = what === 'subscribe' ? 'subscribe_lease_until' : 'sync_lease_until';
    await db
      .updateTable('calendar_rooms')
      .set((eb) => ({
        ...set,
        [lease]: null,
        ...(retryAt === null
          ? {}
          : { [due]: eb.fn.coalesce(eb.case().when(due, '<', retryAt).then(eb.ref(due)).else(retryAt).end(), eb.val(retryAt)) }),
      }))
      .where('connection_id', '=', row.connection_id)
      .where('room_id', '=', row.room_id)
      .execute();
  }

  async countChanges(
    connectionId: string,
    roomId: string,
    field: 'changes_in' | 'changes_out',
    n: number,
    db: Db = this.db,
  ): Promise<void> {
    if (n <= 0) return;
    await db
      .updateTable('calendar_rooms')
      .set({ [field]: sql`${sql.ref(field)} + ${n}` })
      .where('connection_id', '=', connectionId)
      .where('room_id', '=', roomId)
      .execute();
  }

  // --- links --------------------------------------------------------------------

  link(connectionId: string, roomId: string, uid: string, db: Db = this.db): Promise<LinkRow | undefined> {
    return db
      .selectFrom('calendar_links')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .where('room_id', '=', roomId)
      .where('uid', '=', uid)
      .executeTakeFirst();
  }

  linkByRemoteId(connectionId: string, roomId: string, remoteId: string, db: Db = this.db): Promise<LinkRow | undefined> {
    return db
      .selectFrom('calendar_links')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .where('remote_id', '=', remoteId)
      .where('room_id', '=', roomId)
      .executeTakeFirst();
  }

  linksOfMeeting(connectionId: string, meetingId: string, db: Db = this.db): Promise<LinkRow[]> {
    return db
      .selectFrom('calendar_links')
      .selectAll()
      .where('meeting_id', '=', meetingId)
      .where('connection_id', '=', connectionId)
      .execute();
  }

  /** Invitations imported into this room that are not gone (a full read finds out which vanished). */
  openRemoteLinks(connectionId: string, roomId: string, db: Db = this.db): Promise<LinkRow[]> {
    return db
      .selectFrom('calendar_links')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .where('room_id', '=', roomId)
      .where('origin', '=', 'remote')
      .where('gone', '=', 0)
      .execute();
  }

  async putLink(row: Omit<LinkRow, 'gone'> & { gone?: number }, db: Db = this.db): Promise<void> {
    const { connection_id: _c, room_id: _r, uid: _u, created_at: _at, ...set } = row;
    await db
      .insertInto('calendar_links')
      .values(row)
      .onConflict((oc) => oc.columns(['connection_id', 'room_id', 'uid']).doUpdateSet(set))
      .execute();
  }

  async updateLink(
    l: Pick<LinkRow, 'connection_id' | 'room_id' | 'uid'>,
    set: Updateable<CalendarLinkTable>,
    db: Db = this.db,
  ): Promise<void> {
    await db
      .updateTable('calendar_links')
      .set(set)
      .where('connection_id', '=', l.connection_id)
      .where('room_id', '=', l.room_id)
      .where('uid', '=', l.uid)
      .execute();
  }

  // --- outbox -------------------------------------------------------------------

  /**
   * A booking of a room changed: its room's connections owe the provider a write (one
   * statement: nothing when the room is not connected). Coalesced per connection and booking.
   */
  async enqueueBooking(meetingId: string, roomId: string, realNow: number, db: Db = this.db): Promise<void> {
    await db
      .insertInto('calendar_outbox')
      .columns(['id', 'connection_id', 'room_id', 'kind', 'meeting_id', 'uid', 'due_at', 'version', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('calendar_rooms')
          .select((s) => [
            sql<string>`${'booking:'} || ${s.ref('connection_id')} || ${':' + meetingId}`.as('id'),
            'connection_id',
            'room_id',
            sql.lit('booking').as('kind'),
            sql.val(meetingId).as('meeting_id'),
            sql<null>`null`.as('uid'),
            sql.val(realNow).as('due_at'),
            sql.lit(0).as('version'),
            sql.val(realNow).as('created_at'),
          ])
          .where('room_id', '=', roomId)
          .where('status', '=', 'active'),
      )
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({ due_at: realNow, attempts: 0, version: sql`${eb.ref('calendar_outbox.version')} + 1` })),
      )
      .execute();
  }

  /** The room's answer to an invitation is owed (coalesced per invitation). */
  async enqueueAnswer(
    connectionId: string,
    roomId: string,
    uid: string,
    meetingId: string | null,
    realNow: number,
    db: Db = this.db,
  ): Promise<void> {
    await db
      .insertInto('calendar_outbox')
      .values({
        id: `answer:${connectionId}:${roomId}:${uid}`,
        connection_id: connectionId,
        room_id: roomId,
        kind: 'answer',
        meeting_id: meetingId,
        uid,
        due_at: realNow,
        version: 0,
        created_at: realNow,
      })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({ due_at: realNow, attempts: 0, version: sql`${eb.ref('calendar_outbox.version')} + 1` })),
      )
      .execute();
  }

  dueOutbox(realNow: number, limit: number, db: Db = this.db): Promise<OutboxRow[]> {
    return db
      .selectFrom('calendar_outbox')
      .selectAll()
      .where('due_at', '<=', realNow)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', realNow)]))
      .orderBy('due_at')
      .orderBy('created_at')
      .limit(limit)
      .execute();
  }

  async outboxBacklog(realNow: number, db: Db = this.db): Promise<{ n: number | string | bigint; oldest: number | string | null }> {
    return db
      .selectFrom('calendar_outbox')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('due_at').as('oldest')])
      .where('due_at', '<=', realNow)
      .executeTakeFirstOrThrow() as Promise<{ n: number; oldest: number | null }>;
  }

  async claimOutbox(row: OutboxRow, realNow: number, until: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('calendar_outbox')
      .set({ lease_until: until })
      .where('id', '=', row.id)
      .where('version', '=', row.version)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', realNow)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Done: removed unless enqueued again meanwhile (then it runs again). */
  async finishOutbox(row: OutboxRow, db: Db = this.db): Promise<void> {
    await db.deleteFrom('calendar_outbox').where('id', '=', row.id).where('version', '=', row.version).execute();
    await db.updateTable('calendar_outbox').set({ lease_until: null }).where('id', '=', row.id).execute();
  }

  async failOutbox(row: OutboxRow, error: string, retryAt: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('calendar_outbox')
      .set((eb) => ({
        lease_until: null,
        attempts: sql`${eb.ref('attempts')} + 1`,
        last_error: error,
        due_at: eb.case().when('version', '=', row.version).then(retryAt).else(eb.ref('due_at')).end(),
      }))
      .where('id', '=', row.id)
      .execute();
  }

  pendingOutbox(connectionId: string, roomId: string, db: Db = this.db): Promise<OutboxRow[]> {
    return db.selectFrom('calendar_outbox').selectAll().where('connection_id', '=', connectionId).where('room_id', '=', roomId).execute();
  }
}
