/**
 * Booking event payloads, exactly as the event catalogue (src/contract/events.ts)
 * describes them. Pure: the caller passes the facts of the booking. Times in
 * `data` are property-local `HH:mm`; `data` never carries a PIN, a token or a payment URL.
 */
import { DateTime } from 'luxon';
import { wallClockTime, zoneOf } from '../../platform/time/wall-clock.js';
import {
  EVENT_ENVELOPE_VERSION,
  type AssetKind,
  type BookingEventData,
  type BookingEventKind,
  type EventDelivery,
} from '../../contract/events.js';

export type { BookingEventKind };

export interface BookingFacts {
  projectId: string;
  timeZone: string;
  /** The booking (`_id`; a series' master). */
  meetingId: string;
  /** The occurrence of a recurring series the event is about; null for a single booking. */
  occurrenceId: string | null;
  assetKind: AssetKind;
  assetId: string;
  assetName: string;
  floorName: string;
  organizerUserId: string;
  organizerName: string;
  organizerEmail: string | null;
  attendeeNames: string[];
  start: number;
  end: number;
}

export type EventDetail =
  | { kind: 'BOOK' }
  | { kind: 'MODIFY'; oldStart: number; oldEnd: number }
  | { kind: 'CANCEL'; cancelReason?: string }
  | { kind: 'REMINDER' }
  | { kind: 'NO_SHOW_WARNING'; autoCancelAt: number }
  | { kind: 'ENDING_SOON' }
  | { kind: 'PAYMENT_DUE'; amount: number; currency: string; paymentDueAt: number };

/** `HH:mm` in the property's zone (wall-clock arithmetic: a create's event formats four of these). */
const hm = (ms: number, zone: string) => wallClockTime(zoneOf(zone), ms);
const iso = (ms: number) => new Date(ms).toISOString();
const minutesBetween = (from: number, to: number) => Math.max(0, Math.round((to - from) / 60_000));

export function eventType(assetKind: AssetKind, kind: BookingEventKind): string {
  return `${assetKind === 'room' ? 'ROOM' : 'DESK'}_${kind}`;
}

/** The `data` object of a booking event that occurred at `at`. */
export function bookingEventData(f: BookingFacts, detail: EventDetail, at: number): BookingEventData {
  const tz = f.timeZone;
  const base = {
    projectId: f.projectId,
    userId: f.organizerUserId,
    timestamp: iso(at),
    meetingId: f.meetingId,
    ...(f.occurrenceId !== null ? { occurrenceEventId: f.occurrenceId } : {}),
    assetId: f.assetId,
    assetKind: f.assetKind,
    ...(f.assetKind === 'room' ? { roomName: f.assetName } : { deskName: f.assetName }),
    floorName: f.floorName,
  };
  const userName = f.organizerName ? { userName: f.organizerName } : {};
  const userEmail = f.organizerEmail ? { userEmail: f.organizerEmail } : {};
  switch (detail.kind) {
    case 'BOOK':
      return {
        ...base,
        bookingDate: iso(f.start),
        startTime: hm(f.start, tz),
        endTime: hm(f.end, tz),
        ...(f.attendeeNames.length ? { attendees: f.attendeeNames } : {}),
        ...userName,
        ...userEmail,
      };
    case 'MODIFY':
      return {
        ...base,
        oldStartTime: hm(detail.oldStart, tz),
        oldEndTime: hm(detail.oldEnd, tz),
        newStartTime: hm(f.start, tz),
        newEndTime: hm(f.end, tz),
        ...userName,
      };
    case 'CANCEL':
      return { ...base, bookingDate: iso(f.start), ...(detail.cancelReason ? { cancelReason: detail.cancelReason } : {}), ...userName };
    case 'REMINDER':
      return {
        ...base,
        startTime: hm(f.start, tz),
        endTime: hm(f.end, tz),
        minutesUntilStart: minutesBetween(at, f.start),
        ...userName,
        ...userEmail,
      };
    case 'NO_SHOW_WARNING':
      return {
        ...base,
        startTime: hm(f.start, tz),
        endTime: hm(f.end, tz),
        minutesUntilAutoCancel: minutesBetween(at, detail.autoCancelAt),
        ...userName,
      };
    case 'ENDING_SOON':
      return { ...base, endTime: hm(f.end, tz), minutesUntilEnd: minutesBetween(at, f.end), ...userName };
    case 'PAYMENT_DUE':
      return {
        ...base,
        bookingDate: iso(f.start),
        startTime: hm(f.start, tz),
        endTime: hm(f.end, tz),
        amount: detail.amount,
        currency: detail.currency,
        paymentDueAt: iso(detail.paymentDueAt),
        paymentDueTime: DateTime.fromMillis(detail.paymentDueAt, { zone: tz }).setLocale('en-US').toFormat('dd MMM yyyy HH:mm'),
        minutesUntilDue: minutesBetween(at, detail.paymentDueAt),
        ...userName,
        ...userEmail,
      };
  }
}

/** The delivery body: the envelope around `data`, serialized once (these exact bytes are signed). */
export function deliveryBody(e: { deliveryId: string; type: string; occurredAt: number; projectId: string; data: unknown }): string {
  const body: Omit<EventDelivery, 'data'> & { data: unknown } = {
    id: e.deliveryId,
    type: e.type,
    version: EVENT_ENVELOPE_VERSION,
    occurredAt: iso(e.occurredAt),
    projectId: e.projectId,
    data: e.data,
  };
  return JSON.stringify(body);
}
