/**
 * The transactional outbox: a booking event is written in the same transaction
 * as the state change that causes it — one `events` row, plus one `deliveries`
 * row (with the exact body to sign and send) per enabled listener of the project
 * subscribed to its type. The delivery job sends them later.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/db/db.js';
import { newId } from '../../platform/ids.js';
import { bookingEventData, deliveryBody, eventType, type BookingFacts, type EventDetail } from './event-payloads.js';
import type { OutboxRepository } from './outbox-repository.js';

export interface BookingEvent {
  meetingId: string;
  facts: BookingFacts;
  detail: EventDetail;
  /** When it occurred (service time). */
  at: number;
}

export class Outbox {
  constructor(private readonly repo: OutboxRepository) {}

  /** Records one booking event and queues its deliveries, in `trx`. */
  async emit(trx: Db, e: BookingEvent): Promise<void> {
    const { facts, detail, at } = e;
    const type = eventType(facts.assetKind, detail.kind);
    const data = bookingEventData(facts, detail, at);
    const eventId = newId(at);
    await this.repo.insertEvent({ id: eventId, project_id: facts.projectId, meeting_id: e.meetingId, type, occurred_at: at, data: JSON.stringify(data) }, trx);
    const listeners = await this.repo.enabledListeners(facts.projectId, trx);
    const subscribed = listeners.filter((l) => (JSON.parse(l.events) as string[]).includes(type));
    await this.repo.insertDeliveries(
      subscribed.map((l) => {
        const id = `whk_${randomUUID()}`;
        return {
          id, event_id: eventId, webhook_id: l.id, type,
          body: deliveryBody({ deliveryId: id, type, occurredAt: at, projectId: facts.projectId, data }),
          status: 'pending', attempts: 0, next_attempt_at: at, claimed_until: null, last_status: null, last_error: null,
          created_at: at, updated_at: at, delivered_at: null,
        };
      }),
      trx,
    );
  }
}
