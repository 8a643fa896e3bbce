/** Schemas of a partner member's credentials: access cards and the face photo. */
import { Type, type Static } from 'typebox';

/** Accepted `cardCodeFormat` values (kept in step with the card codec; listed in docs/partner-members.md). */
export const CARD_FORMAT_VALUES = [
  'decimal-reversed',
  'decimal',
  'hex',
  'hex-reversed',
  'decimal-3byte',
  'decimal-3byte-reversed',
  'facility-card',
] as const;

export const CardInput = Type.Object(
  {
    cardNo: Type.String({ minLength: 1, maxLength: 32, description: 'The number as printed or read, in cardCodeFormat' }),
    cardCodeFormat: Type.Optional(
      Type.String({
        description: `How cardNo is written (default decimal-reversed, the 10-digit number reader terminals show). One of: ${CARD_FORMAT_VALUES.join(', ')}. See docs/partner-members.md.`,
      }),
    ),
    label: Type.Optional(Type.String({ maxLength: 128, description: 'Default: built from the card UID' })),
  },
  { additionalProperties: true },
);

export const CredentialsBody = Type.Object(
  {
    cards: Type.Optional(
      Type.Array(CardInput, {
        maxItems: 20,
        description: 'The exact physical cards to hold; [] revokes them all; omitted leaves cards as they are',
      }),
    ),
    face: Type.Optional(
      Type.Union([Type.Null(), Type.String()], {
        description: 'JPEG or PNG, base64 or a data: URI, at most 10 MB decoded; null erases it; omitted leaves it',
      }),
    ),
    faceConsentAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the person consented; required with a face' })),
  },
  { additionalProperties: true },
);
export type CredentialsBody = Static<typeof CredentialsBody>;

export const MemberCard = Type.Object({
  cardId: Type.String(),
  cardNo: Type.String({ description: 'Always decimal-reversed (8H-10D-R), whatever format was sent' }),
  label: Type.String(),
  type: Type.String({ description: 'real or virtual' }),
  generated: Type.Boolean({ description: 'true for the virtual card minted for a member with a face and no physical card' }),
});
export type MemberCard = Static<typeof MemberCard>;

export const CredentialsResult = Type.Object({
  memberId: Type.String(),
  cards: Type.Array(MemberCard),
  face: Type.Object({ present: Type.Boolean() }),
});
export type CredentialsResult = Static<typeof CredentialsResult>;
