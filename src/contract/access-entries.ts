/** The entry log as the ops API shows it (GET /ops/v1/access-entries) and the sandbox badge (POST /ops/v1/devices/{deviceId}/badge). */
import { Type, type Static } from 'typebox';
import { DateTime, ObjectId } from './common.js';

export const ACCESS_ENTRY_OUTCOMES = ['pending', 'check-in', 'booked', 'walk-in', 'recorded', 'refused'] as const;
export const CREDENTIAL_KINDS = ['card', 'face', 'qr', 'plate', 'pin', 'fingerprint', 'other'] as const;

export const AccessEntry = Type.Object({
  _id: Type.String(),
  deviceId: Type.String(),
  assetKind: Type.Union([Type.Literal('room'), Type.Literal('desk'), Type.Null()], {
    description: 'The room or desk naming the device among its access devices (rooms before desks); null for none',
  }),
  assetId: Type.Union([Type.String(), Type.Null()]),
  subject: Type.Object({
    kind: Type.Union([Type.Literal('member'), Type.Literal('visitor'), Type.Literal('unknown')]),
    id: Type.Union([Type.String(), Type.Null()], {
      description: 'The member id or visitor invite id; null for an unknown credential (its number is never stored)',
    }),
  }),
  credentialKind: Type.Enum([...CREDENTIAL_KINDS]),
  granted: Type.Boolean(),
  deviceAt: DateTime("The device's time of the event"),
  receivedAt: DateTime("The service's (real) time of receiving it"),
  outcome: Type.Enum([...ACCESS_ENTRY_OUTCOMES], {
    description:
      'pending (not yet judged), check-in (it checked a booking in), booked (a participant of a booking there: already checked in, ' +
      'or outside the check-in window; recorded only), walk-in (no booking there), recorded (someone else booked it, no asset, not a member), refused',
  }),
  meetingId: Type.Union([Type.String(), Type.Null()]),
});
export type AccessEntry = Static<typeof AccessEntry>;

export const AccessEntriesQuery = Type.Object({
  project: ObjectId('The project'),
  from: Type.Optional(DateTime('Entries at or after this device time')),
  to: Type.Optional(DateTime('Entries before this device time')),
  deviceId: Type.Optional(Type.String({ maxLength: 512 })),
  assetId: Type.Optional(Type.String({ maxLength: 512 })),
  outcome: Type.Optional(Type.Enum([...ACCESS_ENTRY_OUTCOMES])),
  before: Type.Optional(ObjectId('The _id of the last entry of the previous page: the next page holds older entries')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Page size, 1-500 (default 100)' })),
});
export type AccessEntriesQuery = Static<typeof AccessEntriesQuery>;

export const BadgeBody = Type.Object(
  {
    cardNo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "A card number in the device's card format" })),
    memberId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A member presenting themselves (face)' })),
    eventId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: "The device's event id (a resend with the same one records nothing again)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type BadgeBody = Static<typeof BadgeBody>;
