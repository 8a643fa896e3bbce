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
