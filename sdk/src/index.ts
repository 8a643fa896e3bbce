/** @booking/sdk: the client of the Room and Desk Booking API. See ../README.md. */
export { BookingClient, OPERATIONS, type BookingClientOptions } from './client.js';
export {
  Transport,
  MAX_RETRIES,
  retryAfterMs,
  type FetchLike,
  type TokenProvider,
  type TransportOptions,
  type CallOptions,
  type Answer,
} from './transport.js';
export { AppTokens, ActAsTokens, earlyMs, storedFrom, type AppCredentials, type StoredTokens, type AppTokensOptions } from './tokens.js';
export {
  BookingApiError,
  ValidationError,
  AuthError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  ComeBackLaterError,
  RateLimitedError,
  UnavailableError,
  ServerError,
  ClientError,
  NetworkError,
  kindOf,
  type ErrorKind,
} from './errors.js';
export {
  createMeetingSafely,
  dedupeOccurrences,
  reReadThen,
  checkInOpensAt,
  findCreated,
  matchesRequest,
  mayHaveBooked,
  type CreateSafelyOptions,
} from './helpers.js';
export {
  WebhookReceiver,
  MemoryDedupeStore,
  verifyWebhook,
  signDelivery,
  nodeWebhookHandler,
  expressWebhookMiddleware,
  fastifyWebhookHandler,
  fastifyWebhookPlugin,
  readRawBody,
  DEFAULT_TOLERANCE_MS,
  type DedupeStore,
  type DeliveryContext,
  type ReceiveResult,
  type Verification,
  type WebhookReceiverOptions,
} from './webhooks.js';
export { SandboxClock } from './sandbox.js';
export type * from './types.js';
