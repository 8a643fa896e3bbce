/**
 * Connected room calendars, outbound: what the service owes a provider, carried out
 * from `calendar_outbox` (rows written in the transaction of the change that causes
 * them) by the `calendar-writeback` job, one room at a time per instance.
 *
 * - A booking made in the service (API, console, partner app) gets an event on its
 *   room's calendar, organized by the room, with the booking's title, organizer and
 *   times (never a PIN), and our booking id in a private property; it is rewritten
 *   when the booking moves, and cancelled when the booking is cancelled or ends early.
 * - An invitation imported from the calendar gets the room's answer on the room's
 *   copy (accept, or decline with the reason as the comment), again whenever the
 *   answer changes (a booking cancelled in the service declines it).
 * Every write is compared with what was last written (a hash on the link), so a
 * repeated row writes nothing; a failed write is retried with backoff.
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { BookingChanges, MeetingRow } from '../booking/index.js';
import type { CalendarRepository } from './calendar-repository.js';
import { replyAnswer } from './calendar-service.js';
import { ConnectorUnavailableError, NotFoundError, type CalendarConnector, type CalendarRef } from './connector.js';
import type { ConnectedRepository, ConnectedRoomRow, ConnectionRow, LinkRow, OutboxRow } from './connected-repository.js';
import type { ConnectorRegistry } from './connection-registry.js';
import { describe } from './connected-sync.js';
import { desiredEvents, endedEarly, type BookingForCalendar, type DesiredEvent } from './connected-mapping.js';
import { answerKey, retryDelayMs } from './rules/connected-timing.js';

export const CALENDAR_WRITEBACK_JOB = 'calendar-writeback';
const LEASE_MS = 120_000;
/** The comment of an event cancelled because its booking ended early. */
const EARLY_END = 'The booking ended early; the room is free again';

export interface CalendarWritebackDeps {
  repo: ConnectedRepository;
  registry: ConnectorRegistry;
  events: CalendarRepository;
  bookings: BookingChanges;
  realClock: Clock;
}

interface Target {
  conn: ConnectionRow;
  room: ConnectedRoomRow;
  connector: CalendarConnector;
  cal: CalendarRef;
}

export class CalendarWriteback {
  constructor(private readonly deps: CalendarWritebackDeps) {}

  /** The writer's observer: a room booking changed; its connected calendars owe a write (same transaction). */
  readonly observer = {
    changed: async (
      trx: Parameters<ConnectedRepository['enqueueBooking']>[3],
      c: { meetingId: string; assetKind: 'room' | 'desk'; assetId: string; calendarEmail: string | null },
    ) => {
      // Only a room with an email can have a connected calendar: no statement at all for the others.
      if (c.assetKind !== 'room' || !c.calendarEmail) return;
      await this.deps.repo.enqueueBooking(c.meetingId, c.assetId, this.deps.realClock.now(), trx);
    },
  };

  due(realNow: number, limit: number): Promise<OutboxRow[]> {
    return this.deps.repo.dueOutbox(realNow, limit);
  }

  async backlog(realNow: number): Promise<{ count: number; oldestDueAt: number | null }> {
    const row = await this.deps.repo.outboxBacklog(realNow);
    return { count: Number(row.n), oldestDueAt: row.oldest === null ? null : Number(row.oldest) };
  }

  claim(row: OutboxRow): Promise<boolean> {
    const now = this.deps.realClock.now();
    return this.deps.repo.claimOutbox(row, now, now + LEASE_MS);
  }

  /** Carries out one outbox row (claimed). */
  async run(row: OutboxRow): Promise<void> {
    const { repo, realClock } = this.deps;
    const conn = await repo.connection(row.connection_id);
    const room = conn && (await repo.room(conn.id, row.room_id));
    if (!conn || !room || room.status !== 'active') return repo.finishOutbox(row);
    const t: Target = { conn, room, connector: this.deps.registry.connectorOf(conn), cal: { calendarId: room.calendar_id } };
    try {
      const written = row.kind === 'answer' ? await this.answerUid(t, row.uid!, row.meeting_id) : await this.booking(t, row.meeting_id!);
      await repo.finishOutbox(row);
      await repo.countChanges(conn.id, room.room_id, 'changes_out', written);
    } catch (err) {
      const now = realClock.now();
      const retryAfter = err instanceof ConnectorUnavailableError ? err.retryAfterMs : null;
      await repo.failOutbox(row, describe(err), now + retryDelayMs(row.attempts + 1, retryAfter));
      await repo.updateRoom(conn.id, room.room_id, { last_error: describe(err), last_error_at: now, updated_at: now });
    }
  }

  /** A booking's state written to its room's calendar, or its imported invitations answered. */
  private async booking(t: Target, meetingId: string): Promise<number> {
    const links = await this.deps.repo.linksOfMeeting(t.conn.id, meetingId);
    const read = await this.deps.bookings.read(meetingId);
    const imported = links.filter((l) => l.origin === 'remote' && l.room_id === t.room.room_id);
    if (imported.length) {
      let n = 0;
      for (const l of imported) n += await this.answer(t, l, read?.meeting ?? null);
      return n;
    }
    if (!read || read.meeting.room_id !== t.room.room_id) return 0;
    const booking = forCalendar(read.meeting);
    const desired = desiredEvents(booking, read.scope.project.timezone);
    const mine = new Map(links.filter((l) => l.origin === 'service' && l.room_id === t.room.room_id).map((l) => [l.occurrence_id, l]));
    let n = 0;
    for (const d of desired) n += await this.writeOne(t, read.meeting, d, mine.get(d.occurrenceId));
    for (const [occurrenceId, l] of mine) {
      if (l.gone || desired.some((d) => d.occurrenceId === occurrenceId)) continue;
      await this.cancelOne(t, l, read.meeting.cancel_reason ?? (endedEarly(booking) ? EARLY_END : null));
      n++;
    }
    return n;
  }

  private async writeOne(t: Target, m: MeetingRow, d: DesiredEvent, link: LinkRow | undefined): Promise<number> {
    const now = this.deps.realClock.now();
    const { repo } = this.deps;
    // An event a person deleted is not put back (the booking followed that delete).
    if (link?.gone) return 0;
    if (link && link.written_hash === d.hash) return 0;
    if (link) {
      try {
        const { etag } = await t.connector.updateEvent(t.cal, link.remote_id, d.event);
        await repo.updateLink(link, {
          etag,
          written_hash: d.hash,
          written_start: d.event.start,
          written_end: d.event.end,
          updated_at: now,
        });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
        await repo.updateLink(link, { gone: 1, updated_at: now });
      }
      return 1;
    }
    const created = await t.connector.createEvent(t.cal, d.event);
    await repo.putLink({
      connection_id: t.conn.id,
      room_id: t.room.room_id,
      uid: created.uid,
      remote_id: created.id,
      meeting_id: m.id,
      occurrence_id: d.occurrenceId,
      origin: 'service',
      etag: created.etag,
      written_hash: d.hash,
      written_start: d.event.start,
      written_end: d.event.end,
      gone: 0,
      created_at: now,
      updated_at: now,
    });
    // The calendar actor knows the event by its uid, so a person's edit of it moves this booking.
    const provider = t.conn.provider === 'google' ? 'google' : 'microsoft';
    const known = await this.deps.events.event(provider, t.room.room_id, created.uid);
    if (!known)
      await this.deps.events.put({
        provider,
        roomId: t.room.room_id,
        uid: created.uid,
        meetingId: m.id,
        sequence: 0,
        dtstamp: null,
        lastHash: '',
        lastReply: '',
        createdAt: now,
        updatedAt: now,
      });
    return 1;
  }

  private async cancelOne(t: Target, l: LinkRow, reason: string | null): Promise<void> {
    await t.connector
      .cancelEvent(t.cal, l.remote_id, reason)
      .catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
    await this.deps.repo.updateLink(l, { gone: 1, updated_at: this.deps.realClock.now() });
  }

  private async answerUid(t: Target, uid: string, meetingId: string | null): Promise<number> {
    const link = await this.deps.repo.link(t.conn.id, t.room.room_id, uid);
    if (!link || link.origin !== 'remote') return 0;
    const read = meetingId ? await this.deps.bookings.read(meetingId) : undefined;
    return this.answer(t, link, read?.meeting ?? null);
  }

  /** The room's answer on its copy of an invitation: the actor's last reply, or a decline once the booking is cancelled. */
  private async answer(t: Target, link: LinkRow, meeting: MeetingRow | null): Promise<number> {
    if (link.gone) return 0;
    const provider = t.conn.provider === 'google' ? 'google' : 'microsoft';
    const seen = await this.deps.events.event(provider, t.room.room_id, link.uid);
    if (!seen || !seen.lastReply) return 0;
    const reply = replyAnswer(seen.lastReply);
    const cancelled = meeting !== null && (meeting.status === 'cancelled' || meeting.status === 'rejected');
    const accepted = reply.accepted && !cancelled;
    const comment = accepted
      ? (reply.comment ?? 'Accepted')
      : ((cancelled ? meeting!.cancel_reason : null) ?? reply.comment ?? 'The room cannot take this booking');
    const key = answerKey({ accepted, comment });
    if (key === link.written_hash) return 0;
    try {
      await t.connector.respond(t.cal, link.remote_id, { accepted, comment });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      await this.deps.repo.updateLink(link, { gone: 1, updated_at: this.deps.realClock.now() });
      return 0;
    }
    await this.deps.repo.updateLink(link, { written_hash: key, updated_at: this.deps.realClock.now() });
    return 1;
  }
}

function forCalendar(m: MeetingRow): BookingForCalendar {
  return {
    id: m.id,
    status: m.status,
    title: m.title ?? '',
    startAt: m.start_at,
    endAt: m.end_at,
    bookedEndAt: m.booked_end_at,
    organizer: { email: m.organizer.email ?? null, name: m.organizer.displayName || m.organizer.name || 'Someone' },
    occurrences: m.recurrence ? m.recurrence.occurrences.map((o) => ({ id: o.id, start: o.start, end: o.end })) : null,
  };
}
