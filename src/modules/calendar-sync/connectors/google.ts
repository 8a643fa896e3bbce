/**
 * The Google Calendar adapter of the connector port: a service account with
 * domain-wide delegation (a JWT assertion signed with `jose`, exchanged at the token
 * endpoint), then `@googleapis/calendar` pointed at `apiBaseUrl` with our bearer token
 * on each request (no auth client: the library's own retries are off, ours run
 * through the job runner).
 */

import { createHash } from 'node:crypto';
import { calendar, type calendar_v3, type MethodOptions } from '@googleapis/calendar';
import { importPKCS8, SignJWT } from 'jose';
import { DateTime } from 'luxon';
import {
  ConnectorRefusedError,
  ConnectorUnavailableError,
  CursorExpiredError,
  NotFoundError,
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

type GoogleAccount = Extract<ConnectionAccount, { provider: 'google' }>;
type Event = calendar_v3.Schema$Event;

const DEFAULT_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const DEFAULT_API_BASE = 'https://www.googleapis.com/';
const SCOPE = 'https://www.googleapis.com/auth/calendar';
const SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000;
const TOKEN_MARGIN_MS = 5 * 60 * 1000;

/** What a failed call may be, beyond the general rules. */
interface CallCase {
  /** 404 is the port's NotFoundError (otherwise a refusal). */
  notFound?: boolean;
  /** 410 means the sync token expired. */
  cursor?: boolean;
}

interface HttpFailure {
  status?: number;
  code?: string | number;
  name?: string;
  response?: { status?: number; data?: unknown; headers?: unknown };
}

/** Retry-After in seconds, or as an HTTP date (measured from `now` when given). */
function retryAfterMs(headers: unknown, now?: number): number | null {
  let raw: string | null | undefined;
  if (headers && typeof (headers as Headers).get === 'function') raw = (headers as Headers).get('retry-after');
  else if (headers && typeof headers === 'object') raw = (headers as Record<string, string>)['retry-after'];
  if (!raw) return null;
  const secs = Number(raw);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) || now === undefined ? null : Math.max(0, at - now);
}

/** Google's error JSON: {error: {code, message, errors: [{reason}]}}. */
function googleError(data: unknown): { message: string; reasons: string[] } {
  const err = (data as { error?: { message?: unknown; errors?: { reason?: unknown }[] } } | null)?.error;
  if (!err || typeof err !== 'object') return { message: typeof data === 'string' ? data.slice(0, 200) : '', reasons: [] };
  const reasons = (err.errors ?? []).map((e) => String(e.reason ?? ''));
  return { message: typeof err.message === 'string' ? err.message : '', reasons };
}

/** Maps an HTTP status (and Google's error body) onto the port's errors. */
export function mapGoogleFailure(status: number, data: unknown, headers: unknown, c: CallCase = {}, now?: number): Error {
  const { message, reasons } = googleError(data);
  const text = message || `HTTP ${status}`;
  if (status === 410 && c.cursor) return new CursorExpiredError(`Google sync token expired: ${text}`);
  if (status === 404 && c.notFound) return new NotFoundError(`Google Calendar: ${text}`);
  const rateLimited = status === 403 && reasons.some((r) => r === 'rateLimitExceeded' || r === 'userRateLimitExceeded');
  if (status >= 500 || status === 429 || rateLimited) {
    return new ConnectorUnavailableError(`Google Calendar unavailable (${status}): ${text}`, retryAfterMs(headers, now));
  }
  return new ConnectorRefusedError(`Google Calendar refused (${status}): ${text}`, status);
}

function mapThrown(e: unknown, c: CallCase, now: number): Error {
  const f = e as HttpFailure;
  const status = f?.response?.status ?? f?.status;
  if (typeof status === 'number' && status > 0) return mapGoogleFailure(status, f.response?.data, f.response?.headers, c, now);
  // No answer: network failure or timeout. The code only (messages may carry URLs).
  return new ConnectorUnavailableError(`Google Calendar unreachable (${String(f?.code ?? f?.name ?? 'error')})`);
}

function statusOf(e: unknown): number | undefined {
  const f = e as HttpFailure;
  return f?.response?.status ?? f?.status;
}

/** Access tokens from the service account's signed assertion, cached until 5 minutes before expiry. */
class TokenSource {
  private token: { value: string; expiresAt: number } | null = null;
  private inflight: Promise<string> | null = null;

  constructor(
    private readonly account: GoogleAccount,
    private readonly deps: ConnectorDeps,
  ) {}

  get(): Promise<string> {
    if (this.token && this.deps.now() < this.token.expiresAt - TOKEN_MARGIN_MS) return Promise.resolve(this.token.value);
    this.inflight ??= this.fetchToken().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /** Forgets a token the API refused (unless a newer one has come meanwhile). */
  drop(value: string): void {
    if (this.token?.value === value) this.token = null;
  }

  private async assertion(url: string, nowMs: number): Promise<string> {
    let key: Awaited<ReturnType<typeof importPKCS8>>;
    try {
      // A key pasted from the JSON key file may keep its `\\n` escapes.
      key = await importPKCS8(this.account.privateKey.replace(/\\n/g, '\n'), 'RS256');
    } catch {
      throw new ConnectorRefusedError('The service account private key is not a PKCS#8 RSA key', 400);
    }
    const iat = Math.floor(nowMs / 1000);
    return new SignJWT({ scope: SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(this.account.serviceAccountEmail)
      .setSubject(this.account.subject)
      .setAudience(url)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .sign(key);
  }

  private async fetchToken(): Promise<string> {
    const url = this.account.tokenUrl ?? DEFAULT_TOKEN_URL;
    const started = this.deps.now();
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: await this.assertion(url, started),
    });
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
        signal: AbortSignal.timeout(this.deps.timeoutMs),
      });
    } catch (e) {
      throw new ConnectorUnavailableError(`Google token endpoint unreachable (${(e as Error)?.name ?? 'error'})`);
    }
    const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (!res.ok || typeof json?.access_token !== 'string') {
      const status = res.ok ? 502 : res.status;
      if (status >= 500 || status === 429) {
        throw new ConnectorUnavailableError(`Google token endpoint unavailable (${status})`, retryAfterMs(res.headers, this.deps.now()));
      }
      const why = [json?.error, json?.error_description].filter((x) => typeof x === 'string').join(': ');
      throw new ConnectorRefusedError(`Google token endpoint refused (${status})${why ? `: ${why}` : ''}`, status);
    }
    const expiresIn = typeof json.expires_in === 'number' ? json.expires_in : 3600;
    this.token = { value: json.access_token, expiresAt: started + expiresIn * 1000 };
    return json.access_token;
  }
}

/** Google's rule for client-chosen ids: base32hex (a-v, 0-9), 5 to 1024 characters. A hash keeps it stable per key. */
export function googleEventId(key: string): string {
  const bytes = createHash('sha256').update(key).digest();
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const b of bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
  return out;
}

function eventTime(t: calendar_v3.Schema$EventDateTime | undefined, zone: string | null): number {
  if (!t) return 0;
  if (t.dateTime) return Date.parse(t.dateTime) || 0;
  if (!t.date) return 0;
  const local = DateTime.fromISO(t.date, { zone: t.timeZone ?? zone ?? 'UTC' });
  return (local.isValid ? local : DateTime.fromISO(t.date, { zone: 'UTC' })).startOf('day').toMillis();
}

const RESPONSES: Record<string, RemoteAttendee['response']> = {
  accepted: 'accepted',
  declined: 'declined',
  tentative: 'tentative',
  needsAction: 'none',
};

/** Google's event as the port's RemoteEvent (`calendarZone`: the list's `timeZone`, for all-day events). */
export function toRemoteEvent(ev: Event, calendarZone: string | null = null): RemoteEvent {
  const zone = ev.start?.timeZone ?? ev.end?.timeZone ?? null;
  return {
    id: ev.id ?? '',
    uid: ev.id ?? '',
    etag: ev.etag ?? null,
    removed: ev.status === 'cancelled',
    start: eventTime(ev.start, zone ?? calendarZone),
    end: eventTime(ev.end, zone ?? calendarZone),
    allDay: Boolean(ev.start?.date && !ev.start?.dateTime),
    timeZone: zone,
    title: ev.summary ?? '',
    description: ev.description ?? '',
    organizer: ev.organizer?.email ? { email: ev.organizer.email.toLowerCase(), name: ev.organizer.displayName ?? null } : null,
    attendees: (ev.attendees ?? [])
      .filter((a) => a.email)
      .map((a) => ({
        email: String(a.email).toLowerCase(),
        name: a.displayName ?? null,
        resource: Boolean(a.resource),
        response: RESPONSES[a.responseStatus ?? ''] ?? 'none',
      })),
    sequence: ev.sequence ?? 0,
    updatedAt: ev.updated ? Date.parse(ev.updated) || 0 : 0,
    bookingId: ev.extendedProperties?.private?.bookingId ?? null,
  };
}

function outboundBody(e: OutboundEvent): Event {
  return {
    summary: e.title,
    description: e.description,
    start: { dateTime: new Date(e.start).toISOString(), timeZone: e.timeZone },
    end: { dateTime: new Date(e.end).toISOString(), timeZone: e.timeZone },
    status: e.tentative ? 'tentative' : 'confirmed',
  };
}

type WatchParams = { notificationUrl: string; clientState: string; expiresAt: number; channelId: string };

class GoogleCalendarConnector implements CalendarConnector {
  readonly provider = 'google' as const;
  readonly maxSubscriptionMs = SEVEN_DAYS_MS;
  private readonly api: calendar_v3.Calendar;
  private readonly tokens: TokenSource;

  constructor(
    account: GoogleAccount,
    private readonly deps: ConnectorDeps,
  ) {
    // The root, with or without the API's own path (`https://www.googleapis.com/` or `…/calendar/v3`).
    const root = account.apiBaseUrl ? `${account.apiBaseUrl.replace(/\/+$/, '').replace(/\/calendar\/v3$/, '')}/` : DEFAULT_API_BASE;
    this.api = calendar({ version: 'v3', rootUrl: root, timeout: deps.timeoutMs, retry: false });
    this.tokens = new TokenSource(account, deps);
  }

  /** One API call with our token; a 401 drops the token and tries once more. */
  private async call<T>(run: (opts: MethodOptions) => Promise<{ data: T }>, c: CallCase = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.tokens.get();
      try {
        const res = await run({ headers: { Authorization: `Bearer ${token}` }, timeout: this.deps.timeoutMs, retry: false });
        return res.data;
      } catch (e) {
        if (statusOf(e) === 401 && attempt === 0) {
          this.tokens.drop(token);
          continue;
        }
        throw mapThrown(e, c, this.deps.now());
      }
    }
  }

  async subscribe(cal: CalendarRef, p: WatchParams): Promise<Subscription> {
    const ttlMs = Math.min(SEVEN_DAYS_MS, p.expiresAt - this.deps.now());
    const requestBody: calendar_v3.Schema$Channel = {
      id: p.channelId,
      type: 'web_hook',
      address: p.notificationUrl,
      token: p.clientState,
      params: { ttl: String(Math.max(1, Math.round(ttlMs / 1000))) },
    };
    const channel = await this.call((o) => this.api.events.watch({ calendarId: cal.calendarId, requestBody }, o));
    // Google may grant a shorter life than asked: its `expiration` is what counts.
    const expiration = Number(channel.expiration);
    return {
      id: channel.id ?? p.channelId,
      resourceId: channel.resourceId ?? null,
      expiresAt: Number.isFinite(expiration) && expiration > 0 ? expiration : p.expiresAt,
    };
  }

  async renew(cal: CalendarRef, sub: Subscription, p: WatchParams): Promise<Subscription> {
    const next = await this.subscribe(cal, p);
    // The new channel stands; an old one that cannot be stopped now expires on its own.
    await this.unsubscribe(cal, sub).catch(() => undefined);
    return next;
  }

  async unsubscribe(_cal: CalendarRef, sub: Subscription): Promise<void> {
    const requestBody = { id: sub.id, resourceId: sub.resourceId ?? undefined };
    try {
      await this.call((o) => this.api.channels.stop({ requestBody }, o), { notFound: true });
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
    }
  }

  async changes(cal: CalendarRef, cursor: string | null, window: { start: number; end: number }): Promise<ChangePage> {
    const events: RemoteEvent[] = [];
    let pageToken: string | undefined;
    for (;;) {
      const base = { calendarId: cal.calendarId, singleEvents: true, showDeleted: true, maxResults: 250, pageToken };
      const params = cursor
        ? { ...base, syncToken: cursor }
        : { ...base, timeMin: new Date(window.start).toISOString(), timeMax: new Date(window.end).toISOString() };
      const page = await this.call((o) => this.api.events.list(params, o), { cursor: cursor !== null });
      for (const ev of page.items ?? []) events.push(toRemoteEvent(ev, page.timeZone ?? null));
      if (page.nextPageToken) {
        pageToken = page.nextPageToken;
        continue;
      }
      if (!page.nextSyncToken) throw new ConnectorUnavailableError('Google Calendar answered a last page without nextSyncToken');
      return { events, cursor: page.nextSyncToken, full: cursor === null };
    }
  }

  async createEvent(cal: CalendarRef, e: OutboundEvent): Promise<{ id: string; uid: string; etag: string | null }> {
    const id = googleEventId(e.key);
    const requestBody: Event = {
      ...outboundBody(e),
      id,
      attendees: e.organizer.email ? [{ email: e.organizer.email, displayName: e.organizer.name }] : [],
      extendedProperties: { private: { bookingId: e.bookingId } },
      guestsCanModify: false,
    };
    let ev: Event;
    try {
      ev = await this.call((o) => this.api.events.insert({ calendarId: cal.calendarId, sendUpdates: 'all', requestBody }, o));
    } catch (err) {
      // 409: the id exists, an earlier attempt got through.
      if (!(err instanceof ConnectorRefusedError && err.status === 409)) throw err;
      ev = await this.call((o) => this.api.events.get({ calendarId: cal.calendarId, eventId: id }, o));
    }
    return { id: ev.id ?? id, uid: ev.id ?? id, etag: ev.etag ?? null };
  }

  async updateEvent(cal: CalendarRef, id: string, e: OutboundEvent): Promise<{ etag: string | null }> {
    const params = { calendarId: cal.calendarId, eventId: id, sendUpdates: 'all', requestBody: outboundBody(e) };
    const ev = await this.call((o) => this.api.events.patch(params, o), { notFound: true });
    return { etag: ev.etag ?? null };
  }

  async cancelEvent(cal: CalendarRef, id: string): Promise<void> {
    try {
      await this.call((o) => this.api.events.delete({ calendarId: cal.calendarId, eventId: id, sendUpdates: 'all' }, o), {
        notFound: true,
      });
    } catch (e) {
      // Gone already (404) or deleted already (410).
      if (e instanceof NotFoundError || (e instanceof ConnectorRefusedError && e.status === 410)) return;
      throw e;
    }
  }

  async respond(cal: CalendarRef, id: string, answer: { accepted: boolean; comment: string }): Promise<void> {
    const nf = { notFound: true };
    const ev = await this.call((o) => this.api.events.get({ calendarId: cal.calendarId, eventId: id }, o), nf);
    const room = cal.calendarId.toLowerCase();
    const responseStatus = answer.accepted ? 'accepted' : 'declined';
    const attendees = [...(ev.attendees ?? [])];
    const at = attendees.findIndex((a) => a.self === true || a.email?.toLowerCase() === room);
    if (at >= 0) attendees[at] = { ...attendees[at], responseStatus, comment: answer.comment };
    else attendees.push({ email: cal.calendarId, resource: true, responseStatus, comment: answer.comment });
    const params = { calendarId: cal.calendarId, eventId: id, sendUpdates: 'all', requestBody: { attendees } };
    await this.call((o) => this.api.events.patch(params, o), nf);
  }
}

export function googleConnector(account: GoogleAccount, deps: ConnectorDeps): CalendarConnector {
  return new GoogleCalendarConnector(account, deps);
}
