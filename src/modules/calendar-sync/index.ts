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
import { ConnectedRepository } from './connected-repository.js';
import { ConnectedSync } from './connected-sync.js';
import { CalendarWriteback } from './calendar-writeback.js';
import { ConnectorRegistry, type ConnectorFactories } from './connection-registry.js';
import { microsoftConnector } from './connectors/microsoft.js';
import { googleConnector } from './connectors/google.js';
import { calendarJobs, type CalendarJobs } from './jobs.js';
import { calendarWebhookRoutes, opsConnectionRoutes } from './connected-routes.js';

export { CalendarSync } from './calendar-service.js';
export type { RoomResult } from './calendar-service.js';
export type { Outcome } from './rules/decision.js';
export { RoomFeedService } from './feed-service.js';
export type { CalendarOrganizer, CalendarOrganizers, CalendarRoom, CalendarRooms } from './ports.js';
export { ConnectedSync, CALENDAR_PULL_JOB, CALENDAR_SUBSCRIPTIONS_JOB } from './connected-sync.js';
export { CALENDAR_WRITEBACK_JOB } from './calendar-writeback.js';
export { CALENDAR_ROOMS_JOB } from './jobs.js';
export type { ConnectorFactory, ConnectorFactories } from './connection-registry.js';

export interface CalendarSyncDeps {
  db: Kysely<Database>;
  /** The booking module's lock + re-read + write, and its feed reads. */
  bookings: BookingChanges;
  rooms: CalendarRooms;
  organizers: CalendarOrganizers;
  secretBox: SecretBox;
  clock: Clock;
  /** The service's public address (the feeds' and notification URLs start with it). */
  publicBaseUrl: () => string;
  /** Real time (providers' subscriptions, tokens, retries). */
  realClock: Clock;
  /** Connected calendars' adapters by provider, and how long a provider request may take. */
  connectors: { factories?: ConnectorFactories; timeoutMs: number };
  /** A job has work now. */
  poke: (job: string) => void;
}

export interface CalendarSyncModule {
  /** iTIP messages from synced rooms' mailboxes, applied as bookings. */
  calendarSync: CalendarSync;
  /** Each room's bookings as an iCalendar feed at a secret, revocable address. */
  roomFeeds: RoomFeedService;
  /** Connected room calendars (Microsoft 365, Google Workspace): subscriptions, notifications, pulls, the connection view. */
  connected: ConnectedSync;
  /** Writes owed to connected calendars; its observer hears every booking change (the writer's port). */
  writeback: CalendarWriteback;
  /** The connected calendars' jobs, for the runner. */
  jobs: CalendarJobs;
  /** Sealed columns (feed tokens and their tags, subscriptions' client states), for a SECRETS_KEY rotation. */
  sealed: SealedTable[];
}

/** The real adapters (tests may hand others). */
const DEFAULT_FACTORIES: ConnectorFactories = { microsoft: microsoftConnector, google: googleConnector };

export function createCalendarSync(deps: CalendarSyncDeps): CalendarSyncModule {
  const { db, bookings, rooms, organizers, secretBox, clock, realClock, publicBaseUrl } = deps;
  const events = new CalendarRepository(db);
  const calendarSync = new CalendarSync({ changes: bookings, rooms, organizers, repo: events, secretBox, clock });
  const repo = new ConnectedRepository(db);
  const registry = new ConnectorRegistry({
    secretBox,
    factories: deps.connectors.factories ?? DEFAULT_FACTORIES,
    connectorDeps: { now: () => realClock.now(), timeoutMs: deps.connectors.timeoutMs },
  });
  const connected = new ConnectedSync({
    repo,
    registry,
    actor: calendarSync,
    rooms,
    secretBox,
    clock,
    realClock,
    publicBaseUrl,
    poke: deps.poke,
  });
  const writeback = new CalendarWriteback({ repo, registry, events, bookings, realClock });
  return {
    calendarSync,
    roomFeeds: new RoomFeedService({ repo: new FeedRepository(db), rooms, bookings, secretBox, clock, publicBaseUrl }),
    connected,
    writeback,
    jobs: calendarJobs(connected, writeback, realClock),
    sealed: sealedCalendarColumns(db),
  };
}

export interface CalendarSyncRouteDeps {
  calendarSync: CalendarSync;
  roomFeeds: RoomFeedService;
  connected: ConnectedSync;
  guards: RouteGuards;
}

/** The public feed and notification routes, and the ops routes (messages, feed addresses, connections) behind the ops guard. */
export async function register(app: App, deps: CalendarSyncRouteDeps): Promise<void> {
  await publicFeedRoutes(app, deps);
  // Its own scope: notification bodies are kept as bytes.
  await app.register(async (scope) => calendarWebhookRoutes(scope, deps));
  await guarded(app, deps.guards.ops, async (ops) => {
    await opsCalendarRoutes(ops, deps);
    await opsFeedRoutes(ops, deps);
    await opsConnectionRoutes(ops, deps);
  });
}
