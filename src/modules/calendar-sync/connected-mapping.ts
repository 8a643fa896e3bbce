/**
 * Connected room calendars' mapping (pure: no HTTP, no SQL, no clock): how a
 * provider's event becomes the iTIP message the calendar actor already decides,
 * the hash that recognises a repeated state, and what a booking should look like on
 * its room's calendar. The timing rules are in rules/connected-timing.ts.
 */
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import type { ItipAttendee, ItipEvent, ItipMessage } from './itip.js';
import type { OutboundEvent, RemoteEvent } from './connector.js';
import type { EventTimes } from './rules/sync-rules.js';

/**
 * A provider's event on a room's calendar as the iTIP message the actor decides:
 * - gone (deleted or cancelled) → CANCEL;
 * - the room's copy declined by someone (not by the service's own answer) → REPLY DECLINED;
 * - otherwise → REQUEST with the event's times, guests and the room's response.
 * `serviceEvent`: an event the service wrote (the room organizes it): only its times count.
 */
export function messageOf(
  e: RemoteEvent,
  p: { uid: string; roomEmail: string; lastAnswer: boolean | null; serviceEvent: boolean },
): ItipMessage {
  const attendees: ItipAttendee[] = p.serviceEvent
    ? [{ email: p.roomEmail, name: null, partstat: 'ACCEPTED', role: null, cutype: 'ROOM' }]
    : e.attendees.map((a) => ({
        email: a.email,
        name: a.name,
        partstat: partstatOf(a.response),
        role: null,
        cutype: a.email === p.roomEmail ? 'ROOM' : a.resource ? 'RESOURCE' : 'INDIVIDUAL',
      }));
  const declined = !p.serviceEvent && declinedByPerson(e, { email: p.roomEmail, lastAnswer: p.lastAnswer });
  const method = e.removed ? 'CANCEL' : declined ? 'REPLY' : 'REQUEST';
  const event: ItipEvent = {
    ...timesOf(e),
    uid: p.uid,
    recurrenceId: null,
    sequence: e.sequence,
    dtstamp: e.updatedAt || null,
    summary: e.title,
    description: e.description,
    location: null,
    timeZone: e.timeZone,
    organizer: p.serviceEvent ? null : e.organizer,
    attendees,
    rrule: null,
    exdates: [],
    status: e.removed ? 'CANCELLED' : 'CONFIRMED',
  };
  return { method, prodId: null, events: [event] };
}

function partstatOf(r: RemoteEvent['attendees'][number]['response']): string {
  return r === 'accepted' ? 'ACCEPTED' : r === 'declined' ? 'DECLINED' : r === 'tentative' ? 'TENTATIVE' : 'NEEDS-ACTION';
}

/** Times of a provider's event as the actor reads an iTIP event's (an all-day event by its local dates). */
function timesOf(e: RemoteEvent): EventTimes {
  if (!e.allDay)
    return { start: e.start, end: e.end, allDay: false, startDate: null, endDate: null, floating: false, startLocal: null, endLocal: null };
  const zone = e.timeZone ?? 'UTC';
  const startDate = DateTime.fromMillis(e.start, { zone }).toISODate();
  const endDate = DateTime.fromMillis(e.end, { zone }).toISODate();
  const local = (d: string | null) => (d ? `${d}T00:00:00` : null);
  return {
    start: e.start,
    end: e.end,
    allDay: true,
    startDate,
    endDate,
    floating: false,
    startLocal: local(startDate),
    endLocal: local(endDate),
  };
}

/**
 * The hash of what matters in a provider's event (a repeat of the same state is a
 * duplicate): times, title, guests and their answers, removed. The room's own
 * response counts only as "declined by someone else": the service's own accept or
 * decline coming back is no change.
 */
export function remoteHash(e: RemoteEvent, room: { email: string; lastAnswer: boolean | null }): string {
  const facts = [
    e.removed ? 'removed' : 'present',
    e.start,
    e.end,
    e.allDay,
    e.title,
    e.description,
    e.organizer?.email ?? '',
    ...e.attendees
      .map((a) => (a.email === room.email ? `room=${declinedByPerson(e, room) ? 'declined' : '-'}` : `${a.email}=${a.response}`))
      .sort(),
  ];
  return createHash('sha256').update(JSON.stringify(facts)).digest('base64url');
}

/** The room's copy is declined, and not by the service's own answer. */
export function declinedByPerson(e: RemoteEvent, room: { email: string; lastAnswer: boolean | null }): boolean {
  return e.attendees.some((a) => a.email === room.email && a.response === 'declined') && room.lastAnswer !== false;
}

/**
 * Nothing to decide: the room's copy shows the decline the service itself sent
 * (the organizer changing the event resets the room's answer, and that is decided again).
 */
export function showsOwnDecline(e: RemoteEvent, room: { email: string; lastAnswer: boolean | null }): boolean {
  return !e.removed && room.lastAnswer === false && e.attendees.some((a) => a.email === room.email && a.response === 'declined');
}

/** What a booking is, as far as its room calendar event goes. */
export interface BookingForCalendar {
  id: string;
  status: string;
  title: string;
  startAt: number;
  endAt: number;
  /** The end it was booked for (a check-out or release before it ended it early). */
  bookedEndAt: number;
  organizer: { email: string | null; name: string };
  /** A series' occurrences (each its own event); null for a single booking. */
  occurrences: { id: string; start: number; end: number; status?: string | null }[] | null;
}

/** One event the booking should have on the room's calendar. */
export interface DesiredEvent {
  /** '' for a single booking; the occurrence id of a series. */
  occurrenceId: string;
  event: OutboundEvent;
  /** Hash of what is written (unchanged: nothing to write). */
  hash: string;
}

const SHOWN = new Set(['active', 'checked-in', 'done', 'unpaid']);

/** A single booking that ended before its booked end (an early check-out): its room is free again. */
export function endedEarly(b: BookingForCalendar): boolean {
  return b.status === 'done' && b.occurrences === null && b.endAt < b.bookedEndAt;
}

/**
 * The events a booking should have on its room's calendar: none once cancelled,
 * rejected or ended early; one per booking (per remaining occurrence of a series)
 * otherwise, tentative while unpaid.
 */
export function desiredEvents(b: BookingForCalendar, timeZone: string): DesiredEvent[] {
  if (!SHOWN.has(b.status) || endedEarly(b)) return [];
  const windows = b.occurrences
    ? b.occurrences.filter((o) => !o.status || o.status !== 'cancelled').map((o) => ({ occurrenceId: o.id, start: o.start, end: o.end }))
    : [{ occurrenceId: '', start: b.startAt, end: b.endAt }];
  const title = b.title.trim() || 'Booked';
  const who = b.organizer.email ? `${b.organizer.name} <${b.organizer.email}>` : b.organizer.name;
  const description = `Booked by ${who} through the room booking service.`;
  return windows
    .filter((w) => w.end > w.start)
    .map((w) => {
      const event: OutboundEvent = {
        key: w.occurrenceId ? `${b.id}:${w.occurrenceId}` : b.id,
        bookingId: b.id,
        title,
        description,
        start: w.start,
        end: w.end,
        timeZone,
        organizer: b.organizer,
        tentative: b.status === 'unpaid',
      };
      return { occurrenceId: w.occurrenceId, event, hash: outboundHash(event) };
    });
}

export function outboundHash(e: OutboundEvent): string {
  return createHash('sha256')
    .update(JSON.stringify([e.title, e.description, e.start, e.end, e.tentative, e.organizer.email, e.organizer.name]))
    .digest('base64url');
}

/** The comment of the room's answer: the reason when declined, a short acceptance otherwise. */
export function answerComment(accepted: boolean, reason: string | null, roomName: string): string {
  return accepted ? `Accepted: ${roomName} is booked` : (reason ?? `${roomName} cannot be booked`);
}
