/**
 * The console's one way to the service: the documented ops API (and nothing
 * private), with the session cookie and, on writes, the x-csrf-token header.
 * Types are the contract's own (src/contract, `Static<>` of the schemas the
 * routes validate and serialize with), imported with `import type`: erased at
 * build time, so TypeBox never enters the bundle (scripts/build-console.ts checks).
 */
import type { ClockState, Delivery } from '../contract/ops.js';
import type {
  AssetNow,
  AssetState,
  ConsoleDevice,
  ConsoleInvite,
  ConsoleListener,
  ConsolePayment,
  ConsolePaymentDetail,
  ConsoleSite,
  OpsMeeting,
  OpsMeetingDetail,
  SessionStarted,
} from '../contract/ops-console.js';
import type { MeetingStatus } from '../contract/meetings.js';
import type { PageMeta } from '../contract/envelope.js';
import type { AnalyticsGroupBy, AnalyticsStatus, UtilisationRow } from '../contract/analytics.js';

export type { AssetDay, AssetState, BookingSummary, FloorNow } from '../contract/ops-console.js';
export type { Delivery, PageMeta };
export type { AnalyticsGroupBy, AnalyticsStatus, UtilisationRow };

/** The contract's ASSET_STATES and MEETING_STATUSES, restated as values: importing the contract's values would bundle TypeBox. */
export const ASSET_STATES: readonly AssetState[] = ['free', 'booked', 'checked-in', 'cleaning', 'closed'];
export const MEETING_STATUSES: readonly MeetingStatus[] = ['unpaid', 'active', 'checked-in', 'done', 'cancelled', 'rejected'];

/** GET /ops/v1/site: projects, floors, rooms, desks and the members by name. */
export type Site = ConsoleSite;
export type Project = Site['projects'][number];
export type Floor = Site['floors'][number];
export type Room = Site['rooms'][number];
export type Desk = Site['desks'][number];
/** A polygon vertex in percent of the plan. */
export type Point = NonNullable<Room['polygon']>[number];
export const px = (p: Point) => p.xPct;
export const py = (p: Point) => p.yPct;

/** An asset of GET /ops/v1/floors/:floorId/now: its state now, the booking holding it and the next. */
export type FloorAsset = AssetNow;

/** A booking in the ops list (GET /ops/v1/meetings). */
export type Meeting = OpsMeeting;
/** One booking with its history and payment state (GET /ops/v1/meetings/:id). */
export type MeetingDetail = OpsMeetingDetail;
export type HistoryEntry = MeetingDetail['history'][number];

export type Listener = ConsoleListener;
export type Device = ConsoleDevice;
export type Invite = ConsoleInvite;
export type Clock = ClockState;
export type PendingPayment = ConsolePayment;
/** One payment with its provider, provider events and voids/refunds (GET /ops/v1/meetings/:id/payment). */
export type PaymentDetail = ConsolePaymentDetail;
export type Session = SessionStarted;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

const CSRF_KEY = 'console.csrf';
let csrfToken: string | null = sessionStorage.getItem(CSRF_KEY);
let onSignedOut: () => void = () => {};

export function setSignedOutHandler(fn: () => void): void {
  onSignedOut = fn;
}
export function hasCsrf(): boolean {
  return csrfToken !== null;
}
function setCsrf(token: string | null): void {
  csrfToken = token;
  if (token) sessionStorage.setItem(CSRF_KEY, token);
  else sessionStorage.removeItem(CSRF_KEY);
}

type Query = Record<string, string | number | undefined | readonly string[]>;

export function withQuery(path: string, query: Query = {}): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === '') continue;
    if (typeof v === 'object') for (const item of v) qs.append(k, item);
    else qs.append(k, String(v));
  }
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<{ data: T; meta?: PageMeta }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'NETWORK', 'network');
  }
  if (res.status === 204) return { data: undefined as T };
  let json: { code?: string; message?: string | string[]; data?: T; meta?: PageMeta } = {};
  try {
    json = (await res.json()) as typeof json;
  } catch {
    /* not JSON: keep the status */
  }
  if (!res.ok) throw failure(res, path, json);
  return { data: json.data as T, meta: json.meta };
}

/** The ApiError of a refused answer (its envelope's code and message); a 401 outside sign-in signs the console out. */
function failure(res: Response, path: string, json: { code?: string; message?: string | string[] }): ApiError {
  const message = Array.isArray(json.message) ? json.message.join('; ') : (json.message ?? res.statusText);
  const retry = res.headers.get('retry-after');
  const err = new ApiError(res.status, json.code ?? String(res.status), message, retry ? Number(retry) : null);
  if (res.status === 401 && path !== '/ops/v1/session') {
    setCsrf(null);
    onSignedOut();
  }
  return err;
}

/** A GET answered as a file in another format (e.g. `Accept: text/csv`), as a Blob; a refusal is the API's error as usual. */
export async function getFile(path: string, query: Query, accept: string): Promise<Blob> {
  let res: Response;
  try {
    res = await fetch(withQuery(path, query), { headers: { accept }, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'network');
  }
  if (!res.ok) {
    let json: { code?: string; message?: string | string[] } = {};
    try {
      json = (await res.json()) as typeof json;
    } catch {
      /* not JSON: keep the status */
    }
    throw failure(res, path, json);
  }
  return res.blob();
}

export const get = async <T>(path: string, query?: Query): Promise<T> => (await call<T>('GET', withQuery(path, query))).data;
export const getPage = <T>(path: string, query?: Query) => call<T[]>('GET', withQuery(path, query));
export const post = async <T>(path: string, body: unknown = {}): Promise<T> => (await call<T>('POST', path, body)).data;

export async function signIn(token: string): Promise<void> {
  const data = await post<Session>('/ops/v1/session', { token });
  setCsrf(data.csrfToken);
}
export async function signOut(): Promise<void> {
  try {
    await call('DELETE', '/ops/v1/session');
  } finally {
    setCsrf(null);
  }
}
/**
 * The service's time now, in epoch ms: the sandbox clock where it answers
 * (development, uat: it can run ahead of real time), else the service's own
 * `Date` header of that answer (production, where service time is real time).
 * The browser's clock is only the last resort.
 */
export async function serviceNow(): Promise<number> {
  try {
    const res = await fetch('/ops/v1/clock', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
    if (res.ok) {
      const now = Date.parse(((await res.json()) as { data?: Clock }).data?.now ?? '');
      if (Number.isFinite(now)) return now;
    }
    const date = Date.parse(res.headers.get('date') ?? '');
    if (Number.isFinite(date)) return date;
  } catch {
    /* unreachable: fall back below */
  }
  return Date.now();
}

/** Whether the cookie still holds a session (and we still know its CSRF token for writes). */
export async function checkSession(): Promise<boolean> {
  try {
    const data = await get<Session>('/ops/v1/session');
    if (data?.csrfToken) setCsrf(data.csrfToken);
    return hasCsrf();
  } catch {
    return false;
  }
}
