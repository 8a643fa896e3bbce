/**
 * How large a request body each kind of route accepts: the one place these sizes
 * live. A body is read, parsed and walked (nul-guard.ts) before any route runs, so
 * a route accepts no more than its purpose needs; anything larger is 413 KS001
 * before parsing (a declared Content-Length over the limit is refused unread).
 */
import type { Config } from '../config.js';

export type BodyPurpose = 'token' | 'json' | 'calendar' | 'upload' | 'apply';

/** The token endpoint and the console sign-in: a grant or a token, never more than a few KB. */
export const TOKEN_BODY_LIMIT_BYTES = 8 * 1024;
/** Every other JSON or form route (bookings, members, ops actions): the default. */
export const JSON_BODY_LIMIT_BYTES = 256 * 1024;
/** One iTIP message (text/calendar; invitations may carry inline attachments). */
export const CALENDAR_BODY_LIMIT_BYTES = 1024 * 1024;
/** How deep a request body may nest (objects and arrays); no schema of the API needs more than a handful. */
export const MAX_BODY_DEPTH = 32;

/**
 * The limit for `purpose`: `upload` (a member's credentials with a face photo) is
 * BODY_LIMIT_BYTES, `apply` (a site document) APPLY_BODY_LIMIT_BYTES.
 */
export function bodyLimit(purpose: BodyPurpose, config: Pick<Config, 'bodyLimitBytes' | 'applyBodyLimitBytes'>): number {
  switch (purpose) {
    case 'token':
      return TOKEN_BODY_LIMIT_BYTES;
    case 'json':
      return JSON_BODY_LIMIT_BYTES;
    case 'calendar':
      return CALENDAR_BODY_LIMIT_BYTES;
    case 'upload':
      return config.bodyLimitBytes;
    case 'apply':
      return config.applyBodyLimitBytes;
  }
}
