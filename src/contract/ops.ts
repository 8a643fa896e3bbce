/** Schemas of the operator (ops) surface: sandbox clock, site apply result, webhook listeners and deliveries. */
import { Type, type Static } from 'typebox';
import { DateTime, OBJECT_ID_PATTERN } from './common.js';
import { SECTIONS, type Section } from './site-document.js';

// ---------------------------------------------------------------------------
// Sandbox clock
// ---------------------------------------------------------------------------

export const ClockState = Type.Object({
  now: DateTime('Current service time'),
  offsetMs: Type.Integer({ description: 'How far service time runs ahead of the machine clock' }),
});
export type ClockState = Static<typeof ClockState>;

/** 100 years of 365.25 days, in minutes: the longest move of the sandbox clock. */
export const CLOCK_MAX_ADVANCE_MINUTES = 52_596_000;

export const ClockMove = Type.Object(
  {
    advanceMinutes: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: CLOCK_MAX_ADVANCE_MINUTES,
        description: `Move forward by this many minutes (more than 0, at most ${CLOCK_MAX_ADVANCE_MINUTES} = 100 years)`,
      }),
    ),
    set: Type.Optional(DateTime('Move forward to this instant: never earlier than now, at most 100 years ahead of the machine clock')),
    reset: Type.Optional(
      Type.Literal(true, { description: 'Drop the offset back to 0 (service time = machine time); the one backward move' }),
    ),
  },
  { additionalProperties: false, description: 'Exactly one of advanceMinutes, set or reset' },
);
export type ClockMove = Static<typeof ClockMove>;

// ---------------------------------------------------------------------------
// Site apply
// ---------------------------------------------------------------------------

const KeyToId = (description: string) => Type.Record(Type.String(), Type.String({ pattern: OBJECT_ID_PATTERN }), { description });

export const ApplyResult = Type.Object({
  ids: KeyToId('Every key of the document to its entity _id (apps: the app _id, not appId)'),
  idsByKind: Type.Object(
    Object.fromEntries(SECTIONS.map((s) => [s, KeyToId(`Keys of ${s} to ids`)])) as Record<Section, ReturnType<typeof KeyToId>>,
    { description: 'The same mapping per section, unambiguous when two kinds share a key' },
  ),
});
export type ApplyResult = Static<typeof ApplyResult>;

// ---------------------------------------------------------------------------
// Webhook listeners and deliveries
// ---------------------------------------------------------------------------

const NullableDate = Type.Union([DateTime(), Type.Null()]);

export const Listener = Type.Object({
  _id: Type.String(),
  key: Type.Union([Type.String(), Type.Null()]),
  projectId: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  authScheme: Type.String(),
  enabled: Type.Boolean(),
  consecutiveFailures: Type.Integer({ description: 'Deliveries in a row that used up all their attempts; 20 disables the listener' }),
});
export type Listener = Static<typeof Listener>;

export const Delivery = Type.Object({
  id: Type.String({ description: 'Delivery id (body id and X-Service-Delivery)' }),
  webhookId: Type.String(),
  type: Type.String(),
  status: Type.String({ description: 'pending, delivered or failed (attempts used up)' }),
  attempts: Type.Integer(),
  lastStatus: Type.Union([Type.Integer(), Type.Null()], {
    description: 'HTTP status of the last attempt; null for a timeout or connection error',
  }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  nextAttemptAt: NullableDate,
  createdAt: DateTime(),
  deliveredAt: NullableDate,
});
export type Delivery = Static<typeof Delivery>;

export const DeliveryIdParams = Type.Object({ deliveryId: Type.String({ pattern: '^whk_[0-9a-f-]{36}$' }) });
export type DeliveryIdParams = Static<typeof DeliveryIdParams>;

/** Path of the sandbox payment routes. */
export const PaymentIdParams = Type.Object({
  paymentId: Type.String({ pattern: '^[0-9a-f]{24}$', description: 'payment.paymentId of a booking' }),
});

export const ProviderIdParams = Type.Object({
  providerId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "The payment provider account's _id (data.ids of its key in the site document's paymentProviders)",
  }),
});

/** What POST /payments/webhooks/{providerId} answers a provider. */
export const ProviderEventReceipt = Type.Object({
  received: Type.Literal(true),
  duplicate: Type.Boolean({ description: 'The event id was received before; nothing was done again' }),
  outcome: Type.String({
    description:
      'What the event did: settled, refunded (paid too late: the money goes back), already-settled, failed (an attempt was counted), ' +
      'ignored (a type the service does not act on), unknown-object (not a payment of this service), duplicate, or refused: <why>',
  }),
});
export type ProviderEventReceipt = Static<typeof ProviderEventReceipt>;

/** Optional body of the sandbox payment routes. */
export const PaymentNotice = Type.Object(
  {
    eventId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'Notification id: sending the same id again replays the first answer and changes nothing',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A payment as the sandbox routes report it after acting on it. */
export const PaymentState = Type.Object({
  paymentId: Type.String(),
  meetingId: Type.String(),
  invoiceNo: Type.String(),
  status: Type.String({ description: 'pending, settled, voided, expired or refunded' }),
  outcome: Type.Optional(
    Type.String({
      description:
        'settle: settled, already-settled or refunded (paid after the deadline: the booking lapsed and stays cancelled, the money goes back)',
    }),
  ),
  replayed: Type.Optional(Type.Boolean({ description: 'The same eventId had been applied before; nothing changed now' })),
  failedAttempts: Type.Integer(),
  meetingStatus: Type.String({ description: 'The booking status after the call' }),
});
export type PaymentState = Static<typeof PaymentState>;
