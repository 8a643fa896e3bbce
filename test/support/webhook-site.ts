/**
 * Helpers for the webhook and lifecycle HTTP tests: a site in Asia/Bangkok with
 * rooms and desks (each with its own meetingConfig) and webhook listeners pointing
 * at a loopback receiver, a service started with its sandbox clock parked on a
 * known local time, and thin wrappers around the meeting and ops routes.
 */
import { expect } from 'vitest';
import { DateTime } from 'luxon';
import type { FastifyBaseLogger } from 'fastify';
import { startTestService, type HttpResult, type TestService } from './test-service.js';
import { actAsToken, appToken, applySite, idOf, siteDocument, type SiteIds } from './fixtures.js';
import { at, dayAhead, everyDay, setClock } from './catalogue.js';
import { DELIVERY_JOB } from '../../src/modules/webhooks/jobs.js';

export const TZ = 'Asia/Bangkok';
export const MINUTE = 60_000;

/** Booking event kinds of the spec's event catalog (written out here, not taken from the service). */
export const BOOKING_KINDS = ['BOOK', 'MODIFY', 'CANCEL', 'REMINDER', 'NO_SHOW_WARNING', 'ENDING_SOON', 'PAYMENT_DUE'] as const;
export const ROOM_EVENTS = BOOKING_KINDS.map((k) => `ROOM_${k}`);
export const DESK_EVENTS = BOOKING_KINDS.map((k) => `DESK_${k}`);
export const ALL_BOOKING_EVENTS = [...ROOM_EVENTS, ...DESK_EVENTS];

export const NO_SHOW_REASON = 'No-show — auto-cancelled by system';

/** A listener secret (at least 32 characters). */
export const secretFor = (key: string) => `whsec-${key}-0123456789abcdef0123456789abcdef`;

export interface MeetingConfigSpec {
  preStartMinutes?: number;
  postStartWarnMinutes?: number;
  postStartExpireMinutes?: number;
  preEndMinutes?: number;
}

export interface ChargeRateSpec {
  perHour: number;
  perDay: number;
  /** Flat fee once per booking. */
  amount?: number;
}

export interface AssetSpec {
  key: string;
  name: string;
  /** `w12` (name 12F, default for rooms), `w3` (name 3F, default for desks) or `x1` (name Annex 1F, in project annex). */
  floor?: 'w12' | 'w3' | 'x1';
  meetingConfig?: MeetingConfigSpec;
  /** Price of the asset (site document `chargeRate`); absent = free. */
  chargeRate?: ChargeRateSpec;
  /** A room's email (its mailbox or resource calendar: connected calendars). */
  email?: string;
}

/** A promo code of the site document (`promoCodes[]`); `project` defaults to tower. */
export interface PromoSpec {
  key: string;
  code: string;
  name: string;
  project?: 'tower' | 'annex';
  percentOff?: number;
  amountOff?: number;
  active?: boolean;
  validFrom?: string;
  validUntil?: string;
  maxUses?: number;
}

export interface HookSpec {
  key: string;
  /** Full URL (e.g. a closed port); otherwise `receiverUrl(path)`. */
  url: string;
  events: string[];
  auth?: Record<string, unknown>;
  secret?: string;
}

export const FLOOR_NAMES = { w12: '12F', w3: '3F', x1: 'Annex 1F' } as const;

export interface SiteSpec {
  rooms?: AssetSpec[];
  desks?: AssetSpec[];
  hooks?: HookSpec[];
  promoCodes?: PromoSpec[];
  /** Overrides of the fixtures' project fields by project key (a value of null removes the field). */
  projects?: Record<string, Record<string, unknown>>;
  /** Access groups with their devices (site document `accessGroups[]`), e.g. a reader to scan visitors in. */
  accessGroups?: unknown[];
  /** Payment provider accounts (site document `paymentProviders[]`). */
  paymentProviders?: unknown[];
  /** Calendar connections (site document `calendarConnections[]`). */
  calendarConnections?: unknown[];
}

function assetConfig(open: string, close: string, mc: MeetingConfigSpec | undefined) {
  return everyDay(open, close, [], {
    minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
    maxAdvanceBookingDays: 60,
    maxDurationMinutes: 900,
    bookMultipleDayRoom: false,
    ...(mc ? { meetingConfig: mc } : {}),
  });
}

/** The fixtures' site (tower in Asia/Bangkok, alice/bob, app portal) plus floors 12F and 3F, the assets and the listeners. */
export function webhookSite(o: SiteSpec) {
  const doc = siteDocument() as any;
  for (const [key, fields] of Object.entries(o.projects ?? {})) {
    const project = doc.projects.find((p: any) => p.key === key);
    if (!project) throw new Error(`no project ${key} in the fixtures`);
    for (const [f, v] of Object.entries(fields)) {
      if (v === null) delete project[f];
      else project[f] = v;
    }
  }
  doc.zones = [{ key: 'wz', project: 'tower', name: 'Tower' }];
  doc.floors = [
    { key: 'w12', zone: 'wz', name: FLOOR_NAMES.w12 },
    { key: 'w3', zone: 'wz', name: FLOOR_NAMES.w3 },
  ];
  const assets = [...(o.rooms ?? []), ...(o.desks ?? [])];
  if (assets.some((a) => a.floor === 'x1')) {
    doc.zones.push({ key: 'xz', project: 'annex', name: 'Annex' });
    doc.floors.push({ key: 'x1', zone: 'xz', name: FLOOR_NAMES.x1 });
  }
  doc.rooms = (o.rooms ?? []).map((r) => ({
    key: r.key,
    floor: r.floor ?? 'w12',
    name: r.name,
    capacity: 6,
    cleanupMinutes: 15,
    config: assetConfig('06:00:00', '23:00:00', r.meetingConfig),
    ...(r.chargeRate ? { chargeRate: r.chargeRate } : {}),
    ...(r.email ? { email: r.email } : {}),
  }));
  doc.desks = (o.desks ?? []).map((d, i) => ({
    key: d.key,
    floor: d.floor ?? 'w3',
    name: d.name,
    index: i + 1,
    config: assetConfig('07:00:00', '22:00:00', d.meetingConfig),
    ...(d.chargeRate ? { chargeRate: d.chargeRate } : {}),
  }));
  if (o.accessGroups) doc.accessGroups = o.accessGroups;
  if (o.paymentProviders) doc.paymentProviders = o.paymentProviders;
  if (o.calendarConnections) doc.calendarConnections = o.calendarConnections;
  if (o.promoCodes) doc.promoCodes = o.promoCodes.map((p) => ({ ...p, project: p.project ?? 'tower' }));
  doc.webhooks = (o.hooks ?? []).map((h) => ({
    key: h.key,
    project: 'tower',
    url: h.url,
    secret: h.secret ?? secretFor(h.key),
    events: h.events,
    ...(h.auth ? { auth: h.auth } : {}),
  }));
  return doc;
}

export interface WebhookCtx {
  svc: TestService;
  ids: SiteIds;
  /** Local midnight (Asia/Bangkok) of day D, two days after the service's local today. */
  D: DateTime;
  projectId: string;
  /** act_as token of alice (organizer of the bookings). */
  alice: string;
  /** Plain app token of portal. */
  portal: string;
  id(key: string): string;
  /** ISO instant (+07:00) of local HH:mm on D + plusDays. */
  t(hhmm: string, plusDays?: number): string;
  book(body: Record<string, unknown>, token?: string): Promise<HttpResult>;
  /** Books room `key` on D + plusDays from..to local; asserts 201 and returns the Meeting. */
  bookRoom(key: string, from: string, to: string, plusDays?: number, extra?: Record<string, unknown>): Promise<any>;
  /** Books desk `key` (from..to local, or a timePeriod when `to` is one); asserts 201 and returns the Meeting. */
  bookDesk(key: string, from: string, to: string, plusDays?: number, extra?: Record<string, unknown>): Promise<any>;
  get(id: string, token?: string): Promise<any>;
  patch(id: string, body: Record<string, unknown>, token?: string): Promise<HttpResult>;
  action(id: string, action: 'cancel' | 'check-in' | 'check-out', body?: Record<string, unknown>, token?: string): Promise<HttpResult>;
  /** POST /ops/v1/clock {set} to local HH:mm[:ss] on D + plusDays. */
  clockTo(hhmm: string, plusDays?: number): Promise<void>;
  /** POST /ops/v1/clock {set: iso}. */
  clockSet(iso: string | number): Promise<void>;
  /** POST /ops/v1/clock {advanceMinutes}. */
  advance(minutes: number): Promise<void>;
  /** GET /ops/v1/webhooks/{id} data. */
  listener(key: string): Promise<any>;
  /** GET /ops/v1/webhooks/{id}/deliveries data (newest first). */
  deliveries(key: string): Promise<any[]>;
  /** Waits for every due or in-flight delivery attempt. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export interface StartWebhookOptions extends SiteSpec {
  /** Local time on D the clock is parked at (default 06:00). */
  clockAt?: string;
  env?: Record<string, string>;
  /** Request and error logs go here (none by default), as `npm start` logs them. */
  logger?: FastifyBaseLogger;
}

export async function startWebhookService(o: StartWebhookOptions): Promise<WebhookCtx> {
  const svc = await startTestService({ env: o.env, logger: o.logger });
  const ids = await applySite(svc, webhookSite(o));
  const D = await dayAhead(svc, TZ, 2);
  await setClock(svc, at(D, o.clockAt ?? '06:00'));
  const alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
  const portal = (await appToken(svc)).access_token;
  const id = (key: string) => idOf(ids, key);
  const t = (hhmm: string, plusDays = 0) => at(D, hhmm, plusDays);
  const book = (body: Record<string, unknown>, token = alice) => svc.request('POST', '/meetings', { token, body });
  const created = (res: HttpResult) => {
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  const ctx: WebhookCtx = {
    svc,
    ids,
    D,
    alice,
    portal,
    id,
    t,
    book,
    projectId: id('tower'),
    bookRoom: async (key, from, to, plusDays = 0, extra = {}) =>
      created(
        await book({
          meetingRoomId: id(key),
          title: `${key} ${from}`,
          startDateTime: t(from, plusDays),
          endDateTime: t(to, plusDays),
          ...extra,
        }),
      ),
    bookDesk: async (key, from, to, plusDays = 0, extra = {}) =>
      created(
        await book({
          deskId: id(key),
          title: `${key} ${from}`,
          startDateTime: t(from, plusDays),
          ...(/^\d\d:\d\d$/.test(to) ? { endDateTime: t(to, plusDays) } : { timePeriod: to }),
          ...extra,
        }),
      ),
    get: async (mid, token = alice) => {
      const res = await svc.request('GET', `/meetings/${mid}`, { token });
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    },
    patch: (mid, body, token = alice) => svc.request('PATCH', `/meetings/${mid}`, { token, body }),
    action: (mid, action, body = {}, token = alice) => svc.request('POST', `/meetings/${mid}/${action}`, { token, body }),
    clockTo: (hhmm, plusDays = 0) => setClock(svc, at(D, hhmm, plusDays)),
    clockSet: async (when) => {
      const res = await svc.ops('POST', '/ops/v1/clock', { set: typeof when === 'number' ? new Date(when).toISOString() : when });
      expect(res.status, res.text).toBe(200);
    },
    advance: async (minutes) => {
      const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: minutes });
      expect(res.status, res.text).toBe(200);
    },
    listener: async (key) => {
      const res = await svc.ops('GET', `/ops/v1/webhooks/${id(key)}`);
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    },
    deliveries: async (key) => {
      const res = await svc.ops('GET', `/ops/v1/webhooks/${id(key)}/deliveries?limit=1000`);
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    },
    drain: () => svc.services.jobs.drain(DELIVERY_JOB),
    close: () => svc.close(),
  };
  return ctx;
}

/** Property-local HH:mm of an instant, computed with luxon. */
export const localHm = (iso: string | number) =>
  (typeof iso === 'number' ? DateTime.fromMillis(iso) : DateTime.fromISO(iso)).setZone(TZ).toFormat('HH:mm');

/** Hands out consecutive day offsets, `days` at a time, so each test works on days of its own (the sandbox clock only moves forward). */
export function dayCounter(): (days?: number) => number {
  let next = 0;
  return (days = 1) => {
    const d = next;
    next += days;
    return d;
  };
}
