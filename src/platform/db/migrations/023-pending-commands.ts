/**
 * 023: `device_commands_pending_idx`, a partial index of the commands a device has not applied yet
 * (`status = 'pending'`), by device. Applied and failed commands stay in the table as each device's history,
 * so it only grows; the devices overview (pending count per device) and the pending-commands gauge counted
 * through `device_commands_queue_idx`, which holds every command: their cost grew with the whole history.
 * Through this index they read only what is pending. Partial, so a command leaves it when it is applied.
 * Additive only (a previous release ignores it).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('device_commands_pending_idx')
    .ifNotExists()
    .on('device_commands')
    .column('device_id')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('device_commands_pending_idx').ifExists().execute();
}
