/**
 * Room feeds: every room's bookings as a published iCalendar feed (RFC 5545, no
 * METHOD) at a secret, revocable address (docs/calendar-sync.md "Room feeds").
 *
 * The address carries a random token (32 bytes, base64url). The token is stored
 * sealed, so the ops API can show the address again, and as a keyed tag, so the
 * public route finds the feed without storing or comparing the token in clear.
 * A feed shows times, titles and statuses only: never a PIN, an email, a payment
 * link or a token.
 */
import ical, { ICalEventStatus, ICalEventTransparency, type ICalEventData } from 'ical-generator';
import type { Clock } from '../../platform/clock/clock.js';
import { errors } from '../../platform/errors.js';
import { randomSecret, safeEqual, type SecretBox } from '../../platform/crypto/secrets.js';
import type { RoomFeed } from '../../contract/calendar-sync.js';
import type { AssetInContext } from '../catalogue/index.js';
import type { BookingChanges, FeedBooking } from '../booking/index.js';
import type { CalendarRooms } from './ports.js';
import { ROOM_FEED_TAG_PURPOSE, type FeedRepository, type StoredRoomFeed } from './feed-repository.js';

const DAY_MS = 86_400_000;
/** Bookings that ended up to this long ago are still shown… */
export const FEED_PAST_MS = 30 * DAY_MS;
/** …and bookings starting up to this far ahead. */
export const FEED_AHEAD_MS = 400 * DAY_MS;
/** A cancelled booking stays in the feed (STATUS:CANCELLED) this long after its cancellation. */
export const FEED_CANCELLED_MS = 7 * DAY_MS;
/** Statuses shown besides recently cancelled bookings (never `rejected`). */
export const FEED_STATUSES = ['active', 'checked-in', 'done', 'unpaid'];

export const FEED_UID_DOMAIN = 'rooms.booking-service';
/** A feed token: 32 random bytes in base64url. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export const FEED_PRODID = { company: 'Room and Desk Booking Service', product: 'Room feeds', language: 'EN' };

/** The UID of a booking (single) or of one occurrence of a series: stable across renders and changes. */
export function feedUid(meetingId: string, occurrenceId?: string): string {
  return occurrenceId === undefined ? `${meetingId}@${FEED_UID_DOMAIN}` : `${meetingId}-${occurrenceId}@${FEED_UID_DOMAIN}`;
}

const ICAL_STATUS: Record<string, ICalEventStatus> = {
  unpaid: ICalEventStatus.TENTATIVE,
  cancelled: ICalEventStatus.CANCELLED,
};

/**
 * The service status of each window of a booking. A series has one status for the
 * whole series (its current occurrence): occurrences that have ended are `done`,
 * and the ones after the current occurrence are `active`.
 */
export function windowStatuses(b: FeedBooking, now: number): string[] {
  if (!b.series || !['active', 'checked-in', 'done'].includes(b.status)) return b.windows.map(() => b.status);
  const current = b.windows.findIndex((w) => w.end > now);
  return b.windows.map((w, i) => (w.end <= now ? 'done' : i === current ? b.status : 'active'));
}

/** The VEVENTs of one booking: one per window, nothing personal. */
export function feedEvents(b: FeedBooking, now: number): ICalEventData[] {
  const statuses = windowStatuses(b, now);
  return b.windows.map((w, i) => {
    const status = statuses[i]!;
    return {
      id: b.series ? feedUid(b.meetingId, w.id) : feedUid(b.meetingId),
      sequence: b.changes,
      stamp: new Date(b.updatedAt),
      lastModified: new Date(b.updatedAt),
      start: new Date(w.start),
      end: new Date(w.end),
      summary: b.title.trim() || 'Booked',
      status: ICAL_STATUS[status] ?? ICalEventStatus.CONFIRMED,
      ...(status === 'cancelled' ? { transparency: ICalEventTransparency.TRANSPARENT } : {}),
      x: [['X-BOOKING-STATUS', status]],
    };
  });
}

export class RoomFeedService {
  constructor(
    private readonly deps: {
      repo: FeedRepository;
      rooms: CalendarRooms;
      bookings: Pick<BookingChanges, 'roomFeedBookings'>;
      secretBox: SecretBox;
      clock: Clock;
      publicBaseUrl: () => string;
    },
  ) {}

  /** The room's feed, created on the first read. 404 KS005 for an unknown room. */
  async feedOf(roomId: string): Promise<RoomFeed> {
    await this.room(roomId);
    const stored = await this.deps.repo.byRoom(roomId);
    if (stored) return this.view(stored);
    await this.deps.repo.insertIfAbsent(this.newFeed(roomId));
    // Two first reads at once: both answer with the one that was stored.
    return this.view((await this.deps.repo.byRoom(roomId))!);
  }

  /** A new address for the room's feed; the old one answers 404 from now on. */
  async rotate(roomId: string): Promise<RoomFeed> {
    await this.room(roomId);
    const row = this.newFeed(roomId);
    await this.deps.repo.replace(row);
    return this.view(row);
  }

  /** Deletes the room's feed (its address answers 404); the next read makes a new one. */
  async revoke(roomId: string): Promise<void> {
    await this.room(roomId);
    await this.deps.repo.delete(roomId);
  }

  /** The feed at `token` as iCalendar text; 404 KS005 for an unknown, rotated or revoked token. */
  async render(token: string, now: number = this.deps.clock.now()): Promise<string> {
    const notFound = () => errors.notFound('No such calendar feed');
    if (!TOKEN_SHAPE.test(token)) throw notFound();
    // Looked up by its keyed hash, then compared in constant time with the stored token.
    const row = await this.deps.repo.byTag(this.deps.secretBox.tags(ROOM_FEED_TAG_PURPOSE, token));
    if (!row || !safeEqual(this.deps.secretBox.open(row.tokenEnc), token)) throw notFound();
    const ctx = await this.deps.rooms.assetInContext('room', row.roomId);
    if (!ctx) throw notFound();

    const bookings = await this.deps.bookings.roomFeedBookings(
      { id: ctx.asset.id, projectId: ctx.project.id },
      now - FEED_PAST_MS,
      now + FEED_AHEAD_MS,
      { statuses: FEED_STATUSES, cancelledSince: now - FEED_CANCELLED_MS },
    );
    const calendar = ical({
      name: ctx.asset.name,
      prodId: FEED_PRODID,
      // Instants are written in UTC; the room's zone is only a hint for display
      // (the generator's own timezone option would write local times).
      x: [['X-WR-TIMEZONE', ctx.project.timezone]],
    });
    for (const b of bookings) for (const e of feedEvents(b, now)) calendar.createEvent(e);
    return calendar.toString();
  }

  private async room(roomId: string): Promise<AssetInContext> {
    const ctx = await this.deps.rooms.assetInContext('room', roomId);
    if (!ctx) throw errors.notFound('Meeting room not found');
    return ctx;
  }

  private newFeed(roomId: string): StoredRoomFeed {
    const token = randomSecret(32);
    return {
      roomId,
      tokenEnc: this.deps.secretBox.seal(token),
      tokenTag: this.deps.secretBox.tag(ROOM_FEED_TAG_PURPOSE, token),
      createdAt: this.deps.clock.now(),
    };
  }

  private view(feed: StoredRoomFeed): RoomFeed {
    const token = this.deps.secretBox.open(feed.tokenEnc);
    return {
      roomId: feed.roomId,
      url: `${this.deps.publicBaseUrl()}/calendar-feeds/${token}.ics`,
      createdAt: new Date(feed.createdAt).toISOString(),
    };
  }
}
