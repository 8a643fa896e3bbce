/** The outbox tables: recorded events and the deliveries queued for them. */
import type { Insertable, Kysely } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Database, DeliveryTable, EventTable } from '../../platform/db/schema.js';

export class OutboxRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertEvent(e: Insertable<EventTable>, db: Db = this.db): Promise<void> {
    await db.insertInto('events').values(e).execute();
  }

  /** Enabled listeners of a project with the event types they subscribe to. */
  async enabledListeners(projectId: string, db: Db = this.db): Promise<{ id: string; events: string[] }[]> {
    const rows = await db
      .selectFrom('webhooks')
      .select(['id', 'events'])
      .where('project_id', '=', projectId)
      .where('enabled', '=', 1)
      .execute();
    return rows.map((r) => ({ id: r.id, events: JSON.parse(r.events) as string[] }));
  }

  async insertDeliveries(rows: Insertable<DeliveryTable>[], db: Db = this.db): Promise<void> {
    if (rows.length) await db.insertInto('deliveries').values(rows).execute();
  }
}
