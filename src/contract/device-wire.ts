/**
 * The messages between the service and a building gateway (docs/devices.md): JSON
 * over MQTT. A command carries a subject's whole credential set on one device, with
 * a per-device sequence number; the device acknowledges each command.
 */
import { Type, type Static } from 'typebox';

const Subject = Type.Object({ kind: Type.Union([Type.Literal('member'), Type.Literal('visitor')]), id: Type.String() });
const Iso = Type.Union([Type.String(), Type.Null()]);

export const WireCommand = Type.Object({
  v: Type.Literal(1),
  deviceId: Type.String(),
  seq: Type.Integer({ minimum: 1, description: 'Per-device sequence number, strictly increasing; apply each once, in order' }),
  op: Type.Union([Type.Literal('upsert'), Type.Literal('remove')]),
  subject: Subject,
  stateHash: Type.String({ description: "Hash of the subject's state after this command; reported back in inventories ('' for remove)" }),
  cards: Type.Optional(Type.Array(Type.Object({ uid: Type.String(), cardNo: Type.String(), format: Type.String() }))),
  face: Type.Optional(
    Type.Union([Type.Object({ mime: Type.String(), sha256: Type.String(), data: Type.String({ description: 'base64' }) }), Type.Null()]),
  ),
  qrCode: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  plates: Type.Optional(Type.Array(Type.String())),
  validFrom: Type.Optional(Iso),
  validUntil: Type.Optional(Iso),
});
export type WireCommand = Static<typeof WireCommand>;

export const FAILURE_KINDS = ['offline', 'temporary', 'bad-input'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export const WireAck = Type.Object({
  v: Type.Literal(1),
  deviceId: Type.String(),
  seq: Type.Integer(),
  ok: Type.Boolean(),
  error: Type.Optional(
    Type.Object({
      kind: Type.Union([Type.Literal('offline'), Type.Literal('temporary'), Type.Literal('bad-input')]),
      message: Type.String(),
    }),
  ),
});
export type WireAck = Static<typeof WireAck>;

/** `{prefix}/devices/{deviceId}/events`: an access event at the device (granted or refused), gateway → service. */
export const WireAccessEvent = Type.Object({
  v: Type.Literal(1),
  deviceId: Type.String(),
  eventId: Type.String({ description: "The device's own id of the event: a resend carries the same and is recorded once" }),
  at: Type.String({ description: "The device's time of the event (ISO 8601 instant)" }),
  granted: Type.Boolean(),
  credentialKind: Type.Enum(['card', 'face', 'qr', 'plate', 'pin', 'fingerprint', 'other']),
  subject: Type.Optional(Subject),
  cardNo: Type.Optional(
    Type.String({ description: "The card number (or QR code) read, in the device's card format, when no subject is named" }),
  ),
});
export type WireAccessEvent = Static<typeof WireAccessEvent>;

export const WireStatus = Type.Object({
  v: Type.Literal(1),
  online: Type.Boolean(),
  bootId: Type.Optional(
    Type.String({
      description: 'Gateway status only: this run of the gateway, new at every start; a new one makes the service ask for every inventory',
    }),
  ),
});
export type WireStatus = Static<typeof WireStatus>;

/** `{prefix}/gateway/sync`: the service asks for inventories. */
export const WireSync = Type.Object({
  v: Type.Literal(1),
  deviceIds: Type.Optional(
    Type.Array(Type.String(), { description: 'Devices to answer for, each with an inventory even when it holds nothing' }),
  ),
});
export type WireSync = Static<typeof WireSync>;

export const WireInventory = Type.Object({
  v: Type.Literal(1),
  deviceId: Type.String(),
  lastSeq: Type.Integer({ minimum: 0 }),
  holds: Type.Array(Type.Object({ subject: Subject, stateHash: Type.String() })),
});
export type WireInventory = Static<typeof WireInventory>;
