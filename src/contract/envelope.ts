/**
 * Schemas of the response envelope of the public API and the ops API:
 * `{code, success, message, data, meta?}`; errors `{code, success:false, message}`.
 */
import { Type, type Static, type TSchema } from 'typebox';

/** Schema of a success envelope around `data`, for route response schemas and OpenAPI. */
export function Envelope<T extends TSchema>(data: T, description?: string) {
  return Type.Object(
    {
      code: Type.Literal('KS000'),
      success: Type.Literal(true),
      message: Type.String(),
      data,
    },
    description ? { description } : {},
  );
}

export const PageMetaSchema = Type.Object({
  limit: Type.Integer(),
  offset: Type.Integer(),
  total: Type.Integer(),
});
export type PageMeta = Static<typeof PageMetaSchema>;

export function PagedEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    code: Type.Literal('KS000'),
    success: Type.Literal(true),
    message: Type.String(),
    data: Type.Array(item),
    meta: PageMetaSchema,
  });
}

export const ErrorEnvelope = Type.Object(
  {
    code: Type.String({ description: 'Error code such as KS001 or MEETING_040; branch on HTTP status plus code' }),
    success: Type.Literal(false),
    message: Type.Union([Type.String(), Type.Array(Type.String())], {
      description: 'Human-readable text; an array with one entry per violated constraint on KS001',
    }),
    data: Type.Optional(Type.Unknown()),
  },
  { description: 'Error' },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;
