/**
 * 021 (PostgreSQL only): a committed timer or delivery wakes every instance's job runner. A statement-level
 * trigger on inserts into `timers` and `deliveries` sends `pg_notify('job_wake', '')`; PostgreSQL delivers it at
 * commit (nothing on rollback) and folds identical notifications of one transaction into one, so a transaction
 * sends at most one, however many rows and statements it inserts, and no statement is added to its round trips.
 * Each instance listens on one dedicated connection (platform/db/job-wake.ts). SQLite has no trigger: its one
 * process is woken in-process. Additive: a previous release ignores the notifications.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create or replace function job_wake_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('job_wake', '');
  return null;
end
$$`.execute(db);
  for (const table of ['timers', 'deliveries']) {
    await sql`create trigger ${sql.id(`${table}_job_wake`)} after insert on ${sql.table(table)} for each statement execute function job_wake_notify()`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const table of ['timers', 'deliveries']) {
    await sql`drop trigger if exists ${sql.id(`${table}_job_wake`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists job_wake_notify()`.execute(db);
}
