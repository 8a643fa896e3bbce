/**
 * Pure rules of connected room calendars (Microsoft 365, Google Workspace): how a
 * provider's event becomes the message the calendar actor already decides, what a
 * booking should look like on its room's calendar, and the timing of syncs,
 * renewals and retries. No HTTP, no SQL, no clock: every instant is passed in.
 */
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import type { ItipAttendee, ItipEvent, ItipMessage } from '../itip.js';
import type { OutboundEvent, RemoteEvent } from '../connector.js';
import type { EventTimes } from './sync-rules.js';

const DAY = 86_400_000;
const MINUTE = 60_000;

/** The window of a full read: from a day ago to 400 days ahead (the feeds' horizon). */
export function syncWindow(now: number): { start: number; end: number } {
  return { start: now - DAY, end: now + 400 * DAY };
}

/** When a subscription expiring at `expiresAt` (made at `madeAt`) is renewed: a quarter of its life before, at most a day before. */
export function renewAt(madeAt: number, expiresAt: number): number {
  const life = Math.max(0, expiresAt - madeAt);
  return expiresAt - Math.min(DAY, Math.floor(life / 4));
}

/** Wait after the `attempts`-th failure in a row: 5 s doubling, at most 15 minutes; a provider's Retry-After when longer. */
export function retryDelayMs(attempts: number, retryAfterMs: number | null = null): number {
  const backoff = Math.min(15 * MINUTE, 5_000 * 2 ** Math.max(0, Math.min(attempts - 1, 20)));
  return Math.max(backoff, retryAfterMs ?? 0);
}

/** The answer the room last gave on an invitation, as stored on its link (`written_hash`). */
export type RoomAnswer = { accepted: boolean; comment: string };

export function answerKey(a: RoomAnswer): string {
  return `${a.accepted ? 'accepted' : 'declined'}:${a.comment}`;
}

export function lastAnswerOf(key: string | null): boolean | null {
  if (!key) return null;
  if (key.startsWith('accepted:')) return true;
  if (key.startsWith('declined:')) return false;
  return null;
}

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
  const room = e.attendees.find((a) => a.email === p.roomEmail);
  const attendees: ItipAttendee[] = p.serviceEvent
    ? [{ email: p.roomEmail, name: null, partstat: 'ACCEPTED', role: null, cutype: 'ROOM' }]
    : e.attendees.map((a) => ({
        email: a.email,
        name: a.name,
        partstat: partstatOf(a.response),
        role: null,
        cutype: a.email === p.roomEmail ? 'ROOM' : a.resource ? 'RESOURCE' : 'INDIVIDUAL',
      }));
  const declinedByPerson = !p.serviceEvent && room?.response === 'declined' && p.lastAnswer !== false;
  const method = e.removed ? 'CANCEL' : declinedByPerson ? 'REPLY' : 'REQUEST';
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
  if (!e.allDay) return { start: e.start, end: e.end, allDay: false, startDate: null, endDate: null, floating: false, startLocal: null, endLocal: null };
  const zone = e.timeZone ?? 'UTC';
  const startDate = DateTime.fromMillis(e.start, { zone }).toISODate();
  const endDate = DateTime.fromMillis(e.end, { zone }).toISODate();
  const local = (d: string | null) => (d ? `${d}T00:00:00` : null);
  return { start: e.start, end: e.end, allDay: true, startDate, endDate, floating: false, startLocal: local(startDate), endLocal: local(endDate) };
}

/**
 * The hash of what matters in a provider's event (a repeat of the same state is a
 * duplicate): times, title, guests and their answers, removed.
 */
export function remoteHash(e: RemoteEvent): string {
  const facts = [
    e.removed ? 'removed' : 'present',
    e.start,
    e.end,
    e.allDay,
    e.title,
    e.description,
    e.organizer?.email ?? '',
    ...e.attendees.map((a) => `${a.email}=${a.response}`).sort(),
  ];
  return createHash('sha256').update(JSON.stringify(facts)).digest('base64url');
}

/** What a booking is, as far as its room calendar event goes. */
export interface BookingForCalendar {
  id: string;
  status: string;
  title: string;
  startAt: number;
  endAt: number;
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

/**
 * The events a booking should have on its room's calendar: none once cancelled or
 * rejected; one per booking (per remaining occurrence of a series) otherwise, with
 * its actual times (an early check-out shortens it), tentative while unpaid.
 */
export function desiredEvents(b: BookingForCalendar, timeZone: string): DesiredEvent[] {
  if (!SHOWN.has(b.status)) return [];
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
