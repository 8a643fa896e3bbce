/**
 * Helpers for the booking-lifecycle HTTP tests (POST/GET/PATCH /meetings and the
 * cancel, check-in and check-out actions): a site built on the shared fixtures
 * with extra people and apps, a service started per describe block with its clock
 * parked on a known local time, tokens for every kind of caller, and thin wrappers
 * around the meeting routes.
 */
import { expect } from 'vitest';
import { type DateTime } from 'luxon';
import { startTestService, type HttpResult, type TestService } from './test-service.js';
import { actAsToken, appToken, applySite, HUB_APP_ID, HUB_SECRET, idOf, siteDocument, type SiteIds } from './fixtures.js';
import { at, dayAhead, everyDay, qs, setClock, type QueryValue } from './catalogue.js';

export const TZ = 'Asia/Bangkok';

/** Single-project app (tower) with NO project role: sees the project's bookings, may not book private rooms. */
export const VIEWER_APP_ID = 'meeting-viewer-dev';
export const VIEWER_SECRET = 'meeting-viewer-secret-0123456789abcdef-01';

/** Open 07:00-22:00 every day with a 12:00-13:00 break, cleaning 15 minutes, no lead time. */
export function roomConfig(extra: Record<string, unknown> = {}) {
  return everyDay('07:00:00', '22:00:00', [{ start: '12:00:00', end: '13:00:00' }], {
    minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
    maxAdvanceBookingDays: 30,
    maxDurationMinutes: 240,
    bookMultipleDayRoom: false,
    ...extra,
  });
}

export interface RoomSpec {
  key: string;
  name?: string;
  floor?: string;
  cleanupMinutes?: number;
  isPublic?: boolean;
  status?: 'active' | 'inactive';
  config?: Record<string, unknown>;
}

export interface DeskSpec {
  key: string;
  name?: string;
  floor?: string;
  config?: Record<string, unknown>;
}

export interface SiteOptions {
  rooms?: RoomSpec[];
  desks?: DeskSpec[];
  /** User keys to mark blockedFromBooking. */
  blocked?: string[];
  /** Overrides of room cleanupMinutes by key (for re-applies). */
  cleanup?: Record<string, number>;
}

/**
 * The fixtures' site (tower + annex, alice/bob/carol, apps portal/hub/plain) plus:
 * - zones/floors `fT` (tower) and `fX` (annex);
 * - users `dana` (brand staff of acme, member of annex only) and `eve` (member of tower);
 * - portal links carol (`ext-carol`) and eve (`ext-eve`); hub links dana (`hub-dana`);
 * - app `viewer` (tower, no project role, no act_as);
 * - the rooms and desks asked for (on floor fT unless said otherwise).
 */
export function meetingSite(opts: SiteOptions = {}) {
  const doc = siteDocument() as any;
  doc.zones = [
    { key: 'zT', project: 'tower', name: 'Tower' },
    { key: 'zX', project: 'annex', name: 'Annex' },
  ];
  doc.floors = [
    { key: 'fT', zone: 'zT', name: '10F' },
    { key: 'fX', zone: 'zX', name: '1F' },
  ];
  doc.users.push(
    {
      key: 'dana',
      email: 'dana@example.com',
      name: 'Dana Staff',
      phone: '+66812345671',
      memberships: [{ project: 'annex', role: 'member' }],
      brandStaff: ['acme'],
    },
    {
      key: 'eve',
      email: 'eve@example.com',
      name: 'Eve Member',
      phone: '+66812345672',
      memberships: [{ project: 'tower', role: 'member' }],
    },
  );
  for (const u of doc.users) u.blockedFromBooking = (opts.blocked ?? []).includes(u.key);
  const portal = doc.apps.find((a: any) => a.key === 'portal');
  portal.links.push({ user: 'carol', externalUserId: 'ext-carol' }, { user: 'eve', externalUserId: 'ext-eve' });
  const hub = doc.apps.find((a: any) => a.key === 'hub');
  hub.links.push({ user: 'dana', externalUserId: 'hub-dana' });
  doc.apps.push({ key: 'viewer', appId: VIEWER_APP_ID, appSecret: VIEWER_SECRET, name: 'Meeting viewer', projects: ['tower'] });
  doc.rooms = (opts.rooms ?? []).map((r) => ({
    key: r.key,
    floor: r.floor ?? 'fT',
    name: r.name ?? r.key,
    capacity: 6,
    status: r.status ?? 'active',
    isPublic: r.isPublic ?? true,
    cleanupMinutes: opts.cleanup?.[r.key] ?? r.cleanupMinutes ?? 15,
    config: r.config ?? roomConfig(),
  }));
  doc.desks = (opts.desks ?? []).map((d, i) => ({
    key: d.key,
    floor: d.floor ?? 'fT',
    name: d.name ?? d.key,
    index: i + 1,
    config: d.config ?? everyDay('07:00:00', '22:00:00'),
  }));
  return doc;
}

export type Caller = 'portal' | 'viewer' | 'hub' | 'alice' | 'bob' | 'carol' | 'eve' | 'dana' | 'visitor';

export interface MeetingCtx {
  svc: TestService;
  ids: SiteIds;
  /** Local midnight of the test day D (two days after the service's local today). */
  D: DateTime;
  tok: Record<Caller, string>;
  id(key: string): string;
  /** ISO instant of local HH:mm on D (+ plusDays). */
  t(hhmm: string, plusDays?: number): string;
  request(method: string, path: string, token: string | null, body?: unknown): Promise<HttpResult>;
  book(caller: Caller | string, body: Record<string, unknown>): Promise<HttpResult>;
  /** Books a room on D from..to (local HH:mm) and asserts 201; returns the Meeting. */
  bookRoom(caller: Caller, room: string, from: string, to: string, extra?: Record<string, unknown>, plusDays?: number): Promise<any>;
  get(caller: Caller | string, id: string): Promise<HttpResult>;
  list(caller: Caller | string, params: Record<string, QueryValue>): Promise<HttpResult>;
  patch(caller: Caller | string, id: string, body: Record<string, unknown>): Promise<HttpResult>;
  action(
    caller: Caller | string,
    id: string,
    action: 'cancel' | 'check-in' | 'check-out',
    body?: Record<string, unknown>,
  ): Promise<HttpResult>;
  /** Moves the sandbox clock to local HH:mm[:ss] on D (+ plusDays). */
  clockTo(hhmm: string, plusDays?: number): Promise<void>;
  /** Re-applies the site with other options (same rooms unless given). */
  reapply(opts: SiteOptions): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a service, applies `meetingSite(opts)`, parks the clock at D 07:00 local
 * (D = two days after the service's local today) and fetches a token for every caller.
 */
export async function startMeetingService(opts: SiteOptions = {}, clockAt = '07:00'): Promise<MeetingCtx> {
  const svc = await startTestService();
  let current = opts;
  const ids = await applySite(svc, meetingSite(opts));
  const D = await dayAhead(svc, TZ, 2);
  await setClock(svc, at(D, clockAt));
  const id = (key: string) => idOf(ids, key);
  const tok = {} as Record<Caller, string>;
  tok.portal = (await appToken(svc)).access_token;
  tok.viewer = (await appToken(svc, VIEWER_APP_ID, VIEWER_SECRET)).access_token;
  tok.hub = (await appToken(svc, HUB_APP_ID, HUB_SECRET)).access_token;
  tok.alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
  tok.bob = (await actAsToken(svc, { subject: 'ext-bob' })).access_token;
  tok.carol = (await actAsToken(svc, { subject: 'ext-carol' })).access_token;
  tok.eve = (await actAsToken(svc, { subject: 'ext-eve' })).access_token;
  tok.visitor = (await actAsToken(svc, { subject: 'ext-meeting-visitor' })).access_token;
  tok.dana = (
    await actAsToken(svc, {
      appId: HUB_APP_ID,
      secret: HUB_SECRET,
      subject: id('dana'),
      subjectType: 'service_member_id',
    })
  ).access_token;
  const token = (caller: string) => (tok as Record<string, string>)[caller] ?? caller;
  const request = (method: string, path: string, tk: string | null, body?: unknown) =>
    svc.request(method, path, { token: tk, ...(body !== undefined ? { body } : {}) });
  const t = (hhmm: string, plusDays = 0) => at(D, hhmm, plusDays);
  const ctx: MeetingCtx = {
    svc,
    ids,
    D,
    tok,
    id,
    t,
    request,
    book: (caller, body) => request('POST', '/meetings', token(caller), body),
    bookRoom: async (caller, room, from, to, extra = {}, plusDays = 0) => {
      const res = await request('POST', '/meetings', token(caller), {
        meetingRoomId: id(room),
        title: `${room} ${from}-${to}`,
        startDateTime: t(from, plusDays),
        endDateTime: t(to, plusDays),
        ...extra,
      });
      return created(res);
    },
    get: (caller, mid) => request('GET', `/meetings/${mid}`, token(caller)),
    list: (caller, params) => request('GET', `/meetings${qs(params)}`, token(caller)),
    patch: (caller, mid, body) => request('PATCH', `/meetings/${mid}`, token(caller), body),
    action: (caller, mid, action, body) => request('POST', `/meetings/${mid}/${action}`, token(caller), body ?? {}),
    clockTo: (hhmm, plusDays = 0) => setClock(svc, at(D, hhmm, plusDays)),
    reapply: async (next) => {
      current = { ...current, ...next };
      await applySite(svc, meetingSite(current));
    },
    close: () => svc.close(),
  };
  return ctx;
}

/** Asserts a 201 KS000 envelope and returns the Meeting. */
export function created(res: HttpResult): any {
  expect(res.status, res.text).toBe(201);
  expect(res.body.code).toBe('KS000');
  expect(res.body.success).toBe(true);
  return res.body.data;
}

/** Asserts a 202 KS000 envelope and returns the Meeting. */
export function accepted(res: HttpResult): any {
  expect(res.status, res.text).toBe(202);
  expect(res.body.code).toBe('KS000');
  expect(res.body.success).toBe(true);
  return res.body.data;
}

/** The `action`s of a Meeting's histories, in order. */
export const actions = (m: any): string[] => (m.histories as { action: string }[]).map((h) => h.action);

/** Same instant? (compares ISO strings with any offset). */
export function sameInstant(a: string, b: string): boolean {
  return Date.parse(a) === Date.parse(b);
}

/**
 * Is the instant inside the minute starting at `minuteStart` (an ISO instant)? Service
 * time keeps running after the sandbox clock is set, so "now" carries seconds.
 */
export function inMinute(iso: string, minuteStart: string): boolean {
  const t = Date.parse(iso);
  const from = Date.parse(minuteStart);
  return t >= from && t < from + 60_000;
}

/** Local weekday code (MO..SU) of D + plusDays, for RRULE BYDAY. */
export function byDayCode(D: DateTime, plusDays: number): string {
  return ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'][D.plus({ days: plusDays }).weekday - 1];
}
