/**
 * The transactional outbox: a booking event is written in the same transaction
 * as the state change that causes it — one `events` row, plus one `deliveries`
 * row (with the exact body to sign and send) per enabled listener of the project
 * subscribed to its type. The delivery worker sends them later.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { MeetingRow } from '../booking/meeting-repository.js';
import { newId } from '../../platform/ids.js';
import { bookingEventData, deliveryBody, eventType, type BookingFacts, type EventDetail } from './event-payloads.js';
import { parseAttendees, parseOrganizer } from '../booking/meeting-view.js';

/** The facts of a booking an event describes, read inside the caller's transaction. */
export async function bookingFacts(trx: Kysely<Database>, m: MeetingRow, window: { start: number; end: number }): Promise<BookingFacts> {
  const table = m.asset_kind === 'room' ? 'rooms' : 'desks';
  const asset = await trx.selectFrom(table).select(['name', 'floor_id']).where('id', '=', m.asset_id).executeTakeFirst();
  const floor = asset ? await trx.selectFrom('floors').select('name').where('id', '=', asset.floor_id).executeTakeFirst() : undefined;
  const project = await trx.selectFrom('projects').select('timezone').where('id', '=', m.project_id).executeTakeFirstOrThrow();
  const organizer = parseOrganizer(m);
  return {
    projectId: m.project_id,
    timeZone: project.timezone,
    assetKind: m.asset_kind as 'room' | 'desk',
    assetName: asset?.name ?? '',
    floorName: floor?.name ?? '',
    organizerUserId: m.organizer_user_id,
    organizerName: organizer.name,
    organizerEmail: organizer.email,
    attendeeNames: parseAttendees(m).map((a) => a.name),
    start: window.start,
    end: window.end,
  };
}

/** Records one booking event and queues its deliveries, in `trx`. `at` is when it occurred (service time). */
export async function emitBookingEvent(
  trx: Kysely<Database>,
  m: MeetingRow,
  window: { start: number; end: number },
  detail: EventDetail,
  at: number,
): Promise<void> {
  const facts = await bookingFacts(trx, m, window);
  const type = eventType(facts.assetKind, detail.kind);
  const data = bookingEventData(facts, detail, at);
  const eventId = newId(at);
  await trx
    .insertInto('events')
    .values({ id: eventId, project_id: m.project_id, meeting_id: m.id, type, occurred_at: at, data: JSON.stringify(data) })
    .execute();
  const listeners = await trx.selectFrom('webhooks').select(['id', 'events']).where('project_id', '=', m.project_id).where('enabled', '=', 1).execute();
  const subscribed = listeners.filter((l) => (JSON.parse(l.events) as string[]).includes(type));
  if (!subscribed.length) return;
  await trx
    .insertInto('deliveries')
    .values(
      subscribed.map((l) => {
        const id = `whk_${randomUUID()}`;
        return {
          id, event_id: eventId, webhook_id: l.id, type,
          body: deliveryBody({ deliveryId: id, type, occurredAt: at, projectId: m.project_id, data }),
          status: 'pending', attempts: 0, next_attempt_at: at, claimed_until: null, last_status: null, last_error: null,
          created_at: at, updated_at: at, delivered_at: null,
        };
      }),
    )
    .execute();
}
