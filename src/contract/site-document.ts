/** TypeBox schema (and static types) of the site document accepted by POST /ops/v1/apply. */
import { Type, type Static } from 'typebox';
import { AssetConfig } from './asset-config.js';
import { EVENT_TYPES, RESERVED_EVENT_TYPES } from './events.js';
import { CARD_FORMAT_VALUES } from './member-credentials.js';

// ---------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------

const Key = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 128,
    description: `Your stable name for this ${what}; unique among ${what}s, reused on every apply`,
  });

const Ref = (what: string) =>
  Type.String({ minLength: 1, maxLength: 128, description: `Key of a ${what} in this document or applied earlier` });

const Name = (what: string) => Type.String({ minLength: 1, maxLength: 200, description: `Display name of the ${what}` });

/** Most door devices one room or desk may name. */
export const MAX_ACCESS_DEVICES = 20;

const AccessDevices = (what: string) =>
  Type.Array(Ref('device'), {
    maxItems: MAX_ACCESS_DEVICES,
    description:
      `Keys of devices (of the same project) at the ${what}'s door: a booking's organizer and attendees who hold credentials ` +
      'get access on them for the booking (from the check-in window to the end), and a badge there checks the booking in; default []',
  });

const Email = (description: string) => Type.String({ format: 'email', maxLength: 254, description });

/**
 * Bounds of the lists nested in an entry (a section's own length is checked by the apply, with its own message).
 * The body limit bounds them too; these refuse a runaway list at validation, naming it.
 */
const MAX_LIST = 1_000;
/** Links of one app and devices of one access group may be as many as a section's entries (25,000). */
const MAX_LONG_LIST = 25_000;

const StringList = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: MAX_LIST, description });

/** Largest price or discount a document may state, in the project currency. */
const MAX_PRICE = 1_000_000_000;
/** Most seats a room or desk may have. */
const MAX_CAPACITY = 100_000;

export const ChargeRate = Type.Object(
  {
    perHour: Type.Number({ minimum: 0, maximum: MAX_PRICE, description: 'Price of one hour in the project currency' }),
    perDay: Type.Number({ minimum: 0, maximum: MAX_PRICE, description: 'Price of one day in the project currency' }),
    amount: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_PRICE, description: 'Optional flat amount' })),
  },
  { additionalProperties: false, description: 'Prices; default {perHour: 0, perDay: 0} (free)' },
);

const Polygon = Type.Array(
  Type.Object(
    {
      xPct: Type.Number({ minimum: 0, maximum: 100, description: 'Horizontal position, percent of the floor-plan width' }),
      yPct: Type.Number({ minimum: 0, maximum: 100, description: 'Vertical position, percent of the floor-plan height' }),
    },
    { additionalProperties: false },
  ),
  { maxItems: MAX_LIST, description: 'Outline on the floor plan, vertices in drawing order (implicitly closed); omit for none' },
);

const Equipments = Type.Object(
  {
    camera: Type.Optional(Type.Boolean()),
    display: Type.Optional(Type.Boolean()),
    mic: Type.Optional(Type.Boolean()),
    projector: Type.Optional(Type.Boolean()),
    speaker: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'Which equipment the room has; anything left out is false' },
);

// ---------------------------------------------------------------------------
// Entities
// ---------------------------------------------------------------------------

export const BrandDoc = Type.Object(
  { key: Key('brand'), name: Name('brand') },
  { additionalProperties: false, description: 'A brand (owner of projects)' },
);

export const ProjectDoc = Type.Object(
  {
    key: Key('project'),
    brand: Ref('brand'),
    name: Name('project'),
    timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone of the property, e.g. Asia/Bangkok' }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency of prices, e.g. THB' }),
    defaultCleanupMinutes: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 60, description: 'Cleaning time of rooms without their own, and of desks; absent = none' }),
    ),
    bookingGridMinutes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1440, description: 'Booking time grid of the property, in minutes' }),
    ),
    backofficePaymentDueMinutes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10080, description: 'Hold of an unpaid back-office booking; absent = 1440' }),
    ),
    analytics: Type.Optional(
      Type.Object(
        {
          namedReports: Type.Optional(
            Type.Boolean({
              description: 'Serve the per-organizer report (GET /ops/v1/analytics/organizers); default false: aggregates only',
            }),
          ),
        },
        { additionalProperties: false, description: 'Analytics settings of the project' },
      ),
    ),
  },
  { additionalProperties: false, description: 'A property (building or site)' },
);

export const ZoneDoc = Type.Object(
  { key: Key('zone'), project: Ref('project'), name: Name('zone') },
  { additionalProperties: false, description: 'A zone (e.g. a tower) of a project' },
);

export const FloorDoc = Type.Object(
  { key: Key('floor'), zone: Ref('zone'), name: Name('floor') },
  { additionalProperties: false, description: 'A floor of a zone; its project follows from the zone' },
);

export const RoomDoc = Type.Object(
  {
    key: Key('room'),
    floor: Ref('floor'),
    name: Name('room'),
    email: Type.Optional(Email('Resource email of the room')),
    accessDevices: Type.Optional(AccessDevices('room')),
    capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CAPACITY, default: 1, description: 'Seats; default 1' })),
    status: Type.Optional(Type.Enum(['active', 'inactive'], { default: 'active', description: 'Default active' })),
    type: Type.Optional(
      Type.Enum(['normal', 'bedroom'], { default: 'normal', description: 'bedroom marks a residential unit; default normal' }),
    ),
    isPublic: Type.Optional(Type.Boolean({ default: true, description: 'false keeps the room private to project members; default true' })),
    cleanupMinutes: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 60, description: 'Cleaning time after each booking; absent = the project default' }),
    ),
    chargeRate: Type.Optional(ChargeRate),
    equipmentsAvailability: Type.Optional(Equipments),
    facilities: Type.Optional(StringList('Facility labels; default []')),
    pictureUrls: Type.Optional(StringList('Picture addresses; default []')),
    polygon: Type.Optional(Polygon),
    config: Type.Optional(AssetConfig),
    addressNo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'House number of a residential unit' })),
    unitId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Optional unit identifier of a residential unit' })),
  },
  { additionalProperties: false, description: 'A meeting room (or residential unit); brand, project and zone follow from the floor' },
);

export const DeskDoc = Type.Object(
  {
    key: Key('desk'),
    floor: Ref('floor'),
    name: Name('desk'),
    index: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Desk number; default its 1-based position in this document's desks" }),
    ),
    email: Type.Optional(Email('Resource email of the desk')),
    accessDevices: Type.Optional(AccessDevices('desk')),
    status: Type.Optional(
      Type.Enum(['active', 'inactive', 'in-used', 'reserved', 'suspended'], { default: 'active', description: 'Default active' }),
    ),
    isPublic: Type.Optional(Type.Boolean({ default: true, description: 'Default true' })),
    capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CAPACITY, default: 1, description: 'Default 1' })),
    chargeRate: Type.Optional(ChargeRate),
    facilities: Type.Optional(StringList('Facility labels; default []')),
    pictureUrls: Type.Optional(StringList('Picture addresses; default []')),
    polygon: Type.Optional(Polygon),
    config: Type.Optional(AssetConfig),
  },
  { additionalProperties: false, description: 'A bookable desk; brand, project and zone follow from the floor' },
);

export const MembershipDoc = Type.Object(
  {
    project: Ref('project'),
    role: Type.Optional(
      Type.Enum(['member', 'admin'], { default: 'member', description: 'admin holds every permission on the project; default member' }),
    ),
    employeeId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Employee id, unique within the project' })),
  },
  { additionalProperties: false, description: 'Membership of the user in a project' },
);

export const UserDoc = Type.Object(
  {
    key: Key('user'),
    name: Name('user'),
    email: Type.Optional(Email('Email address (unique, case-insensitive)')),
    phone: Type.Optional(Type.String({ minLength: 3, maxLength: 32, description: 'Phone number (unique)' })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Login name (unique)' })),
    firstName: Type.Optional(Type.String({ maxLength: 200 })),
    lastName: Type.Optional(Type.String({ maxLength: 200 })),
    profileName: Type.Optional(Type.String({ maxLength: 200 })),
    memberships: Type.Optional(Type.Array(MembershipDoc, { maxItems: MAX_LIST, description: 'Projects the user belongs to; default []' })),
    blockedFromBooking: Type.Optional(Type.Boolean({ default: false, description: 'An admin block on booking; default false' })),
    brandStaff: Type.Optional(Type.Array(Ref('brand'), { maxItems: MAX_LIST, description: 'Brands whose staff the user is; default []' })),
  },
  { additionalProperties: false, description: 'A person' },
);

const PERMISSION = Type.String({ pattern: '^[A-Z][A-Z0-9_]*$', description: 'Permission name, e.g. MEETING_UPDATE' });

export const AppDoc = Type.Object(
  {
    key: Key('app'),
    appId: Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{2,127}$',
      description: 'The client id (app_id) the integrator sends; unique per environment',
    }),
    appSecret: Type.String({
      minLength: 32,
      maxLength: 512,
      description: 'The client secret (app_secret), at least 32 characters; stored hashed',
    }),
    name: Name('app'),
    projects: Type.Array(Ref('project'), {
      minItems: 1,
      maxItems: MAX_LIST,
      description: 'Projects the app is bound to; more than one makes a multi-project app',
    }),
    projectRoles: Type.Optional(
      Type.Array(
        Type.Object(
          {
            project: Ref('project'),
            permissions: Type.Array(PERMISSION, { maxItems: MAX_LIST, description: 'Permissions the app holds on that project' }),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_LIST, description: 'Roles of the app per project (each project must also be in projects); default []' },
      ),
    ),
    actAs: Type.Optional(
      Type.Boolean({ default: false, description: 'Whether the app may obtain delegated (act_as) tokens; default false' }),
    ),
    links: Type.Optional(
      Type.Array(
        Type.Object(
          {
            user: Ref('user'),
            externalUserId: Type.String({ minLength: 1, maxLength: 128, description: "The integrator's own id for that user" }),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_LONG_LIST, description: 'Members linked to the app (each must be a member of one of its projects); default []' },
      ),
    ),
    accessGroups: Type.Optional(
      Type.Array(Ref('access group'), { maxItems: MAX_LIST, description: 'Access groups the app may grant; default []' }),
    ),
  },
  { additionalProperties: false, description: 'Third-party app credentials of this environment' },
);

export const DEVICE_TRANSPORT_KINDS = ['isapi', 'zkteco-push'] as const;

export const DeviceTransportDoc = Type.Object(
  {
    kind: Type.Union([Type.Literal('isapi'), Type.Literal('zkteco-push')], {
      description:
        'isapi: a HikVision terminal the service calls (ISAPI over HTTP, Digest authentication); zkteco-push: a ZKTeco terminal that polls the service (PUSH/ADMS)',
    }),
    baseUrl: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: "isapi (required): the terminal's address, e.g. http://10.0.4.21" }),
    ),
    username: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'isapi (required): the terminal account the service signs in with' }),
    ),
    password: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "isapi (required): that account's password (sealed; never returned)" }),
    ),
    serialNumber: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_-]+$',
        description: "zkteco-push (required): the terminal's serial number (SN), as it sends it when it polls; unique in the site",
      }),
    ),
    commKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "zkteco-push: the terminal's communication key, when one is set (sealed; never returned)",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "How the service reaches this device directly in its vendor's protocol; omitted: through the building-wide transport (DEVICE_TRANSPORT: sandbox or mqtt)",
  },
);

export const DeviceDoc = Type.Object(
  {
    key: Key('device'),
    name: Name('device'),
    kind: Type.String({ minLength: 1, maxLength: 64, description: 'Device kind, e.g. face-card-reader, card-reader, lpr-camera' }),
    location: Type.Optional(
      Type.Object(
        { en: Type.String({ minLength: 1, maxLength: 200 }), th: Type.String({ minLength: 1, maxLength: 200 }) },
        { additionalProperties: false, description: 'Where the device is, in English and Thai (visitor check-in events name it)' },
      ),
    ),
    cardFormat: Type.Optional(
      Type.Union(
        CARD_FORMAT_VALUES.map((f) => Type.Literal(f)),
        { description: 'The card format its readers expect; default decimal-reversed' },
      ),
    ),
    transport: Type.Optional(DeviceTransportDoc),
  },
  { additionalProperties: false, description: 'An access-control device' },
);

export const AccessGroupDoc = Type.Object(
  {
    key: Key('access group'),
    project: Ref('project'),
    name: Name('access group'),
    devices: Type.Optional(Type.Array(DeviceDoc, { maxItems: MAX_LONG_LIST, description: 'Devices of the group; default []' })),
  },
  { additionalProperties: false, description: 'A group of access-control devices members can be enrolled on' },
);

/** The event types a listener may subscribe to (the event catalogue). Reserved types may be listed (an integrator subscribing ahead of time) but are never sent. */
export const WEBHOOK_EVENT_TYPES: readonly string[] = [...EVENT_TYPES, ...RESERVED_EVENT_TYPES];

export const WebhookAuthDoc = Type.Object(
  {
    scheme: Type.Enum(['signature-only', 'bearer', 'custom-header', 'jwt'], { description: 'Extra authentication added to each delivery' }),
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Static token; bearer scheme only' })),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 4096 }), {
        maxProperties: 50,
        description: 'Header name to value; custom-header scheme only',
      }),
    ),
  },
  { additionalProperties: false, description: 'Delivery authentication; default {scheme: "signature-only"}. Stored encrypted' },
);

export const WebhookDoc = Type.Object(
  {
    key: Key('webhook'),
    project: Ref('project'),
    url: Type.String({
      format: 'uri',
      pattern: '^https?://\\S+$',
      maxLength: 2048,
      description: 'http(s) address that receives the deliveries',
    }),
    secret: Type.String({ minLength: 32, maxLength: 512, description: 'Shared signing secret, at least 32 characters; stored encrypted' }),
    events: Type.Array(Type.Enum([...WEBHOOK_EVENT_TYPES]), {
      minItems: 1,
      maxItems: WEBHOOK_EVENT_TYPES.length,
      uniqueItems: true,
      description: 'Event types delivered to this listener',
    }),
    auth: Type.Optional(WebhookAuthDoc),
  },
  { additionalProperties: false, description: 'A webhook listener of a project' },
);

export const PromoCodeDoc = Type.Object(
  {
    key: Key('promo code'),
    project: Ref('project'),
    code: Type.String({ minLength: 1, maxLength: 64, description: 'What the booker enters; unique within the project' }),
    name: Name('promo code'),
    percentOff: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'Percentage discount (give this or amountOff)' }),
    ),
    amountOff: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: MAX_PRICE,
        description: 'Fixed discount in the project currency (give this or percentOff)',
      }),
    ),
    active: Type.Optional(Type.Boolean({ default: true, description: 'Default true' })),
    validFrom: Type.Optional(Type.String({ format: 'date-time', description: 'First instant the code can be used; absent = from now on' })),
    validUntil: Type.Optional(
      Type.String({ format: 'date-time', description: 'Instant the code stops working (exclusive); absent = no end' }),
    ),
    maxUses: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'How many bookings may use the code; absent = no limit' }),
    ),
  },
  { additionalProperties: false, description: 'A discount code of a project' },
);

/** Ways a payer may pay through a provider: a PromptPay QR, or a card. */
export const PAYMENT_METHODS = ['promptpay', 'card'] as const;

const ProviderSecret = (what: string) =>
  Type.String({ minLength: 1, maxLength: 512, description: `${what}; kept encrypted at rest and never shown back` });

export const PaymentProviderDoc = Type.Object(
  {
    key: Key('payment provider'),
    project: Ref('project'),
    provider: Type.Enum(['stripe', 'opn'], {
      description: 'Which payment company takes the money: stripe or opn (Opn Payments, ex-Omise)',
    }),
    secretKey: ProviderSecret("The account's secret API key"),
    webhookSecret: ProviderSecret('The secret the provider signs its events with'),
    methods: Type.Optional(
      Type.Array(Type.Enum([...PAYMENT_METHODS]), {
        minItems: 1,
        maxItems: PAYMENT_METHODS.length,
        uniqueItems: true,
        default: ['promptpay'],
        description: 'How payers may pay: promptpay, card; default ["promptpay"]',
      }),
    ),
    apiBaseUrl: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: '^https?://\\S+$',
        maxLength: 2048,
        description: "Another http(s) host for the provider's API (a mock server, for tests); refused in production",
      }),
    ),
  },
  { additionalProperties: false, description: "A project's online payment account (at most one per project)" },
);

/** Calendar providers a project's room calendars may be connected to. */
export const CALENDAR_PROVIDERS = ['microsoft', 'google'] as const;

const CalendarText = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 512, description }));

const ProviderUrl = (description: string) =>
  Type.Optional(Type.String({ format: 'uri', pattern: '^https?://\\S+$', maxLength: 2048, description }));

/**
 * A connection's credentials depend on its provider; the fields are all optional here and the apply names
 * each one missing or belonging to the other provider (one message each, rather than a schema union's).
 */
export const CalendarConnectionDoc = Type.Object(
  {
    key: Key('calendar connection'),
    project: Ref('project'),
    provider: Type.Enum([...CALENDAR_PROVIDERS], {
      description: 'microsoft (Microsoft 365 / Exchange Online, through Microsoft Graph) or google (Google Workspace)',
    }),
    tenantId: CalendarText('microsoft (required): the directory (tenant) id of the app registration'),
    clientId: CalendarText('microsoft (required): the application (client) id of the app registration'),
    clientSecret: CalendarText("microsoft (required): the app registration's client secret; kept encrypted at rest and never shown back"),
    serviceAccountEmail: Type.Optional(Email("google (required): the service account's email (client_email of its key file)")),
    privateKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 16_384,
        description:
          "google (required): the service account's private key, PEM (private_key of its key file); kept encrypted at rest and never shown back",
      }),
    ),
    subject: Type.Optional(Email('google (required): the Workspace user the service account acts as (domain-wide delegation)')),
    apiBaseUrl: ProviderUrl("Another http(s) host for the provider's calendar API (a stand-in, for tests); refused in production"),
    tokenUrl: ProviderUrl('Another http(s) token endpoint (a stand-in, for tests); refused in production'),
  },
  {
    additionalProperties: false,
    description: "A project's connection to Microsoft 365 or Google Workspace room calendars (at most one per provider per project)",
  },
);

/** The kinds of keyed entity in a site document (devices are nested in access groups), in planning order. */
export const SECTIONS = [
  'brands',
  'projects',
  'zones',
  'floors',
  'rooms',
  'desks',
  'users',
  'apps',
  'accessGroups',
  'devices',
  'webhooks',
  'promoCodes',
  'paymentProviders',
  'calendarConnections',
] as const;
export type Section = (typeof SECTIONS)[number];

const Section = <T extends Parameters<typeof Type.Array>[0]>(item: T, description: string) =>
  Type.Optional(Type.Array(item, { description }));

export const SiteDocument = Type.Object(
  {
    brands: Section(BrandDoc, 'Brands'),
    projects: Section(ProjectDoc, 'Projects (properties)'),
    zones: Section(ZoneDoc, 'Zones'),
    floors: Section(FloorDoc, 'Floors'),
    rooms: Section(RoomDoc, 'Meeting rooms and residential units'),
    desks: Section(DeskDoc, 'Desks'),
    users: Section(UserDoc, 'People and their project memberships'),
    apps: Section(AppDoc, 'Third-party apps of this environment'),
    accessGroups: Section(AccessGroupDoc, 'Access groups with their devices'),
    webhooks: Section(WebhookDoc, 'Webhook listeners'),
    promoCodes: Section(PromoCodeDoc, 'Promo codes'),
    paymentProviders: Section(PaymentProviderDoc, 'Online payment accounts (Stripe or Opn Payments), at most one per project'),
    calendarConnections: Section(
      CalendarConnectionDoc,
      'Room calendar connections (Microsoft 365, Google Workspace), at most one per provider per project. When present, the ' +
        'whole list: a stored connection it leaves out is deleted',
    ),
  },
  {
    additionalProperties: false,
    description: 'Declarative site configuration. Every entity is upserted by its key; entities left out are left alone.',
  },
);

export type SiteDocument = Static<typeof SiteDocument>;
export type ChargeRate = Static<typeof ChargeRate>;
export type BrandDoc = Static<typeof BrandDoc>;
export type ProjectDoc = Static<typeof ProjectDoc>;
export type ZoneDoc = Static<typeof ZoneDoc>;
export type FloorDoc = Static<typeof FloorDoc>;
export type RoomDoc = Static<typeof RoomDoc>;
export type DeskDoc = Static<typeof DeskDoc>;
export type UserDoc = Static<typeof UserDoc>;
export type AppDoc = Static<typeof AppDoc>;
export type AccessGroupDoc = Static<typeof AccessGroupDoc>;
export type DeviceDoc = Static<typeof DeviceDoc>;
export type DeviceTransportDoc = Static<typeof DeviceTransportDoc>;
export type WebhookDoc = Static<typeof WebhookDoc>;
export type WebhookAuthDoc = Static<typeof WebhookAuthDoc>;
export type PromoCodeDoc = Static<typeof PromoCodeDoc>;
export type PaymentProviderDoc = Static<typeof PaymentProviderDoc>;
export type CalendarConnectionDoc = Static<typeof CalendarConnectionDoc>;
