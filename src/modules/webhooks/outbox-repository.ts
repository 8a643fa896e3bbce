/** The outbox tables: recorded events and the deliveries queued for them. */
import type { Insertable, Kysely } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Database, DeliveryTable, EventTable } from '../../platform/db/schema.js';
import { PreparedStatements, insertRows, slot } from '../../platform/db/statements.js';

export interface Listener {
  id: string;
  /** The event types it subscribes to. */
  events: string[];
}

const enabledListeners = (root: Kysely<Database>) =>
  root.selectFrom('webhooks').select(['id', 'events']).where('project_id', '=', slot(0)).where('enabled', '=', 1).compile();

const listenersOf = (rows: { id: string; events: string }[]): Listener[] =>
  rows.map((r) => ({ id: r.id, events: JSON.parse(r.events) as string[] }));

export class OutboxRepository {
  private readonly statements: PreparedStatements;

  constructor(private readonly db: Kysely<Database>) {
    this.statements = new PreparedStatements(db);
  }

  async insertEvent(e: Insertable<EventTable>, db: Db = this.db): Promise<void> {
    await insertRows(db, 'events', [e]);
  }

  /** Enabled listeners of a project with the event types they subscribe to. */
  async enabledListeners(projectId: string, db: Db = this.db): Promise<Listener[]> {
    return listenersOf(await this.statements.rows(db, 'enabledListeners', enabledListeners, [projectId]));
  }

  /**
   * The same read started in transaction `trx` to ride with its next statement on
   * PostgreSQL (platform/db/pg-driver.ts); resolves once started, with the listeners to come.
   */
  async enabledListenersAhead(projectId: string, trx: Db): Promise<{ listeners: Promise<Listener[]> }> {
    const started = await this.statements.rowsAhead(trx, 'enabledListeners', enabledListeners, [projectId]);
    return { listeners: started.rows.then(listenersOf) };
  }

  async insertDeliveries(rows: Insertable<DeliveryTable>[], db: Db = this.db): Promise<void> {
    await insertRows(db, 'deliveries', rows);
  }
}
