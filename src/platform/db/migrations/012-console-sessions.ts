/**
 * 012: the operator console's sessions, stored so that sign-out ends them on every
 * instance and a restart keeps the valid ones (platform/http/console-session.ts).
 *
 * - `console_sessions`: one row per signed-in console. `id_hash` is the SHA-256 of
 *   the random session id the cookie carries (the id itself is never stored);
 *   `env` is the BOOKING_ENV that issued it; `expires_at` the end of its 12 hours
 *   (real time); `revoked_at` set by sign-out. Rows past `expires_at` are purged at
 *   the next sign-in (`console_sessions_expiry_idx`).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('env', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('console_sessions_expiry_idx').on('console_sessions').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_sessions').execute();
}
