/**
 * The console's one way to the service: the documented ops API (and nothing
 * private), with the session cookie and, on writes, the x-csrf-token header.
 * Types mirror docs of CONSOLE-CONTRACT / operator-api.md (the UI cannot import
 * the server's TypeBox schemas without bundling TypeBox, so only the fields it reads).
 */

export type AssetState = 'free' | 'booked' | 'checked-in' | 'cleaning' | 'closed';
export const ASSET_STATES: readonly AssetState[] = ['free', 'booked', 'checked-in', 'cleaning', 'closed'];
export const MEETING_STATUSES = ['unpaid', 'active', 'checked-in', 'done', 'cancelled', 'rejected'] as const;

export interface Project { _id: string; key: string | null; name: string; timezone: string; currency: string }
export interface Floor { _id: string; key: string | null; name: string; projectId: string; zoneId: string; zoneName: string; planImageUrl: string | null }
/** A polygon vertex in percent of the plan: the API's {x, y} (the site document's {xPct, yPct} also read). */
export interface Point { x?: number; y?: number; xPct?: number; yPct?: number }
export const px = (p: Point) => p.x ?? p.xPct ?? 0;
export const py = (p: Point) => p.y ?? p.yPct ?? 0;
export interface Room { _id: string; key: string | null; name: string; floorId: string; projectId: string; capacity: number; status: string; isPublic: boolean; polygon: Point[] | null }
export interface Desk { _id: string; key: string | null; name: string; floorId: string; projectId: string; index: number; status: string }
export interface SiteUser { _id: string; name: string; projectIds?: string[] }
export interface Site { projects: Project[]; floors: Floor[]; rooms: Room[]; desks: Desk[]; users?: SiteUser[] }

export interface BookingSummary { _id: string; title: string; status: string; startDateTime: string; endDateTime: string; organizerName: string }
export interface FloorAsset { _id: string; kind: 'room' | 'desk'; name: string; state: AssetState; current: BookingSummary | null; next: BookingSummary | null }
export interface FloorNow { floorId: string; at: string; timeZone: string; assets: FloorAsset[] }

export interface Span { start: string; end: string }
export interface DayBooking { _id: string; title: string; status: string; startDateTime: string; endDateTime: string; cleaningEndsAt: string | null; organizerName: string }
export interface AssetDay { asset: { _id: string; kind: 'room' | 'desk'; name: string }; date: string; timeZone: string; open: Span[]; breaks: Span[]; bookings: DayBooking[] }

export type ActorKind = 'member' | 'app' | 'staff' | 'system' | 'calendar';
export interface HistoryEntry { action: string; actor: string; actorKind?: ActorKind; actorName?: string | null; source: string; reason?: string | null; at: string }
export interface Payment { status: string; amount: number; currency: string; dueAt: string | null }
export interface Meeting {
  _id: string; status: string; projectId: string; title: string; body?: string; startDateTime: string; endDateTime: string;
  meetingRoomId?: string; meetingRoomName?: string; deskId?: string; deskName?: string; allDay?: boolean;
  organizer?: { name: string; email: string; displayName?: string };
  attendees?: { email: string; name: string; responseStatus: string }[];
  cancelReason?: string; createdAt?: string;
  history?: HistoryEntry[]; payment?: Payment | null;
}
export interface PageMeta { limit: number; offset: number; total: number }

export interface Listener { _id: string; key: string | null; projectId: string; url: string; events: string[]; enabled: boolean; consecutiveFailures: number }
export interface Delivery {
  id: string; webhookId: string; type: string; status: string; attempts: number; lastStatus: number | null; lastError: string | null;
  nextAttemptAt: string | null; createdAt: string; deliveredAt: string | null;
}
export interface Device { _id: string; name: string; kind: string; online: boolean; pendingChanges: number; lastSyncedAt: string | null }
export interface Invite {
  _id: string; projectId: string; hostUserId: string; status: string; visitorName: string; visitorEmail: string | null;
  startDateTime: string; endDateTime: string | null; validUntil: string; licensePlate: string | null; visitPurpose: string | null;
}
export interface Clock { now: string; offsetMs: number }
export interface PendingPayment { _id: string; meetingId: string; status: string; amount: number; currency: string; expiresAt: string | null }

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly retryAfter: number | null = null) {
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
    if (Array.isArray(v)) for (const item of v) qs.append(k, item);
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
    json = await res.json();
  } catch {
    /* not JSON: keep the status */
  }
  if (!res.ok) {
    const message = Array.isArray(json.message) ? json.message.join('; ') : json.message ?? res.statusText;
    const retry = res.headers.get('retry-after');
    const err = new ApiError(res.status, json.code ?? String(res.status), message, retry ? Number(retry) : null);
    if (res.status === 401 && path !== '/ops/v1/session') {
      setCsrf(null);
      onSignedOut();
    }
    throw err;
  }
  return { data: json.data as T, meta: json.meta };
}

export const get = async <T>(path: string, query?: Query): Promise<T> => (await call<T>('GET', withQuery(path, query))).data;
export const getPage = <T>(path: string, query?: Query) => call<T[]>('GET', withQuery(path, query));
export const post = async <T>(path: string, body: unknown = {}): Promise<T> => (await call<T>('POST', path, body)).data;

export async function signIn(token: string): Promise<void> {
  const data = await post<{ csrfToken: string; expiresAt: string }>('/ops/v1/session', { token });
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
    const data = await get<{ expiresAt: string; csrfToken?: string }>('/ops/v1/session');
    if (data?.csrfToken) setCsrf(data.csrfToken);
    return hasCsrf();
  } catch {
    return false;
  }
}
