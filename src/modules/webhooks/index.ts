/**
 * The webhooks module's front door: the outbox (the booking writer's
 * `BookingEventSink`, and `emitEvent` for other events), the webhook service
 * behind the ops routes, the delivery job, and the event payload types.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/schema.js';
import { guarded } from '../../platform/http/module.js';
import type { App } from '../../platform/http/types.js';
import type { UrlGuard } from '../../platform/net/url-guard.js';
import { DeliveryRepository } from './delivery-repository.js';
import { DELIVERY_JOB, deliveryJob } from './jobs.js';
import { Outbox } from './outbox.js';
import { OutboxRepository } from './outbox-repository.js';
import { opsWebhookRoutes, type WebhooksRouteDeps } from './routes.js';
import { WebhookService } from './webhook-service.js';

export { Outbox } from './outbox.js';
export type { BookingEvent, OutboxEvent } from './outbox.js';
export type { BookingFacts, EventDetail } from './event-payloads.js';
export { WebhookService } from './webhook-service.js';
export type { ListenerState } from './webhook-service.js';
export type { DeliveryRepository } from './delivery-repository.js';
export { DELIVERY_JOB } from './jobs.js';
export type { WebhooksRouteDeps } from './routes.js';

export interface WebhooksDeps {
  db: Kysely<Database>;
  secretBox: SecretBox;
  /** Service time: retries, re-enable and redeliver times. */
  clock: Clock;
  /** Real time: signature timestamps and JWT expiry. */
  realClock: Clock;
  /** Wakes a job of the runner by name (late-bound: the runner is built after the outbox the writer needs). */
  pokeJob: (name: string) => void;
  /** One attempt's timeout. */
  timeoutMs: number;
  /** The SSRF guard of listener addresses. */
  urlGuard: UrlGuard;
}

export interface WebhooksModule {
  /** Records events and queues their deliveries in the caller's transaction. */
  outbox: Outbox;
  webhooks: WebhookService;
  /** The runner's handler that sends deliveries. */
  deliveryJob: ReturnType<typeof deliveryJob>;
  /** The delivery store the job uses (tests instrument its leases). */
  deliveryRepo: DeliveryRepository;
}

export function createWebhooks(deps: WebhooksDeps): WebhooksModule {
  const deliveryRepo = new DeliveryRepository(deps.db);
  const { clock, realClock, secretBox } = deps;
  return {
    outbox: new Outbox(new OutboxRepository(deps.db)),
    webhooks: new WebhookService({ repo: deliveryRepo, secretBox, clock, pokeDeliveries: () => deps.pokeJob(DELIVERY_JOB) }),
    deliveryJob: deliveryJob({ repo: deliveryRepo, clock, realClock, secretBox, timeoutMs: deps.timeoutMs, urlGuard: deps.urlGuard }),
    deliveryRepo,
  };
}

/** The webhook ops routes (ops guard). */
export async function register(app: App, deps: WebhooksRouteDeps): Promise<void> {
  await guarded(app, deps.guards.ops, async (ops) => opsWebhookRoutes(ops, deps));
}
