/**
 * Typed errors. Every failure of a call is a BookingApiError carrying the HTTP
 * status (0 when no answer came), the `code` of the error envelope and its
 * messages; `kind` says how a caller should react. Branch on `status` + `code`
 * (or `kind`), never on message text.
 */

export type ErrorKind =
  | 'validation' // 400 KS001: fix the request
  | 'auth' // 401: token missing/expired/revoked (KS002) or subject unresolved (KS223)
  | 'forbidden' // 403: KS003, KS221, MEETING_049
  | 'notFound' // 404
  | 'conflict' // 409/410/422 and KS072: the state or the slot does not allow it; re-read
  | 'comeBackLater' // MEETING_040 / MEETING_041: check-in not open yet
  | 'rateLimited' // 429
  | 'unavailable' // 503 (KS234: the token was not checked, it was not rejected)
  | 'server' // other 5xx
  | 'network' // no answer: connection failure or timeout
  | 'client'; // any other 4xx

export interface ErrorDetails {
  status: number;
  code: string;
  messages: string[];
  method: string;
  path: string;
  data?: unknown;
  /** Retry-After of the answer, in milliseconds. */
  retryAfterMs?: number;
  /** Attempts made (1 + retries). */
  attempts?: number;
  cause?: unknown;
}

export class BookingApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly messages: string[];
  readonly kind: ErrorKind;
  readonly method: string;
  readonly path: string;
  readonly data: unknown;
  readonly retryAfterMs: number | undefined;
  attempts: number;
  /** An earlier attempt of this call failed in a way that may have acted (no answer, 5xx). */
  afterAmbiguousAttempt = false;

  constructor(d: ErrorDetails, kind: ErrorKind = kindOf(d.status, d.code)) {
    super(
      `${d.method} ${d.path}: ${d.status || 'no answer'} ${d.code}${d.messages.length ? ` — ${d.messages.join('; ')}` : ''}`,
      d.cause === undefined ? undefined : { cause: d.cause },
    );
    this.name = new.target.name;
    this.status = d.status;
    this.code = d.code;
    this.messages = d.messages;
    this.kind = kind;
    this.method = d.method;
    this.path = d.path;
    this.data = d.data;
    this.retryAfterMs = d.retryAfterMs;
    this.attempts = d.attempts ?? 1;
  }

  /** Whether the specification allows retrying this failure (network, 5xx, 429). */
  get retryable(): boolean {
    return this.status === 0 || this.status >= 500 || this.status === 429;
  }
}

export class ValidationError extends BookingApiError {}
export class AuthError extends BookingApiError {}
export class ForbiddenError extends BookingApiError {}
export class NotFoundError extends BookingApiError {}
export class ConflictError extends BookingApiError {}
export class RateLimitedError extends BookingApiError {}
export class UnavailableError extends BookingApiError {}
export class ServerError extends BookingApiError {}
export class ClientError extends BookingApiError {}

/** No HTTP answer: the connection failed or the request timed out. The server may or may not have acted. */
export class NetworkError extends BookingApiError {
  readonly timedOut: boolean;
  constructor(d: Omit<ErrorDetails, 'status' | 'code' | 'messages'> & { timedOut: boolean; reason: string }) {
    super({ ...d, status: 0, code: d.timedOut ? 'TIMEOUT' : 'NETWORK', messages: [d.reason] }, 'network');
    this.timedOut = d.timedOut;
  }
}

/**
 * MEETING_040 (check-in too early) and MEETING_041 (wrong day): not a failure,
 * come back later. `retryAt` is when, when the answer tells it (the minutes
 * until the window opens, counted on the client's clock from the answer).
 */
export class ComeBackLaterError extends BookingApiError {
  /** Minutes until the check-in window opens (MEETING_040), when the answer says. */
  readonly minutesUntilOpen: number | undefined;
  /** When to come back: now + minutesUntilOpen (MEETING_040), when derivable. */
  readonly retryAt: Date | undefined;
  /** The booking's property-local day (YYYY-MM-DD) for MEETING_041, when the answer says. */
  readonly bookingDate: string | undefined;

  constructor(d: ErrorDetails, nowMs: number) {
    super(d, 'comeBackLater');
    const text = d.messages.join(' ');
    const minutes = d.code === 'MEETING_040' ? /(\d+)\s*minute/.exec(text) : null;
    this.minutesUntilOpen = minutes ? Number(minutes[1]) : undefined;
    this.retryAt = this.minutesUntilOpen !== undefined ? new Date(nowMs + this.minutesUntilOpen * 60_000) : undefined;
    const day = d.code === 'MEETING_041' ? /(\d{4}-\d{2}-\d{2})/.exec(text) : null;
    this.bookingDate = day ? day[1] : undefined;
  }
}

export function kindOf(status: number, code: string): ErrorKind {
  if (status === 0) return 'network';
  if (code === 'MEETING_040' || code === 'MEETING_041') return 'comeBackLater';
  if (code === 'KS072') return 'conflict';
  if (status === 400 || code === 'KS001') return 'validation';
  if (status === 401) return 'auth';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'notFound';
  if (status === 429) return 'rateLimited';
  if (status === 503) return 'unavailable';
  if (status >= 500) return 'server';
  if (status === 409 || status === 410 || status === 422 || code === 'KS072') return 'conflict';
  return 'client';
}

/** Builds the typed error of an HTTP answer. */
export function errorFromAnswer(d: ErrorDetails, nowMs: number): BookingApiError {
  const kind = kindOf(d.status, d.code);
  switch (kind) {
    case 'comeBackLater':
      return new ComeBackLaterError(d, nowMs);
    case 'validation':
      return new ValidationError(d, kind);
    case 'auth':
      return new AuthError(d, kind);
    case 'forbidden':
      return new ForbiddenError(d, kind);
    case 'notFound':
      return new NotFoundError(d, kind);
    case 'conflict':
      return new ConflictError(d, kind);
    case 'rateLimited':
      return new RateLimitedError(d, kind);
    case 'unavailable':
      return new UnavailableError(d, kind);
    case 'server':
      return new ServerError(d, kind);
    default:
      return new ClientError(d, kind);
  }
}
