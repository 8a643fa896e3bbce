/**
 * 010: the index the webhook delivery job reads its due work from.
 * Only pending deliveries are in it (delivered and failed ones leave it), per
 * listener in the order they are sent (next attempt, then creation), with the
 * columns the due read filters on (lease) and returns (attempts, id). The read
 * walks the listeners that have pending deliveries along it, takes each one's
 * first few due and unleased rows, and never touches a row (let alone a body),
 * sorts a backlog, or scans one listener's backlog to find another's work.
 * It replaces `deliveries_due_idx` (status, next_attempt_at), which held every
 * delivery ever made and made the read sort all due rows, bodies included.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('deliveries_pending_idx')
    .on('deliveries')
    .columns(['webhook_id', 'next_attempt_at', 'created_at', 'attempts', 'id'])
    .where(sql<boolean>`status = 'pending'`)
    .execute();
  await db.schema.dropIndex('deliveries_due_idx').ifExists().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('deliveries_due_idx').ifNotExists().on('deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.dropIndex('deliveries_pending_idx').ifExists().execute();
}
