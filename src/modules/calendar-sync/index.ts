/**
 * Calendar sync's front door: room calendars (iTIP invitations applied as bookings) and the
 * room feeds. Built from platform pieces, the booking module's `BookingChanges`, and the
 * ports it declares (`CalendarRooms`, `CalendarOrganizers`) that services.ts fills.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/schema.js';
import type { App } from '../../platform/http/types.js';
import { guarded, type RouteGuards } from '../../platform/http/module.js';
import type { BookingChanges } from '../booking/index.js';
import { CalendarRepository } from './calendar-repository.js';
import { CalendarSync } from './calendar-service.js';
import { FeedRepository, sealedCalendarColumns } from './feed-repository.js';
import { RoomFeedService } from './feed-service.js';
import { opsFeedRoutes, publicFeedRoutes } from './feed-routes.js';
import { opsCalendarRoutes } from './routes.js';
import type { CalendarOrganizers, CalendarRooms } from './ports.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';

export { CalendarSync } from './calendar-service.js';
export type { RoomResult } from './calendar-service.js';
export type { Outcome } from './rules/decision.js';
export { RoomFeedService } from './feed-service.js';
export type { CalendarOrganizer, CalendarOrganizers, CalendarRoom, CalendarRooms } from './ports.js';

export interface CalendarSyncDeps {
  db: Kysely<Database>;
  /** The booking module's lock + re-read + write, and its feed reads. */
  bookings: BookingChanges;
  rooms: CalendarRooms;
  organizers: CalendarOrganizers;
  secretBox: SecretBox;
  clock: Clock;
  /** The service's public address (the feeds' URLs start with it). */
  publicBaseUrl: () => string;
}

export interface CalendarSyncModule {
  /** iTIP messages from synced rooms' mailboxes, applied as bookings. */
  calendarSync: CalendarSync;
  /** Each room's bookings as an iCalendar feed at a secret, revocable address. */
  roomFeeds: RoomFeedService;
  /** Sealed columns (feed tokens and their tags), for a SECRETS_KEY rotation. */
  sealed: SealedTable[];
}

export function createCalendarSync(deps: CalendarSyncDeps): CalendarSyncModule {
  const { db, bookings, rooms, organizers, secretBox, clock, publicBaseUrl } = deps;
  return {
    calendarSync: new CalendarSync({ changes: bookings, rooms, organizers, repo: new CalendarRepository(db), secretBox, clock }),
    roomFeeds: new RoomFeedService({ repo: new FeedRepository(db), rooms, bookings, secretBox, clock, publicBaseUrl }),
    sealed: sealedCalendarColumns(db),
  };
}

export interface CalendarSyncRouteDeps {
  calendarSync: CalendarSync;
  roomFeeds: RoomFeedService;
  guards: RouteGuards;
}

/** The public feed route, and the ops routes (messages, feed addresses) behind the ops guard. */
export async function register(app: App, deps: CalendarSyncRouteDeps): Promise<void> {
  await publicFeedRoutes(app, deps);
  await guarded(app, deps.guards.ops, async (ops) => {
    await opsCalendarRoutes(ops, deps);
    await opsFeedRoutes(ops, deps);
  });
}
