/**
 * The webhooks module's operations (operator-api.md): listeners with their state,
 * re-enabling a disabled one, a listener's delivery log, redelivery, and the
 * console's change feed of deliveries. Sending is the delivery job's (jobs.ts).
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { errors } from '../../platform/errors.js';
import type { DeliveryRepository, DeliveryRow, WebhookRecord } from './delivery-repository.js';
import { openDeliveryAuth } from './signing.js';

export interface WebhookServiceDeps {
  repo: DeliveryRepository;
  secretBox: SecretBox;
  /** Service time: re-enable and redeliver times. */
  clock: Clock;
  /** Wakes the delivery job (a redelivery is due now). */
  pokeDeliveries: () => void;
}

/** A listener with its auth scheme (never its secret or tokens). */
export type ListenerState = WebhookRecord & { authScheme: string };

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /** Every listener, by project and key (the console's list). */
  list(): Promise<WebhookRecord[]> {
    return this.deps.repo.webhooks();
  }

  /** One listener with its auth scheme; 404 when there is none. */
  async listener(id: string): Promise<ListenerState> {
    const w = await this.deps.repo.webhook(id);
    if (!w) throw errors.notFound('Webhook listener not found');
    return { ...w, authScheme: openDeliveryAuth(this.deps.secretBox, w.auth_enc).scheme };
  }

  /** Re-enables a listener and resets its failure counter; 404 when there is none. */
  async enable(id: string): Promise<ListenerState> {
    if (!(await this.deps.repo.enable(id, this.deps.clock.now()))) throw errors.notFound('Webhook listener not found');
    return this.listener(id);
  }

  /** A listener's delivery log, newest first; 404 when there is no such listener. */
  async deliveries(webhookId: string, limit: number, offset: number): Promise<{ rows: DeliveryRow[]; total: number }> {
    await this.listener(webhookId);
    return this.deps.repo.listForWebhook(webhookId, limit, offset);
  }

  /** Sends a delivery again, with the same id and a fresh set of attempts; 404 when there is none. */
  async redeliver(deliveryId: string): Promise<DeliveryRow> {
    if (!(await this.deps.repo.delivery(deliveryId))) throw errors.notFound('Delivery not found');
    await this.deps.repo.redeliver(deliveryId, this.deps.clock.now());
    this.deps.pokeDeliveries();
    return (await this.deps.repo.delivery(deliveryId))!;
  }

  /** Deliveries changed after `after`, oldest change first, with their listener's project (the console's change feed). */
  changedSince(after: number, limit: number): Promise<{ id: string; projectId: string; at: number }[]> {
    return this.deps.repo.changedSince(after, limit);
  }

  /** The latest delivery change time (0 when none). */
  lastChangeAt(): Promise<number> {
    return this.deps.repo.lastChangeAt();
  }
}
