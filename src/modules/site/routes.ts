/** POST /ops/v1/apply: declarative, idempotent site configuration (operator-api.md). */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { Envelope, ErrorEnvelope, ok } from '../../platform/http/envelope.js';
import { SiteDocument } from '../../contract/site-document.js';
import { SiteService } from './site-service.js';
import { SECTIONS } from './site-plan.js';

const KeyToId = (description: string) =>
  Type.Record(Type.String(), Type.String({ pattern: '^[0-9a-f]{24}$' }), { description });

const Applied = Envelope(
  Type.Object({
    ids: KeyToId('Every key of the document to its entity _id (apps: the app _id, not appId)'),
    idsByKind: Type.Object(
      Object.fromEntries(SECTIONS.map((s) => [s, KeyToId(`Keys of ${s} to ids`)])),
      { description: 'The same mapping per section, unambiguous when two kinds share a key' },
    ),
  }),
);

export async function opsApplyRoutes(app: App, services: Services): Promise<void> {
  const site = SiteService.over(services.storage.db);
  app.post('/ops/v1/apply', {
    schema: {
      tags: ['ops'],
      summary: 'Apply a site document: upsert brands, projects, assets, users, apps, access groups, webhooks and promo codes by key',
      description:
        'Idempotent: applying the same document twice changes nothing. Every reference is resolved by key, to an entity of the same ' +
        'document or one applied earlier. Any problem gives 400 KS001 with one message each, and nothing is written. Never deletes.',
      security: [{ opsToken: [] }],
      body: SiteDocument,
      response: { 200: Applied, 400: ErrorEnvelope, 401: ErrorEnvelope, 409: ErrorEnvelope },
    },
  }, async (req) => {
    const result = await site.apply(req.body, {
      env: services.config.env,
      secretBox: services.secretBox,
      now: services.clock.now(),
    });
    return ok(result);
  });
}
