/**
 * The site module's front door: the site document apply (ops), the console's site overview, and the site
 * service other modules read projects, members and organizers through (calendar sync: organizers by email;
 * visitors: its VisitorSite port).
 */
import type { Kysely } from 'kysely';
import type { App } from '../../platform/http/types.js';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/schema.js';
import { SiteRepository, sealedSiteColumns } from './site-repository.js';
import { SiteService } from './site-service.js';
import { opsApplyRoutes, opsSiteRoutes, type SiteRouteDeps } from './routes.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';

export { SiteService } from './site-service.js';
export type { CalendarOrganizer, ProjectMember, SiteProject } from './site-service.js';
export type { SiteRouteDeps } from './routes.js';

export interface SiteDeps {
  db: Kysely<Database>;
  /** BOOKING_ENV of this service; apps are bound to it. */
  env: string;
  /** Seals webhook secrets and auth, payment providers' keys, calendar connections' secrets. */
  secretBox: SecretBox;
  /** Service time, for new ids and timestamps. */
  clock: Clock;
  /** The SSRF guard's verdict on a webhook URL (null: allowed). */
  checkUrl?: (url: string) => Promise<string | null>;
  /** PUBLIC_BASE_URL (read on each use): the payment and calendar webhook URLs start with it. */
  publicBaseUrl: () => string;
}

export interface SiteModule {
  site: SiteService;
  /** Sealed columns (webhook secrets and auth, payment provider keys, calendar secrets), for a SECRETS_KEY rotation. */
  sealed: SealedTable[];
}

export function createSite(deps: SiteDeps): SiteModule {
  const { db, ...rest } = deps;
  return { site: new SiteService({ repo: new SiteRepository(db), ...rest }), sealed: sealedSiteColumns(db) };
}

/** POST /ops/v1/apply and GET /ops/v1/site: register inside the ops guard's scope. */
export async function register(app: App, deps: SiteRouteDeps): Promise<void> {
  await opsApplyRoutes(app, deps);
  await opsSiteRoutes(app, deps);
}
