/**
 * The event catalogue: every event type a webhook listener can subscribe to, and
 * the shape of a delivery (the envelope and the `data` of booking events).
 * Times in `data` are property-local `HH:mm` unless named otherwise; `data`
 * never carries a PIN, a token or a payment URL.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { DateTime, ObjectId } from './common.js';

export const BOOKING_EVENT_KINDS = ['BOOK', 'MODIFY', 'CANCEL', 'REMINDER', 'NO_SHOW_WARNING', 'ENDING_SOON', 'PAYMENT_DUE'] as const;
export type BookingEventKind = (typeof BOOKING_EVENT_KINDS)[number];

/** The two kinds of bookable asset, as booking events name them (`assetKind`). */
export const ASSET_KINDS = ['room', 'desk'] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

/** Every booking event type: `ROOM_<kind>` and `DESK_<kind>` for each booking kind. */
export const BOOKING_EVENT_TYPES: readonly string[] = ['ROOM', 'DESK'].flatMap((asset) => BOOKING_EVENT_KINDS.map((k) => `${asset}_${k}`));

export const VISITOR_EVENT_TYPES = ['VMS_INVITE_SENT', 'VMS_VISITOR_CHECKED_IN', 'VMS_HOST_CANCELLED'] as const;

/** Every event type: the booking events, then the visitor events. */
export const EVENT_TYPES: readonly string[] = [...BOOKING_EVENT_TYPES, ...VISITOR_EVENT_TYPES];

/** `version` of the delivery envelope. */
export const EVENT_ENVELOPE_VERSION = 1;

const LocalTime = (description: string) => Type.String({ description: `${description}, property-local HH:mm` });
const Minutes = (description: string) => Type.Integer({ minimum: 0, description });

/**
 * Fields of every booking event; exactly one of roomName or deskName. `meetingId`
 * (with `occurrenceEventId` on a series) names the booking to re-read: the event is a
 * change signal, `GET /meetings/{meetingId}` is the booking's state.
 */
const eventBase = {
  projectId: Type.String(),
  userId: Type.String({ description: 'The organizer' }),
  timestamp: DateTime('When the event occurred'),
  meetingId: ObjectId(
    'The booking (its _id): read its state with GET /meetings/{meetingId}; for a recurring series, the series (seriesMasterId)',
  ),
  occurrenceEventId: Type.Optional(
    ObjectId(
      'Only on a booking of a recurring series: the occurrence whose times the event carries, as GET /meetings lists it (occurrenceEventId of that row). ' +
        'Absent on a single booking. Actions and GET /meetings/{id} take meetingId, never this id',
    ),
  ),
  assetId: ObjectId("The room (the booking's meetingRoomId) or the desk (its deskId)"),
  assetKind: Type.Union([Type.Literal('room'), Type.Literal('desk')], {
    description: 'room (roomName and meetingRoomId) or desk (deskName and deskId)',
  }),
  roomName: Type.Optional(Type.String()),
  deskName: Type.Optional(Type.String()),
  floorName: Type.String(),
};

const userName = Type.Optional(Type.String({ description: 'Organizer name, when known' }));
const userEmail = Type.Optional(Type.String({ description: 'Organizer email, when known' }));

export const BookEventData = Type.Object(
  {
    ...eventBase,
    bookingDate: DateTime('Start of the booking'),
    startTime: LocalTime('Start'),
    endTime: LocalTime('End'),
    attendees: Type.Optional(Type.Array(Type.String(), { description: 'Attendee names; absent when there are none' })),
    userName,
    userEmail,
  },
  { description: 'ROOM_BOOK, DESK_BOOK' },
);

export const ModifyEventData = Type.Object(
  {
    ...eventBase,
    oldStartTime: LocalTime('Start before the change'),
    oldEndTime: LocalTime('End before the change'),
    newStartTime: LocalTime('Start after the change'),
    newEndTime: LocalTime('End after the change'),
    userName,
  },
  { description: 'ROOM_MODIFY, DESK_MODIFY' },
);

export const CancelEventData = Type.Object(
  {
    ...eventBase,
    bookingDate: DateTime('Start of the booking'),
    cancelReason: Type.Optional(Type.String()),
    userName,
  },
  { description: 'ROOM_CANCEL, DESK_CANCEL' },
);

export const ReminderEventData = Type.Object(
  {
    ...eventBase,
    startTime: LocalTime('Start'),
    endTime: LocalTime('End'),
    minutesUntilStart: Minutes('Whole minutes from the event to the start'),
    userName,
    userEmail,
  },
  { description: 'ROOM_REMINDER, DESK_REMINDER' },
);

export const NoShowWarningEventData = Type.Object(
  {
    ...eventBase,
    startTime: LocalTime('Start'),
    endTime: LocalTime('End'),
    minutesUntilAutoCancel: Minutes('Whole minutes from the event to the no-show auto-cancel'),
    userName,
  },
  { description: 'ROOM_NO_SHOW_WARNING, DESK_NO_SHOW_WARNING' },
);

export const EndingSoonEventData = Type.Object(
  {
    ...eventBase,
    endTime: LocalTime('End'),
    minutesUntilEnd: Minutes('Whole minutes from the event to the end'),
    userName,
  },
  { description: 'ROOM_ENDING_SOON, DESK_ENDING_SOON' },
);

export const PaymentDueEventData = Type.Object(
  {
    ...eventBase,
    bookingDate: DateTime('Start of the booking'),
    startTime: LocalTime('Start'),
    endTime: LocalTime('End'),
    amount: Type.Number({ description: 'Amount still due, in the project currency' }),
    currency: Type.String({ description: 'ISO 4217 code' }),
    paymentDueAt: DateTime("The booking's paymentDueAt"),
    paymentDueTime: Type.String({ description: 'paymentDueAt, property-local, dd MMM yyyy HH:mm' }),
    minutesUntilDue: Minutes('Whole minutes from the event to paymentDueAt'),
    userName,
    userEmail,
  },
  { description: 'ROOM_PAYMENT_DUE, DESK_PAYMENT_DUE: a back-office hold waiting for payment' },
);

/** `data` of a booking event, by kind. */
export const BookingEventData = Type.Union([
  BookEventData,
  ModifyEventData,
  CancelEventData,
  ReminderEventData,
  NoShowWarningEventData,
  EndingSoonEventData,
  PaymentDueEventData,
]);
export type BookEventData = Static<typeof BookEventData>;
export type ModifyEventData = Static<typeof ModifyEventData>;
export type CancelEventData = Static<typeof CancelEventData>;
export type ReminderEventData = Static<typeof ReminderEventData>;
export type NoShowWarningEventData = Static<typeof NoShowWarningEventData>;
export type EndingSoonEventData = Static<typeof EndingSoonEventData>;
export type PaymentDueEventData = Static<typeof PaymentDueEventData>;
export type BookingEventData = Static<typeof BookingEventData>;

// ---------------------------------------------------------------------------
// Visitor (VMS) events. `userId` is the host who invited the visitor.
// ---------------------------------------------------------------------------

const vmsBase = {
  projectId: Type.String(),
  userId: Type.String({ description: 'The host' }),
  timestamp: DateTime('When the event occurred'),
};
const Display = (description: string) =>
  Type.String({ description: `${description}: display text in the property's time zone, e.g. "25 Nov 2026 09:00"` });
const NullableDisplay = (description: string) =>
  Type.Union([Display(description), Type.Null()], {
    description: `${description}; null when the invite has no end time (valid the whole start day)`,
  });
export const Bilingual = Type.Object({ en: Type.String(), th: Type.String() }, { description: 'English and Thai text' });
export const VMS_ENTRY_TYPES = ['card', 'license-plate'] as const;
const EntryType = Type.Enum([...VMS_ENTRY_TYPES], { description: 'card (QR code shown at a reader) or license-plate (camera)' });

export const VmsInviteSentData = Type.Object(
  {
    ...vmsBase,
    visitorName: Type.String(),
    visitorEmail: Type.Union([Type.String(), Type.Null()], { description: 'null when the invite has none' }),
    hostName: Type.String(),
    hostEmail: Type.Union([Type.String(), Type.Null()], { description: 'null when the host has none' }),
    visitDate: DateTime('Start of the visit'),
    startDateTime: Display('Start of the visit'),
    endDateTime: NullableDisplay('End of the visit'),
    qrCardCode: Type.String({ description: "The visitor's entry code; relay it to the visitor over TLS only" }),
    licensePlate: Type.Optional(Type.String()),
    visitPurpose: Type.Optional(Type.String()),
  },
  { description: 'VMS_INVITE_SENT' },
);

export const VmsVisitorCheckedInData = Type.Object(
  {
    ...vmsBase,
    visitorName: Type.String(),
    hostAssetTitle: Type.String({ description: "The host's unit, or the project when the host has none" }),
    checkInTime: Bilingual,
    vmsEntryType: Type.Object({ entryType: EntryType, en: Type.String(), th: Type.String() }),
    licensePlateNumber: Type.String({ description: 'The plate read by the camera; empty for a card entry' }),
    location: Type.Optional(
      Type.Object(
        { entryType: EntryType, en: Type.String(), th: Type.String() },
        { description: 'Where the visitor entered (the device)' },
      ),
    ),
    webViewUrl: Type.Optional(Type.String()),
  },
  { description: 'VMS_VISITOR_CHECKED_IN' },
);

export const VmsHostCancelledData = Type.Object(
  {
    ...vmsBase,
    visitorName: Type.String(),
    hostName: Type.String(),
    hostEmail: Type.Union([Type.String(), Type.Null()]),
    startDateTime: Display('Start of the visit'),
    endDateTime: NullableDisplay('End of the visit'),
    licensePlate: Type.Optional(Type.String()),
  },
  { description: 'VMS_HOST_CANCELLED' },
);
export type VmsInviteSentData = Static<typeof VmsInviteSentData>;
export type VmsVisitorCheckedInData = Static<typeof VmsVisitorCheckedInData>;
export type VmsHostCancelledData = Static<typeof VmsHostCancelledData>;
export type VmsEntryType = (typeof VMS_ENTRY_TYPES)[number];

/** Reserved by the specification; this service never emits them. */
export const RESERVED_EVENT_TYPES = ['VMS_VISITOR_CHECKED_OUT', 'VMS_HOST_NOTIFICATION'] as const;

/** The body POSTed to a listener; these exact bytes are signed. */
export const EventDelivery = Type.Object(
  {
    id: Type.String({ description: 'Delivery id (X-Service-Delivery); the same on every retry' }),
    type: Type.String({ description: 'Event type, one of EVENT_TYPES (X-Service-Event)' }),
    version: Type.Literal(EVENT_ENVELOPE_VERSION),
    occurredAt: DateTime('When the event occurred; order by this, retries may arrive out of order'),
    projectId: Type.String(),
    data: Type.Union([BookingEventData, VmsInviteSentData, VmsVisitorCheckedInData, VmsHostCancelledData]),
  },
  { description: 'A webhook delivery' },
);
export type EventDelivery = Static<typeof EventDelivery>;

/** The `data` schema of each event type of the catalogue (a ROOM_ and a DESK_ event share one). */
export const EVENT_DATA_SCHEMAS: Readonly<Record<string, TSchema>> = {
  ...Object.fromEntries(
    (['ROOM', 'DESK'] as const).flatMap((asset): [string, TSchema][] => [
      [`${asset}_BOOK`, BookEventData],
      [`${asset}_MODIFY`, ModifyEventData],
      [`${asset}_CANCEL`, CancelEventData],
      [`${asset}_REMINDER`, ReminderEventData],
      [`${asset}_NO_SHOW_WARNING`, NoShowWarningEventData],
      [`${asset}_ENDING_SOON`, EndingSoonEventData],
      [`${asset}_PAYMENT_DUE`, PaymentDueEventData],
    ]),
  ),
  VMS_INVITE_SENT: VmsInviteSentData,
  VMS_VISITOR_CHECKED_IN: VmsVisitorCheckedInData,
  VMS_HOST_CANCELLED: VmsHostCancelledData,
};

/** The body a listener receives for one event type: the envelope, its `type` fixed, its `data` that type's schema. */
export function eventDeliverySchema(type: string) {
  const data = EVENT_DATA_SCHEMAS[type];
  if (!data) throw new Error(`not an event type of the catalogue: ${type}`);
  return Type.Object(
    {
      id: Type.String({
        pattern: '^whk_',
        description: 'Delivery id, whk_ plus a UUID (X-Service-Delivery); the same on every retry: de-duplicate on it',
      }),
      type: Type.Literal(type, { description: 'The event type (X-Service-Event)' }),
      version: Type.Literal(EVENT_ENVELOPE_VERSION, { description: 'Envelope version; bumped only on a breaking envelope change' }),
      occurredAt: DateTime('When the event occurred; order by this, retries may arrive out of order'),
      projectId: Type.String(),
      data,
    },
    { description: `A ${type} delivery; clients must tolerate fields they do not know` },
  );
}
