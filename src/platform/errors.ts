/**
 * The service's error type. Every failure that reaches a client is a ServiceError
 * (or is turned into one by the HTTP error mapping), carrying the HTTP status and
 * the spec's code. `message` is an array only for KS001 validation errors.
 */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string | string[],
    readonly data?: unknown,
    /** Seconds a client should wait before retrying (the `Retry-After` header); 503 and 429 get a default when unset. */
    readonly retryAfterSeconds?: number,
  ) {
    super(Array.isArray(detail) ? detail.join('; ') : detail);
    this.name = 'ServiceError';
  }
}

/** The message of a 503 KS004 when a dependency (the database) is unreachable. */
export const SERVICE_UNAVAILABLE = 'The service is temporarily unavailable; retry after the Retry-After seconds';

/** Retry-After (seconds) of a 503 that names none: about how long a database failover or restart takes. */
export const DEFAULT_RETRY_AFTER_503_S = 5;
/** Retry-After (seconds) of a 429 that names none (e.g. MEETING_039, a PIN locked until the organizer sets a new one). */
export const DEFAULT_RETRY_AFTER_429_S = 60;

export const errors = {
  validation: (messages: string[]) => new ServiceError(400, 'KS001', messages),
  unauthorized: (message = 'Access token is missing, expired or revoked') => new ServiceError(401, 'KS002', message),
  forbidden: (message = 'You do not have access to this resource') => new ServiceError(403, 'KS003', message),
  notFound: (message = 'Resource not found') => new ServiceError(404, 'KS005', message),
  conflict: (message: string, data?: unknown, status: 409 | 410 = 409) => new ServiceError(status, 'KS006', message, data),
  /** 409 KS006 of the partner routes; `data` carries `conflictKey` and, when known, `linkedExternalUserId`. */
  partnerConflict: (message: string, data: { conflictKey: string; linkedExternalUserId?: string }) =>
    new ServiceError(409, 'KS006', message, data),
  slotConflict: (message: string) => new ServiceError(409, 'KS012', message),
  tooManyRequests: (message = 'Too many requests', retryAfterSeconds?: number) =>
    new ServiceError(429, 'KS036', message, undefined, retryAfterSeconds),
  internal: (message = 'Internal server error') => new ServiceError(500, 'KS004', message),
  upstreamUnavailable: (message = SERVICE_UNAVAILABLE) => new ServiceError(503, 'KS004', message),
  /** The token could not be checked (the token store is unreachable): it was not rejected. */
  authUnavailable: (
    message = 'The service is temporarily unavailable: your token could not be checked (it was not rejected); retry after the Retry-After seconds and keep your tokens',
  ) => new ServiceError(503, 'KS234', message),
  actAsForbidden: (message: string) => new ServiceError(403, 'KS221', message),
  subjectUnresolved: (message: string) => new ServiceError(401, 'KS223', message),
};
