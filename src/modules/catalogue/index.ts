/**
 * The catalogue module's front door: room and desk search, single reads with the
 * booking calendar, asset-in-context reads. The holds on assets come from the
 * booking module through the BusySlots port declared here.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Database } from '../../platform/db/schema.js';
import type { App } from '../../platform/http/types.js';
import { guarded, type RouteGuards } from '../../platform/http/module.js';
import { CatalogueRepository } from './catalogue-repository.js';
import { CatalogueService } from './catalogue-service.js';
import type { BusySlots } from './busy-slots.js';
import { catalogueRoutes } from './routes.js';

export {
  CatalogueService,
  MAX_CLEANUP_MS,
  cleanupFor,
  CALENDAR_DEFAULT_DAYS,
  CALENDAR_MAX_DAYS,
  DEFAULT_DESK_PAGE_SIZE,
} from './catalogue-service.js';
export type { AssetInContext, DeskRow, ProjectRow, RoomRow, Verdict } from './catalogue-service.js';
export type { BusySlots, HoldRow, MeetingSummary, SlotRow } from './busy-slots.js';

export interface CatalogueDeps {
  db: Kysely<Database>;
  /** Service time (availability is judged at it). */
  clock: Clock;
  /** The holds on assets (the booking module implements it). */
  busySlots: BusySlots;
}

export interface CatalogueModule {
  catalogue: CatalogueService;
}

export function createCatalogue(deps: CatalogueDeps): CatalogueModule {
  return { catalogue: new CatalogueService(new CatalogueRepository(deps.db), deps.clock, deps.busySlots) };
}

export interface CatalogueRouteDeps {
  catalogue: CatalogueService;
  guards: RouteGuards;
}

/** GET /meeting-rooms, /meeting-rooms/{id}, /desks, /desks/{id}: behind the API guard. */
export async function register(app: App, deps: CatalogueRouteDeps): Promise<void> {
  await guarded(app, deps.guards.api, async (api) => {
    await catalogueRoutes(api, { catalogue: deps.catalogue });
  });
}
