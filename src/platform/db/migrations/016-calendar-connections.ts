/**
 * 016: room calendars connected to Microsoft 365 and Google Workspace.
 * - `calendar_connections` (site): a project's connection from the site document's
 *   `calendarConnections` section (one per provider per project), its secret sealed
 *   (Microsoft's client secret, Google's service-account private key).
 * - `calendar_rooms` (calendar-sync): per connection and room (a room with an email):
 *   the provider's subscription or channel (id, resource id, expiry, the sealed
 *   clientState / channel token), the sync cursor (Graph's delta link, Google's sync
 *   token), when subscription work and a pull are next due, the last error and the
 *   counts of changes in and out.
 * - `calendar_links` (calendar-sync): one provider event and the booking it stands
 *   for: an invitation imported (`remote`), or a booking the service wrote to the
 *   room's calendar (`service`), with what was last written or answered.
 * - `calendar_outbox` (calendar-sync): writes owed to a provider (a booking's event,
 *   the room's answer to an invitation), stored in the transaction that causes them
 *   and carried out by a job, coalesced by a deterministic id.
 * Additive only: a previous release ignores all of it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('calendar_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    /** microsoft | google */
    .addColumn('provider', 'text', (c) => c.notNull())
    /** Microsoft: tenantId, clientId. Google: serviceAccountEmail, subject. */
    .addColumn('tenant_id', 'text')
    .addColumn('client_id', 'text')
    .addColumn('service_account_email', 'text')
    .addColumn('subject', 'text')
    /** Microsoft's client secret or Google's private key (PEM), sealed. */
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('api_base_url', 'text')
    .addColumn('token_url', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('calendar_connections_project_provider_uq', ['project_id', 'provider'])
    .execute();

  await db.schema
    .createTable('calendar_rooms')
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('room_id', 'text', (c) => c.notNull())
    /** The room's mailbox (Microsoft) or resource calendar id (Google), lower-cased. */
    .addColumn('calendar_id', 'text', (c) => c.notNull())
    /** active (takes part) | removed (the room or connection left; the subscription is being stopped) */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text')
    /** Google's resourceId of the channel (needed to stop it). */
    .addColumn('resource_id', 'text')
    /** Graph's clientState or Google's channel token, sealed. */
    .addColumn('client_state_enc', 'text')
    /** Real time the subscription or channel expires. */
    .addColumn('expires_at', 'bigint')
    /** Graph's delta link or Google's sync token; null: the next pull is a full resync. */
    .addColumn('cursor', 'text')
    .addColumn('cursor_at', 'bigint')
    /** Real time subscription work (create, renew, stop) is next due; null when none. */
    .addColumn('subscribe_due_at', 'bigint')
    /** Real time the next pull of changes is due; null when none. */
    .addColumn('sync_due_at', 'bigint')
    /** Real time until which one instance holds the room's subscription work / pull (claimed). */
    .addColumn('subscribe_lease_until', 'bigint')
    .addColumn('sync_lease_until', 'bigint')
    .addColumn('subscribe_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sync_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_sync_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'bigint')
    .addColumn('changes_in', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('changes_out', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('calendar_rooms_pk', ['connection_id', 'room_id'])
    .execute();
  await db.schema.createIndex('calendar_rooms_room_idx').on('calendar_rooms').column('room_id').execute();
  await db.schema.createIndex('calendar_rooms_subscription_idx').on('calendar_rooms').column('subscription_id').execute();
  await db.schema.createIndex('calendar_rooms_subscribe_due_idx').on('calendar_rooms').column('subscribe_due_at').execute();
  await db.schema.createIndex('calendar_rooms_sync_due_idx').on('calendar_rooms').column('sync_due_at').execute();

  await db.schema
    .createTable('calendar_links')
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('room_id', 'text', (c) => c.notNull())
    /** The stable key of the provider's event (the calendar_events uid). */
    .addColumn('uid', 'text', (c) => c.notNull())
    /** The provider's event id (to update, cancel or answer it). */
    .addColumn('remote_id', 'text', (c) => c.notNull())
    .addColumn('meeting_id', 'text')
    /** '' for a single booking; a series' occurrence id otherwise. */
    .addColumn('occurrence_id', 'text', (c) => c.notNull())
    /** remote (an invitation imported) | service (a booking written out) */
    .addColumn('origin', 'text', (c) => c.notNull())
    /** Graph's changeKey / Google's etag after the service's last write. */
    .addColumn('etag', 'text')
    /** What the service last wrote (service) or answered (remote): a hash of it, and the window written. */
    .addColumn('written_hash', 'text')
    .addColumn('written_start', 'bigint')
    .addColumn('written_end', 'bigint')
    /** 1 once the event is cancelled or removed at the provider. */
    .addColumn('gone', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('calendar_links_pk', ['connection_id', 'room_id', 'uid'])
    .execute();
  await db.schema.createIndex('calendar_links_remote_idx').on('calendar_links').columns(['connection_id', 'remote_id']).execute();
  await db.schema.createIndex('calendar_links_meeting_idx').on('calendar_links').columns(['meeting_id', 'connection_id']).execute();

  await db.schema
    .createTable('calendar_outbox')
    /** Deterministic: `booking:{connectionId}:{meetingId}` or `answer:{connectionId}:{roomId}:{uid}` (coalesced). */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('room_id', 'text', (c) => c.notNull())
    /** booking | answer */
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('meeting_id', 'text')
    .addColumn('uid', 'text')
    /** Real time it is next due. */
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    /** Raised by every enqueue: a run finishing removes the row only when nothing was enqueued meanwhile. */
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    /** Real time until which one instance holds it (claimed). */
    .addColumn('lease_until', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('calendar_outbox_due_idx').on('calendar_outbox').columns(['due_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('calendar_outbox').execute();
  await db.schema.dropTable('calendar_links').execute();
  await db.schema.dropTable('calendar_rooms').execute();
  await db.schema.dropTable('calendar_connections').execute();
}
