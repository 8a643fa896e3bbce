/** Schemas of the Meeting resource and of the booking requests. */
import { Type, type Static } from 'typebox';
import { DateTime, HTTP_URL_PATTERN, ObjectId, Pagination } from './common.js';

export type MeetingStatus = 'unpaid' | 'active' | 'checked-in' | 'done' | 'cancelled' | 'rejected';
export const MEETING_STATUSES: readonly MeetingStatus[] = ['unpaid', 'active', 'checked-in', 'done', 'cancelled', 'rejected'];

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const History = Type.Object(
  {
    action: Type.String({ description: 'create, pay, payment-timeout, update, cancel-updating, cancel, check-in, check-out or rejected' }),
    at: DateTime(),
    by: Type.String({ description: 'Id of the user (or app) that acted; "system" for the clock' }),
    source: Type.String({
      description: 'user (a member through act_as), partner (an app token), device (a door: sourceDetail is the device id) or system',
    }),
    sourceDetail: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    statusBeforeUpdate: Type.Optional(Type.String()),
    oldStartDateTime: Type.Optional(DateTime()),
    oldEndDateTime: Type.Optional(DateTime()),
    newStartDateTime: Type.Optional(DateTime()),
    newEndDateTime: Type.Optional(DateTime()),
  },
  { additionalProperties: true },
);

export const PaymentDiscount = Type.Object({
  code: Type.String({ description: 'The promo code as the project stores it' }),
  value: Type.Number({ minimum: 0, description: 'Amount taken off, in the project currency' }),
  name: Type.String({ description: 'Display name of the promo code' }),
});
export type PaymentDiscount = Static<typeof PaymentDiscount>;

export const PaymentSummary = Type.Object(
  {
    subtotal: Type.Number({ minimum: 0, description: 'Price before discounts, in the project currency' }),
    total: Type.Number({
      minimum: 0,
      description: 'subtotal minus the discounts; what is due (payment.amount). 0 books like a free asset.',
    }),
    discounts: Type.Array(PaymentDiscount),
  },
  { description: 'How the price of a booking is made up' },
);
export type PaymentSummary = Static<typeof PaymentSummary>;

/** The payment of a paid booking, as a Meeting shows it. */
export const MeetingPayment = Type.Object(
  {
    paymentId: Type.String({ description: 'Give it to cancel (voids it) and to the sandbox settle/fail routes' }),
    invoiceNo: Type.String({ description: 'Sequential per project' }),
    amount: Type.Number({ description: 'Amount due, in the project currency (equals summary.total)' }),
    summary: PaymentSummary,
    webPaymentUrl: Type.Optional(Type.String({ format: 'uri', description: 'Hosted payment page (self-service bookings while unpaid)' })),
    webPaymentQr: Type.Optional(Type.String({ description: 'The same URL as a QR code image (PNG data URI)' })),
  },
  { additionalProperties: true },
);

export const MeetingSchema = Type.Object(
  {
    _id: Type.String(),
    status: Type.String({ description: MEETING_STATUSES.join(', ') }),
    projectId: Type.String(),
    meetingRoomId: Type.Optional(Type.String()),
    meetingRoomName: Type.Optional(Type.String()),
    deskId: Type.Optional(Type.String()),
    deskName: Type.Optional(Type.String()),
    title: Type.String(),
    body: Type.String(),
    startDateTime: DateTime(),
    endDateTime: DateTime(),
    timePeriod: Type.Optional(Type.String()),
    allDay: Type.Boolean(),
    pinCode: Type.Optional(Type.String({ description: 'Shown to the organizer, the booking app and project admins only' })),
    organizer: Type.Object(
      {
        userId: Type.String(),
        email: Type.String(),
        name: Type.String(),
        displayName: Type.String(),
        checkInDateTime: Nullable(DateTime()),
        checkOutDateTime: Nullable(DateTime()),
      },
      { additionalProperties: true },
    ),
    attendees: Type.Array(
      Type.Object(
        {
          userId: Nullable(Type.String()),
          email: Type.String(),
          name: Type.String(),
          type: Type.String(),
          responseStatus: Type.String(),
          checkInDateTime: Nullable(DateTime()),
        },
        { additionalProperties: true },
      ),
    ),
    payment: Type.Optional(MeetingPayment),
    paymentDueAt: Type.Optional(DateTime()),
    bookedVia: Type.Optional(Type.String()),
    bookedByUserId: Type.Optional(Type.String()),
    billingSummaries: Type.Array(Type.Object({}, { additionalProperties: true })),
    histories: Type.Array(History),
    seriesMasterId: Type.Optional(Type.String({ description: 'On recurring series: the master booking id (use it for actions)' })),
    occurrenceEventId: Type.Optional(Type.String({ description: 'In lists: the occurrence this row stands for' })),
    recurrence: Type.Optional(Type.String({ description: 'RRULE of a recurring series' })),
    cancelReason: Type.Optional(Type.String()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: true, description: 'A booking of a room or a desk' },
);
export type Meeting = Static<typeof MeetingSchema>;

const Attendee = Type.Object({
  email: Type.String({ format: 'email' }),
  type: Type.Optional(Type.String({ description: 'Default required' })),
});

export const CreateMeetingBody = Type.Object({
  meetingRoomId: Type.Optional(ObjectId('Room to book (or deskId)')),
  deskId: Type.Optional(ObjectId('Desk to book (or meetingRoomId)')),
  title: Type.Optional(Type.String({ maxLength: 200 })),
  body: Type.Optional(Type.String({ maxLength: 5000 })),
  startDateTime: DateTime('Start; seconds are dropped'),
  endDateTime: Type.Optional(DateTime('End; rooms always, desks unless timePeriod')),
  timePeriod: Type.Optional(Type.Union([Type.Literal('morning'), Type.Literal('afternoon'), Type.Literal('allDay')])),
  attendees: Type.Optional(Type.Array(Attendee, { maxItems: 100 })),
  frontendRedirectUrl: Type.Optional(
    Type.String({
      format: 'uri',
      pattern: HTTP_URL_PATTERN,
      description: 'Where the payer returns after paying: an http or https URL (any other scheme is 400 KS001)',
    }),
  ),
  draft: Type.Optional(Type.Boolean({ description: 'Check availability (and price) without booking' })),
  draftEndDateTimes: Type.Optional(Type.Array(DateTime(), { maxItems: 20, description: 'With draft: further end times to check' })),
  organizerId: Type.Optional(ObjectId('Back-office booking: the member to book for (needs MEETING_UPDATE)')),
  paymentDueMinutes: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        'Back-office only: hold before payment is due, in minutes. Any larger value is clamped to 10080 and to the start, never refused.',
    }),
  ),
  sessionId: Type.Optional(Type.String()),
  promoCode: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        "A promo code of the asset's project. Its discount is listed in payment.summary.discounts and lowers the total; works with draft too. An unknown, inactive, expired or used-up code is refused with 400 KS001.",
    }),
  ),
  recurrence: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'RFC 5545 RRULE: FREQ=DAILY|WEEKLY, INTERVAL, BYDAY, COUNT or UNTIL; at most 100 occurrences',
    }),
  ),
});
export type CreateMeetingBody = Static<typeof CreateMeetingBody>;

export const UpdateMeetingBody = Type.Object({
  startDateTime: Type.Optional(DateTime()),
  endDateTime: Type.Optional(DateTime()),
  title: Type.Optional(Type.String({ maxLength: 200 })),
  body: Type.Optional(Type.String({ maxLength: 5000 })),
  attendees: Type.Optional(Type.Array(Attendee, { maxItems: 100 })),
  pinCode: Type.Optional(
    Type.String({
      description: 'From a non-organizer: authorizes the change. From the organizer: sets a new PIN (4-8 digits) and clears a PIN lock.',
    }),
  ),
});
export type UpdateMeetingBody = Static<typeof UpdateMeetingBody>;

export const PinBody = Type.Object({ pinCode: Type.Optional(Type.String()) });
export type PinBody = Static<typeof PinBody>;

export const CancelBody = Type.Object({
  pinCode: Type.Optional(Type.String()),
  paymentId: Type.Optional(Type.String({ description: 'Payment to void when cancelling an unpaid booking' })),
});
export type CancelBody = Static<typeof CancelBody>;

const DraftInfo = Type.Object({
  startDateTime: DateTime(),
  endDateTime: DateTime(),
  isAvailable: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: 'Why not: CONFLICT or a rule (OPERATING_HOURS, BREAK_TIME, LEAD_TIME, ...)' })),
  message: Type.Optional(Type.String()),
  amount: Type.Optional(Type.Number({ description: 'Price of this duration (summary.total), in currency' })),
  currency: Type.Optional(Type.String()),
  summary: Type.Optional(PaymentSummary),
});

export const DraftResult = Type.Object(
  {
    draft: Type.Literal(true),
    meetingRoomId: Type.Optional(Type.String()),
    deskId: Type.Optional(Type.String()),
    draftInfo: Type.Array(DraftInfo, { description: 'One entry for endDateTime, then one per draftEndDateTimes' }),
  },
  { additionalProperties: true },
);
export type DraftResult = Static<typeof DraftResult>;

// Written out (not mapped from MEETING_STATUSES) so the static type is the union of the literals, not never.
const Status = Type.Union([
  Type.Literal('unpaid'),
  Type.Literal('active'),
  Type.Literal('checked-in'),
  Type.Literal('done'),
  Type.Literal('cancelled'),
  Type.Literal('rejected'),
]);

export const ListMeetingsQuery = Type.Object({
  from: DateTime('Window start (required)'),
  to: DateTime('Window end (required)'),
  projectId: Type.Optional(ObjectId()),
  meetingRoomId: Type.Optional(ObjectId()),
  deskId: Type.Optional(ObjectId()),
  organizerId: Type.Optional(ObjectId()),
  meetingRoomIds: Type.Optional(Type.Array(ObjectId())),
  deskIds: Type.Optional(Type.Array(ObjectId())),
  organizerEmails: Type.Optional(Type.Array(Type.String())),
  attendeeEmails: Type.Optional(Type.Array(Type.String())),
  statuses: Type.Optional(Type.Array(Status)),
  ...Pagination,
});
export type ListMeetingsQuery = Static<typeof ListMeetingsQuery>;
