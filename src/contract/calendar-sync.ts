/** Schemas of calendar sync (operator-api.md "Calendar sync"): inbound iTIP messages and room feeds. */
import { Type, type Static } from 'typebox';
import { DateTime } from './common.js';

export const CALENDAR_PROVIDERS = ['google', 'microsoft'] as const;
export type CalendarProvider = (typeof CALENDAR_PROVIDERS)[number];

export const ProviderParams = Type.Object({
  provider: Type.Union([Type.Literal('google'), Type.Literal('microsoft')], {
    description: "The calendar provider the room's mailbox lives on",
  }),
});

export const CalendarMessageResult = Type.Object({
  uid: Type.String({ description: 'The iCalendar UID of the invitation' }),
  meetingId: Type.Union([Type.String(), Type.Null()], { description: 'The meeting the message touched; null when none' }),
  status: Type.Union([Type.String(), Type.Null()], {
    description: "The meeting's status afterwards (rejected for a declined new invitation)",
  }),
  reply: Type.String({ description: 'The iTIP REPLY the room sends back (text/calendar)' }),
  // Additions:
  partstat: Type.Union([Type.Literal('ACCEPTED'), Type.Literal('DECLINED')], { description: "The room's answer" }),
  reason: Type.Union([Type.String(), Type.Null()], { description: "Why the room declined (the same words as the reply's COMMENT)" }),
  outcome: Type.String({
    description: 'What the message did: booked, rejected, moved, unchanged, cancelled, ended, stale, duplicate, ignored',
  }),
});
export type CalendarMessageResult = Static<typeof CalendarMessageResult>;

export const RoomFeed = Type.Object({
  roomId: Type.String(),
  url: Type.String({
    description:
      "The secret address of the room's iCalendar feed; anyone holding it can read the room's bookings (no PINs, no attendee emails)",
  }),
  createdAt: DateTime(),
});
export type RoomFeed = Static<typeof RoomFeed>;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, description: string) =>
  Type.Union([t, Type.Null()], { description });

/** One room of a connected calendar, as GET /ops/v1/calendar-sync/connections/{id} shows it. */
export const ConnectedRoomView = Type.Object({
  roomId: Type.String(),
  roomName: Type.String(),
  calendarId: Type.String({ description: "The room's mailbox (Microsoft) or resource calendar id (Google)" }),
  status: Type.String({ description: 'active, or removed (the room left the connection; its subscription is being stopped)' }),
  subscription: Nullable(
    Type.Object({
      id: Type.String({ description: "Graph's subscription id or Google's channel id" }),
      expiresAt: DateTime('When the provider stops notifying unless renewed (renewed well before)'),
    }),
    'The change subscription (Microsoft) or watch channel (Google); null until one is made',
  ),
  lastSyncAt: Nullable(DateTime(), 'The last successful read of changes'),
  cursorAgeSeconds: Nullable(
    Type.Integer(),
    "Seconds since the sync cursor (Graph's delta link, Google's sync token) was stored; null before the first read or after a reset",
  ),
  lastError: Nullable(Type.String(), 'The last failure talking to the provider for this room (cleared by the next success)'),
  lastErrorAt: Nullable(DateTime(), 'When it happened'),
  changesIn: Type.Integer({ description: 'Changes read from the calendar that changed a booking or answered an invitation' }),
  changesOut: Type.Integer({ description: 'Writes made to the calendar: events created, updated or cancelled, answers sent' }),
  pendingWrites: Type.Integer({ description: 'Writes owed to the provider and not yet made (retried with backoff)' }),
});

export const CalendarConnectionView = Type.Object({
  id: Type.String(),
  key: Nullable(Type.String(), "The connection's key in the site document"),
  projectId: Type.String(),
  provider: Type.Union([Type.Literal('microsoft'), Type.Literal('google')]),
  webhookUrl: Type.String({ description: 'Where the provider posts notifications' }),
  rooms: Type.Array(ConnectedRoomView, { description: 'Every room of the project with an email, in room id order' }),
});
export type CalendarConnectionView = Static<typeof CalendarConnectionView>;
