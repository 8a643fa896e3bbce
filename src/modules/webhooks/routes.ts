/** Webhook operations: listener state, re-enable, delivery log, redeliver (operator-api.md). */
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { ok, okPage } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope, PagedEnvelope } from '../../contract/envelope.js';
import { IdParams, PageQuery } from '../../contract/common.js';
import { Delivery, DeliveryIdParams, Listener } from '../../contract/ops.js';
import { ConsoleListener } from '../../contract/ops-console.js';
import { Type } from 'typebox';
import { errors } from '../../platform/errors.js';
import type { DeliveryRow, WebhookRow } from './delivery-repository.js';
import { DELIVERY_JOB } from './jobs.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function listenerView(w: WebhookRow, scheme: string): Listener {
  return {
    _id: w.id, key: w.key, projectId: w.project_id, url: w.url, events: JSON.parse(w.events) as string[], authScheme: scheme,
    enabled: w.enabled === 1, consecutiveFailures: w.consecutive_failures,
  };
}

function deliveryView(d: DeliveryRow): Delivery {
  return {
    id: d.id, webhookId: d.webhook_id, type: d.type, status: d.status, attempts: d.attempts, lastStatus: d.last_status,
    lastError: d.last_error, nextAttemptAt: iso(d.next_attempt_at), createdAt: iso(d.created_at)!, deliveredAt: iso(d.delivered_at),
  };
}

export async function opsWebhookRoutes(app: App, services: Services): Promise<void> {
  const repo = services.deliveryRepo;
  const listener = async (id: string) => {
    const w = await repo.webhook(id);
    if (!w) throw errors.notFound('Webhook listener not found');
    const scheme = (JSON.parse(services.secretBox.open(w.auth_enc)) as { scheme: string }).scheme;
    return listenerView(w, scheme);
  };

  app.get('/ops/v1/webhooks', {
    schema: {
      tags: ['ops'], summary: 'Every listener with its state and consecutive failures (never its secret)', security: [{ opsToken: [] }],
      response: { 200: Envelope(Type.Array(ConsoleListener)), 401: ErrorEnvelope },
    },
  }, async () => ok((await repo.webhooks()).map((w): ConsoleListener => ({
    _id: w.id, key: w.key, projectId: w.project_id, url: w.url, events: JSON.parse(w.events) as string[], enabled: w.enabled === 1,
    consecutiveFailures: w.consecutive_failures,
  }))));

  app.get('/ops/v1/webhooks/:id', {
    schema: { tags: ['ops'], summary: 'Listener state', security: [{ opsToken: [] }], params: IdParams, response: { 200: Envelope(Listener), 404: ErrorEnvelope } },
  }, async (req) => ok(await listener(req.params.id)));

  app.post('/ops/v1/webhooks/:id/enable', {
    schema: {
      tags: ['ops'], summary: 'Re-enable a listener and reset its failure counter', security: [{ opsToken: [] }], params: IdParams,
      response: { 200: Envelope(Listener), 404: ErrorEnvelope },
    },
  }, async (req) => {
    if (!(await repo.enable(req.params.id, services.clock.now()))) throw errors.notFound('Webhook listener not found');
    return ok(await listener(req.params.id));
  });

  app.get('/ops/v1/webhooks/:id/deliveries', {
    schema: {
      tags: ['ops'], summary: 'Delivery log of a listener, newest first', security: [{ opsToken: [] }], params: IdParams,
      querystring: PageQuery,
      response: { 200: PagedEnvelope(Delivery), 404: ErrorEnvelope },
    },
  }, async (req, reply) => {
    await listener(req.params.id);
    const limit = req.query.limit ?? 100;
    const offset = req.query.offset ?? 0;
    const page = await repo.listForWebhook(req.params.id, limit, offset);
    return reply.send(okPage(page.rows.map(deliveryView), { limit, offset, total: page.total }));
  });

  app.post('/ops/v1/deliveries/:deliveryId/redeliver', {
    schema: {
      tags: ['ops'], summary: 'Send a delivery again, with the same id', security: [{ opsToken: [] }],
      params: DeliveryIdParams,
      response: { 200: Envelope(Delivery), 404: ErrorEnvelope },
    },
  }, async (req) => {
    if (!(await repo.delivery(req.params.deliveryId))) throw errors.notFound('Delivery not found');
    await repo.redeliver(req.params.deliveryId, services.clock.now());
    void services.jobs.poke(DELIVERY_JOB);
    return ok(deliveryView((await repo.delivery(req.params.deliveryId))!));
  });
}
