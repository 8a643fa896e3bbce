/**
 * A local stand-in of the parts of Google Calendar the connector uses
 * (src/modules/calendar-sync/connectors/google.ts), faithful to the documented
 * requests and answers:
 * - the OAuth token endpoint taking a service account's JWT assertion (RS256, checked
 *   against the public half of a key pair made here: iss, sub, aud, scope, iat/exp);
 * - /calendar/v3: events.watch / channels.stop, events.list (singleEvents, showDeleted,
 *   timeMin/timeMax, pageToken, syncToken → nextSyncToken, 410 fullSyncRequired),
 *   events.insert (client-chosen base32hex id, 409 duplicate), get, patch, delete
 *   (the event stays, `status: cancelled`); bearer token required (401 otherwise);
 *   Google's error JSON {error: {code, message, errors: [{domain, reason, message}], status}};
 * - push notifications: a POST with an empty body and the X-Goog-* headers to the
 *   channel's address (`sync` when the channel starts, `exists` after each change).
 *
 * Notifications after the service's own writes are sent once the answer has gone
 * (not awaited); after a person's change they are awaited, so a test knows the
 * service was told. `settle()` waits for those in flight.
 *
 * Listens on 127.0.0.1 port 0.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import type { CalendarStandIn, PersonEvent, StandInEvent, StandInSubscription } from './calendar-standin.js';
import { readBody } from './read-body.js';

const SCOPE = 'https://www.googleapis.com/auth/calendar';
const MAX_TTL_SECONDS = 604800;

export interface GoogleStandInOptions {
  autoNotify?: boolean;
  /** Real time for expirations and tokens (default Date.now). */
  now?: () => number;
  /** The longest channel the stand-in grants (Google may grant less than asked). */
  maxTtlSeconds?: number;
}

interface Attendee {
  email: string;
  displayName?: string;
  organizer?: boolean;
  resource?: boolean;
  responseStatus: 'needsAction' | 'declined' | 'tentative' | 'accepted';
  comment?: string;
  optional?: boolean;
}

/** An event on one calendar, stored as Google's resource (`self` flags are added when answering). */
interface GEvent {
  kind: 'calendar#event';
  id: string;
  etag: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  created: string;
  updated: string;
  summary?: string;
  description?: string;
  creator: { email: string; displayName?: string };
  organizer: { email: string; displayName?: string };
  start: { dateTime: string; timeZone?: string };
  end: { dateTime: string; timeZone?: string };
  iCalUID: string;
  sequence: number;
  attendees?: Attendee[];
  extendedProperties?: { private?: Record<string, string>; shared?: Record<string, string> };
  guestsCanModify?: boolean;
  reminders: { useDefault: boolean };
  eventType: 'default';
}

interface Stored {
  ev: GEvent;
  /** The change counter at its last change (what sync tokens compare with). */
  changedAt: number;
}

interface Channel {
  id: string;
  calendarId: string;
  resourceId: string;
  resourceUri: string;
  token: string | undefined;
  address: string;
  expiresAt: number;
  stopped: boolean;
  messageNumber: number;
}

interface Calendar {
  id: string;
  events: Map<string, Stored>;
  /** Bumped by expireCursors: tokens from an earlier epoch answer 410. */
  epoch: number;
  resourceId: string;
}

export interface RecordedGoogleRequest {
  method: string;
  path: string;
  at: number;
  query: Record<string, string>;
  body: any;
}

interface Notification {
  address: string;
  headers: Record<string, string>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly domain = 'global',
  ) {
    super(message);
  }
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
  410: 'GONE',
  503: 'UNAVAILABLE',
};

function errorBody(status: number, reason: string, message: string, domain = 'global') {
  return { error: { code: status, message, errors: [{ domain, reason, message }], status: STATUS_NAMES[status] ?? 'UNKNOWN' } };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function rfc3339(text: unknown, field: string): number {
  const ms = typeof text === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new HttpError(400, 'invalid', `Invalid value for: ${field}`);
  return ms;
}

function base32hexId(): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  return Array.from(randomBytes(26), (b) => alphabet[b & 31]).join('');
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'parseError', 'Parse Error');
  }
}

function encodeToken(t: object): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeToken(text: string): any {
  try {
    return JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}

class GoogleStandIn implements CalendarStandIn {
  readonly provider = 'google' as const;
  apiBaseUrl = '';
  tokenUrl = '';
  credentials: Record<string, string> = {};
  autoNotify: boolean;
  down = false;
  readonly requests: RecordedGoogleRequest[] = [];
  /** How many access tokens the token endpoint gave. */
  tokensIssued = 0;

  private readonly calendars = new Map<string, Calendar>();
  private readonly channels = new Map<string, Channel>();
  private readonly tokens = new Map<string, number>();
  private readonly pending = new Set<Promise<unknown>>();
  private lastNotification: Notification | null = null;
  private counter = 0;
  private publicKey: Awaited<ReturnType<typeof generateKeyPair>>['publicKey'] | null = null;
  private readonly now: () => number;
  private readonly maxTtl: number;
  private readonly server = createServer((req, res) => this.handle(req, res));
  private readonly sockets = new Set<Socket>();

  constructor(opts: GoogleStandInOptions) {
    this.autoNotify = opts.autoNotify ?? true;
    this.now = opts.now ?? Date.now;
    this.maxTtl = opts.maxTtlSeconds ?? MAX_TTL_SECONDS;
  }

  async start(): Promise<void> {
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    this.publicKey = publicKey;
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.apiBaseUrl = `${base}/`;
    this.tokenUrl = `${base}/token`;
    this.credentials = {
      serviceAccountEmail: 'room-sync@standin-project.iam.gserviceaccount.com',
      privateKey: await exportPKCS8(privateKey),
      subject: 'calendar-admin@example.test',
    };
  }

  async close(): Promise<void> {
    await this.settle();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Waits for the notifications in flight. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** The contract's name for `settle`. */
  settled(): Promise<void> {
    return this.settle();
  }

  /** Forgets every access token given (the next API call answers 401). */
  revokeTokens(): void {
    this.tokens.clear();
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://standin');
    const raw = await readBody(req);
    const query = Object.fromEntries(url.searchParams);
    let body: any = raw;
    try {
      if (raw && (req.headers['content-type'] ?? '').includes('json')) body = parseJson(raw);
      this.requests.push({ method: req.method ?? 'GET', path: url.pathname, at: this.now(), query, body });
      if (this.down) throw new HttpError(503, 'backendError', 'The service is currently unavailable.');
      if (url.pathname === '/token' && req.method === 'POST') return await this.token(res, raw);
      this.authorize(req);
      const out = this.route(req.method ?? 'GET', url.pathname, url.searchParams, body);
      if (out === null) {
        res.writeHead(204);
        res.end();
      } else sendJson(res, 200, out);
    } catch (e) {
      const err = e instanceof HttpError ? e : new HttpError(500, 'backendError', 'Backend Error');
      sendJson(res, err.status, errorBody(err.status, err.reason, err.message, err.domain));
    }
  }

  private async token(res: ServerResponse, raw: string): Promise<void> {
    const form = new URLSearchParams(raw);
    const refuse = (error: string, description: string) => sendJson(res, 400, { error, error_description: description });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
      return refuse('unsupported_grant_type', 'Invalid grant_type: ');
    let payload: any;
    try {
      ({ payload } = await jwtVerify(form.get('assertion') ?? '', this.publicKey!, {
        algorithms: ['RS256'],
        issuer: this.credentials.serviceAccountEmail,
        audience: this.tokenUrl,
        requiredClaims: ['iat', 'exp'],
        currentDate: new Date(this.now()),
      }));
    } catch {
      return refuse('invalid_grant', 'Invalid JWT Signature.');
    }
    if (payload.exp - payload.iat > 3600) return refuse('invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes)');
    if (
      !String(payload.scope ?? '')
        .split(' ')
        .includes(SCOPE)
    )
      return refuse('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    if (payload.sub !== this.credentials.subject) {
      return sendJson(res, 401, {
        error: 'unauthorized_client',
        error_description: 'Client is unauthorized to retrieve access tokens using this method.',
      });
    }
    const accessToken = `ya29.standin-${randomBytes(24).toString('base64url')}`;
    this.tokens.set(accessToken, this.now() + 3599_000);
    this.tokensIssued++;
    sendJson(res, 200, { access_token: accessToken, expires_in: 3599, token_type: 'Bearer' });
  }

  private authorize(req: IncomingMessage): void {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const until = m ? this.tokens.get(m[1]) : undefined;
    if (until === undefined || until <= this.now()) {
      throw new HttpError(
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    }
  }

  private route(method: string, path: string, q: URLSearchParams, body: any): unknown {
    if (method === 'POST' && path === '/calendar/v3/channels/stop') return this.stopChannel(body);
    const m = /^\/calendar\/v3\/calendars\/([^/]+)\/events(?:\/([^/]+))?$/.exec(path);
    if (!m) throw new HttpError(404, 'notFound', 'Not Found');
    const cal = this.calendar(decodeURIComponent(m[1]));
    const eventId = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
    if (eventId === 'watch' && method === 'POST') return this.watch(cal, body);
    if (eventId === undefined && method === 'GET') return this.list(cal, q);
    if (eventId === undefined && method === 'POST') return this.insert(cal, body);
    if (eventId !== undefined && method === 'GET') return this.render(cal, this.find(cal, eventId).ev);
    if (eventId !== undefined && method === 'PATCH') return this.patch(cal, eventId, body);
    if (eventId !== undefined && method === 'DELETE') return this.remove(cal, eventId);
    throw new HttpError(404, 'notFound', 'Not Found');
  }

  // ---- calendars and events ----

  private calendar(id: string): Calendar {
    let cal = this.calendars.get(id);
    if (!cal) {
      cal = { id, events: new Map(), epoch: 0, resourceId: randomBytes(12).toString('base64url') };
      this.calendars.set(id, cal);
    }
    return cal;
  }

  private find(cal: Calendar, id: string): Stored {
    const s = cal.events.get(id);
    if (!s) throw new HttpError(404, 'notFound', 'Not Found');
    return s;
  }

  /** Records a change to an event (etag, updated, change counter) and announces it. */
  private touch(cal: Calendar, s: Stored, announce: 'after' | 'now'): Promise<number[]> {
    s.changedAt = ++this.counter;
    s.ev.etag = `"${3_000_000_000_000 + this.counter}"`;
    s.ev.updated = new Date(this.now()).toISOString();
    if (!this.autoNotify) return Promise.resolve([]);
    if (announce === 'now') return this.notify(cal.id);
    setImmediate(() => void this.track(this.notify(cal.id)));
    return Promise.resolve([]);
  }

  /** The event as the room calendar's owner sees it (`self` on the room's own entries). */
  private render(cal: Calendar, ev: GEvent): GEvent & Record<string, unknown> {
    const self = (email: string) => email.toLowerCase() === cal.id.toLowerCase();
    return {
      ...ev,
      htmlLink: `https://www.google.com/calendar/event?eid=${Buffer.from(`${ev.id} ${cal.id}`).toString('base64url')}`,
      creator: { ...ev.creator, ...(self(ev.creator.email) ? { self: true } : {}) },
      organizer: { ...ev.organizer, ...(self(ev.organizer.email) ? { self: true } : {}) },
      ...(ev.attendees ? { attendees: ev.attendees.map((a) => (self(a.email) ? { ...a, self: true } : { ...a })) } : {}),
    };
  }

  private list(cal: Calendar, q: URLSearchParams): unknown {
    const max = Math.min(Number(q.get('maxResults') ?? 250) || 250, 2500);
    const page = q.get('pageToken') ? decodeToken(q.get('pageToken')!) : null;
    const syncText = q.get('syncToken') ?? page?.sync;
    if (syncText && ['timeMin', 'timeMax', 'updatedMin', 'q', 'orderBy', 'iCalUID'].some((k) => q.has(k))) {
      throw new HttpError(400, 'invalid', 'Sync token cannot be used with other request restrictions.');
    }
    // Deleted events always come with a sync token: showDeleted=false is not allowed with it.
    if (syncText && q.get('showDeleted') === 'false') throw new HttpError(400, 'invalid', 'showDeleted cannot be false with a sync token.');
    const sync = syncText ? decodeToken(syncText) : null;
    if (syncText && (!sync || sync.cal !== cal.id)) throw new HttpError(400, 'invalid', 'Invalid sync token value.');
    if (sync && sync.epoch !== cal.epoch) {
      throw new HttpError(410, 'fullSyncRequired', 'Sync token is no longer valid, a full sync is required.', 'calendar');
    }
    const snapshot: number = page?.snapshot ?? this.counter;
    const timeMin = q.has('timeMin') ? rfc3339(q.get('timeMin'), 'timeMin') : -Infinity;
    const timeMax = q.has('timeMax') ? rfc3339(q.get('timeMax'), 'timeMax') : Infinity;
    const showDeleted = q.get('showDeleted') === 'true';
    const all = [...cal.events.values()]
      .filter((s) => {
        // An incremental read answers every change (deletions included) since the token.
        if (sync) return s.changedAt > sync.seq;
        if (s.ev.status === 'cancelled' && !showDeleted) return false;
        return Date.parse(s.ev.end.dateTime) > timeMin && Date.parse(s.ev.start.dateTime) < timeMax;
      })
      .sort((a, b) => a.changedAt - b.changedAt);
    const offset: number = page?.offset ?? 0;
    const items = all.slice(offset, offset + max).map((s) =>
      // Deleted events in an incremental answer may carry only their id and status.
      sync && s.ev.status === 'cancelled'
        ? { kind: 'calendar#event', etag: s.ev.etag, id: s.ev.id, status: 'cancelled' }
        : this.render(cal, s.ev),
    );
    const more = offset + max < all.length;
    return {
      kind: 'calendar#events',
      etag: `"p${this.counter}"`,
      summary: cal.id,
      updated: new Date(this.now()).toISOString(),
      timeZone: 'UTC',
      accessRole: 'owner',
      defaultReminders: [],
      items,
      ...(more
        ? { nextPageToken: encodeToken({ offset: offset + max, snapshot, sync: syncText ?? undefined }) }
        : { nextSyncToken: encodeToken({ cal: cal.id, epoch: cal.epoch, seq: snapshot, n: randomUUID() }) }),
    };
  }

  private insert(cal: Calendar, body: any): unknown {
    const id: string = body?.id ?? base32hexId();
    if (!/^[a-v0-9]{5,1024}$/.test(id)) throw new HttpError(400, 'invalid', 'Invalid resource id value.');
    if (cal.events.has(id)) throw new HttpError(409, 'duplicate', 'The requested identifier already exists.');
    if (!body?.start) throw new HttpError(400, 'required', 'Missing start time.');
    if (!body?.end) throw new HttpError(400, 'required', 'Missing end time.');
    const start = rfc3339(body.start.dateTime, 'start.dateTime');
    const end = rfc3339(body.end.dateTime, 'end.dateTime');
    if (end < start) throw new HttpError(400, 'timeRangeEmpty', 'The specified time range is empty.');
    const now = new Date(this.now()).toISOString();
    const ev: GEvent = {
      kind: 'calendar#event',
      id,
      etag: '',
      status: body.status === 'tentative' ? 'tentative' : 'confirmed',
      created: now,
      updated: now,
      summary: body.summary,
      description: body.description,
      // Written on the room's calendar through delegation: the room organizes it.
      creator: { email: cal.id },
      organizer: { email: cal.id },
      start: { dateTime: new Date(start).toISOString(), timeZone: body.start.timeZone },
      end: { dateTime: new Date(end).toISOString(), timeZone: body.end.timeZone },
      iCalUID: `${id}@google.com`,
      sequence: 0,
      attendees: (body.attendees ?? []).map((a: any) => ({
        email: String(a.email),
        ...(a.displayName ? { displayName: a.displayName } : {}),
        responseStatus: a.responseStatus ?? 'needsAction',
      })),
      extendedProperties: body.extendedProperties,
      guestsCanModify: body.guestsCanModify ?? false,
      reminders: { useDefault: true },
      eventType: 'default',
    };
    const s: Stored = { ev, changedAt: 0 };
    cal.events.set(id, s);
    void this.touch(cal, s, 'after');
    return this.render(cal, ev);
  }

  private patch(cal: Calendar, id: string, body: any): unknown {
    const s = this.find(cal, id);
    const ev = s.ev;
    const next: GEvent = { ...ev };
    for (const k of ['summary', 'description', 'status', 'attendees', 'guestsCanModify'] as const) {
      if (body?.[k] !== undefined) (next as any)[k] = body[k];
    }
    if (body?.start)
      next.start = { dateTime: new Date(rfc3339(body.start.dateTime, 'start.dateTime')).toISOString(), timeZone: body.start.timeZone };
    if (body?.end) next.end = { dateTime: new Date(rfc3339(body.end.dateTime, 'end.dateTime')).toISOString(), timeZone: body.end.timeZone };
    if (body?.extendedProperties) {
      next.extendedProperties = {
        private: { ...ev.extendedProperties?.private, ...body.extendedProperties.private },
        shared: { ...ev.extendedProperties?.shared, ...body.extendedProperties.shared },
      };
    }
    if (next.attendees) next.attendees = next.attendees.map((a) => ({ ...a, responseStatus: a.responseStatus ?? 'needsAction' }));
    if (Date.parse(next.end.dateTime) < Date.parse(next.start.dateTime)) {
      throw new HttpError(400, 'timeRangeEmpty', 'The specified time range is empty.');
    }
    // The organizer's significant changes raise the sequence (an attendee's answer does not).
    if (next.start.dateTime !== ev.start.dateTime || next.end.dateTime !== ev.end.dateTime || next.summary !== ev.summary) next.sequence++;
    s.ev = next;
    void this.touch(cal, s, 'after');
    return this.render(cal, next);
  }

  private remove(cal: Calendar, id: string): null {
    const s = this.find(cal, id);
    if (s.ev.status === 'cancelled') throw new HttpError(410, 'deleted', 'Resource has been deleted');
    s.ev = { ...s.ev, status: 'cancelled', sequence: s.ev.sequence + 1 };
    void this.touch(cal, s, 'after');
    return null;
  }

  // ---- channels ----

  private watch(cal: Calendar, body: any): unknown {
    if (body?.type !== 'web_hook' && body?.type !== 'webhook') throw new HttpError(400, 'invalid', 'Invalid value for: type');
    if (typeof body?.id !== 'string' || !body.id) throw new HttpError(400, 'required', 'Required: id');
    if (typeof body?.address !== 'string' || !/^https?:\/\//.test(body.address))
      throw new HttpError(400, 'push.webhookUrlNotHttps', 'WebHook callback must be HTTPS: ');
    if (this.channels.has(body.id)) throw new HttpError(400, 'channelIdNotUnique', `Channel id ${body.id} not unique`);
    const asked = Number(body.params?.ttl ?? MAX_TTL_SECONDS);
    const ttl = Math.min(Number.isFinite(asked) && asked > 0 ? asked : MAX_TTL_SECONDS, this.maxTtl);
    const ch: Channel = {
      id: body.id,
      calendarId: cal.id,
      resourceId: cal.resourceId,
      resourceUri: `${this.apiBaseUrl}calendar/v3/calendars/${encodeURIComponent(cal.id)}/events?alt=json`,
      token: body.token,
      address: body.address,
      expiresAt: this.now() + Math.round(ttl * 1000),
      stopped: false,
      messageNumber: 0,
    };
    this.channels.set(ch.id, ch);
    setImmediate(() => void this.track(this.deliver(ch, 'sync')));
    return {
      kind: 'api#channel',
      id: ch.id,
      resourceId: ch.resourceId,
      resourceUri: ch.resourceUri,
      ...(ch.token !== undefined ? { token: ch.token } : {}),
      expiration: String(ch.expiresAt),
    };
  }

  private stopChannel(body: any): null {
    const ch = this.channels.get(String(body?.id));
    if (!ch || ch.stopped || ch.resourceId !== body?.resourceId) {
      throw new HttpError(404, 'notFound', `Channel '${String(body?.id)}' not found for project '000000000000'`);
    }
    ch.stopped = true;
    return null;
  }

  private active(ch: Channel): boolean {
    return !ch.stopped && ch.expiresAt > this.now();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    return p;
  }

  private async deliver(ch: Channel, state: 'sync' | 'exists' | 'not_exists', token?: string): Promise<number> {
    ch.messageNumber++;
    const headers: Record<string, string> = {
      'X-Goog-Channel-ID': ch.id,
      'X-Goog-Channel-Expiration': new Date(ch.expiresAt).toUTCString(),
      'X-Goog-Resource-ID': ch.resourceId,
      'X-Goog-Resource-URI': ch.resourceUri,
      'X-Goog-Resource-State': state,
      'X-Goog-Message-Number': String(ch.messageNumber),
    };
    const channelToken = token ?? ch.token;
    if (channelToken !== undefined) headers['X-Goog-Channel-Token'] = channelToken;
    const n: Notification = { address: ch.address, headers };
    this.lastNotification = n;
    return this.post(n);
  }

  private async post(n: Notification): Promise<number> {
    try {
      const res = await fetch(n.address, {
        method: 'POST',
        headers: { ...n.headers, 'content-length': '0' },
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    } catch {
      return 0;
    }
  }

  // ---- the CalendarStandIn contract ----

  notify(calendarId: string, opts: { token?: string } = {}): Promise<number[]> {
    const chans = [...this.channels.values()].filter((c) => c.calendarId === calendarId && this.active(c));
    return this.track(Promise.all(chans.map((c) => this.deliver(c, 'exists', opts.token))));
  }

  async resendLast(): Promise<number[]> {
    return this.lastNotification ? [await this.track(this.post(this.lastNotification))] : [];
  }

  async lifecycle(calendarId: string, event: 'missed' | 'subscriptionRemoved' | 'reauthorizationRequired'): Promise<number[]> {
    if (event === 'missed') {
      this.expireCursors(calendarId);
      return this.notify(calendarId);
    }
    if (event === 'subscriptionRemoved') {
      // Google says nothing: the channel just stops.
      for (const c of this.channels.values()) if (c.calendarId === calendarId) c.stopped = true;
    }
    return [];
  }

  expireCursors(calendarId: string): void {
    this.calendar(calendarId).epoch++;
  }

  async personCreates(calendarId: string, e: PersonEvent): Promise<string> {
    const cal = this.calendar(calendarId);
    const id = base32hexId();
    const now = new Date(this.now()).toISOString();
    const ev: GEvent = {
      kind: 'calendar#event',
      id,
      etag: '',
      status: 'confirmed',
      created: now,
      updated: now,
      summary: e.title,
      ...(e.description ? { description: e.description } : {}),
      creator: { email: e.organizer.email, displayName: e.organizer.name },
      organizer: { email: e.organizer.email, displayName: e.organizer.name },
      start: { dateTime: new Date(e.start).toISOString(), timeZone: 'UTC' },
      end: { dateTime: new Date(e.end).toISOString(), timeZone: 'UTC' },
      iCalUID: `${id}@google.com`,
      sequence: 0,
      attendees: [
        { email: e.organizer.email, displayName: e.organizer.name, organizer: true, responseStatus: 'accepted' },
        { email: calendarId, resource: true, responseStatus: 'needsAction' },
        ...(e.attendees ?? []).map((email) => ({ email, responseStatus: 'needsAction' as const })),
      ],
      reminders: { useDefault: true },
      eventType: 'default',
    };
    const s: Stored = { ev, changedAt: 0 };
    cal.events.set(id, s);
    await this.touch(cal, s, 'now');
    return id;
  }

  async personUpdates(calendarId: string, eventId: string, patch: { start?: number; end?: number; title?: string }): Promise<void> {
    const cal = this.calendar(calendarId);
    const s = this.find(cal, eventId);
    const ev = { ...s.ev, sequence: s.ev.sequence + 1 };
    if (patch.start !== undefined) ev.start = { ...ev.start, dateTime: new Date(patch.start).toISOString() };
    if (patch.end !== undefined) ev.end = { ...ev.end, dateTime: new Date(patch.end).toISOString() };
    if (patch.title !== undefined) ev.summary = patch.title;
    s.ev = ev;
    await this.touch(cal, s, 'now');
  }

  async personDeletes(calendarId: string, eventId: string): Promise<void> {
    const cal = this.calendar(calendarId);
    const s = this.find(cal, eventId);
    s.ev = { ...s.ev, status: 'cancelled', sequence: s.ev.sequence + 1 };
    await this.touch(cal, s, 'now');
  }

  async personDeclinesForRoom(calendarId: string, eventId: string): Promise<void> {
    const cal = this.calendar(calendarId);
    const s = this.find(cal, eventId);
    const room = calendarId.toLowerCase();
    const attendees = s.ev.attendees ?? [];
    if (!attendees.some((a) => a.email.toLowerCase() === room))
      attendees.push({ email: calendarId, resource: true, responseStatus: 'needsAction' });
    s.ev = { ...s.ev, attendees: attendees.map((a) => (a.email.toLowerCase() === room ? { ...a, responseStatus: 'declined' } : a)) };
    await this.touch(cal, s, 'now');
  }

  /** The organizer drops the room: on the room's calendar its copy is cancelled (the organizer's event stays). */
  async personRemovesRoom(calendarId: string, eventId: string): Promise<void> {
    const cal = this.calendar(calendarId);
    const s = this.find(cal, eventId);
    const room = calendarId.toLowerCase();
    s.ev = { ...s.ev, status: 'cancelled', attendees: (s.ev.attendees ?? []).filter((a) => a.email.toLowerCase() !== room) };
    await this.touch(cal, s, 'now');
  }

  events(calendarId: string): StandInEvent[] {
    const cal = this.calendar(calendarId);
    const room = calendarId.toLowerCase();
    return [...cal.events.values()].map(({ ev }) => {
      const mine = ev.attendees?.find((a) => a.email.toLowerCase() === room);
      const organizer = ev.organizer.email.toLowerCase() === room;
      const answer = mine?.responseStatus === 'needsAction' ? 'none' : (mine?.responseStatus ?? 'none');
      return {
        id: ev.id,
        title: ev.summary ?? '',
        description: ev.description ?? '',
        start: Date.parse(ev.start.dateTime),
        end: Date.parse(ev.end.dateTime),
        organizerEmail: ev.organizer.email,
        attendeeEmails: (ev.attendees ?? []).map((a) => a.email),
        roomResponse: organizer ? 'organizer' : answer,
        roomComment: mine?.comment ?? null,
        tentative: ev.status === 'tentative',
        cancelled: ev.status === 'cancelled',
        bookingId: ev.extendedProperties?.private?.bookingId ?? null,
      };
    });
  }

  subscriptions(): StandInSubscription[] {
    return [...this.channels.values()].map((c) => ({
      id: c.id,
      calendarId: c.calendarId,
      expiresAt: c.expiresAt,
      notificationUrl: c.address,
      active: this.active(c),
    }));
  }
}

export type { GoogleStandIn };

export async function startGoogleStandIn(opts: GoogleStandInOptions = {}): Promise<CalendarStandIn & GoogleStandIn> {
  const s = new GoogleStandIn(opts);
  await s.start();
  return s;
}
