/** Schemas of the partner member surface: PUT/GET/DELETE /partner/members/{externalUserId}. */
import { Type, type Static } from 'typebox';
import { MemberCard } from './member-credentials.js';
import { ObjectId } from './common.js';

export const MemberParams = Type.Object({
  externalUserId: Type.String({
    minLength: 1,
    maxLength: 128,
    description: 'Your own identifier for the person (opaque to us, at most 128 characters)',
  }),
});
export type MemberParams = Static<typeof MemberParams>;

export const UnitBinding = Type.Object(
  {
    addressNo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'House number of a unit the project already has' })),
    zoneId: Type.Optional(ObjectId('Zone of the unit; needed when the house number exists in several zones')),
    unitId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The unit identifier, another way to name the unit' })),
  },
  { additionalProperties: false, description: 'The unit the member lives in: addressNo (or unitId), optionally narrowed by zoneId' },
);
export type UnitBinding = Static<typeof UnitBinding>;

export const PutMemberBody = Type.Object(
  {
    firstName: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'Given name; needed when the call creates the member, otherwise left as is when omitted',
      }),
    ),
    lastName: Type.Optional(
      Type.String({ maxLength: 200, description: 'Family name, may be empty; needed when the call creates the member' }),
    ),
    profileName: Type.Optional(Type.String({ maxLength: 200, description: 'Display name' })),
    email: Type.Optional(
      Type.String({ format: 'email', maxLength: 254, description: 'Unique across all users; matched case-insensitively' }),
    ),
    phone: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 32,
        description: 'Unique across all users; spaces, dashes, dots and parentheses are dropped and Thai numbers get +66',
      }),
    ),
    employeeId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Staff console employee id, unique within the project' }),
    ),
    unit: Type.Optional(Type.Union([UnitBinding, Type.Null()], { description: 'Unit to bind the member to; null removes the binding' })),
  },
  { additionalProperties: false, description: 'Fields of the member to set; an omitted field is left untouched' },
);
export type PutMemberBody = Static<typeof PutMemberBody>;

export const UnitView = Type.Object(
  {
    roomId: Type.String({ description: 'The room that is the unit' }),
    addressNo: Type.String(),
    groupId: Type.String({ description: "Identifies the unit's residents as one group: its unitId, else the room id" }),
    role: Type.Union([Type.Literal('owner'), Type.Literal('participant')], {
      description: 'owner for the first resident bound, participant for later ones',
    }),
  },
  { description: 'The unit the member is bound to' },
);
export type UnitView = Static<typeof UnitView>;

export const PutMemberResult = Type.Object({
  memberId: Type.String({ description: 'Stable id of the member; it survives offboarding and re-activation' }),
  externalUserId: Type.String(),
  projectId: Type.String(),
  created: Type.Boolean({ description: 'true when this call created the member' }),
  matchedBy: Type.Enum(['link', 'email', 'phone', 'employeeId', 'provisioned'], {
    description: 'How the member was found: the existing link, an identity key, or newly provisioned',
  }),
  accessGroupIds: Type.Array(Type.String(), { description: 'Access groups held after the call; empty when the app grants none' }),
  employeeId: Type.Union([Type.String(), Type.Null()]),
  unit: Type.Union([UnitView, Type.Null()]),
});
export type PutMemberResult = Static<typeof PutMemberResult>;

/** A card as partner responses show it (see member-credentials.ts). */
export const CardView = MemberCard;
export type CardView = MemberCard;

const Nullable = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

export const PartnerMember = Type.Object({
  memberId: Type.String(),
  externalUserId: Type.String(),
  projectId: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('deactivated')]),
  source: Type.String({ description: 'partner, federated (created through act_as) or the admin origin' }),
  userType: Type.String({ description: 'member or visitor' }),
  accessGroupIds: Type.Array(Type.String()),
  employeeId: Nullable(),
  unit: Type.Union([UnitView, Type.Null()]),
  profile: Type.Object({
    firstName: Nullable(),
    lastName: Nullable(),
    profileName: Nullable(),
    email: Nullable(),
    phone: Nullable('Normalized phone number'),
  }),
  credentials: Type.Object({
    cards: Type.Array(CardView, { description: 'Active cards' }),
    face: Type.Object({ present: Type.Boolean({ description: 'Whether a face photo is stored (never returned)' }) }),
  }),
});
export type PartnerMember = Static<typeof PartnerMember>;
