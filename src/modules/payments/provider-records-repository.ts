/**
 * What the payments module keeps about real providers: the project's provider
 * account (written by the site module's apply, read here), the events a provider
 * posted, and the voids and refunds owed to a provider (an outbox a job carries out).
 */
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { Database, PaymentProviderActionTable, PaymentProviderEventTable, PaymentProviderTable } from '../../platform/db/schema.js';
import type { Db } from '../../platform/db/db.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { backlogOf } from '../../platform/db/backlog-row.js';

export type ProviderAccountRow = Selectable<PaymentProviderTable>;
export type ProviderEventRow = Selectable<PaymentProviderEventTable>;
export type ProviderActionRow = Selectable<PaymentProviderActionTable>;

export class ProviderRecordsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The provider account of a project, if the site document set one. */
  async accountOfProject(projectId: string, db: Db = this.db): Promise<ProviderAccountRow | undefined> {
    return db.selectFrom('payment_providers').selectAll().where('project_id', '=', projectId).executeTakeFirst();
  }

  async accountById(id: string, db: Db = this.db): Promise<ProviderAccountRow | undefined> {
    return db.selectFrom('payment_providers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Stores a verified event once per provider event id and returns the stored row: this one,
   * or the one stored before (a provider's retry). An earlier row without an outcome was not
   * applied (the service failed midway): the caller applies it again, which the inbox makes safe.
   */
  async recordEvent(e: Insertable<PaymentProviderEventTable>, db: Db = this.db): Promise<ProviderEventRow> {
    await db
      .insertInto('payment_provider_events')
      .values(e)
      .onConflict((oc) => oc.columns(['provider_id', 'verified', 'event_id']).doNothing())
      .execute();
    return db
      .selectFrom('payment_provider_events')
      .selectAll()
      .where('provider_id', '=', e.provider_id)
      .where('verified', '=', e.verified)
      .where('event_id', '=', e.event_id)
      .executeTakeFirstOrThrow();
  }

  async setEventOutcome(id: string, outcome: string, db: Db = this.db): Promise<void> {
    await db.updateTable('payment_provider_events').set({ outcome }).where('id', '=', id).execute();
  }

  /** Queues a void or refund in the caller's transaction. */
  async enqueueAction(a: Insertable<PaymentProviderActionTable>, db: Db = this.db): Promise<void> {
    await db.insertInto('payment_provider_actions').values(a).execute();
  }

  /** Actions whose next attempt (send, or re-read of a pending refund) is due by `realNow`, oldest first. */
  async dueActions(realNow: number, limit: number, db: Db = this.db): Promise<ProviderActionRow[]> {
    return db
      .selectFrom('payment_provider_actions')
      .selectAll()
      .where('next_attempt_at', '<=', realNow)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async actionBacklog(realNow: number, db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('payment_provider_actions')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('next_attempt_at').as('oldest')])
      .where('next_attempt_at', '<=', realNow)
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }

  /** Takes a due action for `leaseMs` (one instance at a time); false when another took it first. */
  async claimAction(id: string, dueAt: number, until: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('payment_provider_actions')
      .set({ next_attempt_at: until })
      .where('id', '=', id)
      .where('next_attempt_at', '=', dueAt)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async updateAction(id: string, changes: Updateable<PaymentProviderActionTable>, db: Db = this.db): Promise<void> {
    await db.updateTable('payment_provider_actions').set(changes).where('id', '=', id).execute();
  }

  /** A provider reported a refund's state (an event): the refund action that made it follows, if it was still pending. */
  async finishRefundByRef(refundRef: string, status: string, at: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('payment_provider_actions')
      .set({ status, updated_at: at, ...(status === 'pending' ? {} : { next_attempt_at: null }) })
      .where('action', '=', 'refund')
      .where('provider_ref', '=', refundRef)
      .where('status', '=', 'pending')
      .execute();
  }

  /** The provider events recorded for a payment, oldest first (the console's payment view). */
  async eventsOf(paymentId: string, db: Db = this.db): Promise<ProviderEventRow[]> {
    return db
      .selectFrom('payment_provider_events')
      .selectAll()
      .where('payment_id', '=', paymentId)
      .orderBy('received_at')
      .orderBy('id')
      .execute();
  }

  /** The voids and refunds of a payment, oldest first (the console's payment view). */
  async actionsOf(paymentId: string, db: Db = this.db): Promise<ProviderActionRow[]> {
    return db
      .selectFrom('payment_provider_actions')
      .selectAll()
      .where('payment_id', '=', paymentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
}
