/**
 * 017: doors that know the booking.
 * - `devices` (site): how the service reaches a device when it is not the building-wide transport:
 *   `transport_kind` (`isapi` | `zkteco-push`, null: the DEVICE_TRANSPORT default), `transport_json`
 *   (the non-secret settings: ISAPI baseUrl and username, ZKTeco serialNumber) and `transport_secret_enc`
 *   (the ISAPI password or the ZKTeco commKey, sealed).
 * - `rooms`, `desks` (site): `access_devices`, JSON array of the device ids whose doors open for the
 *   asset's bookings (from the site document's `accessDevices` keys).
 * - `device_state` (devices): `last_seen_at` (real time a pull device last polled) and `pull_cursor`
 *   (JSON: what a pull device has uploaded so far).
 * - `visitor_invites` (visitors): `meeting_id`, the booking a visitor is invited to (their pass then opens that
 *   booking's doors in its window).
 * - `door_windows` (devices): per booking and participant, the devices and the validity window the
 *   participant holds there (from the booking's pre-start to its end), written in the booking change's
 *   own transaction.
 * - `device_user_numbers` (devices): the number a subject has on devices that key users by a number
 *   (ZKTeco PIN), the same on every device, so an uploaded log names the subject.
 * - `access_entries` (devices): the one entry log: every access event from every transport, deduplicated
 *   per device by the device's own event key, and what it did (check-in, walk-in, recorded).
 * Additive only: a previous release ignores all of it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('devices').addColumn('transport_kind', 'text').execute();
  await db.schema.alterTable('devices').addColumn('transport_json', 'text').execute();
  await db.schema.alterTable('devices').addColumn('transport_secret_enc', 'text').execute();
  await db.schema.alterTable('rooms').addColumn('access_devices', 'text').execute();
  await db.schema.alterTable('desks').addColumn('access_devices', 'text').execute();
  await db.schema.alterTable('device_state').addColumn('last_seen_at', 'bigint').execute();
  await db.schema.alterTable('visitor_invites').addColumn('meeting_id', 'text').execute();
  await db.schema.createIndex('visitor_invites_meeting_idx').on('visitor_invites').column('meeting_id').execute();
  await db.schema.alterTable('device_state').addColumn('pull_cursor', 'text').execute();

  await db.schema
    .createTable('door_windows')
    .addColumn('meeting_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    /** JSON array of device ids. */
    .addColumn('device_ids', 'text', (c) => c.notNull())
    .addColumn('valid_from', 'bigint', (c) => c.notNull())
    .addColumn('valid_until', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('door_windows_pk', ['meeting_id', 'user_id'])
    .execute();
  await db.schema.createIndex('door_windows_user_idx').on('door_windows').columns(['project_id', 'user_id', 'valid_until']).execute();

  await db.schema
    .createTable('device_user_numbers')
    .addColumn('subject_kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('user_no', 'bigint', (c) => c.notNull().unique())
    .addPrimaryKeyConstraint('device_user_numbers_pk', ['subject_kind', 'subject_id'])
    .execute();

  await db.schema
    .createTable('access_entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    /** The device's own identity of the event (serial number, log line): a resent event has the same. */
    .addColumn('event_key', 'text', (c) => c.notNull())
    /** member | visitor | unknown */
    .addColumn('subject_kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text')
    /** card | face | qr | plate | pin | fingerprint | other */
    .addColumn('credential_kind', 'text', (c) => c.notNull())
    .addColumn('granted', 'integer', (c) => c.notNull())
    /** The device's time of the event and the service's (real) time of receiving it. */
    .addColumn('device_at', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    /** The room or desk naming the device in accessDevices, if any. */
    .addColumn('asset_kind', 'text')
    .addColumn('asset_id', 'text')
    /** pending | check-in | booked | walk-in | recorded | refused */
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('meeting_id', 'text')
    .addColumn('processed_at', 'bigint')
    .addUniqueConstraint('access_entries_event_uq', ['device_id', 'event_key'])
    .execute();
  await db.schema.createIndex('access_entries_pending_idx').on('access_entries').columns(['outcome', 'received_at']).execute();
  await db.schema.createIndex('access_entries_asset_idx').on('access_entries').columns(['asset_id', 'device_at']).execute();
  await db.schema.createIndex('access_entries_received_idx').on('access_entries').column('received_at').execute();
  await db.schema.createIndex('access_entries_project_idx').on('access_entries').columns(['project_id', 'device_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('access_entries').execute();
  await db.schema.dropTable('device_user_numbers').execute();
  await db.schema.dropTable('door_windows').execute();
}
