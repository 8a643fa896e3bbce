/** Schemas of the visitor management feature (ops surface): invites, cancels, scans. */
import { Type, type Static } from 'typebox';
import { DateTime, ObjectId } from './common.js';

export const INVITE_STATUSES = ['invited', 'checked-in', 'cancelled', 'expired'] as const;
export type InviteStatus = (typeof INVITE_STATUSES)[number];

const Text = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, description });

export const CreateInviteBody = Type.Object(
  {
    projectId: ObjectId('The project the visitor comes to'),
    hostUserId: ObjectId('The inviting user; a member of the project'),
    visitorName: Text(200, "The visitor's name"),
    visitorEmail: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
    startDateTime: DateTime('Start of the visit (ISO 8601 with an offset)'),
    endDateTime: Type.Union([DateTime('End of the visit'), Type.Null()], {
      description: 'End of the visit; null: valid the whole property-local start day',
    }),
    licensePlate: Type.Optional(Text(32, "The visitor's car plate; matched ignoring case, spaces and dashes")),
    visitPurpose: Type.Optional(Text(500, 'Why the visitor comes')),
    meetingId: Type.Optional(
      ObjectId(
        "The booking the visitor comes to (the host its organizer or an attendee): the doors of the booked room or desk hold the visitor's pass in the booking's window",
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateInviteBody = Static<typeof CreateInviteBody>;

export const VisitorEntry = Type.Object({
  at: DateTime('When the visitor was let in (service time)'),
  deviceId: Type.String(),
  entryType: Type.Union([Type.Literal('card'), Type.Literal('license-plate')]),
  licensePlate: Type.Union([Type.String(), Type.Null()], { description: 'The plate read; null for a card entry' }),
});
export type VisitorEntry = Static<typeof VisitorEntry>;

export const InviteView = Type.Object({
  _id: Type.String(),
  projectId: Type.String(),
  hostUserId: Type.String(),
  status: Type.Enum([...INVITE_STATUSES]),
  visitorName: Type.String(),
  visitorEmail: Type.Union([Type.String(), Type.Null()]),
  startDateTime: DateTime(),
  endDateTime: Type.Union([DateTime(), Type.Null()], { description: 'As given; null when the invite is valid the whole start day' }),
  validUntil: DateTime('When the invite stops admitting (the end, or the end of the property-local start day)'),
  licensePlate: Type.Union([Type.String(), Type.Null()]),
  visitPurpose: Type.Union([Type.String(), Type.Null()]),
  meetingId: Type.Union([Type.String(), Type.Null()], { description: 'The booking the visitor comes to; null when none' }),
  qrCardCode: Type.String({ description: 'The code the visitor shows at a reader' }),
  cancelledAt: Type.Union([DateTime(), Type.Null()]),
  entries: Type.Array(VisitorEntry),
  createdAt: DateTime(),
});
export type InviteView = Static<typeof InviteView>;

export const ScanBody = Type.Object(
  {
    cardCode: Type.Optional(Text(128, 'The code read by a card or QR reader')),
    licensePlate: Type.Optional(Text(32, 'The plate read by a camera')),
  },
  { additionalProperties: false, description: 'Exactly one of cardCode or licensePlate' },
);
export type ScanBody = Static<typeof ScanBody>;

export const SCAN_REFUSALS = ['unknown', 'cancelled', 'expired', 'not-yet-valid'] as const;
export type ScanRefusal = (typeof SCAN_REFUSALS)[number];

export const ScanResult = Type.Object({
  granted: Type.Boolean(),
  inviteId: Type.Optional(Type.String()),
  reason: Type.Optional(Type.Enum([...SCAN_REFUSALS], { description: 'Why entry was refused' })),
});
export type ScanResult = Static<typeof ScanResult>;
