/**
 * Schemas of the operator console's ops routes (issue 17; the contract shared with
 * the console UI): the session exchanged for the ops token, the site overview, a
 * floor's state now, an asset's day, the ops meeting list/detail and staff cancel,
 * listener, device, invite and payment lists, and the change stream's event.
 * The one source for validation, the TypeScript types and the OpenAPI document.
 */
import { Type, type Static } from 'typebox';
import { DateTime, ObjectId } from './common.js';
import { ListMeetingsQuery, MeetingSchema } from './meetings.js';
import { InviteView } from './visitors.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

// ---------------------------------------------------------------------------
// Session
// ---------------------------------------------------------------------------

/** Name of the console session cookie. */
export const SESSION_COOKIE = 'ops_session';
/** Header a cookie-authenticated write must carry. */
export const CSRF_HEADER = 'x-csrf-token';
/** Lifetime of a console session: 12 hours. */
export const SESSION_SECONDS = 43_200;

export const SessionBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 1024, description: 'The OPS_TOKEN of this deployment' }) },
  { additionalProperties: false },
);
export type SessionBody = Static<typeof SessionBody>;

export const SessionStarted = Type.Object({
  csrfToken: Type.String({ description: `Send it as ${CSRF_HEADER} on every cookie-authenticated request other than GET/HEAD` }),
  expiresAt: DateTime('When the session ends (sign in again)'),
});
export type SessionStarted = Static<typeof SessionStarted>;

// ---------------------------------------------------------------------------
// Site overview
// ---------------------------------------------------------------------------

const Vertex = Type.Object({ xPct: Type.Number(), yPct: Type.Number() });

export const ConsoleSite = Type.Object({
  projects: Type.Array(
    Type.Object({
      _id: Type.String(),
      key: Nullable(Type.String()),
      name: Type.String(),
      timezone: Type.String(),
      currency: Type.String(),
    }),
  ),
  floors: Type.Array(
    Type.Object({
      _id: Type.String(),
      key: Nullable(Type.String()),
      name: Type.String(),
      projectId: Type.String(),
      zoneId: Type.String(),
      zoneName: Type.String(),
      planImageUrl: Nullable(Type.String({ description: 'No floor image is stored yet: always null' })),
    }),
  ),
  rooms: Type.Array(
    Type.Object({
      _id: Type.String(),
      key: Nullable(Type.String()),
      name: Type.String(),
      floorId: Type.String(),
      projectId: Type.String(),
      capacity: Type.Integer(),
      status: Type.String(),
      isPublic: Type.Boolean(),
      polygon: Nullable(Type.Array(Vertex, { description: 'Percent coordinates over the floor plan' })),
    }),
  ),
  desks: Type.Array(
    Type.Object({
      _id: Type.String(),
      key: Nullable(Type.String()),
      name: Type.String(),
      floorId: Type.String(),
      projectId: Type.String(),
      index: Type.Integer(),
      status: Type.String(),
    }),
  ),
  users: Type.Array(
    Type.Object({
      _id: Type.String(),
      name: Type.String(),
      email: Nullable(Type.String()),
      projectIds: Type.Array(Type.String(), { description: 'Projects where the user has an active membership' }),
    }),
    { description: 'Users with an active membership (visitor hosts, booking organizers), by name' },
  ),
  paymentProviders: Type.Array(
    Type.Object({
      _id: Type.String({ description: 'The account id; the last part of its webhookUrl' }),
      key: Nullable(Type.String()),
      projectId: Type.String(),
      provider: Type.Union([Type.Literal('stripe'), Type.Literal('opn')]),
      methods: Type.Array(Type.Union([Type.Literal('promptpay'), Type.Literal('card')])),
      apiBaseUrl: Nullable(Type.String({ description: "Another host for the provider's API; null: the provider's own" })),
      hasSecretKey: Type.Boolean({ description: 'Whether a secret key is stored (the key itself is never returned)' }),
      hasWebhookSecret: Type.Boolean({ description: 'Whether a webhook signing secret is stored (never returned)' }),
      webhookUrl: Type.String({ description: "Where the provider must send its events: enter it in the provider's dashboard" }),
    }),
    { description: 'Payment provider accounts of the site document (at most one per project), by key' },
  ),
  calendarConnections: Type.Array(
    Type.Object({
      _id: Type.String({ description: 'The connection id; the last part of its webhookUrl' }),
      key: Nullable(Type.String()),
      projectId: Type.String(),
      provider: Type.Union([Type.Literal('microsoft'), Type.Literal('google')]),
      tenantId: Nullable(Type.String({ description: 'microsoft: the tenant id; null for google' })),
      clientId: Nullable(Type.String({ description: 'microsoft: the application (client) id; null for google' })),
      serviceAccountEmail: Nullable(Type.String({ description: "google: the service account's email; null for microsoft" })),
      subject: Nullable(Type.String({ description: 'google: the Workspace user the service account acts as; null for microsoft' })),
      hasSecret: Type.Boolean({ description: 'Whether the client secret or private key is stored (it is never returned)' }),
      apiBaseUrl: Nullable(Type.String({ description: "Another host for the provider's calendar API; null: the provider's own" })),
      tokenUrl: Nullable(Type.String({ description: "Another token endpoint; null: the provider's own" })),
      webhookUrl: Type.String({
        description: 'Where the provider sends its change notifications; the service gives it to the provider when it subscribes',
      }),
    }),
    { description: 'Room calendar connections of the site document (at most one per provider per project), by key' },
  ),
});
export type ConsoleSite = Static<typeof ConsoleSite>;

// ---------------------------------------------------------------------------
// A floor now, an asset's day
// ---------------------------------------------------------------------------

export const ASSET_STATES = ['free', 'booked', 'checked-in', 'cleaning', 'closed'] as const;
export type AssetState = (typeof ASSET_STATES)[number];

export const BookingSummary = Type.Object({
  _id: Type.String(),
  title: Type.String(),
  status: Type.String(),
  startDateTime: DateTime(),
  endDateTime: DateTime(),
  organizerName: Type.String(),
});
export type BookingSummary = Static<typeof BookingSummary>;

export const FloorIdParams = Type.Object({ floorId: ObjectId('The floor _id') });
export const AssetIdParams = Type.Object({ assetId: ObjectId('A room or desk _id') });

export const AssetNow = Type.Object({
  _id: Type.String(),
  kind: Type.Union([Type.Literal('room'), Type.Literal('desk')]),
  name: Type.String(),
  state: Type.Enum([...ASSET_STATES], {
    description:
      'booked: a booking holds it now, nobody checked in; cleaning: inside the cleaning time after a booking; closed: outside its hours, in a break, or inactive',
  }),
  current: Nullable(BookingSummary),
  next: Nullable(BookingSummary),
  occupiedByBadge: Type.Boolean({
    description:
      "Someone badged in at the asset's doors (accessDevices): a granted entry since the current booking's check-in window opened, or with no booking now, in the last 30 minutes (a walk-in). Always false for assets without door devices",
  }),
  lastBadgeAt: Nullable(DateTime("The latest granted entry at the asset's doors that counts for occupiedByBadge")),
});
export type AssetNow = Static<typeof AssetNow>;

export const FloorNow = Type.Object({
  floorId: Type.String(),
  at: DateTime('Service time (the sandbox clock) the states are computed for'),
  timeZone: Type.String(),
  assets: Type.Array(AssetNow),
});
export type FloorNow = Static<typeof FloorNow>;

export const DayQuery = Type.Object({
  date: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Property-local date YYYY-MM-DD (default: today)' })),
});
export type DayQuery = Static<typeof DayQuery>;

const Span = Type.Object({ start: DateTime(), end: DateTime() });

export const AssetDay = Type.Object({
  asset: Type.Object({ _id: Type.String(), kind: Type.Union([Type.Literal('room'), Type.Literal('desk')]), name: Type.String() }),
  date: Type.String(),
  timeZone: Type.String(),
  open: Type.Array(Span, { description: 'Operating hours as instants; empty when closed all day' }),
  breaks: Type.Array(Span),
  bookings: Type.Array(
    Type.Object({
      _id: Type.String(),
      title: Type.String(),
      status: Type.String(),
      startDateTime: DateTime(),
      endDateTime: DateTime(),
      cleaningEndsAt: DateTime('End of the cleaning time held after the booking (= endDateTime when none)'),
      organizerName: Type.String(),
    }),
  ),
});
export type AssetDay = Static<typeof AssetDay>;

// ---------------------------------------------------------------------------
// Meetings
// ---------------------------------------------------------------------------

export const OpsListMeetingsQuery = Type.Object({
  ...ListMeetingsQuery.properties,
  assetId: Type.Optional(ObjectId('A room or desk')),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive text in the title, organizer name or email' })),
});
export type OpsListMeetingsQuery = Static<typeof OpsListMeetingsQuery>;

const { pinCode: _pin, ...meetingWithoutPin } = MeetingSchema.properties;

/** A booking as the ops routes show it: never its PIN (no other field passes either). */
export const OpsMeeting = Type.Object(meetingWithoutPin, { additionalProperties: false, description: 'A booking (no pinCode)' });
export type OpsMeeting = Static<typeof OpsMeeting>;

export const HistoryActorKind = Type.Union(
  [Type.Literal('member'), Type.Literal('app'), Type.Literal('staff'), Type.Literal('system'), Type.Literal('calendar')],
  {
    description:
      "member (a user), app (a partner app, its own token), staff (the operator console), system (the service's clock: no-show, lapsed payment, automatic check-in), calendar (a calendar message without a known organizer)",
  },
);
export type HistoryActorKind = Static<typeof HistoryActorKind>;

export const OpsMeetingDetail = Type.Object(
  {
    ...meetingWithoutPin,
    history: Type.Array(
      Type.Object({
        action: Type.String(),
        actor: Type.String({ description: 'Who acted: a user id, an app, "ops" or "system"' }),
        actorKind: HistoryActorKind,
        actorName: Nullable(
          Type.String({ description: "The member's or app's name; null for staff, system and calendar, or an id no longer known" }),
        ),
        source: Type.String({ description: 'user, partner, system, calendar, console, …' }),
        reason: Nullable(Type.String()),
        at: DateTime(),
      }),
    ),
    payment: Nullable(
      Type.Object({
        status: Type.String({ description: 'pending, settled, voided, expired or refunded' }),
        amount: Type.Number(),
        currency: Type.String(),
        dueAt: Nullable(DateTime()),
      }),
    ),
  },
  { additionalProperties: false },
);
export type OpsMeetingDetail = Static<typeof OpsMeetingDetail>;

export const StaffCancelBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 500, description: 'Kept in the booking history and as cancelReason' })) },
  { additionalProperties: false },
);
export type StaffCancelBody = Static<typeof StaffCancelBody>;

// ---------------------------------------------------------------------------
// Listeners, devices, invites, payments
// ---------------------------------------------------------------------------

export const ConsoleListener = Type.Object({
  _id: Type.String(),
  key: Nullable(Type.String()),
  projectId: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  consecutiveFailures: Type.Integer(),
});
export type ConsoleListener = Static<typeof ConsoleListener>;

export const ConsoleDevice = Type.Object({
  _id: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  online: Type.Boolean(),
  pendingChanges: Type.Integer(),
  lastSyncedAt: Nullable(DateTime()),
});
export type ConsoleDevice = Static<typeof ConsoleDevice>;

export const InvitesOfDayQuery = Type.Object({
  projectId: ObjectId('The project'),
  date: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Property-local date YYYY-MM-DD (default: today)' })),
});
export type InvitesOfDayQuery = Static<typeof InvitesOfDayQuery>;

const { qrCardCode: _qr, ...inviteWithoutCode } = InviteView.properties;
/** An invite in the console's day list: never its QR card code. */
export const ConsoleInvite = Type.Object(inviteWithoutCode, { additionalProperties: false });
export type ConsoleInvite = Static<typeof ConsoleInvite>;

export const PAYMENT_STATUSES = ['pending', 'settled', 'voided', 'expired', 'refunded'] as const;

export const PaymentsQuery = Type.Object({
  status: Type.Optional(Type.Enum([...PAYMENT_STATUSES])),
});
export type PaymentsQuery = Static<typeof PaymentsQuery>;

export const ConsolePayment = Type.Object({
  _id: Type.String(),
  meetingId: Type.String(),
  status: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  expiresAt: DateTime(),
});
export type ConsolePayment = Static<typeof ConsolePayment>;

/** A provider event recorded for a payment, as the console shows it. */
export const ConsoleProviderEvent = Type.Object({
  _id: Type.String(),
  eventId: Type.String({ description: "The provider's own id of the event" }),
  type: Type.String({ description: 'The event type as the provider names it (e.g. payment_intent.succeeded)' }),
  verified: Type.Boolean({ description: "Whether the provider's signature or a re-read from the provider's API confirmed it" }),
  outcome: Nullable(Type.String({ description: 'What the service did with it; null while not acted on' })),
  receivedAt: DateTime('When it arrived (real time)'),
});
export type ConsoleProviderEvent = Static<typeof ConsoleProviderEvent>;

/** A void or refund the service owes the provider for a payment. */
export const ConsoleProviderAction = Type.Object({
  _id: Type.String(),
  action: Type.Enum(['void', 'refund'], { description: 'void: the unpaid payment object is cancelled; refund: money goes back' }),
  amount: Type.Number({ description: 'In major units of the currency' }),
  currency: Type.String(),
  status: Type.String({
    description: "queued (not sent yet), pending (the provider accepted it and waits, e.g. for the payer's bank), succeeded, failed",
  }),
  providerRef: Nullable(Type.String({ description: "The provider's id of the refund or cancel, once it has one" })),
  reason: Nullable(Type.String()),
  lastError: Nullable(Type.String({ description: 'The last refusal or error from the provider, if any' })),
  createdAt: DateTime(),
  updatedAt: DateTime(),
});
export type ConsoleProviderAction = Static<typeof ConsoleProviderAction>;

/** One payment with its provider, the events the provider sent about it and its voids/refunds. */
export const ConsolePaymentDetail = Type.Object({
  ...ConsolePayment.properties,
  invoiceNo: Type.String(),
  kind: Type.String({ description: 'checkout, quote or extension' }),
  provider: Type.String({ description: 'sandbox, stripe or opn' }),
  providerRef: Nullable(Type.String({ description: "The provider's id of the payment object (PaymentIntent, charge)" })),
  failedAttempts: Type.Integer({ minimum: 0 }),
  createdAt: DateTime(),
  settledAt: Nullable(DateTime()),
  events: Type.Array(ConsoleProviderEvent, { description: 'Oldest first' }),
  refunds: Type.Array(ConsoleProviderAction, { description: 'Voids and refunds, oldest first' }),
});
export type ConsolePaymentDetail = Static<typeof ConsolePaymentDetail>;

// ---------------------------------------------------------------------------
// Change stream
// ---------------------------------------------------------------------------

export const CHANGE_KINDS = ['meeting', 'delivery', 'device', 'visitor', 'clock', 'entry'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** The data of an `event: change` of GET /ops/v1/stream. */
export const StreamChange = Type.Object({
  kind: Type.Enum([...CHANGE_KINDS]),
  id: Type.String(),
  projectId: Nullable(Type.String()),
});
export type StreamChange = Static<typeof StreamChange>;
