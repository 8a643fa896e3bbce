/**
 * A local stand-in of the parts of Microsoft Graph (v1.0) and the Microsoft identity
 * platform's token endpoint that the calendar connector uses
 * (src/modules/calendar-sync/connectors/microsoft.ts), faithful to the documented
 * requests and answers: client-credentials tokens, bearer-checked API calls,
 * subscriptions with the validation handshake, delta on the calendar view with
 * paging and delta links, events with transactionId dedup, single-value extended
 * properties, accept/decline/cancel, change and lifecycle notifications, and Graph's
 * error JSON. One difference: notification URLs may be plain http (Graph wants https).
 *
 * Listens on 127.0.0.1 port 0.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { CalendarStandIn, PersonEvent, StandInEvent, StandInSubscription } from './calendar-standin.js';
import { readBody } from './read-body.js';

type Json = Record<string, unknown>;
type Response = 'accepted' | 'declined' | 'tentativelyAccepted' | 'none' | 'organizer';

interface Attendee {
  email: string;
  name: string;
  type: 'required' | 'optional' | 'resource';
  response: Response;
}

interface GraphEvent {
  id: string;
  iCalUId: string;
  changeKey: string;
  created: number;
  modified: number;
  subject: string;
  body: string;
  start: number;
  end: number;
  showAs: string;
  organizer: { email: string; name: string };
  attendees: Attendee[];
  /** The mailbox's own response on its copy. */
  response: Response;
  comment: string | null;
  cancelled: boolean;
  deleted: boolean;
  transactionId: string | null;
  properties: { id: string; value: string }[];
  allowNewTimeProposals: boolean;
  /** Change sequence number of the last change (delta reads compare with it). */
  seq: number;
}

interface Mailbox {
  email: string;
  userId: string;
  name: string;
  events: Map<string, GraphEvent>;
  /** Bumped by expireCursors: older delta tokens answer 410. */
  cursorGen: number;
}

interface GraphSubscription {
  id: string;
  calendarId: string;
  resource: string;
  changeType: string;
  notificationUrl: string;
  lifecycleNotificationUrl: string | null;
  clientState: string | null;
  expiresAt: number;
  removed: boolean;
}

interface DeltaState {
  calendarId: string;
  start: number;
  end: number;
  seq: number;
  gen: number;
}

interface PendingPages {
  calendarId: string;
  gen: number;
  items: Json[];
  next: DeltaState;
}

export interface GraphStandInOptions {
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  /** Display names of mailboxes (rooms), by email. */
  names?: Record<string, string>;
  /** Seconds in Retry-After while `down` (default 2). */
  retryAfterSeconds?: number;
  /** How long the handshake may take, ms (Graph: 10 s). */
  validationTimeoutMs?: number;
}

export interface GraphStandIn extends CalendarStandIn {
  readonly provider: 'microsoft';
  /** Token requests granted so far. */
  readonly tokensIssued: number;
  /** Every token issued so far answers 401 from now on. */
  revokeTokens(): void;
  /** The next `times` API requests answer this status with Graph's error JSON. */
  failNext(status: number, code: string, message: string, opts?: { times?: number; headers?: Record<string, string> }): void;
  /** Notifications sent so far (body and the status the receiver answered). */
  readonly notifications: { url: string; body: Json; status: number }[];
  /** Waits until every notification sent in the background has been answered. */
  settled(): Promise<void>;
  /** The raw Graph event JSON (as a GET answers it), for assertions. */
  rawEvent(calendarId: string, eventId: string): Json | undefined;
}

class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const GUID_PROPERTY = /^String \{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\} Name (\S+)$/i;
const MAX_SUBSCRIPTION_MS = 10080 * 60_000;

const graphTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$10000');
const isoZ = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$10000Z');
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function newEventId(): string {
  return `AAMkAGI2${randomBytes(36).toString('base64url')}=`;
}

function newUid(): string {
  return `040000008200E00074C5B7101A82E00800000000${randomBytes(24).toString('hex').toUpperCase()}`;
}

function parseTime(v: unknown, what: string): number {
  if (!isObj(v) || typeof v.dateTime !== 'string') throw new GraphError(400, 'ErrorInvalidRequest', `${what} is required.`);
  if (v.timeZone !== 'UTC') throw new GraphError(400, 'TimeZoneNotSupportedException', `A valid TimeZone value must be specified.`);
  const ms = Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(v.dateTime) ? v.dateTime : `${v.dateTime.slice(0, 23)}Z`);
  if (!Number.isFinite(ms))
    throw new GraphError(
      400,
      'ErrorInvalidRequest',
      `Cannot convert the literal '${v.dateTime}' to the expected type 'Edm.DateTimeOffset'.`,
    );
  return ms;
}

function preferences(req: IncomingMessage): Map<string, string> {
  const raw = req.headers.prefer;
  const all = (Array.isArray(raw) ? raw : raw ? [raw] : []).flatMap((h) => h.split(','));
  const out = new Map<string, string>();
  for (const p of all) {
    const [k, ...rest] = p.trim().split('=');
    if (k) out.set(k.toLowerCase(), rest.join('=').replace(/^"|"$/g, ''));
  }
  return out;
}

/** Starts the stand-in. */
export async function startGraphStandIn(opts: GraphStandInOptions = {}): Promise<GraphStandIn> {
  const tenantId = opts.tenantId ?? randomUUID();
  const clientId = opts.clientId ?? randomUUID();
  const clientSecret = opts.clientSecret ?? `Qx8~${randomBytes(18).toString('base64url')}`;
  const state = new GraphState(tenantId, opts);
  const tokens = new Map<string, number>();
  let tokensIssued = 0;
  const failures: { status: number; code: string; message: string; headers: Record<string, string> }[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    state.requests.push({ method: req.method ?? 'GET', path: url.pathname, at: Date.now() });
    const raw = await readBody(req);
    try {
      if (standIn.down) {
        throw new GraphError(503, 'ServiceUnavailable', 'The service is temporarily unavailable.', {
          'retry-after': String(opts.retryAfterSeconds ?? 2),
        });
      }
      if (url.pathname === `/${tenantId}/oauth2/v2.0/token` || /^\/[^/]+\/oauth2\/v2\.0\/token$/.test(url.pathname)) {
        tokenRequest(req, res, url, raw);
        return;
      }
      checkBearer(req);
      const fail = failures.shift();
      if (fail) throw new GraphError(fail.status, fail.code, fail.message, fail.headers);
      const body = raw ? (JSON.parse(raw) as unknown) : undefined;
      const out = await state.route(req.method ?? 'GET', url, body, preferences(req));
      if (out.status === 204 || out.status === 202) {
        res.writeHead(out.status, { 'request-id': randomUUID() }).end();
        return;
      }
      send(res, out.status, out.body);
    } catch (err) {
      sendError(res, err);
    }
  }

  function tokenRequest(req: IncomingMessage, res: ServerResponse, url: URL, raw: string): void {
    const form = new URLSearchParams(raw);
    const aad = (status: number, error: string, description: string): void =>
      send(res, status, {
        error,
        error_description: `${description}\r\nTrace ID: ${randomUUID()}\r\nCorrelation ID: ${randomUUID()}\r\nTimestamp: ${new Date().toISOString()}`,
        error_codes: [status === 401 ? 7000215 : 90002],
        timestamp: new Date().toISOString(),
        trace_id: randomUUID(),
        correlation_id: randomUUID(),
      });
    if (req.method !== 'POST') return aad(405, 'invalid_request', 'AADSTS900561: The endpoint only accepts POST requests.');
    if (!url.pathname.startsWith(`/${tenantId}/`)) return aad(400, 'invalid_request', `AADSTS90002: Tenant not found.`);
    if (form.get('grant_type') !== 'client_credentials')
      return aad(400, 'unsupported_grant_type', 'AADSTS70003: The app requested an unsupported grant type.');
    if (form.get('client_id') !== clientId) return aad(400, 'unauthorized_client', 'AADSTS700016: Application not found in the directory.');
    if (form.get('client_secret') !== clientSecret) return aad(401, 'invalid_client', 'AADSTS7000215: Invalid client secret provided.');
    if (form.get('scope') !== 'https://graph.microsoft.com/.default')
      return aad(400, 'invalid_scope', 'AADSTS1002012: The provided value for scope is not valid.');
    const token = `eyJ0eXAiOiJKV1Qi.${randomBytes(32).toString('base64url')}`;
    tokens.set(token, Date.now() + 3599_000);
    tokensIssued++;
    send(res, 200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token });
  }

  function checkBearer(req: IncomingMessage): void {
    const auth = req.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    const until = tokens.get(token);
    if (!token) throw new GraphError(401, 'InvalidAuthenticationToken', 'Access token is empty.');
    if (until === undefined || until < Date.now())
      throw new GraphError(401, 'InvalidAuthenticationToken', 'Access token has expired or is not yet valid.');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.base = base;

  const standIn: GraphStandIn = {
    provider: 'microsoft',
    apiBaseUrl: base,
    tokenUrl: `${base}/${tenantId}/oauth2/v2.0/token`,
    credentials: { tenantId, clientId, clientSecret },
    autoNotify: true,
    down: false,
    get tokensIssued() {
      return tokensIssued;
    },
    get requests() {
      return state.requests;
    },
    get notifications() {
      return state.sent;
    },
    async close() {
      await state.settled();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
    revokeTokens: () => tokens.clear(),
    failNext(status, code, message, o = {}) {
      for (let i = 0; i < (o.times ?? 1); i++) failures.push({ status, code, message, headers: o.headers ?? {} });
    },
    settled: () => state.settled(),
    rawEvent: (cal, id) => {
      const e = state.mailbox(cal).events.get(id);
      return e ? state.eventJson(state.mailbox(cal), e, true, true) : undefined;
    },
    personCreates: (cal, e) => Promise.resolve(state.personCreates(cal, e)),
    personUpdates: (cal, id, patch) => Promise.resolve(state.personUpdates(cal, id, patch)),
    personDeletes: (cal, id) => Promise.resolve(state.personChange(cal, id, 'delete')),
    personDeclinesForRoom: (cal, id) => Promise.resolve(state.personChange(cal, id, 'decline')),
    personRemovesRoom: (cal, id) => Promise.resolve(state.personChange(cal, id, 'removeRoom')),
    events: (cal) => state.standInEvents(cal),
    subscriptions: () => state.standInSubscriptions(),
    notify: (cal, o) => state.notifyNow(cal, o?.token),
    resendLast: () => state.resendLast(),
    lifecycle: (cal, event) => state.lifecycle(cal, event),
    expireCursors: (cal) => {
      state.mailbox(cal).cursorGen++;
    },
  };
  state.autoNotify = () => standIn.autoNotify;
  return standIn;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; odata.metadata=minimal; charset=utf-8', 'request-id': randomUUID() });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, err: unknown): void {
  const e =
    err instanceof GraphError
      ? err
      : err instanceof SyntaxError
        ? new GraphError(
            400,
            'BadRequest',
            'Unable to read JSON request payload. Please ensure Content-Type header is set and payload is of valid JSON format.',
          )
        : new GraphError(500, 'generalException', 'An internal server error occurred.');
  const requestId = randomUUID();
  res.writeHead(e.status, { 'content-type': 'application/json', 'request-id': requestId, ...e.headers });
  res.end(
    JSON.stringify({
      error: {
        code: e.code,
        message: e.message,
        innerError: { date: new Date().toISOString().slice(0, 19), 'request-id': requestId, 'client-request-id': requestId },
      },
    }),
  );
}

/** The Graph tenant's mailboxes, subscriptions and delta state. */
class GraphState {
  base = '';
  readonly requests: { method: string; path: string; at: number }[] = [];
  readonly sent: { url: string; body: Json; status: number }[] = [];
  autoNotify: () => boolean = () => true;
  private readonly mailboxes = new Map<string, Mailbox>();
  private readonly subs = new Map<string, GraphSubscription>();
  private readonly deltaTokens = new Map<string, DeltaState>();
  private readonly pages = new Map<string, PendingPages>();
  private readonly inflight = new Set<Promise<unknown>>();
  private last: { url: string; body: Json } | null = null;
  private seq = 0;

  constructor(
    private readonly tenantId: string,
    private readonly opts: GraphStandInOptions,
  ) {}

  mailbox(email: string): Mailbox {
    const key = email.toLowerCase();
    let m = this.mailboxes.get(key);
    if (!m) {
      m = { email: key, userId: randomUUID(), name: this.opts.names?.[key] ?? key.split('@')[0]!, events: new Map(), cursorGen: 0 };
      this.mailboxes.set(key, m);
    }
    return m;
  }

  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  // ---- API routing -------------------------------------------------------

  async route(method: string, url: URL, body: unknown, prefer: Map<string, string>): Promise<{ status: number; body?: unknown }> {
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] !== 'v1.0') throw new GraphError(400, 'BadRequest', 'Invalid version.');
    const [, head, a, b, c, d] = parts;
    if (head === 'subscriptions') return this.subscriptionRoute(method, a, body);
    if (head !== 'users' || !a) throw new GraphError(400, 'BadRequest', `Resource not found for the segment '${head ?? ''}'.`);
    const box = this.mailbox(a);
    if (b === 'calendarView' && c === 'delta' && method === 'GET') return { status: 200, body: this.delta(box, url, prefer) };
    if (b !== 'events') throw new GraphError(400, 'BadRequest', `Resource not found for the segment '${b ?? ''}'.`);
    if (!c) {
      if (method === 'POST') return this.createEvent(box, body);
      throw new GraphError(405, 'ErrorInvalidRequest', 'The OData request is not supported.');
    }
    const ev = box.events.get(c);
    if (!ev || ev.deleted) throw new GraphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    if (d) return this.eventAction(box, ev, d, method, body);
    if (method === 'GET')
      return { status: 200, body: this.eventJson(box, ev, prefer.get('outlook.body-content-type') === 'text', this.expandFilter(url)) };
    if (method === 'PATCH') return { status: 200, body: this.patchEvent(box, ev, body) };
    if (method === 'DELETE') {
      this.change(box, ev, 'deleted', () => {
        ev.deleted = true;
      });
      return { status: 204 };
    }
    throw new GraphError(405, 'ErrorInvalidRequest', 'The OData request is not supported.');
  }

  private expandFilter(url: URL): string | null {
    const m = /^singleValueExtendedProperties\(\$filter=id eq '([^']+)'\)$/.exec(url.searchParams.get('$expand') ?? '');
    return m ? m[1]! : null;
  }

  // ---- subscriptions -----------------------------------------------------

  private async subscriptionRoute(method: string, id: string | undefined, body: unknown): Promise<{ status: number; body?: unknown }> {
    if (!id) {
      if (method !== 'POST') throw new GraphError(405, 'ExtensionError', 'Operation not supported.');
      return { status: 201, body: await this.createSubscription(body) };
    }
    const sub = this.subs.get(id);
    if (!sub || sub.removed || sub.expiresAt < Date.now()) throw new GraphError(404, 'ResourceNotFound', `The object was not found.`);
    if (method === 'DELETE') {
      sub.removed = true;
      return { status: 204 };
    }
    if (method === 'PATCH') {
      sub.expiresAt = this.expiry(isObj(body) ? body.expirationDateTime : undefined);
      return { status: 200, body: this.subJson(sub) };
    }
    if (method === 'GET') return { status: 200, body: this.subJson(sub) };
    throw new GraphError(405, 'ExtensionError', 'Operation not supported.');
  }

  private expiry(v: unknown): number {
    const at = typeof v === 'string' ? Date.parse(v) : NaN;
    if (!Number.isFinite(at))
      throw new GraphError(400, 'InvalidRequest', 'expirationDateTime is a required property for subscription creation.');
    if (at <= Date.now()) throw new GraphError(400, 'InvalidRequest', 'Subscription expiration can only be in the future.');
    if (at > Date.now() + MAX_SUBSCRIPTION_MS)
      throw new GraphError(400, 'InvalidRequest', 'Subscription expiration can only be 10080 minutes in the future.');
    return at;
  }

  private async createSubscription(body: unknown): Promise<Json> {
    if (!isObj(body)) throw new GraphError(400, 'InvalidRequest', 'A subscription is required.');
    const resource = typeof body.resource === 'string' ? body.resource : '';
    const m = /^\/?users\/([^/]+)\/events$/i.exec(resource);
    if (!m) throw new GraphError(400, 'InvalidRequest', `Resource '${resource}' is not supported.`);
    const changeType = typeof body.changeType === 'string' ? body.changeType : '';
    if (!changeType || !changeType.split(',').every((t) => ['created', 'updated', 'deleted'].includes(t)))
      throw new GraphError(400, 'InvalidRequest', 'changeType is invalid.');
    const notificationUrl = typeof body.notificationUrl === 'string' ? body.notificationUrl : '';
    if (!/^https?:\/\//.test(notificationUrl)) throw new GraphError(400, 'InvalidRequest', 'The notification URL is invalid.');
    const lifecycleUrl = typeof body.lifecycleNotificationUrl === 'string' ? body.lifecycleNotificationUrl : null;
    const clientState = typeof body.clientState === 'string' ? body.clientState : null;
    if (clientState && clientState.length > 128) throw new GraphError(400, 'InvalidRequest', 'clientState is longer than 128 characters.');
    const expiresAt = this.expiry(body.expirationDateTime);
    // Both endpoints are validated, even when they are the same URL.
    await this.validate(notificationUrl);
    if (lifecycleUrl) await this.validate(lifecycleUrl);
    const sub: GraphSubscription = {
      id: randomUUID(),
      calendarId: this.mailbox(decodeURIComponent(m[1]!)).email,
      resource,
      changeType,
      notificationUrl,
      lifecycleNotificationUrl: lifecycleUrl,
      clientState,
      expiresAt,
      removed: false,
    };
    this.subs.set(sub.id, sub);
    return this.subJson(sub);
  }

  /** Graph's validation handshake: a POST with ?validationToken=…, 200 text/plain echoing it within 10 s. */
  private async validate(target: string): Promise<void> {
    const token = `Validation: Testing client application reachability for subscription Request-Id: ${randomUUID()}`;
    const url = new URL(target);
    url.searchParams.set('validationToken', token);
    const failed = new GraphError(
      400,
      'ValidationError',
      'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.',
    );
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: '',
        signal: AbortSignal.timeout(this.opts.validationTimeoutMs ?? 10_000),
      });
      const text = await res.text();
      const type = res.headers.get('content-type') ?? '';
      if (res.status !== 200 || text !== token || !type.startsWith('text/plain')) throw failed;
    } catch {
      throw failed;
    }
  }

  private subJson(s: GraphSubscription): Json {
    return {
      '@odata.context': `${this.base}/v1.0/$metadata#subscriptions/$entity`,
      id: s.id,
      resource: s.resource,
      applicationId: randomUUID(),
      changeType: s.changeType,
      clientState: s.clientState,
      notificationUrl: s.notificationUrl,
      lifecycleNotificationUrl: s.lifecycleNotificationUrl,
      expirationDateTime: isoZ(s.expiresAt),
      creatorId: randomUUID(),
      includeResourceData: false,
      latestSupportedTlsVersion: 'v1_2',
      encryptionCertificate: null,
      encryptionCertificateId: null,
      notificationQueryOptions: null,
      notificationUrlAppId: null,
    };
  }

  standInSubscriptions(): StandInSubscription[] {
    return [...this.subs.values()].map((s) => ({
      id: s.id,
      calendarId: s.calendarId,
      expiresAt: s.expiresAt,
      notificationUrl: s.notificationUrl,
      active: !s.removed && s.expiresAt > Date.now(),
    }));
  }

  private activeSubs(calendarId: string): GraphSubscription[] {
    const key = calendarId.toLowerCase();
    return [...this.subs.values()].filter((s) => s.calendarId === key && !s.removed && s.expiresAt > Date.now());
  }

  // ---- delta -------------------------------------------------------------

  private delta(box: Mailbox, url: URL, prefer: Map<string, string>): Json {
    const size = Math.max(1, Math.min(1000, Number(prefer.get('odata.maxpagesize') ?? 100) || 100));
    const skip = url.searchParams.get('$skiptoken');
    const deltaToken = url.searchParams.get('$deltatoken');
    let pending: PendingPages;
    if (skip) {
      const p = this.pages.get(skip);
      if (!p || p.gen !== box.cursorGen || p.calendarId !== box.email) throw this.expired();
      this.pages.delete(skip);
      pending = p;
    } else if (deltaToken) {
      const st = this.deltaTokens.get(deltaToken);
      if (!st || st.gen !== box.cursorGen || st.calendarId !== box.email) throw this.expired();
      pending = this.collect(box, st);
    } else {
      const start = Date.parse(url.searchParams.get('startDateTime') ?? '');
      const end = Date.parse(url.searchParams.get('endDateTime') ?? '');
      if (!Number.isFinite(start) || !Number.isFinite(end))
        throw new GraphError(
          400,
          'ErrorInvalidParameter',
          'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.',
        );
      pending = this.collect(box, { calendarId: box.email, start, end, seq: -1, gen: box.cursorGen });
    }
    const value = pending.items.slice(0, size);
    const rest = pending.items.slice(size);
    const link = `${this.base}/v1.0/users/${encodeURIComponent(box.email)}/calendarView/delta`;
    const out: Json = { '@odata.context': `${this.base}/v1.0/$metadata#Collection(event)`, value };
    if (rest.length > 0) {
      const t = randomBytes(24).toString('base64url');
      this.pages.set(t, { ...pending, items: rest });
      out['@odata.nextLink'] = `${link}?$skiptoken=${t}`;
    } else {
      const t = randomBytes(24).toString('base64url');
      this.deltaTokens.set(t, pending.next);
      out['@odata.deltaLink'] = `${link}?$deltatoken=${t}`;
    }
    return out;
  }

  private expired(): GraphError {
    return new GraphError(410, 'syncStateNotFound', 'The sync state generation is not found. Please do a full resync.');
  }

  /** Events changed since st.seq: the ones in the window in full, the others as @removed. */
  private collect(box: Mailbox, st: DeltaState): PendingPages {
    const items: Json[] = [];
    const ordered = [...box.events.values()].sort((x, y) => x.seq - y.seq);
    for (const e of ordered) {
      if (e.seq <= st.seq) continue;
      const visible = !e.deleted && !e.cancelled && e.start < st.end && e.end > st.start;
      if (visible) items.push(this.eventJson(box, e, false, false));
      else if (st.seq >= 0) items.push({ '@odata.type': '#microsoft.graph.event', id: e.id, '@removed': { reason: 'deleted' } });
    }
    return { calendarId: box.email, gen: box.cursorGen, items, next: { ...st, seq: this.seq } };
  }

  // ---- events ------------------------------------------------------------

  eventJson(box: Mailbox, e: GraphEvent, textBody: boolean, withProperties: boolean | string | null): Json {
    const isOrganizer = e.organizer.email === box.email;
    const json: Json = {
      '@odata.etag': `W/"${e.changeKey}"`,
      id: e.id,
      createdDateTime: isoZ(e.created),
      lastModifiedDateTime: isoZ(e.modified),
      changeKey: e.changeKey,
      categories: [],
      transactionId: e.transactionId,
      originalStartTimeZone: 'UTC',
      originalEndTimeZone: 'UTC',
      iCalUId: e.iCalUId,
      reminderMinutesBeforeStart: 15,
      isReminderOn: !isOrganizer,
      hasAttachments: false,
      subject: e.subject,
      bodyPreview: e.body.slice(0, 255),
      importance: 'normal',
      sensitivity: 'normal',
      isAllDay: false,
      isCancelled: e.cancelled,
      isOrganizer,
      responseRequested: true,
      seriesMasterId: null,
      showAs: e.showAs,
      type: 'singleInstance',
      webLink: `https://outlook.office365.com/owa/?itemid=${encodeURIComponent(e.id)}&exvsurl=1&path=/calendar/item`,
      onlineMeetingUrl: null,
      isOnlineMeeting: false,
      onlineMeetingProvider: 'unknown',
      allowNewTimeProposals: e.allowNewTimeProposals,
      isDraft: false,
      hideAttendees: false,
      responseStatus: { response: e.response, time: e.response === 'none' ? '0001-01-01T00:00:00Z' : isoZ(e.modified) },
      body: textBody
        ? { contentType: 'text', content: e.body }
        : {
            contentType: 'html',
            content: `<html><head></head><body>${e.body.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\n/g, '<br>')}</body></html>`,
          },
      start: { dateTime: graphTime(e.start), timeZone: 'UTC' },
      end: { dateTime: graphTime(e.end), timeZone: 'UTC' },
      location: { displayName: box.name, locationType: 'default', uniqueIdType: 'unknown' },
      locations: [],
      recurrence: null,
      attendees: e.attendees.map((a) => ({
        type: a.type,
        status: { response: a.response, time: a.response === 'none' ? '0001-01-01T00:00:00Z' : isoZ(e.modified) },
        emailAddress: { name: a.name, address: a.email },
      })),
      organizer: { emailAddress: { name: e.organizer.name, address: e.organizer.email } },
    };
    if (withProperties) {
      const props = e.properties.filter((p) => typeof withProperties !== 'string' || p.id.toLowerCase() === withProperties.toLowerCase());
      if (props.length > 0) json.singleValueExtendedProperties = props;
    }
    return json;
  }

  private createEvent(box: Mailbox, body: unknown): { status: number; body: Json } {
    if (!isObj(body)) throw new GraphError(400, 'BadRequest', 'Empty Payload. JSON content expected.');
    const transactionId = typeof body.transactionId === 'string' ? body.transactionId : null;
    if (transactionId) {
      const existing = [...box.events.values()].find((e) => e.transactionId === transactionId);
      if (existing) return { status: 201, body: this.eventJson(box, existing, false, false) };
    }
    const start = parseTime(body.start, 'Start');
    const end = parseTime(body.end, 'End');
    if (end < start) throw new GraphError(400, 'ErrorInvalidRequest', 'The start time must be before the end time.');
    const now = Date.now();
    const e: GraphEvent = {
      id: newEventId(),
      iCalUId: newUid(),
      changeKey: randomBytes(12).toString('base64'),
      created: now,
      modified: now,
      subject: typeof body.subject === 'string' ? body.subject : '',
      body: isObj(body.body) && typeof body.body.content === 'string' ? body.body.content : '',
      start,
      end,
      showAs: typeof body.showAs === 'string' ? body.showAs : 'busy',
      organizer: { email: box.email, name: box.name },
      attendees: this.attendeesFrom(body.attendees),
      response: 'organizer',
      comment: null,
      cancelled: false,
      deleted: false,
      transactionId,
      properties: this.propertiesFrom(body.singleValueExtendedProperties),
      allowNewTimeProposals: body.allowNewTimeProposals !== false,
      seq: ++this.seq,
    };
    box.events.set(e.id, e);
    this.announce(box, e, 'created');
    return { status: 201, body: this.eventJson(box, e, false, false) };
  }

  private attendeesFrom(v: unknown): Attendee[] {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw new GraphError(400, 'BadRequest', 'attendees must be a collection.');
    return v.map((a): Attendee => {
      const email = isObj(a) && isObj(a.emailAddress) && typeof a.emailAddress.address === 'string' ? a.emailAddress.address : '';
      if (!email) throw new GraphError(400, 'ErrorInvalidRecipients', 'At least one recipient is not valid.');
      const name = isObj(a) && isObj(a.emailAddress) && typeof a.emailAddress.name === 'string' ? a.emailAddress.name : email;
      const type = isObj(a) && (a.type === 'optional' || a.type === 'resource') ? a.type : 'required';
      return { email: email.toLowerCase(), name, type, response: 'none' };
    });
  }

  private propertiesFrom(v: unknown): { id: string; value: string }[] {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw new GraphError(400, 'BadRequest', 'singleValueExtendedProperties must be a collection.');
    return v.map((p) => {
      if (!isObj(p) || typeof p.id !== 'string' || !GUID_PROPERTY.test(p.id) || typeof p.value !== 'string')
        throw new GraphError(400, 'ErrorInvalidProperty', 'The property id is not valid.');
      return { id: p.id, value: p.value };
    });
  }

  private patchEvent(box: Mailbox, e: GraphEvent, body: unknown): Json {
    if (!isObj(body)) throw new GraphError(400, 'BadRequest', 'Empty Payload. JSON content expected.');
    const start = body.start !== undefined ? parseTime(body.start, 'Start') : e.start;
    const end = body.end !== undefined ? parseTime(body.end, 'End') : e.end;
    if (end < start) throw new GraphError(400, 'ErrorInvalidRequest', 'The start time must be before the end time.');
    this.change(box, e, 'updated', () => {
      if (typeof body.subject === 'string') e.subject = body.subject;
      if (isObj(body.body) && typeof body.body.content === 'string') e.body = body.body.content;
      if (typeof body.showAs === 'string') e.showAs = body.showAs;
      if (body.attendees !== undefined) e.attendees = this.attendeesFrom(body.attendees);
      if (body.singleValueExtendedProperties !== undefined) e.properties = this.propertiesFrom(body.singleValueExtendedProperties);
      e.start = start;
      e.end = end;
    });
    return this.eventJson(box, e, false, false);
  }

  private eventAction(box: Mailbox, e: GraphEvent, action: string, method: string, body: unknown): { status: number } {
    if (method !== 'POST') throw new GraphError(405, 'ErrorInvalidRequest', 'The OData request is not supported.');
    const comment = isObj(body) && typeof body.comment === 'string' ? body.comment : null;
    const organizer = e.organizer.email === box.email;
    if (action === 'cancel') {
      if (!organizer)
        throw new GraphError(
          400,
          'ErrorInvalidRequest',
          "Your request can't be completed. You need to be an organizer to cancel a meeting.",
        );
      // Cancelling sends the cancellation and removes the organizer's copy.
      this.change(box, e, 'deleted', () => {
        e.cancelled = true;
        e.deleted = true;
        e.comment = comment;
      });
      return { status: 202 };
    }
    const answers: Record<string, Response> = { accept: 'accepted', decline: 'declined', tentativelyAccept: 'tentativelyAccepted' };
    const answer = answers[action];
    if (!answer) throw new GraphError(400, 'BadRequest', `Resource not found for the segment '${action}'.`);
    if (organizer)
      throw new GraphError(400, 'ErrorInvalidRequest', "Your request can't be completed. You can't respond to a meeting you organized.");
    this.change(box, e, 'updated', () => {
      e.response = answer;
      e.comment = comment;
      for (const a of e.attendees) if (a.email === box.email) a.response = answer;
    });
    return { status: 202 };
  }

  /** Applies a change to an event: new change key, sequence number and a notification. */
  private change(box: Mailbox, e: GraphEvent, type: 'created' | 'updated' | 'deleted', apply: () => void): void {
    apply();
    e.changeKey = randomBytes(12).toString('base64');
    e.modified = Math.max(Date.now(), e.modified + 1);
    e.seq = ++this.seq;
    this.announce(box, e, type);
  }

  // ---- a person in Outlook -----------------------------------------------

  personCreates(calendarId: string, p: PersonEvent): string {
    const box = this.mailbox(calendarId);
    const now = Date.now();
    const guests: Attendee[] = (p.attendees ?? []).map((email) => ({
      email: email.toLowerCase(),
      name: email,
      type: 'required',
      response: 'none',
    }));
    const e: GraphEvent = {
      id: newEventId(),
      iCalUId: newUid(),
      changeKey: randomBytes(12).toString('base64'),
      created: now,
      modified: now,
      subject: p.title,
      body: p.description ?? '',
      start: p.start,
      end: p.end,
      showAs: 'busy',
      organizer: { email: p.organizer.email.toLowerCase(), name: p.organizer.name },
      attendees: [...guests, { email: box.email, name: box.name, type: 'resource', response: 'none' }],
      response: 'none',
      comment: null,
      cancelled: false,
      deleted: false,
      transactionId: null,
      properties: [],
      allowNewTimeProposals: true,
      seq: ++this.seq,
    };
    box.events.set(e.id, e);
    this.announce(box, e, 'created');
    return e.id;
  }

  personUpdates(calendarId: string, id: string, patch: { start?: number; end?: number; title?: string }): void {
    const box = this.mailbox(calendarId);
    const e = this.live(box, id);
    const moved = (patch.start !== undefined && patch.start !== e.start) || (patch.end !== undefined && patch.end !== e.end);
    this.change(box, e, 'updated', () => {
      if (patch.start !== undefined) e.start = patch.start;
      if (patch.end !== undefined) e.end = patch.end;
      if (patch.title !== undefined) e.subject = patch.title;
      // A new time asks the invitees again (the room's answer is reset).
      if (moved && e.organizer.email !== box.email) {
        e.response = 'none';
        e.comment = null;
        for (const a of e.attendees) if (a.email === box.email) a.response = 'none';
      }
    });
  }

  personChange(calendarId: string, id: string, what: 'delete' | 'decline' | 'removeRoom'): void {
    const box = this.mailbox(calendarId);
    const e = this.live(box, id);
    if (what === 'decline') {
      this.change(box, e, 'updated', () => {
        e.response = 'declined';
        for (const a of e.attendees) if (a.email === box.email) a.response = 'declined';
      });
      return;
    }
    // The room's copy of a cancelled meeting (or one it was removed from) is removed by the calendar attendant.
    this.change(box, e, 'deleted', () => {
      e.cancelled = true;
      e.deleted = true;
      if (what === 'removeRoom') e.attendees = e.attendees.filter((a) => a.email !== box.email);
    });
  }

  private live(box: Mailbox, id: string): GraphEvent {
    const e = box.events.get(id);
    if (!e || e.deleted || e.cancelled) throw new Error(`graph stand-in: no live event ${id} on ${box.email}`);
    return e;
  }

  standInEvents(calendarId: string): StandInEvent[] {
    const box = this.mailbox(calendarId);
    return [...box.events.values()].map((e) => ({
      id: e.id,
      title: e.subject,
      description: e.body,
      start: e.start,
      end: e.end,
      organizerEmail: e.organizer.email,
      attendeeEmails: e.attendees.map((a) => a.email),
      roomResponse: e.response === 'tentativelyAccepted' ? 'tentative' : e.response,
      roomComment: e.comment,
      tentative: e.showAs === 'tentative',
      cancelled: e.cancelled || e.deleted,
      bookingId: e.properties.find((p) => GUID_PROPERTY.exec(p.id)?.[1]?.toLowerCase() === 'bookingid')?.value ?? null,
    }));
  }

  // ---- notifications -----------------------------------------------------

  private notification(box: Mailbox, sub: GraphSubscription, e: GraphEvent | null, type: string, token?: string): Json {
    const resource = e ? `Users/${box.userId}/Events/${e.id}` : `Users/${box.userId}/Events`;
    const item: Json = {
      subscriptionId: sub.id,
      subscriptionExpirationDateTime: isoZ(sub.expiresAt),
      changeType: type,
      resource,
      resourceData: e
        ? { '@odata.type': '#Microsoft.Graph.Event', '@odata.id': resource, '@odata.etag': `W/"${e.changeKey}"`, id: e.id }
        : { '@odata.type': '#Microsoft.Graph.Event', '@odata.id': resource },
      clientState: token ?? sub.clientState,
      tenantId: this.tenantId,
    };
    return { value: [item] };
  }

  private announce(box: Mailbox, e: GraphEvent, type: 'created' | 'updated' | 'deleted'): void {
    if (!this.autoNotify()) return;
    for (const sub of this.activeSubs(box.email)) {
      if (!sub.changeType.split(',').includes(type)) continue;
      const body = this.notification(box, sub, e, type);
      const p = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.post(sub.notificationUrl, body));
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    }
  }

  private async post(url: string, body: Json): Promise<number> {
    this.last = { url, body };
    let status = 0;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = 0;
    }
    this.sent.push({ url, body, status });
    return status;
  }

  async notifyNow(calendarId: string, token?: string): Promise<number[]> {
    const box = this.mailbox(calendarId);
    const latest = [...box.events.values()].sort((x, y) => y.seq - x.seq)[0] ?? null;
    const out: number[] = [];
    for (const sub of this.activeSubs(box.email))
      out.push(await this.post(sub.notificationUrl, this.notification(box, sub, latest, 'updated', token)));
    return out;
  }

  async resendLast(): Promise<number[]> {
    await this.settled();
    if (!this.last) return [];
    return [await this.post(this.last.url, this.last.body)];
  }

  async lifecycle(calendarId: string, event: 'missed' | 'subscriptionRemoved' | 'reauthorizationRequired'): Promise<number[]> {
    const box = this.mailbox(calendarId);
    const out: number[] = [];
    for (const sub of this.activeSubs(box.email)) {
      if (event === 'subscriptionRemoved') sub.removed = true;
      const body = {
        value: [
          {
            subscriptionId: sub.id,
            subscriptionExpirationDateTime: isoZ(sub.expiresAt),
            tenantId: this.tenantId,
            clientState: sub.clientState,
            lifecycleEvent: event,
            resource: sub.resource,
            organizationId: this.tenantId,
          },
        ],
      };
      out.push(await this.post(sub.lifecycleNotificationUrl ?? sub.notificationUrl, body));
    }
    return out;
  }
}
