/**
 * The port every connected calendar provider is reached through (Microsoft Graph,
 * Google Calendar). An adapter (connectors/microsoft.ts, connectors/google.ts) turns
 * these calls into the provider's documented requests and its answers into the
 * shapes below; the sync engine (connected-sync.ts) decides what to do with them and
 * never sees a provider's JSON.
 *
 * Every call may throw:
 * - `ConnectorUnavailableError`: the provider could not be reached, timed out,
 *   answered 5xx or 429 (`retryAfterMs` when it said how long to wait): tried again
 *   later with backoff.
 * - `ConnectorRefusedError`: the provider refused the request (4xx other than the
 *   cases below): recorded as the room's last error, tried again later.
 * - `CursorExpiredError` (changes only): the delta link / sync token is no longer
 *   valid (Graph `syncStateNotFound` / 410, Google 410 Gone): the next read is a full resync.
 * - `NotFoundError` (renew, update, cancel, respond): the subscription or event is gone.
 */

export type ConnectorProvider = 'microsoft' | 'google';

/** An event as a room's calendar holds it, in the provider's own words mapped to ours. */
export interface RemoteEvent {
  /** The provider's id of the event (to update, cancel or answer it). */
  id: string;
  /** A stable key: Graph's `iCalUId` (distinct per occurrence), Google's event `id` (an instance's own id). */
  uid: string;
  /** Graph's `changeKey`, Google's `etag`. */
  etag: string | null;
  /** Deleted, or cancelled (Graph `@removed` / `isCancelled`, Google `status: cancelled`). The fields below may then be empty. */
  removed: boolean;
  /** UTC epoch ms. For an all-day event: the start of its first local day (in `timeZone`, else UTC). */
  start: number;
  end: number;
  allDay: boolean;
  /** The IANA zone the event was written in, when the provider says one. */
  timeZone: string | null;
  title: string;
  /** Plain text ('' when none). */
  description: string;
  organizer: { email: string; name: string | null } | null;
  /** Everyone invited (the room included), emails lower-cased. */
  attendees: RemoteAttendee[];
  /** Google's `sequence`; 0 for Graph (it has none). */
  sequence: number;
  /** Last modified (Graph `lastModifiedDateTime`, Google `updated`), epoch ms. */
  updatedAt: number;
  /** The booking id the service stored on an event it wrote (Graph single-value extended property, Google `extendedProperties.private.bookingId`); null otherwise. */
  bookingId: string | null;
}

export interface RemoteAttendee {
  email: string;
  name: string | null;
  /** The room itself, another room or equipment. */
  resource: boolean;
  response: 'accepted' | 'declined' | 'tentative' | 'none';
}

/** An event known only as gone (a delta's `@removed`, a link a full read no longer finds): empty but for its ids. */
export function removedEvent(
  p: Pick<RemoteEvent, 'id' | 'uid'> & Partial<Pick<RemoteEvent, 'etag' | 'updatedAt' | 'bookingId'>>,
): RemoteEvent {
  return {
    etag: null,
    updatedAt: 0,
    bookingId: null,
    ...p,
    removed: true,
    start: 0,
    end: 0,
    allDay: false,
    timeZone: null,
    title: '',
    description: '',
    organizer: null,
    attendees: [],
    sequence: 0,
  };
}

/** One read of a room calendar's changes (every page followed). */
export interface ChangePage {
  /** Changed events since the cursor (every event in the window on a full read). */
  events: RemoteEvent[];
  /** The new cursor: Graph's delta link, Google's sync token. */
  cursor: string;
  /** True when this was a full read (no cursor): events of the window not in it are gone. */
  full: boolean;
}

/** A subscription (Graph) or channel (Google) on one room calendar. */
export interface Subscription {
  id: string;
  /** Google's channel `resourceId` (needed to stop it); null for Graph. */
  resourceId: string | null;
  /** Real time (epoch ms) it expires. */
  expiresAt: number;
}

/** A booking as the service writes it to the room's calendar (no PIN, no token). */
export interface OutboundEvent {
  /** Idempotency key of the first write: Graph `transactionId`, Google's client-chosen event id (derived). */
  key: string;
  bookingId: string;
  title: string;
  /** Plain text. */
  description: string;
  start: number;
  end: number;
  /** The property's IANA zone (how the times are shown). */
  timeZone: string;
  organizer: { email: string | null; name: string };
  /** An unpaid booking holds the room tentatively. */
  tentative: boolean;
}

export interface CalendarRef {
  /** The room's mailbox (Microsoft) or resource calendar id (Google). */
  calendarId: string;
}

export interface CalendarConnector {
  readonly provider: ConnectorProvider;
  /** How long a new subscription or channel may live (Graph events: under 7 days). */
  readonly maxSubscriptionMs: number;
  /** Graph: a change-notification subscription on the mailbox's events (Graph validates the notification URL before answering). Google: an `events.watch` channel. */
  subscribe(
    cal: CalendarRef,
    p: { notificationUrl: string; clientState: string; expiresAt: number; channelId: string },
  ): Promise<Subscription>;
  /** Graph: PATCH the expiry. Google: a new channel (`channelId`), then the old one stopped. Throws NotFoundError when it is gone. */
  renew(
    cal: CalendarRef,
    sub: Subscription,
    p: { notificationUrl: string; clientState: string; expiresAt: number; channelId: string },
  ): Promise<Subscription>;
  /** Deletes the subscription / stops the channel; gone already is fine. */
  unsubscribe(cal: CalendarRef, sub: Subscription): Promise<void>;
  /**
   * The changes since `cursor` (every page), or with a null cursor every event of
   * `window` (a full read). Graph: delta on the calendar view (`window` fixed at the
   * full read; the delta link keeps it). Google: `events.list` with `singleEvents`,
   * `syncToken` or the window.
   */
  changes(cal: CalendarRef, cursor: string | null, window: { start: number; end: number }): Promise<ChangePage>;
  /** Creates the booking's event on the room's calendar (organized by the room; the booking's organizer invited). Repeating `key` does not duplicate it. */
  createEvent(cal: CalendarRef, e: OutboundEvent): Promise<{ id: string; uid: string; etag: string | null }>;
  /** Rewrites title, description, times and show-as of an event the service wrote. */
  updateEvent(cal: CalendarRef, id: string, e: OutboundEvent): Promise<{ etag: string | null }>;
  /** Cancels (Graph `cancel` with the comment) or deletes (Google, `sendUpdates=all`) an event the service wrote; gone already is fine. */
  cancelEvent(cal: CalendarRef, id: string, comment: string | null): Promise<void>;
  /** The room's answer to an invitation on its copy: Graph `accept`/`decline` with the comment; Google the room attendee's `responseStatus` and `comment`. */
  respond(cal: CalendarRef, id: string, answer: { accepted: boolean; comment: string }): Promise<void>;
}

/** The connection's credentials and addresses, secrets opened (the registry builds connectors from it). */
export type ConnectionAccount =
  | {
      id: string;
      provider: 'microsoft';
      tenantId: string;
      clientId: string;
      clientSecret: string;
      apiBaseUrl: string | null;
      tokenUrl: string | null;
    }
  | {
      id: string;
      provider: 'google';
      serviceAccountEmail: string;
      privateKey: string;
      subject: string;
      apiBaseUrl: string | null;
      tokenUrl: string | null;
    };

/** What an adapter needs besides the account: real time (token expiry) and the request timeout. */
export interface ConnectorDeps {
  now: () => number;
  timeoutMs: number;
}

export class ConnectorUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'ConnectorUnavailableError';
  }
}

export class ConnectorRefusedError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ConnectorRefusedError';
  }
}

export class CursorExpiredError extends Error {
  constructor(message = 'The sync cursor is no longer valid') {
    super(message);
    this.name = 'CursorExpiredError';
  }
}

export class NotFoundError extends Error {
  constructor(message = 'Not found at the provider') {
    super(message);
    this.name = 'NotFoundError';
  }
}
