/** Webhook listeners and their deliveries, for the delivery worker and the ops API. */
import type { Kysely } from 'kysely';
import { inTransaction, type Db } from '../../platform/db/db.js';
import type { Database, DeliveryTable, WebhookTable } from '../../platform/db/schema.js';

export type DeliveryRow = DeliveryTable;
export type WebhookRow = WebhookTable;

export class DeliveryRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Pending deliveries due by `now` (service time) to enabled listeners, not leased
   * by another worker, leaving out the listeners in `skipWebhookIds` (those whose
   * concurrency budget is full, so their backlog never crowds the others out).
   */
  async due(now: number, realNow: number, limit: number, skipWebhookIds: readonly string[] = [], db: Db = this.db): Promise<DeliveryRow[]> {
    let q = db
      .selectFrom('deliveries')
      .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
      .selectAll('deliveries')
      .where('deliveries.status', '=', 'pending')
      .where('deliveries.next_attempt_at', '<=', now)
      .where('webhooks.enabled', '=', 1)
      .where((eb) => eb.or([eb('deliveries.claimed_until', 'is', null), eb('deliveries.claimed_until', '<', realNow)]));
    if (skipWebhookIds.length) q = q.where('deliveries.webhook_id', 'not in', [...skipWebhookIds]);
    return q.orderBy('deliveries.next_attempt_at').orderBy('deliveries.created_at').limit(limit).execute();
  }

  /**
   * Leases a delivery for one attempt; false when another worker holds it, or has
   * already made the attempt `d` was read for (its attempts or next attempt moved
   * on since), so a stale read never sends an attempt twice.
   */
  async lease(d: Pick<DeliveryRow, 'id' | 'attempts' | 'next_attempt_at'>, realNow: number, leaseMs: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('deliveries')
      .set({ claimed_until: realNow + leaseMs })
      .where('id', '=', d.id)
      .where('status', '=', 'pending')
      .where('attempts', '=', d.attempts)
      .where((eb) => (d.next_attempt_at === null ? eb('next_attempt_at', 'is', null) : eb('next_attempt_at', '=', d.next_attempt_at)))
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', realNow)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async webhook(id: string, db: Db = this.db): Promise<WebhookRow | undefined> {
    return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async delivery(id: string, db: Db = this.db): Promise<DeliveryRow | undefined> {
    return db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async recordSuccess(d: DeliveryRow, status: number, now: number, db: Db = this.db): Promise<void> {
    await inTransaction(this.db, db, async (trx) => {
      await trx
        .updateTable('deliveries')
        .set({ status: 'delivered', attempts: d.attempts + 1, last_status: status, last_error: null, delivered_at: now, next_attempt_at: null, claimed_until: null, updated_at: now })
        .where('id', '=', d.id)
        .execute();
      await trx.updateTable('webhooks').set({ consecutive_failures: 0 }).where('id', '=', d.webhook_id).where('consecutive_failures', '>', 0).execute();
    });
  }

  /**
   * Records a failed attempt: schedules the retry at `nextAttemptAt`, or, when the
   * attempts are used up, fails the delivery and counts it against the listener,
   * disabling it at `disableAfter` consecutive exhausted deliveries.
   */
  async recordFailure(d: DeliveryRow, outcome: { status: number | null; error: string }, now: number, nextAttemptAt: number | null, disableAfter: number, db: Db = this.db): Promise<void> {
    await inTransaction(this.db, db, async (trx) => {
      await trx
        .updateTable('deliveries')
        .set({
          status: nextAttemptAt === null ? 'failed' : 'pending', attempts: d.attempts + 1, last_status: outcome.status,
          last_error: outcome.error.slice(0, 500), next_attempt_at: nextAttemptAt, claimed_until: null, updated_at: now,
        })
        .where('id', '=', d.id)
        .execute();
      if (nextAttemptAt !== null) return;
      await trx.updateTable('webhooks').set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) })).where('id', '=', d.webhook_id).execute();
      await trx.updateTable('webhooks').set({ enabled: 0 }).where('id', '=', d.webhook_id).where('consecutive_failures', '>=', disableAfter).execute();
    });
  }

  async enable(webhookId: string, now: number, db: Db = this.db): Promise<boolean> {
    const res = await db.updateTable('webhooks').set({ enabled: 1, consecutive_failures: 0, updated_at: now }).where('id', '=', webhookId).executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async listForWebhook(webhookId: string, limit: number, offset: number, db: Db = this.db): Promise<{ rows: DeliveryRow[]; total: number }> {
    const rows = await db
      .selectFrom('deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    const total = await db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('webhook_id', '=', webhookId).executeTakeFirstOrThrow();
    return { rows, total: Number(total.n) };
  }

  /** Queues a delivery to be sent again with the same id and a fresh set of attempts. */
  async redeliver(id: string, now: number, db: Db = this.db): Promise<void> {
    // The lease is kept: an attempt already in flight is not sent a second time in parallel.
    await db
      .updateTable('deliveries')
      .set({ status: 'pending', attempts: 0, next_attempt_at: now, updated_at: now })
      .where('id', '=', id)
      .execute();
  }
}
