/**
 * The transactional outbox: an event is written in the same transaction as the
 * state change that causes it — one `events` row, plus one `deliveries` row (with
 * the exact body to sign and send) per enabled listener of the project subscribed
 * to its type. The delivery job sends them later.
 *
 * `emit` records a booking event (its type and data follow from the booking's
 * facts); `emitEvent` records any other event of the catalogue (visitor events)
 * whose data the caller has built.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/db/db.js';
import { newId } from '../../platform/ids.js';
import { currentTraceParent } from '../../platform/observability/tracing.js';
import { bookingEventData, deliveryBody, eventType, type BookingFacts, type EventDetail } from './event-payloads.js';
import type { Listener, OutboxRepository } from './outbox-repository.js';

export interface BookingEvent {
  meetingId: string;
  facts: BookingFacts;
  detail: EventDetail;
  /** When it occurred (service time). */
  at: number;
}

/** Any event of the catalogue, with its `data` already built. */
export interface OutboxEvent {
  projectId: string;
  /** One of the catalogue's event types (contract/events.ts EVENT_TYPES). */
  type: string;
  data: unknown;
  /** When it occurred (service time). */
  at: number;
  /** The booking it is about; null (or absent) for events about something else. */
  meetingId?: string | null;
}

export class Outbox {
  /** Listener reads started ahead by `prefetch`, per transaction and project; each is used once. */
  private readonly ahead = new WeakMap<Db, Map<string, Promise<Listener[]>>>();

  constructor(private readonly repo: OutboxRepository) {}

  /**
   * Starts reading the project's enabled listeners in `trx` for an event the caller is
   * about to record there: on PostgreSQL the read rides with the transaction's next
   * statement instead of costing a round trip of its own when the event is recorded.
   * It is as much inside the transaction as a read made at the event.
   */
  async prefetch(trx: Db, projectId: string): Promise<void> {
    const { listeners } = await this.repo.enabledListenersAhead(projectId, trx);
    // Used later, or never when the transaction fails first: its failure is then not unhandled.
    listeners.catch(() => {});
    let byProject = this.ahead.get(trx);
    if (!byProject) this.ahead.set(trx, (byProject = new Map<string, Promise<Listener[]>>()));
    byProject.set(projectId, listeners);
  }

  /** The project's enabled listeners in `trx`: the read `prefetch` started, or a new one. */
  private listeners(trx: Db, projectId: string): Promise<Listener[]> {
    const byProject = this.ahead.get(trx);
    const ahead = byProject?.get(projectId);
    if (!ahead) return this.repo.enabledListeners(projectId, trx);
    byProject!.delete(projectId);
    return ahead;
  }

  /** Records one booking event and queues its deliveries, in `trx`. */
  async emit(trx: Db, e: BookingEvent): Promise<void> {
    const { facts, detail, at } = e;
    await this.emitEvent(trx, {
      projectId: facts.projectId,
      type: eventType(facts.assetKind, detail.kind),
      data: bookingEventData(facts, detail, at),
      at,
      meetingId: e.meetingId,
    });
  }

  /** Records one event and queues one delivery per enabled listener subscribed to its type, in `trx`. */
  async emitEvent(trx: Db, e: OutboxEvent): Promise<void> {
    const { projectId, type, data, at } = e;
    const eventId = newId(at);
    await this.repo.insertEvent(
      { id: eventId, project_id: projectId, meeting_id: e.meetingId ?? null, type, occurred_at: at, data: JSON.stringify(data) },
      trx,
    );
    const listeners = await this.listeners(trx, projectId);
    const subscribed = listeners.filter((l) => l.events.includes(type));
    // The request's trace context goes with the deliveries: their job spans join its trace.
    const traceParent = subscribed.length ? currentTraceParent() : null;
    await this.repo.insertDeliveries(
      subscribed.map((l) => {
        const id = `whk_${randomUUID()}`;
        return {
          id,
          event_id: eventId,
          webhook_id: l.id,
          type,
          body: deliveryBody({ deliveryId: id, type, occurredAt: at, projectId, data }),
          status: 'pending',
          attempts: 0,
          next_attempt_at: at,
          claimed_until: null,
          last_status: null,
          last_error: null,
          created_at: at,
          updated_at: at,
          delivered_at: null,
          trace_parent: traceParent,
        };
      }),
      trx,
    );
  }
}
