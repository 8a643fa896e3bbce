/**
 * Microsoft Graph behind the CalendarConnector port: a room mailbox's calendar read
 * through delta on its calendar view, change-notification subscriptions on its
 * events, and the service's own events written with an extended property carrying
 * the booking id.
 *
 * Plain `fetch`, not `@microsoft/microsoft-graph-client`: that library (3.0.7) only
 * recognises `https://` URLs (an `http://` stand-in gets no bearer token and its
 * full delta links are not parsed), and its default retry middleware sleeps on
 * 429/503 inside the call, where the job runner should back off instead.
 */

import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import {
  ConnectorRefusedError,
  ConnectorUnavailableError,
  CursorExpiredError,
  NotFoundError,
  removedEvent,
  type CalendarConnector,
  type CalendarRef,
  type ChangePage,
  type ConnectionAccount,
  type ConnectorDeps,
  type OutboundEvent,
  type RemoteAttendee,
  type RemoteEvent,
  type Subscription,
} from '../connector.js';

export type MicrosoftAccount = Extract<ConnectionAccount, { provider: 'microsoft' }>;

const GRAPH_BASE = 'https://graph.microsoft.com';
const LOGIN_BASE = 'https://login.microsoftonline.com';
const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';

/** The single-value extended property the service stores the booking id in (a fixed GUID of our own). */
export const BOOKING_ID_PROPERTY = 'String {8b0d6a52-3f4e-4c1b-9a7d-2e61c5f0b913} Name bookingId';

/** Subscriptions asked for 4,230 minutes (70.5 h), well under Graph's 10,080-minute limit for Outlook events. */
export const GRAPH_SUBSCRIPTION_MS = 4230 * 60_000;

/** A cached token is used until this long before it expires. */
const TOKEN_MARGIN_MS = 5 * 60_000;
/** A bound on delta pages per read (50 events each). */
const MAX_DELTA_PAGES = 400;
/** Event reads in flight at once (Graph allows 4 concurrent requests per mailbox and app). */
const READ_CONCURRENCY = 3;

interface GraphResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

interface SendOptions {
  body?: unknown;
  prefer?: string[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Retry-After as seconds or an HTTP date, in ms from now. */
function retryAfterMs(headers: Headers, now: number): number | null {
  const raw = headers.get('retry-after');
  if (!raw) return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : null;
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

function graphError(body: unknown): { code: string; message: string } {
  const err = isObject(body) && isObject(body.error) ? body.error : null;
  return { code: str(err?.code) ?? 'unknown', message: str(err?.message) ?? '' };
}

/** A GUID-shaped id derived from the outbound event's key (Graph dedups POSTs by `transactionId`). */
export function transactionIdOf(key: string): string {
  const h = createHash('sha256').update(`booking-event:${key}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Graph's local date-time (no offset) for a UTC instant. */
function graphDateTime(ms: number): { dateTime: string; timeZone: string } {
  return { dateTime: new Date(ms).toISOString().slice(0, 23), timeZone: 'UTC' };
}

/** A Graph dateTimeTimeZone read back; we ask for UTC, anything else without an offset is read as UTC too. */
function parseGraphTime(v: unknown): number {
  if (!isObject(v)) return NaN;
  const dt = str(v.dateTime);
  if (!dt) return NaN;
  const hasOffset = /(Z|[+-]\d\d:\d\d)$/.test(dt);
  return Date.parse(hasOffset ? dt : `${dt.slice(0, 23)}Z`);
}

/** An all-day event's day (Graph gives its midnight, zone-less) as the start of that day in `zone`, else UTC. */
function allDayTime(v: unknown, zone: string | null): number {
  const dt = isObject(v) ? str(v.dateTime) : null;
  if (!dt || !zone) return parseGraphTime(v);
  const local = DateTime.fromISO(dt.slice(0, 10), { zone });
  return local.isValid ? local.toMillis() : parseGraphTime(v);
}

function ianaZoneOrNull(zone: string | null): string | null {
  if (!zone) return null;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    return null;
  }
}

function responseOf(v: unknown): RemoteAttendee['response'] {
  switch (v) {
    case 'accepted':
    case 'organizer':
      return 'accepted';
    case 'declined':
      return 'declined';
    case 'tentativelyAccepted':
      return 'tentative';
    default:
      return 'none';
  }
}

function emailOf(v: unknown): { email: string; name: string | null } | null {
  if (!isObject(v) || !isObject(v.emailAddress)) return null;
  const address = str(v.emailAddress.address);
  if (!address) return null;
  return { email: address.toLowerCase(), name: str(v.emailAddress.name) };
}

function attendeesOf(v: unknown): RemoteAttendee[] {
  if (!Array.isArray(v)) return [];
  const out: RemoteAttendee[] = [];
  for (const a of v) {
    const who = emailOf(a);
    if (!who || !isObject(a)) continue;
    const status = isObject(a.status) ? a.status.response : undefined;
    out.push({ ...who, resource: a.type === 'resource', response: responseOf(status) });
  }
  return out;
}

function bookingIdOf(v: unknown): string | null {
  if (!Array.isArray(v)) return null;
  const want = BOOKING_ID_PROPERTY.toLowerCase();
  for (const p of v) {
    if (isObject(p) && str(p.id)?.toLowerCase() === want) return str(p.value);
  }
  return null;
}

function stripHtml(html: string): string {
  return html
    .replace(/<(br|\/p|\/div)\s*\/?>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .trim();
}

function descriptionOf(body: unknown): string {
  if (!isObject(body)) return '';
  const content = str(body.content) ?? '';
  return body.contentType === 'html' ? stripHtml(content) : content;
}

/** A Graph event (or a delta item) in the port's words. */
export function toRemoteEvent(e: Json): RemoteEvent {
  const id = str(e.id) ?? '';
  const base = { id, uid: str(e.iCalUId) ?? id, etag: str(e.changeKey), sequence: 0 };
  const updated = Date.parse(str(e.lastModifiedDateTime) ?? '');
  if (e['@removed'] !== undefined) {
    return removedEvent({
      id: base.id,
      uid: base.uid,
      etag: base.etag,
      updatedAt: Number.isFinite(updated) ? updated : 0,
      bookingId: bookingIdOf(e.singleValueExtendedProperties),
    });
  }
  const allDay = e.isAllDay === true;
  const timeZone = ianaZoneOrNull(str(e.originalStartTimeZone));
  return {
    ...base,
    removed: e.isCancelled === true,
    start: allDay ? allDayTime(e.start, timeZone) : parseGraphTime(e.start),
    end: allDay ? allDayTime(e.end, timeZone) : parseGraphTime(e.end),
    allDay,
    timeZone,
    title: str(e.subject) ?? '',
    description: descriptionOf(e.body),
    organizer: emailOf(e.organizer),
    attendees: attendeesOf(e.attendees),
    updatedAt: Number.isFinite(updated) ? updated : 0,
    bookingId: bookingIdOf(e.singleValueExtendedProperties),
  };
}

/** The access token of one account: cached, refreshed once at a time. */
class TokenSource {
  private token: { value: string; until: number } | null = null;
  private inflight: Promise<string> | null = null;

  constructor(
    private readonly account: MicrosoftAccount,
    private readonly deps: ConnectorDeps,
  ) {}

  get(): Promise<string> {
    if (this.token && this.deps.now() < this.token.until) return Promise.resolve(this.token.value);
    this.inflight ??= this.fetchToken().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /** Drops the cached token if it is still this one (Graph answered 401 to it). */
  drop(value: string): void {
    if (this.token?.value === value) this.token = null;
  }

  private url(): string {
    return this.account.tokenUrl ?? `${LOGIN_BASE}/${encodeURIComponent(this.account.tenantId)}/oauth2/v2.0/token`;
  }

  private async fetchToken(): Promise<string> {
    const form = new URLSearchParams({
      client_id: this.account.clientId,
      client_secret: this.account.clientSecret,
      scope: GRAPH_SCOPE,
      grant_type: 'client_credentials',
    });
    let res: Response;
    try {
      res = await fetch(this.url(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.deps.timeoutMs),
      });
    } catch (err) {
      throw new ConnectorUnavailableError(`Microsoft token endpoint unreachable (${errName(err)})`);
    }
    const body: unknown = await res.json().catch(() => null);
    if (res.status === 429 || res.status >= 500) {
      throw new ConnectorUnavailableError(`Microsoft token endpoint answered ${res.status}`, retryAfterMs(res.headers, this.deps.now()));
    }
    const token = isObject(body) ? str(body.access_token) : null;
    if (!res.ok || !token) {
      // AAD's own error code (invalid_client, unauthorized_client, …); its description can carry ids, not secrets.
      const code = isObject(body) ? (str(body.error) ?? 'unknown') : 'unknown';
      throw new ConnectorRefusedError(`Microsoft token endpoint refused the credentials: ${res.status} ${code}`, res.ok ? 502 : res.status);
    }
    const lifetimeMs = Number(isObject(body) ? body.expires_in : NaN) * 1000;
    const validMs = Number.isFinite(lifetimeMs) && lifetimeMs > 0 ? lifetimeMs : 3600_000;
    const keepMs = validMs > 2 * TOKEN_MARGIN_MS ? validMs - TOKEN_MARGIN_MS : validMs / 2;
    this.token = { value: token, until: this.deps.now() + keepMs };
    return token;
  }
}

function errName(err: unknown): string {
  if (err instanceof Error) return err.name === 'TimeoutError' || err.name === 'AbortError' ? 'timed out' : err.name;
  return 'error';
}

/** Requests to Graph with the account's token (one retry after a 401 with a fresh token). */
class GraphHttp {
  readonly base: string;
  private readonly tokens: TokenSource;

  constructor(
    private readonly account: MicrosoftAccount,
    private readonly deps: ConnectorDeps,
  ) {
    // The origin, with or without Graph's version segment (`https://graph.microsoft.com` or `…/v1.0`).
    this.base = `${(account.apiBaseUrl ?? GRAPH_BASE).replace(/\/+$/, '').replace(/\/v1\.0$/, '')}/v1.0`;
    this.tokens = new TokenSource(account, deps);
  }

  /** Any answer Graph gave (callers handle the statuses they expect); unreachable → ConnectorUnavailableError. */
  async send(method: string, url: string, what: string, opts: SendOptions = {}): Promise<GraphResponse> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.tokens.get();
      const res = await this.once(method, url, what, token, opts);
      if (res.status !== 401 || attempt > 0) return res;
      this.tokens.drop(token);
    }
  }

  private async once(method: string, url: string, what: string, token: string, opts: SendOptions): Promise<GraphResponse> {
    const headers = new Headers({ authorization: `Bearer ${token}`, accept: 'application/json' });
    for (const p of opts.prefer ?? []) headers.append('prefer', p);
    if (opts.body !== undefined) headers.set('content-type', 'application/json');
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(this.deps.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      throw new ConnectorUnavailableError(`Graph ${what}: unreachable (${errName(err)})`);
    }
    const text = await res.text().catch(() => '');
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
    }
    return { status: res.status, body, headers: res.headers };
  }

  /** The error a non-2xx answer means. */
  failure(res: GraphResponse, what: string): Error {
    const { code, message } = graphError(res.body);
    const detail = this.scrub(`Graph ${what}: ${res.status} ${code}${message ? `: ${message}` : ''}`).slice(0, 400);
    if (res.status === 429 || res.status >= 500) return new ConnectorUnavailableError(detail, retryAfterMs(res.headers, this.deps.now()));
    return new ConnectorRefusedError(detail, res.status);
  }

  /** The body of a 2xx answer, or the error. */
  expectOk(res: GraphResponse, what: string): Json {
    if (res.status < 200 || res.status >= 300) throw this.failure(res, what);
    return isObject(res.body) ? res.body : {};
  }

  private scrub(message: string): string {
    const secret = this.account.clientSecret;
    return secret ? message.split(secret).join('[redacted]') : message;
  }

  user(calendarId: string): string {
    return `${this.base}/users/${encodeURIComponent(calendarId)}`;
  }

  event(cal: CalendarRef, id: string): string {
    return `${this.user(cal.calendarId)}/events/${encodeURIComponent(id)}`;
  }
}

function isCursorExpired(res: GraphResponse): boolean {
  if (res.status === 410) return true;
  const code = graphError(res.body).code.toLowerCase();
  return code === 'syncstatenotfound' || code === 'resyncrequired' || code === 'syncstateinvalid';
}

/** Every page of a delta read, from its first URL to the delta link. */
async function readDelta(http: GraphHttp, firstUrl: string): Promise<{ items: Json[]; deltaLink: string }> {
  const items: Json[] = [];
  let url = firstUrl;
  for (let page = 0; page < MAX_DELTA_PAGES; page++) {
    const res = await http.send('GET', url, 'calendar delta', { prefer: ['odata.maxpagesize=50', 'outlook.timezone="UTC"'] });
    if (res.status < 200 || res.status >= 300) {
      if (isCursorExpired(res)) throw new CursorExpiredError(`Graph calendar delta: ${res.status} ${graphError(res.body).code}`);
      throw http.failure(res, 'calendar delta');
    }
    const body = isObject(res.body) ? res.body : {};
    if (Array.isArray(body.value)) for (const v of body.value) if (isObject(v)) items.push(v);
    const next = str(body['@odata.nextLink']);
    const delta = str(body['@odata.deltaLink']);
    if (delta) return { items, deltaLink: delta };
    if (!next) throw new ConnectorUnavailableError('Graph calendar delta: a page without a next or delta link');
    url = sameOrigin(http, next);
  }
  throw new ConnectorUnavailableError('Graph calendar delta: too many pages');
}

/** A link Graph handed back, only followed (with our token) on Graph's own origin. */
function sameOrigin(http: GraphHttp, link: string): string {
  let origin: string;
  try {
    origin = new URL(link).origin;
  } catch {
    throw new CursorExpiredError('Graph delta link is not a URL');
  }
  if (origin !== new URL(http.base).origin) throw new CursorExpiredError('Graph delta link points elsewhere');
  return link;
}

/** The full event with the booking-id property; null when it is gone. */
async function readEvent(http: GraphHttp, cal: CalendarRef, id: string): Promise<Json | null> {
  const expand = `singleValueExtendedProperties($filter=id eq '${BOOKING_ID_PROPERTY}')`;
  const url = `${http.event(cal, id)}?$expand=${encodeURIComponent(expand)}`;
  const res = await http.send('GET', url, 'read event', { prefer: ['outlook.timezone="UTC"', 'outlook.body-content-type="text"'] });
  if (res.status === 404) return null;
  return http.expectOk(res, 'read event');
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function changes(
  http: GraphHttp,
  cal: CalendarRef,
  cursor: string | null,
  window: { start: number; end: number },
): Promise<ChangePage> {
  const first =
    cursor !== null
      ? sameOrigin(http, cursor)
      : `${http.user(cal.calendarId)}/calendarView/delta?` +
        new URLSearchParams({
          startDateTime: new Date(window.start).toISOString(),
          endDateTime: new Date(window.end).toISOString(),
        }).toString();
  const { items, deltaLink } = await readDelta(http, first);
  // The last word on each event wins (an event can appear on several pages).
  const byId = new Map<string, Json>();
  for (const item of items) {
    const id = str(item.id);
    if (!id) continue;
    byId.delete(id);
    byId.set(id, item);
  }
  const events = await mapLimit([...byId.values()], READ_CONCURRENCY, async (item) => {
    if (item['@removed'] !== undefined || item.isCancelled === true) return toRemoteEvent(item);
    const full = await readEvent(http, cal, str(item.id)!);
    return full ? toRemoteEvent(full) : toRemoteEvent({ ...item, '@removed': { reason: 'deleted' } });
  });
  return { events, cursor: deltaLink, full: cursor === null };
}

function outboundBody(e: OutboundEvent): Json {
  return {
    subject: e.title,
    body: { contentType: 'text', content: e.description },
    start: graphDateTime(e.start),
    end: graphDateTime(e.end),
    showAs: e.tentative ? 'tentative' : 'busy',
  };
}

function createBody(e: OutboundEvent): Json {
  const attendees = e.organizer.email ? [{ emailAddress: { address: e.organizer.email, name: e.organizer.name }, type: 'required' }] : [];
  return {
    ...outboundBody(e),
    attendees,
    transactionId: transactionIdOf(e.key),
    singleValueExtendedProperties: [{ id: BOOKING_ID_PROPERTY, value: e.bookingId }],
    allowNewTimeProposals: false,
  };
}

function toSubscription(body: Json, fallbackExpiry: number): Subscription {
  const id = str(body.id);
  if (!id) throw new ConnectorUnavailableError('Graph subscription: an answer without an id');
  const expires = Date.parse(str(body.expirationDateTime) ?? '');
  return { id, resourceId: null, expiresAt: Number.isFinite(expires) ? expires : fallbackExpiry };
}

function subscriptionCalls(http: GraphHttp, deps: ConnectorDeps) {
  const capped = (expiresAt: number): number => Math.min(expiresAt, deps.now() + GRAPH_SUBSCRIPTION_MS);
  return {
    async subscribe(cal: CalendarRef, p: { notificationUrl: string; clientState: string; expiresAt: number }): Promise<Subscription> {
      const expiresAt = capped(p.expiresAt);
      const res = await http.send('POST', `${http.base}/subscriptions`, 'create subscription', {
        body: {
          changeType: 'created,updated,deleted',
          notificationUrl: p.notificationUrl,
          lifecycleNotificationUrl: p.notificationUrl,
          resource: `users/${cal.calendarId}/events`,
          expirationDateTime: new Date(expiresAt).toISOString(),
          clientState: p.clientState,
        },
      });
      return toSubscription(http.expectOk(res, 'create subscription'), expiresAt);
    },
    async renew(_cal: CalendarRef, sub: Subscription, p: { expiresAt: number }): Promise<Subscription> {
      const expiresAt = capped(p.expiresAt);
      const url = `${http.base}/subscriptions/${encodeURIComponent(sub.id)}`;
      const res = await http.send('PATCH', url, 'renew subscription', { body: { expirationDateTime: new Date(expiresAt).toISOString() } });
      if (res.status === 404) throw new NotFoundError('Graph subscription is gone');
      return toSubscription(http.expectOk(res, 'renew subscription'), expiresAt);
    },
    async unsubscribe(_cal: CalendarRef, sub: Subscription): Promise<void> {
      const res = await http.send('DELETE', `${http.base}/subscriptions/${encodeURIComponent(sub.id)}`, 'delete subscription');
      if (res.status !== 404) http.expectOk(res, 'delete subscription');
    },
  };
}

function eventCalls(http: GraphHttp) {
  return {
    async createEvent(cal: CalendarRef, e: OutboundEvent): Promise<{ id: string; uid: string; etag: string | null }> {
      const res = await http.send('POST', `${http.user(cal.calendarId)}/events`, 'create event', { body: createBody(e) });
      const body = http.expectOk(res, 'create event');
      const id = str(body.id);
      if (!id) throw new ConnectorUnavailableError('Graph create event: an answer without an id');
      return { id, uid: str(body.iCalUId) ?? id, etag: str(body.changeKey) };
    },
    async updateEvent(cal: CalendarRef, id: string, e: OutboundEvent): Promise<{ etag: string | null }> {
      const res = await http.send('PATCH', http.event(cal, id), 'update event', { body: outboundBody(e) });
      if (res.status === 404) throw new NotFoundError('Graph event is gone');
      return { etag: str(http.expectOk(res, 'update event').changeKey) };
    },
    async cancelEvent(cal: CalendarRef, id: string, comment: string | null): Promise<void> {
      const res = await http.send('POST', `${http.event(cal, id)}/cancel`, 'cancel event', { body: { comment: comment ?? '' } });
      if (res.status !== 404) http.expectOk(res, 'cancel event');
    },
    async respond(cal: CalendarRef, id: string, answer: { accepted: boolean; comment: string }): Promise<void> {
      const verb = answer.accepted ? 'accept' : 'decline';
      const res = await http.send('POST', `${http.event(cal, id)}/${verb}`, `${verb} event`, {
        body: { comment: answer.comment, sendResponse: true },
      });
      if (res.status === 404) throw new NotFoundError('Graph event is gone');
      http.expectOk(res, `${verb} event`);
    },
  };
}

/** The Graph adapter for one connection's account. */
export function microsoftConnector(account: MicrosoftAccount, deps: ConnectorDeps): CalendarConnector {
  const http = new GraphHttp(account, deps);
  return {
    provider: 'microsoft',
    maxSubscriptionMs: GRAPH_SUBSCRIPTION_MS,
    ...subscriptionCalls(http, deps),
    changes: (cal, cursor, window) => changes(http, cal, cursor, window),
    ...eventCalls(http),
  };
}
