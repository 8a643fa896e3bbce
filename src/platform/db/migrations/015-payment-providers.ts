/**
 * 015: real payment providers (Stripe, Opn Payments).
 * - `payment_providers`: a project's provider account from the site document's
 *   `paymentProviders` section (at most one per project), its secret key and
 *   webhook secret sealed.
 * - `payments` gains `provider_id` (the account a payment was opened with, so its
 *   events and reconciliation use that account even after the document changes),
 *   `provider_display` (JSON: what the page shows from the provider's answer, e.g.
 *   the PromptPay QR payload) and `reconciled_at` (real time of the last time the
 *   provider was asked about it).
 * - `payment_provider_events`: every event a provider posted, verified or not (the
 *   console's payment view); a verified event id is stored once.
 * - `payment_provider_actions`: voids and refunds owed to a provider, written in the
 *   transaction that decides them and carried out by a job (an outbox: a provider
 *   that is down delays them, never loses them).
 * Additive only: a previous release ignores all of it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payment_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('project_id', 'text', (c) => c.notNull().unique().references('projects.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('secret_key_enc', 'text', (c) => c.notNull())
    .addColumn('webhook_secret_enc', 'text', (c) => c.notNull())
    /** JSON array of methods: promptpay, card. */
    .addColumn('methods', 'text', (c) => c.notNull())
    .addColumn('api_base_url', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.alterTable('payments').addColumn('provider_id', 'text').execute();
  await db.schema.alterTable('payments').addColumn('provider_display', 'text').execute();
  await db.schema.alterTable('payments').addColumn('reconciled_at', 'bigint').execute();
  await db.schema.createIndex('payments_provider_ref_idx').on('payments').columns(['provider_id', 'provider_ref']).execute();

  await db.schema
    .createTable('payment_provider_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    /** 1 when its signature verified; an unverified event changes nothing. */
    .addColumn('verified', 'integer', (c) => c.notNull())
    .addColumn('payment_id', 'text')
    .addColumn('provider_ref', 'text')
    .addColumn('outcome', 'text')
    /** Real time. */
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('payment_provider_events_uq', ['provider_id', 'verified', 'event_id'])
    .execute();
  await db.schema.createIndex('payment_provider_events_payment_idx').on('payment_provider_events').column('payment_id').execute();

  await db.schema
    .createTable('payment_provider_actions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('payment_id', 'text', (c) => c.notNull())
    .addColumn('provider_id', 'text')
    .addColumn('provider', 'text', (c) => c.notNull())
    /** void | refund */
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    /** queued (not sent yet) | pending (the provider has not finished) | succeeded | failed */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    /** The provider's id of the refund. */
    .addColumn('provider_ref', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    /** Real time the job next tries it (queued) or re-reads it (pending); null when final. */
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('payment_provider_actions_due_idx').on('payment_provider_actions').columns(['next_attempt_at']).execute();
  await db.schema.createIndex('payment_provider_actions_payment_idx').on('payment_provider_actions').column('payment_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('payment_provider_actions').execute();
  await db.schema.dropTable('payment_provider_events').execute();
  await db.schema.dropIndex('payments_provider_ref_idx').execute();
  await db.schema.alterTable('payments').dropColumn('reconciled_at').execute();
  await db.schema.alterTable('payments').dropColumn('provider_display').execute();
  await db.schema.alterTable('payments').dropColumn('provider_id').execute();
  await db.schema.dropTable('payment_providers').execute();
}
