/** POST /ops/v1/apply: declarative, idempotent site configuration (operator-api.md). */
import type { App } from '../../platform/http/types.js';
import type { Config } from '../../platform/config.js';
import { ok } from '../../platform/http/envelope.js';
import { bodyLimit } from '../../platform/http/body-limits.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { SiteDocument } from '../../contract/site-document.js';
import { ApplyResult } from '../../contract/ops.js';
import { ConsoleSite } from '../../contract/ops-console.js';
import { MAX_APPS, MAX_ENTRIES_PER_SECTION } from './apply-site.js';
import type { SiteService } from './site-service.js';

const Applied = Envelope(ApplyResult);

/** What the site's ops routes use. */
export interface SiteRouteDeps {
  site: SiteService;
  config: Pick<Config, 'bodyLimitBytes' | 'applyBodyLimitBytes'>;
}

export async function opsApplyRoutes(app: App, deps: SiteRouteDeps): Promise<void> {
  const site = deps.site;
  app.post(
    '/ops/v1/apply',
    {
      // Its own limit, not BODY_LIMIT_BYTES: parsing and checking a document happen before the apply can yield.
      bodyLimit: bodyLimit('apply', deps.config),
      schema: {
        tags: ['ops'],
        summary: 'Apply a site document: upsert brands, projects, assets, users, apps, access groups, webhooks and promo codes by key',
        description:
          'Idempotent: applying the same document twice changes nothing. Every reference is resolved by key, to an entity of the same ' +
          'document or one applied earlier. Any problem gives 400 KS001 with one message each, and nothing is written. Never deletes, except calendar connections left out of a calendarConnections section (that section is the whole list). ' +
          `Limits: a document larger than APPLY_BODY_LIMIT_BYTES (default 8 MiB; this service: ${deps.config.applyBodyLimitBytes} bytes) ` +
          `gives 413 KS001; a section holding more than ${MAX_ENTRIES_PER_SECTION} entries (devices counted over all access groups; ` +
          `apps: ${MAX_APPS}) gives 400 KS001. Larger sites are applied in several documents. A large document is applied in chunks ` +
          'that let other requests run in between; it still commits all or nothing.',
        security: [{ opsToken: [] }],
        body: SiteDocument,
        response: { 200: Applied, 400: ErrorEnvelope, 401: ErrorEnvelope, 409: ErrorEnvelope, 413: ErrorEnvelope },
      },
    },
    async (req) => {
      const result = await site.apply(req.body);
      return ok(result);
    },
  );
}

/** GET /ops/v1/site: the operator console's overview of every project, floor, room and desk. */
export async function opsSiteRoutes(app: App, deps: SiteRouteDeps): Promise<void> {
  app.get(
    '/ops/v1/site',
    {
      schema: {
        tags: ['ops'],
        summary: "Every project, floor, room and desk (the console's site overview)",
        security: [{ opsToken: [] }],
        response: { 200: Envelope(ConsoleSite), 401: ErrorEnvelope },
      },
    },
    async () => ok(await deps.site.overview()),
  );
}
