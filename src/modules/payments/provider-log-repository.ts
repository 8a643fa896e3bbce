/** Reads of what passed between the service and a payment provider: the events it posted and the voids/refunds owed to it. */
import type { Kysely, Selectable } from 'kysely';
import type { Database, PaymentProviderActionTable, PaymentProviderEventTable } from '../../platform/db/schema.js';
import type { Db } from '../../platform/db/db.js';

export type ProviderEventRow = Selectable<PaymentProviderEventTable>;
export type ProviderActionRow = Selectable<PaymentProviderActionTable>;

export class ProviderLogRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The provider events recorded for a payment, oldest first. */
  async eventsOf(paymentId: string, db: Db = this.db): Promise<ProviderEventRow[]> {
    return db
      .selectFrom('payment_provider_events')
      .selectAll()
      .where('payment_id', '=', paymentId)
      .orderBy('received_at')
      .orderBy('id')
      .execute();
  }

  /** The voids and refunds of a payment, oldest first. */
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
