/**
 * The `webhooks` section of the OpenAPI 3.1 document: one entry per event type of
 * the catalogue, each a `post` whose request body is the delivery a listener
 * receives, with the schema built from the same TypeBox schemas as the payloads
 * (events.ts), so receivers can generate their types from the document.
 */
import { BOOKING_EVENT_KINDS, EVENT_TYPES, eventDeliverySchema, type BookingEventKind } from './events.js';

/** What each booking event kind means, for a room or a desk. */
const BOOKING_SUMMARIES: Record<BookingEventKind, (asset: string) => string> = {
  BOOK: (a) => `A ${a} booking is confirmed (made, or its payment settled)`,
  MODIFY: (a) => `A ${a} booking was changed (PATCH or a calendar move)`,
  CANCEL: (a) => `A ${a} booking was cancelled by its organizer, an admin or the system`,
  REMINDER: (a) => `A ${a} booking starts soon (preStartMinutes before the start); its check-in window opens`,
  NO_SHOW_WARNING: (a) => `Nobody has checked in to a ${a} booking; it is cancelled soon unless someone does`,
  ENDING_SOON: (a) => `A ${a} booking ends soon (preEndMinutes before the end)`,
  PAYMENT_DUE: (a) => `A back-office ${a} booking waits for payment (sent at create and at about 75 % of the hold)`,
};

const VISITOR_SUMMARIES: Record<string, string> = {
  VMS_INVITE_SENT: 'A visitor was invited; the data carries the entry code to relay to the visitor',
  VMS_VISITOR_CHECKED_IN: 'A visitor entered with their code or their licence plate',
  VMS_HOST_CANCELLED: 'The host cancelled a visitor invitation',
};

function summaryOf(type: string): string {
  const booking = /^(ROOM|DESK)_(.+)$/.exec(type);
  if (booking && (BOOKING_EVENT_KINDS as readonly string[]).includes(booking[2]!)) {
    return BOOKING_SUMMARIES[booking[2] as BookingEventKind](booking[1] === 'ROOM' ? 'room' : 'desk');
  }
  return VISITOR_SUMMARIES[type] ?? type;
}

/** A stable operationId: ROOM_NO_SHOW_WARNING → roomNoShowWarningEvent. */
export function webhookOperationId(type: string): string {
  const words = type.toLowerCase().split('_');
  return words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('') + 'Event';
}

const DELIVERY_TEXT =
  'The service POSTs this body to each listener subscribed to the type (registered by the operator in the site document). ' +
  'Verify the signature over the raw body bytes before parsing: X-Service-Signature is `sha256=` + hex HMAC-SHA256 of ' +
  '`X-Service-Timestamp + "." + body`, keyed with the listener secret; webhook-signature is the Standard Webhooks form of the same. ' +
  'Refuse a timestamp more than about 5 minutes from your clock. With the bearer or jwt scheme an Authorization header is added ' +
  '(`Bearer <token>`, or an HS256 JWT with iss, aud = projectId, jti = delivery id, 60 s lifetime); with custom-header, the headers given at registration. ' +
  'Answer 2xx within 10 seconds; anything else is retried (5 attempts, 1, 2, 4 and 8 minutes apart), possibly out of order: ' +
  'order by occurredAt and de-duplicate on the delivery id. Unknown fields may appear at any time.';

const BOOKING_TEXT =
  ' A booking event is a change signal: data.meetingId names the booking, whose state GET /meetings/{meetingId} answers ' +
  '(on a recurring series, data.occurrenceEventId names the occurrence as GET /meetings lists it); data.assetId and data.assetKind name the room or desk.';

const header = (name: string, description: string, schema: Record<string, unknown>) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
});

function deliveryHeaders(type: string) {
  return [
    header('X-Service-Event', 'The event type', { type: 'string', const: type }),
    header('X-Service-Delivery', 'The delivery id (= body id); the same on every retry', { type: 'string', pattern: '^whk_' }),
    header('X-Service-Timestamp', 'Send time of this attempt, epoch milliseconds', { type: 'string', pattern: '^[0-9]+$' }),
    header('X-Service-Signature', '`sha256=` + hex HMAC-SHA256 of `X-Service-Timestamp + "." + raw body`, keyed with the listener secret', {
      type: 'string',
      pattern: '^sha256=[0-9a-f]{64}$',
    }),
    header('webhook-id', 'Standard Webhooks: the delivery id (= X-Service-Delivery)', { type: 'string' }),
    header('webhook-timestamp', 'Standard Webhooks: send time of this attempt, unix seconds', { type: 'string', pattern: '^[0-9]+$' }),
    header(
      'webhook-signature',
      'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id + "." + timestamp + "." + raw body`, keyed with the secret\'s UTF-8 bytes',
      {
        type: 'string',
      },
    ),
  ];
}

/** The OpenAPI `webhooks` object: every event type of the catalogue. */
export function webhookDocs(): Record<string, object> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: webhookOperationId(type),
          tags: ['events'],
          summary: summaryOf(type),
          description: DELIVERY_TEXT + (type.startsWith('VMS_') ? '' : BOOKING_TEXT),
          // The receiver's end: the API's bearer token is not sent (the optional delivery auth is described above).
          security: [],
          parameters: deliveryHeaders(type),
          requestBody: {
            required: true,
            description: `The ${type} delivery; these exact bytes are signed`,
            // A plain copy: the document never shares (or lets anyone change) the contract's schema objects.
            content: { 'application/json': { schema: JSON.parse(JSON.stringify(eventDeliverySchema(type))) as unknown } },
          },
          responses: {
            '2XX': { description: "Received. The answer's body is ignored (at most 64 KB of it is read); answer within 10 s" },
            default: { description: 'Any other status, a redirect, a timeout or a connection error is a failed attempt and is retried' },
          },
        },
      },
    ]),
  );
}
