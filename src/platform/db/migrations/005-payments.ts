/**
 * 005: payments of paid bookings.
 * - `payments`: one row per amount asked of a payer (a self-service checkout, a
 *   back-office quote, or the difference of an extension), with its deadline and
 *   state; the meeting row keeps the public snapshot (`payment`, `billing_summaries`).
 * - `invoice_counters`: the last invoice number handed out per project, so numbers
 *   are unique and sequential per project on both engines.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    /** Not a foreign key: a payment is opened just before its booking row is written, in the same transaction. */
    .addColumn('meeting_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('invoice_no', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    /** Amount due in minor units (satang for THB). */
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_ref', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    /** When a back-office hold's reminder (*_PAYMENT_DUE at about 75 % of the hold) is due; null once sent. */
    .addColumn('nudge_at', 'bigint')
    .addColumn('redirect_url', 'text')
    .addColumn('promo_code_id', 'text')
    /** What a lapse restores (an extension's previous window and status), as JSON. */
    .addColumn('restore', 'text')
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('settled_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('payments_project_invoice_uq', ['project_id', 'invoice_no'])
    .execute();
  await db.schema.createIndex('payments_due_idx').on('payments').columns(['status', 'expires_at']).execute();
  await db.schema.createIndex('payments_nudge_idx').on('payments').columns(['status', 'nudge_at']).execute();
  await db.schema.createIndex('payments_meeting_idx').on('payments').column('meeting_id').execute();

  await db.schema
    .createTable('invoice_counters')
    .addColumn('project_id', 'text', (c) => c.primaryKey())
    .addColumn('last_no', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('invoice_counters').execute();
  await db.schema.dropTable('payments').execute();
}
