/**
 * 006: the payment inbox. Every settle or fail notification (a provider's
 * webhook, the sandbox routes, the page's Pay button) is stored once by its
 * provider event id before it is applied, so a replayed notification changes
 * nothing twice and one that failed to apply is retried by a job.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payment_inbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_event_id', 'text', (c) => c.notNull())
    .addColumn('payment_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('processed_at', 'bigint')
    .addColumn('outcome', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addUniqueConstraint('payment_inbox_event_uq', ['provider', 'provider_event_id'])
    .execute();
  await db.schema.createIndex('payment_inbox_pending_idx').on('payment_inbox').columns(['processed_at', 'received_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('payment_inbox').execute();
}
