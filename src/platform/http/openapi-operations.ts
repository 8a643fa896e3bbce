/**
 * What the OpenAPI document says about each operation beyond its schemas: a stable
 * `operationId` (code generators name methods after it; the public ones are the
 * SDK's method names, sdk/src/client.ts OPERATIONS), a description, and a request and
 * a response example. Applied by @fastify/swagger's `transform` (app.ts), so the
 * schemas the validator uses are never touched.
 *
 * Examples: the hand-written request bodies below where the shape matters to a
 * reader; every other body and every success answer is sampled from its own schema
 * (`sampleOf`), so each example is valid against the schema it illustrates
 * (test/http/openapi.test.ts checks that with ajv).
 */

export interface OperationDoc {
  operationId: string;
  description: string;
  /** A request body example (sampled from the body schema when absent). */
  request?: unknown;
}

const ROOM_ID = '665f1c2e8a0b4d3e9f6a0101';
const DESK_ID = '665f1c2e8a0b4d3e9f6a0201';
const PROJECT_ID = '665f1c2e8a0b4d3e9f6a0001';
const USER_ID = '665f1c2e8a0b4d3e9f6a0301';

/** Keyed by `METHOD path` as Fastify routes them (path parameters in braces). */
export const OPERATION_DOCS: Record<string, OperationDoc> = {
  'GET /healthz': {
    operationId: 'health',
    description: 'Liveness: answers as long as the process runs, without touching the database. Use it for a restart probe.',
  },
  'GET /readyz': {
    operationId: 'ready',
    description:
      'Readiness: answers 200 only when the database responds and no migration is outstanding; 503 otherwise. Use it to take an instance in or out of a load balancer.',
  },
  'POST /auth/accessToken': {
    operationId: 'requestToken',
    description:
      "Issues an access token. `app_credentials` signs the app in, `refresh_token` renews a pair (the old refresh token stops working), and `act_as` gives a token that acts for one of the app's linked members (`subject` is their externalUserId). Not enveloped; answers 201.",
    request: { grant_type: 'app_credentials', app_id: 'portal-dev', app_secret: 'replace-with-the-app-secret-you-were-given' },
  },
  'POST /auth/revoke': {
    operationId: 'revoke',
    description: 'Ends the calling token at once, together with every token of its refresh chain. Use it at sign-out.',
  },
  'GET /auth/whoami': {
    operationId: 'whoami',
    description: 'Tells who the calling token is: the app, the member it acts for (if any), and the projects it may see.',
  },
  'GET /meeting-rooms': {
    operationId: 'searchRooms',
    description:
      'Lists the rooms of a project. With a start and end it also tells, per room, whether it is free for that window and, when not, why (`unavailableReason`). Not paginated.',
  },
  'GET /meeting-rooms/{id}': { operationId: 'getRoom', description: 'Reads one room, its booking rules and the bookings in its calendar.' },
  'GET /desks': {
    operationId: 'searchDesks',
    description: 'Lists the desks of a project page by page; with a window, only the desks free for all of it.',
  },
  'GET /desks/{id}': { operationId: 'getDesk', description: 'Reads one desk, its booking rules and the bookings in its calendar.' },
  'POST /meetings': {
    operationId: 'createMeeting',
    description:
      'Books a room (`meetingRoomId`) or a desk (`deskId`) for a window, checking every rule of the asset. With `draft: true` nothing is booked: the answer says whether the booking would succeed and what it would cost. A paid booking answers with a `payment` holding the payment page address.',
    request: {
      meetingRoomId: ROOM_ID,
      title: 'Quarterly planning',
      startDateTime: '2030-01-07T10:00:00+07:00',
      endDateTime: '2030-01-07T11:30:00+07:00',
      attendees: [{ email: 'dana@example.com' }],
    },
  },
  'GET /meetings': {
    operationId: 'listMeetings',
    description:
      "Lists the caller's bookings that overlap a window, page by page. Each occurrence of a recurring series is its own row, carrying `occurrenceEventId`.",
  },
  'GET /meetings/{id}': {
    operationId: 'getMeeting',
    description: 'Reads one booking with its history. This is the authoritative state; re-read it after any event or failed action.',
  },
  'PATCH /meetings/{id}': {
    operationId: 'updateMeeting',
    description:
      'Changes a booking: new times (a move or an extension, checked like a new booking), title, body or attendees. Fields left out stay as they are.',
    request: { startDateTime: '2030-01-07T10:30:00+07:00', endDateTime: '2030-01-07T12:00:00+07:00', title: 'Quarterly planning (moved)' },
  },
  'POST /meetings/{id}/cancel': {
    operationId: 'cancelMeeting',
    description:
      "Cancels a booking that has not started being used. Allowed to the organizer, a project admin or whoever holds the PIN; an unpaid booking's payment is voided.",
    request: {},
  },
  'POST /meetings/{id}/check-in': {
    operationId: 'checkIn',
    description:
      'Marks the booking as in use. Accepted only inside the check-in window around the start; too early or too late answers with a code telling which.',
    request: {},
  },
  'POST /meetings/{id}/check-out': {
    operationId: 'checkOut',
    description: 'Ends a checked-in booking now and frees the asset for others (after its cleaning time).',
    request: {},
  },
  'PUT /partner/members/{externalUserId}': {
    operationId: 'putMember',
    description:
      'Creates the member the app knows as `externalUserId`, or updates them; sending the same body again changes nothing. Only fields that are sent are changed.',
    request: { firstName: 'Dana', lastName: 'Reyes', email: 'dana.reyes@example.com', phone: '+66812345678', unit: { addressNo: '88/12' } },
  },
  'GET /partner/members/{externalUserId}': {
    operationId: 'getMember',
    description:
      'Reads the member the app manages under `externalUserId`, with their unit and credentials summary (never card numbers in full or face images).',
  },
  'DELETE /partner/members/{externalUserId}': {
    operationId: 'deleteMember',
    description:
      "Offboards the member: deactivated, their cards revoked and removed from the app's access groups, so devices drop them. Repeating it changes nothing.",
  },
  'PUT /partner/members/{externalUserId}/credentials': {
    operationId: 'putCredentials',
    description:
      "Sets the member's access cards and face photo. `cards` replaces the whole set; `face` replaces or (null) erases the photo; a field left out is not touched. Devices of the member's access groups receive the change in the background.",
    request: { cards: [{ cardNo: '0012345678' }] },
  },
  'POST /ops/v1/session': {
    operationId: 'signInConsole',
    description:
      'Exchanges the ops token for a console session: an HttpOnly cookie plus the CSRF token that cookie-authenticated writes must carry.',
    request: { token: 'the-ops-token-printed-at-start' },
  },
  'GET /ops/v1/session': {
    operationId: 'getConsoleSession',
    description: 'Tells whether the session cookie is still valid, when it ends, and its CSRF token (so a reloaded page can carry on).',
  },
  'DELETE /ops/v1/session': { operationId: 'signOutConsole', description: 'Signs the console out and clears the session cookie.' },
  'GET /ops/v1/clock': {
    operationId: 'getSandboxClock',
    description: 'Reads service time and how far it runs ahead of real time (development and uat).',
  },
  'POST /ops/v1/clock': {
    operationId: 'moveSandboxClock',
    description:
      'Moves service time forward by minutes or to an instant, or resets it to real time (development and uat). Everything that falls due meanwhile — reminders, no-shows, endings, payment deadlines, webhook retries — has happened in order when it answers.',
    request: { advanceMinutes: 30 },
  },
  'POST /ops/v1/apply': {
    operationId: 'applySiteDocument',
    description:
      'Configures sites from one declarative document: every entity is created or updated by its key, nothing is deleted, and a document either applies fully or not at all. docs/operator-api.md has a complete example.',
    request: {
      brands: [{ key: 'acme', name: 'Acme Estates' }],
      projects: [{ key: 'tower', brand: 'acme', name: 'Acme Tower', timezone: 'Asia/Bangkok', currency: 'THB' }],
      zones: [{ key: 'north', project: 'tower', name: 'North Wing' }],
      floors: [{ key: 'n12', zone: 'north', name: '12F' }],
      rooms: [{ key: 'orchid', floor: 'n12', name: 'Orchid', capacity: 8 }],
    },
  },
  'GET /ops/v1/webhooks': {
    operationId: 'listWebhookListeners',
    description:
      'Lists every webhook listener with whether it is enabled and how many deliveries in a row have failed. Secrets are never shown.',
  },
  'GET /ops/v1/webhooks/{id}': {
    operationId: 'getWebhookListener',
    description: "Reads one listener's state: enabled or not, and its run of consecutive failures.",
  },
  'POST /ops/v1/webhooks/{id}/enable': {
    operationId: 'enableWebhookListener',
    description: 'Turns a disabled listener back on and clears its failure count; deliveries resume.',
  },
  'GET /ops/v1/webhooks/{id}/deliveries': {
    operationId: 'listWebhookDeliveries',
    description: "The listener's delivery log, newest first: event type, attempts, last answer and next try.",
  },
  'POST /ops/v1/deliveries/{deliveryId}/redeliver': {
    operationId: 'redeliverDelivery',
    description: 'Queues a delivery to be sent again with its original id, so receivers that de-duplicate treat it as the same delivery.',
  },
  'GET /ops/v1/payments': {
    operationId: 'listPayments',
    description: 'Lists payments, newest first (at most 500), optionally only those of one status.',
  },
  'GET /ops/v1/payments/{paymentId}': {
    operationId: 'getPayment',
    description:
      "One payment as the console's payment view shows it: its provider and the provider's reference, status, amount and failed attempts, every event the provider posted about it (oldest first, whether its signature or a re-read verified it) and its voids and refunds with their state. Never a key or secret.",
  },
  'GET /ops/v1/meetings/{id}/payment': {
    operationId: 'getMeetingPayment',
    description: 'The newest payment of a booking, in the same shape as getPayment; 404 when the booking has no payment.',
  },
  'POST /ops/v1/payments/{paymentId}/settle': {
    operationId: 'settlePayment',
    description:
      'Sandbox: reports the payment as paid, exactly as paying on the payment page would. An `eventId` makes a repeated notice a no-op.',
    request: { eventId: 'sandbox-notice-0001' },
  },
  'POST /ops/v1/payments/{paymentId}/fail': {
    operationId: 'failPayment',
    description: 'Sandbox: reports a failed payment attempt; the booking stays unpaid and can still be paid until its deadline.',
    request: { eventId: 'sandbox-notice-0002' },
  },
  'POST /payments/webhooks/{providerId}': {
    operationId: 'receiveProviderEvent',
    description:
      "Where Stripe or Opn Payments sends its events for one provider account. Authenticated only by the provider's signature over the raw body (Stripe-Signature; Opn's Omise-Signature); a missing or wrong one is 400 and changes nothing. A paid event settles the booking's payment exactly as the sandbox settle does; an event id seen before, or an object this service did not create, is acknowledged with 200 and changes nothing.",
  },
  'GET /ops/v1/devices': {
    operationId: 'listDevices',
    description: 'Lists every access device with whether it is reachable, how many changes wait for it and when it last acknowledged one.',
  },
  'GET /ops/v1/devices/{deviceId}': {
    operationId: 'getDevice',
    description:
      'Shows what a device holds as it acknowledged it (members, their card numbers, whether a face is enrolled) and its sync state. Face images are never returned.',
  },
  'POST /ops/v1/devices/{deviceId}/offline': {
    operationId: 'setDeviceOffline',
    description: 'Sandbox transport: makes a simulated device unreachable, so changes queue up for it.',
  },
  'POST /ops/v1/devices/{deviceId}/online': {
    operationId: 'setDeviceOnline',
    description: 'Sandbox transport: makes a simulated device reachable again; its queued changes are delivered at once.',
  },
  'POST /ops/v1/devices/{deviceId}/badge': {
    operationId: 'badgeAtDevice',
    description:
      "Sandbox transport: presents a card number or a member at a simulated device. The device grants what it holds; the event goes into the entry log (the same eventId twice records one entry) and a granted member at a room's or desk's door checks their booking in when its check-in window is open.",
    request: { cardNo: '0001234567' },
  },
  'GET /ops/v1/access-entries': {
    operationId: 'listAccessEntries',
    description:
      "Lists a project's door entries, newest first: who (member, visitor or unknown credential), where (device, room or desk), granted or refused, the device's and the service's time, and what it did (check-in, booked, walk-in, recorded, refused).",
  },
  'GET /ops/v1/analytics/utilisation': {
    operationId: 'getUtilisation',
    description:
      "Answers a project's utilisation over a range of the property's local days, one row per group (project, zone, floor, asset, day, ISO week, month or hour of the week): available, booked, occupied and released minutes, bookings, check-ins, no-shows, cancellations, walk-ins and the three ratios. Accept: text/csv gives the same rows as CSV.",
  },
  'GET /ops/v1/analytics/organizers': {
    operationId: 'getOrganizerReport',
    description:
      'Per organizer: counted bookings, those that reached their start, no-shows, ghost meetings (reached their start, nobody checked in) and booked minutes. Served only for a project whose site document turns named reports on; 403 otherwise.',
  },
  'GET /ops/v1/analytics/status': {
    operationId: 'getAnalyticsStatus',
    description: 'How many changed bookings and walk-ins of the project the figures have not taken in yet (normally none after a second).',
  },
  'POST /ops/v1/calendar-sync/{provider}/messages': {
    operationId: 'receiveCalendarMessage',
    description:
      "Hands over one iTIP message a synced room's mailbox received (an invitation, change, cancellation or reply). The service books, moves or cancels accordingly and answers with the REPLY the room sends back.",
    request:
      'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//EN\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:planning-2030-01-07@example.com\r\nSEQUENCE:0\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:20300107T030000Z\r\nDTEND:20300107T040000Z\r\nSUMMARY:Planning\r\nORGANIZER:mailto:dana@example.com\r\nATTENDEE;CUTYPE=ROOM:mailto:orchid@rooms.example.com\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n',
  },
  'POST /ops/v1/visitors/invites': {
    operationId: 'createVisitorInvite',
    description:
      'Invites a visitor on behalf of a host. The answer holds the QR card code; the VMS_INVITE_SENT event is the only other place it appears.',
    request: {
      projectId: PROJECT_ID,
      hostUserId: USER_ID,
      visitorName: 'Sam Lee',
      visitorEmail: 'sam.lee@example.com',
      startDateTime: '2030-01-07T09:00:00+07:00',
      endDateTime: null,
      licensePlate: 'กข 1234',
      visitPurpose: 'Contractor visit',
    },
  },
  'GET /ops/v1/visitors/invites': {
    operationId: 'listVisitorInvites',
    description:
      'Lists the invites of a project whose window touches one property-local day (today by default), without their QR card codes.',
  },
  'POST /ops/v1/visitors/invites/{inviteId}/cancel': {
    operationId: 'cancelVisitorInvite',
    description: 'Withdraws an invite: its code stops opening doors and VMS_HOST_CANCELLED is sent once. Cancelling again does nothing.',
  },
  'GET /ops/v1/visitors/invites/{inviteId}': {
    operationId: 'getVisitorInvite',
    description: 'Reads an invite with its status and the entries made with it.',
  },
  'POST /ops/v1/devices/{deviceId}/scans': {
    operationId: 'recordDeviceScan',
    description:
      'Reports a QR code or licence plate read at a device. Entry is granted when it belongs to an invite valid at that moment; the answer says so, or why not.',
    request: { licensePlate: 'กข 1234' },
  },
  'POST /devices/isapi/{deviceId}/events/{token}': {
    operationId: 'receiveIsapiNotification',
    description:
      "Where a HikVision terminal posts its event notifications (the service registers this URL on the device with ISAPI httpHosts; the token is the device's own). Access results (AccessControllerEvent, JSON or multipart with pictures) go into the entry log; other alerts are acknowledged and dropped. An unknown device or a wrong token is answered 404.",
  },
  'POST /calendar/webhooks/{connectionId}': {
    operationId: 'receiveCalendarNotification',
    description:
      "Where Microsoft Graph and Google Calendar notify the service of changes to a connection's room calendars (GET /ops/v1/site shows it as calendarConnections[].webhookUrl). Graph: a `validationToken` is echoed as text/plain; notifications must carry their subscription's clientState. Google: the channel id, token and resource id must match. A notification only marks the room to be read again (202 / 200); one that matches nothing is 403 and changes nothing.",
  },
  'GET /iclock/cdata': {
    operationId: 'zktecoHandshake',
    description:
      "A ZKTeco terminal's PUSH handshake (`options=all`): its upload stamps, poll delay and UTC offset as text. Only serial numbers registered in the site document (transport kind zkteco-push) are answered; any other gets 404 with an empty body.",
  },
  'POST /iclock/cdata': {
    operationId: 'zktecoUpload',
    description:
      "A ZKTeco terminal uploads its logs (`table=rtlog` or `ATTLOG`, tab-separated lines in the device's local time): each access line becomes a door event, a line sent again is recognised. Answers `OK: <lines>`.",
  },
  'GET /iclock/getrequest': {
    operationId: 'zktecoGetRequest',
    description:
      "A ZKTeco terminal's poll: the commands it must run (users, cards, validity windows, face photos; inventory queries) as `C:<id>:<command>` lines, or `OK`.",
  },
  'POST /iclock/devicecmd': {
    operationId: 'zktecoCommandResults',
    description:
      'A ZKTeco terminal reports what its commands did (`ID=<id>&Return=<code>&CMD=<verb>` per line): a change is applied when every part returned 0; documented error codes are recorded as refused.',
  },
  'POST /iclock/querydata': {
    operationId: 'zktecoQueryData',
    description:
      'A ZKTeco terminal answers an inventory query with the rows of one table (user, mulcarduser, biophoto), paged by packcnt/packidx; once every table is in, what it holds is compared with what it must hold.',
  },
  'GET /ops/v1/calendar-sync/connections/{id}': {
    operationId: 'getCalendarConnection',
    description:
      "Shows a calendar connection (by id or key) room by room: the provider's subscription or channel and when it expires, the last successful read, the age of the sync cursor, the last error, the changes read in and written out, and the writes still owed.",
  },
  'GET /ops/v1/calendar-sync/rooms/{roomId}/feed': {
    operationId: 'getRoomFeed',
    description: "Gives the secret address of a room's iCalendar feed, creating it the first time.",
  },
  'DELETE /ops/v1/calendar-sync/rooms/{roomId}/feed': {
    operationId: 'revokeRoomFeed',
    description: "Withdraws the room's feed: its address answers 404 from now on.",
  },
  'POST /ops/v1/calendar-sync/rooms/{roomId}/feed/rotate': {
    operationId: 'rotateRoomFeed',
    description: "Replaces the room's feed address with a new one; the old address stops working at once.",
  },
  'GET /ops/v1/meetings': {
    operationId: 'listAllMeetings',
    description:
      "Lists bookings across every project, with the public list's filters plus an asset and a free-text search. PINs are never shown.",
  },
  'GET /ops/v1/meetings/{id}': {
    operationId: 'getMeetingDetail',
    description: 'Reads one booking with its full history and payment state, for staff. The PIN is never shown.',
  },
  'POST /ops/v1/meetings/{id}/cancel': {
    operationId: 'staffCancelMeeting',
    description:
      "Cancels a booking on behalf of staff, under a project admin's rules; the reason is kept in its history and the usual cancel event is sent.",
    request: { reason: 'Room closed for maintenance' },
  },
  'GET /ops/v1/floors/{floorId}/now': {
    operationId: 'getFloorNow',
    description:
      'Every room and desk of a floor with its state at the current service time (free, booked, checked in, cleaning, closed) and its current and next booking.',
  },
  'GET /ops/v1/assets/{assetId}/day': {
    operationId: 'getAssetDay',
    description:
      "One room's or desk's day in the property's time zone: opening hours, breaks, and bookings with the cleaning time after each.",
  },
  'GET /ops/v1/site': {
    operationId: 'getSiteOverview',
    description: 'Every project with its floors, rooms and desks, and the members with their projects: what the console draws and offers.',
  },
  'GET /ops/v1/stream': {
    operationId: 'streamChanges',
    description:
      'A server-sent event stream naming each booking, delivery, device, invite or clock change as it happens on any instance, with a keep-alive comment every 15 seconds.',
  },
};

// ---------------------------------------------------------------------------
// Sampling a value from a JSON schema
// ---------------------------------------------------------------------------

/** The parts of a JSON schema the sampler reads (TypeBox schemas, as Fastify hands them to the transform). */
interface JsonSchema {
  [keyword: string]: unknown;
  const?: unknown;
  enum?: unknown[];
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  type?: string | string[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  required?: string[];
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  hide?: boolean;
  description?: string;
  body?: JsonSchema;
  response?: Record<string, JsonSchema>;
}

/** Values for the patterns the contract uses. */
const PATTERN_SAMPLES: Record<string, string> = {
  '^[0-9a-f]{24}$': ROOM_ID,
  '^whk_[0-9a-f-]{36}$': 'whk_3f2b8c1e-4a5d-4e6f-9a7b-1c2d3e4f5a6b',
  '^[0-9]{10}$': '0012345678',
  '^[A-Z]{3}$': 'THB',
  '^\\d{4}-\\d{2}-\\d{2}$': '2030-01-07',
  '^[A-Za-z0-9][A-Za-z0-9._-]{2,127}$': 'portal-dev',
  '^[A-Z][A-Z0-9_]*$': 'MEETING_UPDATE',
  '^https?://\\S+$': 'https://hooks.example.com/booking-events',
};

/** Friendlier strings by property name (used when the schema allows them). */
const NAMED_SAMPLES: Record<string, string> = {
  message: 'OK',
  name: 'Orchid',
  title: 'Quarterly planning',
  roomName: 'Orchid',
  floorName: '12F',
  zoneName: 'North Wing',
  projectName: 'Acme Tower',
  timezone: 'Asia/Bangkok',
  timeZone: 'Asia/Bangkok',
  currency: 'THB',
  phone: '+66812345678',
  firstName: 'Dana',
  lastName: 'Reyes',
  profileName: 'Dana Reyes',
  organizerName: 'Dana Reyes',
  visitorName: 'Sam Lee',
  access_token: 'eyJhbGciOiJIUzI1NiJ9.example.signature',
  refresh_token: 'rt_2b7e151628aed2a6abf7158809cf4f3c',
  token_type: 'Bearer',
  status: 'active',
  externalUserId: 'ext-dana',
  addressNo: '88/12',
  uid: 'planning-2030-01-07@example.com',
  reply: 'BEGIN:VCALENDAR\r\nMETHOD:REPLY\r\nEND:VCALENDAR\r\n',
  csrfToken: 'c2FtcGxlLWNzcmYtdG9rZW4',
  key: 'orchid',
};

const ID_SAMPLES: Record<string, string> = {
  deskId: DESK_ID,
  projectId: PROJECT_ID,
  userId: USER_ID,
  hostUserId: USER_ID,
  organizerId: USER_ID,
};

function sampleString(s: JsonSchema, name: string | undefined): string {
  if (s.pattern) {
    const byPattern = PATTERN_SAMPLES[s.pattern];
    if (byPattern === undefined) throw new Error(`no sample for pattern ${s.pattern}`);
    if (s.pattern === '^[0-9a-f]{24}$' && name && ID_SAMPLES[name]) return ID_SAMPLES[name];
    return byPattern;
  }
  switch (s.format) {
    case 'date-time':
      return name && /end|until|expires|due/i.test(name) ? '2030-01-07T11:00:00+07:00' : '2030-01-07T10:00:00+07:00';
    case 'email':
      return 'dana@example.com';
    case 'uri':
      return 'https://app.example.com/bookings/done';
    case 'date':
      return '2030-01-07';
    default:
      break;
  }
  let value = (name && NAMED_SAMPLES[name]) ?? (name ? byNameShape(name) : 'text');
  if (s.maxLength !== undefined && value.length > s.maxLength) value = value.slice(0, s.maxLength);
  while (s.minLength !== undefined && value.length < s.minLength) value += 'x';
  return value;
}

/** A plausible value for a free-form string, from the shape of its property name. */
function byNameShape(name: string): string {
  if (name === 'appId') return 'portal-dev';
  if (name === 'deliveryId') return PATTERN_SAMPLES['^whk_[0-9a-f-]{36}$'];
  if (name === '_id' || /Id$/.test(name))
    return ID_SAMPLES[name] ?? (/desk/i.test(name) ? DESK_ID : /project/i.test(name) ? PROJECT_ID : /user/i.test(name) ? USER_ID : ROOM_ID);
  if (/email$/i.test(name)) return 'dana@example.com';
  if (/(DateTime|At|Time)$/.test(name)) return '2030-01-07T10:00:00+07:00';
  if (/(Url|url)$/.test(name)) return 'https://booking.example.com/pay/4f9c2a';
  if (/Name$/.test(name))
    return /desk/i.test(name)
      ? 'Desk 12'
      : /floor/i.test(name)
        ? '12F'
        : /display|organizer|host|visitor/i.test(name)
          ? 'Dana Reyes'
          : 'Orchid';
  if (name === 'pinCode') return '482913';
  if (name === 'invoiceNo') return 'INV-2030-000123';
  return `sample ${name}`;
}

function sampleNumber(s: JsonSchema, integer: boolean): number {
  let n = typeof s.default === 'number' ? s.default : (s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1));
  if (s.maximum !== undefined && n > s.maximum) n = s.maximum;
  return integer ? Math.ceil(n) : n;
}

/**
 * A value valid against `schema`: every property of objects (only the required ones when
 * `requiredOnly`), one item per array (or minItems), the first non-null branch of a union.
 */
export function sampleOf(schema: JsonSchema, options: { requiredOnly?: boolean } = {}, name?: string, depth = 0): unknown {
  if (depth > 12) throw new Error('schema too deep to sample');
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.allOf)) {
    // An intersection of objects: one object holding what each part asks for.
    return Object.assign({}, ...schema.allOf.map((part: JsonSchema) => sampleOf(part, options, name, depth + 1)));
  }
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const branches: JsonSchema[] = schema.anyOf ?? schema.oneOf ?? [];
    const preferred = branches.find((b) => b.type !== 'null') ?? branches[0]!;
    return sampleOf(preferred, options, name, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return sampleString(schema, name);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return schema.default ?? true;
    case 'null':
      return null;
    case 'array': {
      const count = Math.max(1, schema.minItems ?? 0);
      if (schema.maxItems === 0) return [];
      const items = schema.items ?? {};
      if (count > 1 && Array.isArray(items.enum)) return items.enum.slice(0, count);
      return Array.from({ length: count }, () => sampleOf(items, options, singular(name), depth + 1));
    }
    case 'object':
    default: {
      const out: Record<string, unknown> = {};
      const required = new Set<string>(schema.required ?? []);
      for (const [key, sub] of Object.entries<JsonSchema>(schema.properties ?? {})) {
        if (options.requiredOnly && !required.has(key)) continue;
        out[key] = sampleOf(sub, options, key, depth + 1);
      }
      const patterned = Object.values<JsonSchema>(schema.patternProperties ?? {})[0];
      if (patterned && !options.requiredOnly) out.orchid = sampleOf(patterned, options, 'orchid', depth + 1);
      return out;
    }
  }
}

function singular(name: string | undefined): string | undefined {
  return name?.endsWith('s') ? name.slice(0, -1) : name;
}

// ---------------------------------------------------------------------------
// The swagger transform
// ---------------------------------------------------------------------------

/** The route schema with its operationId, description and examples (copies; the original is not changed). */
export function describeOperation<S extends object>(method: string, url: string, schema: S | undefined): S | undefined {
  const s = schema as JsonSchema | undefined;
  if (!s || s.hide) return schema;
  const doc = OPERATION_DOCS[`${method} ${url.replace(/:(\w+)/g, '{$1}')}`];
  if (!doc) return schema;
  const out: JsonSchema = { ...s, operationId: doc.operationId, description: s.description ?? doc.description };
  const body = s.body;
  if (body) out.body = withExample(body, () => doc.request ?? sampleOf(body, { requiredOnly: true }));
  if (s.response) {
    const responses: Record<string, JsonSchema> = { ...s.response };
    for (const [status, response] of Object.entries(s.response)) {
      if (!/^2\d\d$/.test(status) || !response || typeof response !== 'object' || !hasShape(response)) continue;
      responses[status] = withExample(response, () => sampleOf(response));
    }
    out.response = responses;
  }
  return out as S;
}

function hasShape(schema: JsonSchema): boolean {
  return ['type', 'anyOf', 'oneOf', 'const', 'enum', 'properties'].some((k) => k in schema);
}

function withExample(schema: JsonSchema, make: () => unknown): JsonSchema {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema;
  try {
    return { ...schema, examples: [make()] };
  } catch {
    // A schema the sampler cannot satisfy keeps no example (the OpenAPI test names it).
    return schema;
  }
}
