/** Schemas of the ops device surface: what a device holds and its sync state. */
import { Type, type Static } from 'typebox';
import { DateTime } from './common.js';

export const DeviceEnrollment = Type.Object({
  memberId: Type.String(),
  cardNos: Type.Array(Type.String({ pattern: '^[0-9]{10}$' }), {
    description: 'Cards the device holds for the member, 10-digit decimal-reversed',
  }),
  face: Type.Boolean({ description: 'Whether the device holds a face photo of the member (the bytes are never returned)' }),
  faceRefused: Type.Union([Type.String(), Type.Null()], {
    description:
      "Why the member's face is not on this device although one is stored (no picture within the device's limits could be made from it); null otherwise. The member's cards are on the device all the same",
  }),
  validFrom: Type.Union([DateTime(), Type.Null()], {
    description: "Start of the member's validity window on this device (a booking's door access); null: no limit",
  }),
  validUntil: Type.Union([DateTime(), Type.Null()], { description: 'End of that window; null: no limit' }),
});

export const DeviceVisitorPass = Type.Object({
  inviteId: Type.String(),
  licensePlate: Type.Boolean({ description: "Whether the device holds the visitor's plate" }),
  qrCode: Type.Boolean({ description: "Whether the device holds the visitor's QR code (the code is never returned here)" }),
  validFrom: Type.Union([DateTime(), Type.Null()]),
  validUntil: Type.Union([DateTime(), Type.Null()]),
});

export const DeviceProblem = Type.Object({
  subject: Type.Object({ kind: Type.String(), id: Type.String() }),
  message: Type.String({ description: 'Why the device refused the change (bad input; not retried)' }),
  at: DateTime(),
});

export const DeviceView = Type.Object({
  _id: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  online: Type.Boolean({ description: 'Whether the device is reachable' }),
  pendingChanges: Type.Integer({ minimum: 0, description: 'Changes not yet acknowledged by the device; 0 once it holds everything' }),
  lastSyncedAt: Type.Union([DateTime(), Type.Null()], { description: "The device's last acknowledgement; null before the first" }),
  enrollments: Type.Array(DeviceEnrollment, { description: 'What the device holds, as it acknowledged it (not the desired state)' }),
  // Additions to the contract:
  accessGroupId: Type.String(),
  location: Type.Union([Type.Object({ en: Type.String(), th: Type.String() }), Type.Null()]),
  cardFormat: Type.String({ description: "The card format the device's readers are sent" }),
  transport: Type.String({
    description: 'How the service reaches the device: sandbox or mqtt (the building-wide default), isapi or zkteco-push (its own)',
  }),
  connection: Type.Union(
    [
      Type.Object({
        kind: Type.Union([Type.Literal('isapi'), Type.Literal('zkteco-push')]),
        baseUrl: Type.Union([Type.String(), Type.Null()], { description: 'isapi: the terminal address the service calls' }),
        username: Type.Union([Type.String(), Type.Null()]),
        serialNumber: Type.Union([Type.String(), Type.Null()], { description: 'zkteco-push: the serial number it polls with' }),
        hasSecret: Type.Boolean({ description: 'Whether a password (isapi) or comm key (zkteco-push) is stored; it is never returned' }),
        lastSeenAt: Type.Union([DateTime(), Type.Null()], { description: 'zkteco-push: when the device last polled the service' }),
      }),
      Type.Null(),
    ],
    { description: "The device's own transport from the site document; null for the building-wide one" },
  ),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last delivery attempt stopped (offline, no answer), if it did',
  }),
  visitorPasses: Type.Array(DeviceVisitorPass, { description: 'Visitor invites the device holds' }),
  problems: Type.Array(DeviceProblem, { description: 'Changes the device refused as bad input, newest first (at most 20)' }),
});
export type DeviceView = Static<typeof DeviceView>;

export const DeviceReachability = Type.Object({ online: Type.Boolean() });
