/**
 * The response envelope of the public API and the ops API:
 * `{code, success, message, data, meta?}`; errors `{code, success:false, message}`.
 */
import { Type, type TSchema } from 'typebox';

export interface PageMeta {
  limit: number;
  offset: number;
  total: number;
}

export interface OkBody<T> {
  code: 'KS000';
  success: true;
  message: string;
  data: T;
}

export function ok<T>(data: T): OkBody<T> {
  return { code: 'KS000', success: true, message: 'Success', data };
}

export function okPage<T>(data: T[], meta: PageMeta): OkBody<T[]> & { meta: PageMeta } {
  return { code: 'KS000', success: true, message: 'Success', data, meta };
}

/** A success envelope around items that are already JSON texts (sent as is, not re-serialized). */
export function okJsonArray(items: readonly string[]): string {
  return `{"code":"KS000","success":true,"message":"Success","data":[${items.join(',')}]}`;
}

export interface ErrorBody {
  code: string;
  success: false;
  message: string | string[];
  data?: unknown;
}

export function errorBody(code: string, message: string | string[], data?: unknown): ErrorBody {
  return data === undefined ? { code, success: false, message } : { code, success: false, message, data };
}

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
