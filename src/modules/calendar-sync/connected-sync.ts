/**
 * Connected room calendars, inbound: which rooms take part (a connection of the
 * room's project and a room email), their provider subscriptions (Graph change
 * notifications, Google watch channels: created, renewed before expiry, re-created
 * when lost), the notifications the providers post, and the pulls that read what
 * changed (Graph delta on the calendar view, Google events.list with a sync token)
 * and hand each change to the calendar actor, which decides it under the room's lock
 * like any invitation. Writes back to the providers live in calendar-writeback.ts.
 *
 * A notification only marks a room as due for a pull; the pull job (one instance
 * per room at a time, claimed) reads the changes and advances the cursor only after
 * every change was applied, so a crash or a provider outage repeats a read, never
 * loses one; repeated changes are recognised by the actor (same state: duplicate).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.js';
import type { Db } from '../../platform/db/db.js';
import { safeEqual, type SecretBox } from '../../platform/crypto/secrets.js';
import { errors, ServiceError } from '../../platform/errors.js';
import type { CalendarConnectionView } from '../../contract/calendar-sync.js';
import type { CalendarSync } from './calendar-service.js';
import {
  CursorExpiredError,
  NotFoundError,
  ConnectorUnavailableError,
  removedEvent,
  type CalendarConnector,
  type ChangePage,
  type RemoteEvent,
} from './connector.js';
import type { ConnectedRepository, ConnectedRoomRow, ConnectionRow, LinkRow } from './connected-repository.js';
import type { ConnectorRegistry } from './connection-registry.js';
import type { CalendarRoom, CalendarRooms } from './ports.js';
import { messageOf, remoteHash, showsOwnDecline } from './connected-mapping.js';
import { lastAnswerOf, renewAt, retryDelayMs, syncWindow } from './rules/connected-timing.js';

export const CALENDAR_SUBSCRIPTIONS_JOB = 'calendar-subscriptions';
export const CALENDAR_PULL_JOB = 'calendar-pull';

/** How long one instance holds a room's subscription work or pull. */
export const ROOM_LEASE_MS = 120_000;

export interface ConnectedSyncDeps {
  repo: ConnectedRepository;
  registry: ConnectorRegistry;
  actor: CalendarSync;
  rooms: CalendarRooms;
  secretBox: SecretBox;
  /** Service time (booking rules, the sync window). */
  clock: Clock;
  /** Real time (subscriptions, leases, retries). */
  realClock: Clock;
  publicBaseUrl: () => string;
  /** A job has work now. */
  poke: (job: string) => void;
}

/** What the webhook route answers a provider. */
export interface WebhookAnswer {
  status: 200 | 202;
  /** text/plain body (Graph's validation handshake). */
  text?: string;
}

export interface WebhookRequest {
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export class ConnectedSync {
  constructor(private readonly deps: ConnectedSyncDeps) {}

  // --- which rooms take part ------------------------------------------------------

  /**
   * Brings `calendar_rooms` in line with the connections and the rooms' emails: a
   * room newly connected gets a row (its subscription due now); a room that left
   * (email removed, connection removed) is marked removed (its subscription stopped);
   * a changed email starts over on the new calendar.
   */
  async reconcile(): Promise<void> {
    const { repo, rooms } = this.deps;
    const now = this.deps.realClock.now();
    const wanted = new Map<string, { connectionId: string; room: CalendarRoom }>();
    for (const conn of await repo.connections()) {
      for (const room of await rooms.roomsWithEmail(conn.project_id))
        wanted.set(`${conn.id}|${room.asset.id}`, { connectionId: conn.id, room });
    }
    const existing = new Map((await repo.allRooms()).map((r) => [`${r.connection_id}|${r.room_id}`, r]));
    for (const [key, w] of wanted) {
      const row = existing.get(key);
      if (!row) await repo.insertRoom(newRoomRow(w.connectionId, w.room, now));
      else if (row.status !== 'active' || row.calendar_id !== w.room.email)
        await repo.updateRoom(row.connection_id, row.room_id, {
          status: 'active',
          calendar_id: w.room.email,
          ...(row.calendar_id !== w.room.email ? { subscription_id: null, resource_id: null, expires_at: null, cursor: null } : {}),
          subscribe_due_at: now,
          updated_at: now,
        });
    }
    for (const [key, row] of existing) {
      if (!wanted.has(key) && row.status === 'active')
        await repo.updateRoom(row.connection_id, row.room_id, {
          status: 'removed',
          subscribe_due_at: now,
          sync_due_at: null,
          updated_at: now,
        });
    }
    this.deps.poke(CALENDAR_SUBSCRIPTIONS_JOB);
  }

  // --- subscriptions ------------------------------------------------------------

  dueSubscriptions(realNow: number, limit: number) {
    return this.deps.repo.dueSubscriptions(realNow, limit);
  }

  claim(row: ConnectedRoomRow, what: 'subscribe' | 'sync'): Promise<boolean> {
    const now = this.deps.realClock.now();
    return this.deps.repo.claimRoom(row, what, now, now + ROOM_LEASE_MS);
  }

  /** Creates, renews or stops the room's subscription (claimed). */
  async subscription(row: ConnectedRoomRow): Promise<void> {
    const { repo, realClock } = this.deps;
    const conn = await repo.connection(row.connection_id);
    if (!conn || row.status === 'removed') return this.stop(row, conn);
    const connector = this.deps.registry.connectorOf(conn);
    const cal = { calendarId: row.calendar_id };
    const now = realClock.now();
    const clientState = row.client_state_enc ? this.deps.secretBox.open(row.client_state_enc) : randomBytes(24).toString('base64url');
    const p = {
      notificationUrl: this.notificationUrl(conn.id),
      clientState,
      expiresAt: now + connector.maxSubscriptionMs,
      channelId: randomUUID(),
    };
    try {
      const current = row.subscription_id && row.expires_at !== null && Number(row.expires_at) > now;
      let sub;
      let fresh = !current;
      if (current) {
        sub = await connector
          .renew(cal, { id: row.subscription_id!, resourceId: row.resource_id, expiresAt: Number(row.expires_at) }, p)
          .catch((err) => (err instanceof NotFoundError ? null : Promise.reject(err)));
      }
      if (!sub) {
        sub = await connector.subscribe(cal, p);
        fresh = true;
      }
      await repo.releaseRoom(
        row,
        'subscribe',
        {
          subscription_id: sub.id,
          resource_id: sub.resourceId,
          client_state_enc: this.deps.secretBox.seal(clientState),
          expires_at: sub.expiresAt,
          subscribe_attempts: 0,
          last_error: null,
          updated_at: now,
        },
        renewAt(now, sub.expiresAt),
      );
      // A new subscription heard nothing before it existed: read everything once (the cursor kept when there is one).
      if (fresh) await repo.requestSync(row.connection_id, row.room_id, now, row.cursor === null);
      this.deps.poke(CALENDAR_PULL_JOB);
    } catch (err) {
      await this.failed(row, 'subscribe', err);
    }
  }

  private async stop(row: ConnectedRoomRow, conn: ConnectionRow | undefined): Promise<void> {
    if (conn && row.subscription_id) {
      const connector = this.deps.registry.connectorOf(conn);
      try {
        await connector.unsubscribe(
          { calendarId: row.calendar_id },
          {
            id: row.subscription_id,
            resourceId: row.resource_id,
            expiresAt: Number(row.expires_at ?? 0),
          },
        );
      } catch (err) {
        if (!(err instanceof NotFoundError)) return this.failed(row, 'subscribe', err);
      }
    }
    await this.deps.repo.deleteRoom(row.connection_id, row.room_id);
  }

  /** Records a failed attempt (the room's last error) and when to try again. */
  private async failed(row: ConnectedRoomRow, what: 'subscribe' | 'sync', err: unknown): Promise<void> {
    const now = this.deps.realClock.now();
    const attempts = (what === 'subscribe' ? row.subscribe_attempts : row.sync_attempts) + 1;
    const retryAfter = err instanceof ConnectorUnavailableError ? err.retryAfterMs : null;
    await this.deps.repo.releaseRoom(
      row,
      what,
      {
        [what === 'subscribe' ? 'subscribe_attempts' : 'sync_attempts']: attempts,
        last_error: describe(err),
        last_error_at: now,
        updated_at: now,
      },
      now + retryDelayMs(attempts, retryAfter),
    );
  }

  // --- pulls --------------------------------------------------------------------

  dueSyncs(realNow: number, limit: number) {
    return this.deps.repo.dueSyncs(realNow, limit);
  }

  /** Reads the room calendar's changes and applies each (claimed). */
  async pull(row: ConnectedRoomRow): Promise<void> {
    const { repo, realClock } = this.deps;
    const conn = await repo.connection(row.connection_id);
    const ctx = await this.deps.rooms.assetInContext('room', row.room_id);
    if (!conn || !ctx) return repo.releaseRoom(row, 'sync', {}, null);
    const room: CalendarRoom = { ...ctx, email: row.calendar_id };
    try {
      const connector = this.deps.registry.connectorOf(conn);
      const page = await this.read(connector, row);
      let applied = 0;
      for (const e of page.events) if (await this.applyEvent(conn, room, e)) applied++;
      if (page.full) applied += await this.vanished(conn, room, page);
      const now = realClock.now();
      await repo.releaseRoom(
        row,
        'sync',
        {
          cursor: page.cursor,
          cursor_at: now,
          last_sync_at: now,
          sync_attempts: 0,
          last_error: null,
          updated_at: now,
        },
        null,
      );
      await repo.countChanges(row.connection_id, row.room_id, 'changes_in', applied);
    } catch (err) {
      await this.failed(row, 'sync', err);
    }
  }

  /** Incremental when there is a cursor; a full read of the window when there is none or it expired. */
  private async read(connector: CalendarConnector, row: ConnectedRoomRow): Promise<ChangePage> {
    const cal = { calendarId: row.calendar_id };
    const window = syncWindow(this.deps.clock.now());
    if (row.cursor === null) return connector.changes(cal, null, window);
    try {
      return await connector.changes(cal, row.cursor, window);
    } catch (err) {
      if (!(err instanceof CursorExpiredError)) throw err;
      return connector.changes(cal, null, window);
    }
  }

  /** One change of the room's calendar through the actor; true when it changed something. */
  private async applyEvent(conn: ConnectionRow, room: CalendarRoom, e: RemoteEvent): Promise<boolean> {
    const { repo } = this.deps;
    const roomId = room.asset.id;
    let link = (await repo.linkByRemoteId(conn.id, roomId, e.id)) ?? (e.uid ? await repo.link(conn.id, roomId, e.uid) : undefined);
    if (!link && e.bookingId) link = (await repo.linksOfMeeting(conn.id, e.bookingId)).find((l) => l.remote_id === e.id);
    if (!link && e.removed) return false;
    // Google's incremental reads report events outside the window the full read covered: new ones there are not ours to take.
    const window = syncWindow(this.deps.clock.now());
    if (!link && (e.end <= window.start || e.start >= window.end)) return false;
    const service = link ? link.origin === 'service' : e.bookingId !== null;
    if (service && !this.personEdited(link, e)) return false;
    const uid = link?.uid ?? e.uid;
    const lastAnswer = lastAnswerOf(link?.written_hash ?? null);
    if (!service && showsOwnDecline(e, { email: room.email, lastAnswer })) return false;
    const message = messageOf(e, { uid, roomEmail: room.email, lastAnswer, serviceEvent: service });
    const provider = conn.provider === 'google' ? 'google' : 'microsoft';
    const result = await this.deps.actor.applyRemote(provider, room, message, {
      hash: remoteHash(e, { email: room.email, lastAnswer }),
      serviceEvent: service,
      within: async (trx, r) => {
        const now = this.deps.realClock.now();
        if (service) return this.serviceEventDecided(trx, link!, e, r.outcome, roomId, now);
        await repo.putLink(importedLink(conn.id, roomId, uid, e, r.meetingId ?? link?.meeting_id ?? null, link, now), trx);
        if (!e.removed) await repo.enqueueAnswer(conn.id, roomId, uid, r.meetingId, now, trx);
      },
    });
    return !['duplicate', 'stale', 'unchanged'].includes(result.outcome);
  }

  /**
   * A person's edit of an event the service wrote, decided: removed → the link is gone; moved → what the event
   * shows is what the booking is; refused (a series' occurrence, a checked-in booking that cannot move) → the
   * event is written back to the booking's times.
   */
  private async serviceEventDecided(trx: Db, link: LinkRow, e: RemoteEvent, outcome: string, roomId: string, now: number): Promise<void> {
    const { repo } = this.deps;
    if (e.removed) return repo.updateLink(link, { gone: 1, updated_at: now }, trx);
    if (outcome === 'moved')
      return repo.updateLink(link, { written_start: e.start, written_end: e.end, etag: e.etag, updated_at: now }, trx);
    if (outcome !== 'refused' || !link.meeting_id) return;
    await repo.updateLink(link, { written_hash: null, written_start: e.start, written_end: e.end, etag: e.etag, updated_at: now }, trx);
    await repo.enqueueBooking(link.meeting_id, roomId, now, trx);
  }

  /** An event the service wrote: only a change a person made counts (not the service's own write coming back). */
  private personEdited(link: LinkRow | undefined, e: RemoteEvent): boolean {
    if (!link || !link.meeting_id || link.gone) return false;
    if (e.removed) return true;
    if (link.etag !== null && e.etag === link.etag) return false;
    return !(e.start === Number(link.written_start) && e.end === Number(link.written_end));
  }

  /** After a full read: imported invitations of the window that it no longer holds were deleted. */
  private async vanished(conn: ConnectionRow, room: CalendarRoom, page: ChangePage): Promise<number> {
    const seen = new Set(page.events.filter((e) => !e.removed).map((e) => e.id));
    const window = syncWindow(this.deps.clock.now());
    let n = 0;
    for (const link of await this.deps.repo.openRemoteLinks(conn.id, room.asset.id)) {
      if (seen.has(link.remote_id)) continue;
      const start = Number(link.written_start ?? 0);
      const end = Number(link.written_end ?? 0);
      if (end <= window.start || start >= window.end) continue;
      const gone = removedEvent({ id: link.remote_id, uid: link.uid, updatedAt: this.deps.realClock.now() });
      if (await this.applyEvent(conn, room, gone)) n++;
    }
    return n;
  }

  // --- the connection view ------------------------------------------------------

  /** GET /ops/v1/calendar-sync/connections/{id} (id or key): each connected room's subscription and sync state. */
  async view(idOrKey: string): Promise<CalendarConnectionView> {
    const { repo, realClock } = this.deps;
    const conn = await repo.connection(idOrKey);
    if (!conn) throw errors.notFound('Unknown calendar connection');
    const now = realClock.now();
    const iso = (t: number | string | null) => (t === null ? null : new Date(Number(t)).toISOString());
    const rooms = [];
    for (const r of await repo.roomsOf(conn.id)) {
      const ctx = await this.deps.rooms.assetInContext('room', r.room_id);
      rooms.push({
        roomId: r.room_id,
        roomName: ctx?.asset.name ?? '',
        calendarId: r.calendar_id,
        status: r.status,
        subscription: r.subscription_id && r.expires_at !== null ? { id: r.subscription_id, expiresAt: iso(r.expires_at)! } : null,
        lastSyncAt: iso(r.last_sync_at),
        cursorAgeSeconds: r.cursor !== null && r.cursor_at !== null ? Math.max(0, Math.floor((now - Number(r.cursor_at)) / 1000)) : null,
        lastError: r.last_error,
        lastErrorAt: iso(r.last_error_at),
        changesIn: Number(r.changes_in),
        changesOut: Number(r.changes_out),
        pendingWrites: (await repo.pendingOutbox(conn.id, r.room_id)).length,
      });
    }
    return {
      id: conn.id,
      key: conn.key,
      projectId: conn.project_id,
      provider: conn.provider === 'google' ? 'google' : 'microsoft',
      webhookUrl: this.notificationUrl(conn.id),
      rooms,
    };
  }

  private notificationUrl(connectionId: string): string {
    return `${this.deps.publicBaseUrl().replace(/\/+$/, '')}/calendar/webhooks/${connectionId}`;
  }

  // --- notifications ------------------------------------------------------------

  /** POST /calendar/webhooks/{connectionId}: Graph's handshake and notifications, Google's channel messages. */
  async receive(connectionId: string, req: WebhookRequest): Promise<WebhookAnswer> {
    const conn = await this.deps.repo.connection(connectionId);
    if (!conn || conn.id !== connectionId) throw errors.notFound('Unknown calendar connection');
    if (conn.provider === 'google') return this.googleMessage(conn, req);
    const token = req.query.validationToken;
    // Graph's validation handshake: the token echoed as text/plain at once.
    if (typeof token === 'string') return { status: 200, text: token };
    return this.graphNotifications(conn, req.body);
  }

  private async graphNotifications(conn: ConnectionRow, body: Buffer): Promise<WebhookAnswer> {
    let items: GraphNotification[];
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { value?: unknown };
      if (!Array.isArray(parsed.value)) throw new Error('no value');
      items = parsed.value as GraphNotification[];
    } catch {
      throw errors.validation(['body: a Microsoft Graph notification is JSON with a "value" array']);
    }
    const now = this.deps.realClock.now();
    let accepted = 0;
    for (const item of items) {
      const row = typeof item?.subscriptionId === 'string' ? await this.deps.repo.bySubscription(conn.id, item.subscriptionId) : undefined;
      if (!row || !this.stateMatches(row, item.clientState)) continue;
      accepted++;
      await this.graphItem(row, item, now);
    }
    if (!accepted && items.length) throw errors.forbidden('The notification does not match a subscription of this connection');
    this.pokeAll();
    return { status: 202 };
  }

  private async graphItem(row: ConnectedRoomRow, item: GraphNotification, now: number): Promise<void> {
    const { repo } = this.deps;
    switch (item.lifecycleEvent) {
      case 'reauthorizationRequired':
        return repo.requestSubscribe(row.connection_id, row.room_id, now);
      case 'subscriptionRemoved':
        await repo.requestSubscribe(row.connection_id, row.room_id, now, { subscription_id: null, expires_at: null });
        return repo.requestSync(row.connection_id, row.room_id, now, true);
      case 'missed':
        return repo.requestSync(row.connection_id, row.room_id, now, true);
      default:
        return repo.requestSync(row.connection_id, row.room_id, now, false);
    }
  }

  private async googleMessage(conn: ConnectionRow, req: WebhookRequest): Promise<WebhookAnswer> {
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const channelId = header('x-goog-channel-id');
    const state = header('x-goog-resource-state');
    if (!channelId || !state) throw errors.validation(['headers: X-Goog-Channel-ID and X-Goog-Resource-State are required']);
    const row = await this.deps.repo.bySubscription(conn.id, channelId);
    // The first message of a new channel can come before the channel is stored; a full read follows the watch anyway.
    if (!row && state === 'sync') return { status: 200 };
    const resourceId = header('x-goog-resource-id');
    if (!row || !this.stateMatches(row, header('x-goog-channel-token')) || (row.resource_id && resourceId !== row.resource_id))
      throw errors.forbidden('The message does not match a channel of this connection');
    const now = this.deps.realClock.now();
    if (state !== 'sync' || row.cursor === null) await this.deps.repo.requestSync(conn.id, row.room_id, now, false);
    this.pokeAll();
    return { status: 200 };
  }

  private stateMatches(row: ConnectedRoomRow, presented: unknown): boolean {
    if (!row.client_state_enc || typeof presented !== 'string') return false;
    return safeEqual(this.deps.secretBox.open(row.client_state_enc), presented);
  }

  private pokeAll(): void {
    this.deps.poke(CALENDAR_SUBSCRIPTIONS_JOB);
    this.deps.poke(CALENDAR_PULL_JOB);
  }
}

interface GraphNotification {
  subscriptionId?: string;
  clientState?: string;
  lifecycleEvent?: 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed';
}

function newRoomRow(connectionId: string, room: CalendarRoom, now: number) {
  return {
    connection_id: connectionId,
    room_id: room.asset.id,
    calendar_id: room.email,
    status: 'active',
    subscription_id: null,
    resource_id: null,
    client_state_enc: null,
    expires_at: null,
    cursor: null,
    cursor_at: null,
    subscribe_due_at: now,
    sync_due_at: null,
    subscribe_lease_until: null,
    sync_lease_until: null,
    last_sync_at: null,
    last_error: null,
    last_error_at: null,
    created_at: now,
    updated_at: now,
  };
}

function importedLink(
  connectionId: string,
  roomId: string,
  uid: string,
  e: RemoteEvent,
  meetingId: string | null,
  link: LinkRow | undefined,
  now: number,
) {
  return {
    connection_id: connectionId,
    room_id: roomId,
    uid,
    remote_id: e.id,
    meeting_id: meetingId,
    occurrence_id: '',
    origin: 'remote',
    etag: e.etag,
    written_hash: link?.written_hash ?? null,
    written_start: e.removed ? (link?.written_start ?? null) : e.start,
    written_end: e.removed ? (link?.written_end ?? null) : e.end,
    gone: e.removed ? 1 : 0,
    created_at: link?.created_at ?? now,
    updated_at: now,
  };
}

/** A failure as the connection view shows it (never a secret: adapters keep them out of messages). */
export function describe(err: unknown): string {
  if (err instanceof ServiceError) return `${err.code}: ${String(err.message)}`;
  if (err instanceof Error) return `${err.name}: ${err.message}`.slice(0, 500);
  return 'Unknown error';
}
