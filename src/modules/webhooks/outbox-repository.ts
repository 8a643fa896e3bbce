/** The outbox tables: recorded events and the deliveries queued for them. */
import type { Insertable, Kysely } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Database, DeliveryTable, EventTable } from '../../platform/db/schema.js';
import { PreparedStatements, insertRows, slot } from '../../platform/db/statements.js';

export class OutboxRepository {
  private readonly statements: PreparedStatements;

  constructor(private readonly db: Kysely<Database>) {
    this.statements = new PreparedStatements(db);
  }

  async insertEvent(e: Insertable<EventTable>, db: Db = this.db): Promise<void> {
    await insertRows(db, 'events', [e]);
  }

  /** Enabled listeners of a project with the event types they subscribe to. */
  async enabledListeners(projectId: string, db: Db = this.db): Promise<{ id: string; events: string[] }[]> {
    const rows = await this.statements.rows(
      db,
      'enabledListeners',
      (root) => root.selectFrom('webhooks').select(['id', 'events']).where('project_id', '=', slot(0)).where('enabled', '=', 1).compile(),
      [projectId],
    );
    return rows.map((r) => ({ id: r.id, events: JSON.parse(r.events) as string[] }));
  }

  async insertDeliveries(rows: Insertable<DeliveryTable>[], db: Db = this.db): Promise<void> {
    await insertRows(db, 'deliveries', rows);
  }
}
