/**
 * Builders of the response envelope of the public API and the ops API:
 * `{code, success, message, data, meta?}`; errors `{code, success:false, message}`.
 * The schemas of these bodies are in src/contract/envelope.ts.
 */
import type { ErrorEnvelope, PageMeta } from '../../contract/envelope.js';

export type { PageMeta };

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

export type ErrorBody = ErrorEnvelope;

export function errorBody(code: string, message: string | string[], data?: unknown): ErrorBody {
  return data === undefined ? { code, success: false, message } : { code, success: false, message, data };
}
