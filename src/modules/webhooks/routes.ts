/** Webhook operations: listener state, re-enable, delivery log, redeliver (operator-api.md). */
import type { App } from '../../platform/http/types.js';
import type { RouteGuards } from '../../platform/http/module.js';
import { ok, okPage } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope, PagedEnvelope } from '../../contract/envelope.js';
import { IdParams, PageQuery } from '../../contract/common.js';
import { Delivery, DeliveryIdParams, Listener } from '../../contract/ops.js';
import { ConsoleListener } from '../../contract/ops-console.js';
import { Type } from 'typebox';
import type { DeliveryRow } from './delivery-repository.js';
import type { ListenerState, WebhookService } from './webhook-service.js';

/** What the webhook ops routes use. */
export interface WebhooksRouteDeps {
  webhooks: WebhookService;
  guards: RouteGuards;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function listenerView(w: ListenerState): Listener {
  return {
    _id: w.id,
    key: w.key,
    projectId: w.project_id,
    url: w.url,
    events: w.events,
    authScheme: w.authScheme,
    enabled: w.enabled,
    consecutiveFailures: w.consecutive_failures,
  };
}

function deliveryView(d: DeliveryRow): Delivery {
  return {
    id: d.id,
    webhookId: d.webhook_id,
    type: d.type,
    status: d.status,
    attempts: d.attempts,
    lastStatus: d.last_status,
    lastError: d.last_error,
    nextAttemptAt: iso(d.next_attempt_at),
    createdAt: iso(d.created_at)!,
    deliveredAt: iso(d.delivered_at),
  };
}

export async function opsWebhookRoutes(app: App, deps: Pick<WebhooksRouteDeps, 'webhooks'>): Promise<void> {
  const webhooks = deps.webhooks;

  app.get(
    '/ops/v1/webhooks',
    {
      schema: {
        tags: ['ops'],
        summary: 'Every listener with its state and consecutive failures (never its secret)',
        security: [{ opsToken: [] }],
        response: { 200: Envelope(Type.Array(ConsoleListener)), 401: ErrorEnvelope },
      },
    },
    async () =>
      ok(
        (await webhooks.list()).map((w): ConsoleListener => ({
          _id: w.id,
          key: w.key,
          projectId: w.project_id,
          url: w.url,
          events: w.events,
          enabled: w.enabled,
          consecutiveFailures: w.consecutive_failures,
        })),
      ),
  );

  app.get(
    '/ops/v1/webhooks/:id',
    {
      schema: {
        tags: ['ops'],
        summary: 'Listener state',
        security: [{ opsToken: [] }],
        params: IdParams,
        response: { 200: Envelope(Listener), 404: ErrorEnvelope },
      },
    },
    async (req) => ok(listenerView(await webhooks.listener(req.params.id))),
  );

  app.post(
    '/ops/v1/webhooks/:id/enable',
    {
      schema: {
        tags: ['ops'],
        summary: 'Re-enable a listener and reset its failure counter',
        security: [{ opsToken: [] }],
        params: IdParams,
        response: { 200: Envelope(Listener), 404: ErrorEnvelope },
      },
    },
    async (req) => ok(listenerView(await webhooks.enable(req.params.id))),
  );

  await deliveryRoutes(app, webhooks);
}

/** A listener's delivery log, and sending one delivery again. */
async function deliveryRoutes(app: App, webhooks: WebhookService): Promise<void> {
  app.get(
    '/ops/v1/webhooks/:id/deliveries',
    {
      schema: {
        tags: ['ops'],
        summary: 'Delivery log of a listener, newest first',
        security: [{ opsToken: [] }],
        params: IdParams,
        querystring: PageQuery,
        response: { 200: PagedEnvelope(Delivery), 404: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const limit = req.query.limit ?? 100;
      const offset = req.query.offset ?? 0;
      const page = await webhooks.deliveries(req.params.id, limit, offset);
      return reply.send(okPage(page.rows.map(deliveryView), { limit, offset, total: page.total }));
    },
  );

  app.post(
    '/ops/v1/deliveries/:deliveryId/redeliver',
    {
      schema: {
        tags: ['ops'],
        summary: 'Send a delivery again, with the same id',
        security: [{ opsToken: [] }],
        params: DeliveryIdParams,
        response: { 200: Envelope(Delivery), 404: ErrorEnvelope },
      },
    },
    async (req) => ok(deliveryView(await webhooks.redeliver(req.params.deliveryId))),
  );
}
