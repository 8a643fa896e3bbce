/**
 * Helpers of the analytics HTTP tests: a site whose rooms and desks have the hours each scenario needs,
 * a service with its clock and tokens, waiting for the `analytics` job (GET /ops/v1/analytics/status)
 * before reading figures, and reading GET /ops/v1/analytics/utilisation as JSON or CSV.
 */
import { expect } from 'vitest';
import type { DateTime } from 'luxon';
import { OPS_TOKEN, startTestService, type HttpResult, type TestService } from './test-service.js';
import { actAsToken, applySite, HUB_APP_ID, HUB_SECRET, idOf, siteDocument, type SiteIds } from './fixtures.js';
import { at, dayAhead, everyDay, qs, setClock, type ClockRange, type QueryValue } from './catalogue.js';

/** The figures of a row, in the CSV's column order. */
export const FIGURES = [
  'availableMinutes',
  'bookedMinutes',
  'occupiedMinutes',
  'releasedMinutes',
  'bookings',
  'checkIns',
  'noShows',
  'cancellations',
  'walkIns',
  'utilisation',
  'occupancy',
  'noShowRate',
] as const;

export interface Figures {
  availableMinutes: number;
  bookedMinutes: number;
  occupiedMinutes: number;
  releasedMinutes: number;
  bookings: number;
  checkIns: number;
  noShows: number;
  cancellations: number;
  walkIns: number;
  utilisation: number | null;
  occupancy: number | null;
  noShowRate: number | null;
}

/** A row's figures from the minutes and counts given (the rest 0); the ratios as the definitions make them. */
export function figures(f: Partial<Figures> & { availableMinutes: number }, reachedStart?: number): Figures {
  const base = {
    bookedMinutes: 0,
    occupiedMinutes: 0,
    releasedMinutes: 0,
    bookings: 0,
    checkIns: 0,
    noShows: 0,
    cancellations: 0,
    walkIns: 0,
    ...f,
  };
  const ratio = (n: number, d: number) => (d === 0 ? null : n / d);
  return {
    ...base,
    utilisation: f.utilisation !== undefined ? f.utilisation : ratio(base.bookedMinutes, base.availableMinutes),
    occupancy: f.occupancy !== undefined ? f.occupancy : ratio(base.occupiedMinutes, base.availableMinutes),
    noShowRate: f.noShowRate !== undefined ? f.noShowRate : ratio(base.noShows, reachedStart ?? 0),
  };
}

/** Ratios compared to 12 digits (they are divisions), the rest exactly. */
export function expectFigures(row: any, want: Figures, label = ''): void {
  expect(row, label).toBeTypeOf('object');
  for (const k of FIGURES) {
    const got = row[k];
    const exp = want[k];
    if (typeof exp === 'number' && !Number.isInteger(exp)) expect(got, `${label} ${k}`).toBeCloseTo(exp, 12);
    else expect(got, `${label} ${k}`).toBe(exp);
  }
}

/** Polls GET /ops/v1/analytics/status until nothing is pending (10 s at most). */
export async function waitForAnalytics(svc: TestService, projectId: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await svc.ops('GET', `/ops/v1/analytics/status${qs({ project: projectId })}`);
    expect(res.status, res.text).toBe(200);
    const { pendingBookings, pendingWalkIns, pendingAssets } = res.body.data;
    if (pendingBookings === 0 && pendingWalkIns === 0 && pendingAssets === 0) return;
    if (Date.now() > until) throw new Error(`analytics still pending: ${res.text}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export type UtilisationParams = Record<string, QueryValue>;

/** GET /ops/v1/analytics/utilisation (raw), once the figures are up to date. */
export async function utilisationRequest(
  svc: TestService,
  params: UtilisationParams,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  if (typeof params.project === 'string') await waitForAnalytics(svc, params.project);
  return svc.request('GET', `/ops/v1/analytics/utilisation${qs(params)}`, { token: OPS_TOKEN, headers });
}

/** The rows (asserts a 200 envelope with an array). */
export async function utilisation(svc: TestService, params: UtilisationParams): Promise<any[]> {
  const res = await utilisationRequest(svc, params);
  expect(res.status, res.text).toBe(200);
  expect(res.body.success).toBe(true);
  expect(Array.isArray(res.body.data), res.text).toBe(true);
  return res.body.data;
}

/** The CSV answer, parsed. */
export async function utilisationCsv(svc: TestService, params: UtilisationParams): Promise<{ res: HttpResult; lines: string[][] }> {
  const res = await utilisationRequest(svc, params, { accept: 'text/csv' });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type') ?? '').toMatch(/^text\/csv/);
  return { res, lines: parseCsv(res.text) };
}

/** RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF); a trailing line break ends the last record. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || record.length) {
    record.push(field);
    records.push(record);
  }
  return records;
}

// ---------------------------------------------------------------------------------------------
// The site

export interface AssetSpec {
  key: string;
  name?: string;
  /** Floor key (default `t1`, the tower's floor). */
  floor?: string;
  /** Opening hours every day (default 08:00-18:00, no break). */
  open?: string;
  close?: string;
  breaks?: ClockRange[];
  /** meetingConfig of the asset (e.g. `{postStartExpireMinutes: -1}`: no no-show cancel). */
  meetingConfig?: Record<string, unknown>;
  chargeRate?: { perHour: number; perDay: number };
}

export interface AnalyticsSiteOptions {
  rooms?: AssetSpec[];
  desks?: AssetSpec[];
  /** Time zone of the tower (default Asia/Bangkok). */
  timezone?: string;
  /** The tower's `analytics.namedReports`. */
  namedReports?: boolean;
}

/** Rules of every asset: no lead time, bookable 60 days ahead, up to 10 hours, no cleaning. */
function assetConfig(a: AssetSpec) {
  return everyDay(a.open ?? '08:00:00', a.close ?? '18:00:00', a.breaks ?? [], {
    minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
    maxAdvanceBookingDays: 60,
    maxDurationMinutes: 600,
    bookMultipleDayRoom: false,
    ...(a.meetingConfig ? { meetingConfig: a.meetingConfig } : {}),
  });
}

/**
 * The fixtures' site (projects tower and annex, alice/bob/carol, apps portal and hub) plus:
 * - tower: zone `zT` with floor `t1` (10F);
 * - annex: zone `zN` (North) with floors `n1` (N1F) and `n2` (N2F), zone `zS` (South) with floor `s1` (S1F);
 * - the rooms and desks asked for (on `t1` unless said otherwise), without cleaning time.
 */
export function analyticsSite(o: AnalyticsSiteOptions = {}) {
  const doc = siteDocument() as any;
  const tower = doc.projects.find((p: any) => p.key === 'tower');
  tower.timezone = o.timezone ?? 'Asia/Bangkok';
  if (o.namedReports !== undefined) tower.analytics = { namedReports: o.namedReports };
  doc.zones = [
    { key: 'zT', project: 'tower', name: 'Tower' },
    { key: 'zN', project: 'annex', name: 'North' },
    { key: 'zS', project: 'annex', name: 'South' },
  ];
  doc.floors = [
    { key: 't1', zone: 'zT', name: '10F' },
    { key: 'n1', zone: 'zN', name: 'N1F' },
    { key: 'n2', zone: 'zN', name: 'N2F' },
    { key: 's1', zone: 'zS', name: 'S1F' },
  ];
  doc.rooms = (o.rooms ?? []).map((r) => ({
    key: r.key,
    floor: r.floor ?? 't1',
    name: r.name ?? r.key,
    capacity: 6,
    status: 'active',
    isPublic: true,
    cleanupMinutes: 0,
    config: assetConfig(r),
    ...(r.chargeRate ? { chargeRate: r.chargeRate } : {}),
  }));
  doc.desks = (o.desks ?? []).map((d, i) => ({
    key: d.key,
    floor: d.floor ?? 't1',
    name: d.name ?? d.key,
    index: i + 1,
    config: assetConfig(d),
    ...(d.chargeRate ? { chargeRate: d.chargeRate } : {}),
  }));
  return doc;
}

export interface AnalyticsCtx {
  svc: TestService;
  ids: SiteIds;
  /** Local midnight (tower's zone) of day D, two days after the service's local today when it started. */
  D: DateTime;
  zone: string;
  id(key: string): string;
  /** ISO instant of local HH:mm on D + plusDays. */
  t(hhmm: string, plusDays?: number): string;
  /** Local date (YYYY-MM-DD) of D + plusDays. */
  day(plusDays?: number): string;
  /** act_as token of alice (through the hub for annex assets), fresh after each move of the clock. */
  aliceToken(key?: string): Promise<string>;
  /** POST /meetings for room or desk `key` from..to (ISO instants); asserts 201, returns the Meeting. */
  bookAt(key: string, start: string, end: string, extra?: Record<string, unknown>): Promise<any>;
  /** The same on D + plusDays, from..to local HH:mm. */
  book(key: string, from: string, to: string, plusDays?: number, extra?: Record<string, unknown>): Promise<any>;
  action(id: string, action: 'cancel' | 'check-in' | 'check-out'): Promise<HttpResult>;
  get(id: string): Promise<any>;
  clockTo(hhmm: string, plusDays?: number): Promise<void>;
  clockSet(iso: string): Promise<void>;
  /** Applies the site again with these options changed. */
  reapply(opts: AnalyticsSiteOptions): Promise<void>;
  close(): Promise<void>;
}

export async function startAnalyticsService(o: AnalyticsSiteOptions = {}): Promise<AnalyticsCtx> {
  const svc = await startTestService();
  let current = o;
  const ids = await applySite(svc, analyticsSite(o));
  const zone = o.timezone ?? 'Asia/Bangkok';
  const D = await dayAhead(svc, zone, 2);
  const id = (key: string) => idOf(ids, key);
  const t = (hhmm: string, plusDays = 0) => at(D, hhmm, plusDays);
  const desks = new Set((o.desks ?? []).map((d) => d.key));
  const annexFloors = new Set(['n1', 'n2', 's1']);
  const inAnnex = (key: string) => [...(o.rooms ?? []), ...(o.desks ?? [])].some((a) => a.key === key && annexFloors.has(a.floor ?? 't1'));
  const tokens = new Map<string, string>();
  const aliceToken = async (key = '') => {
    const via = inAnnex(key) ? 'hub' : 'portal';
    if (!tokens.has(via)) {
      const o2 =
        via === 'hub'
          ? { appId: HUB_APP_ID, secret: HUB_SECRET, subject: id('alice'), subjectType: 'service_member_id' as const }
          : { subject: 'ext-alice' };
      tokens.set(via, (await actAsToken(svc, o2)).access_token);
    }
    return tokens.get(via)!;
  };
  const meetingOf = new Map<string, string>();
  const bookAt = async (key: string, start: string, end: string, extra: Record<string, unknown> = {}) => {
    const res = await svc.request('POST', '/meetings', {
      token: await aliceToken(key),
      body: {
        [desks.has(key) ? 'deskId' : 'meetingRoomId']: id(key),
        title: `${key} ${start}`,
        startDateTime: start,
        endDateTime: end,
        ...extra,
      },
    });
    expect(res.status, res.text).toBe(201);
    meetingOf.set(res.body.data._id, key);
    return res.body.data;
  };
  const clockSet = async (iso: string) => {
    await setClock(svc, iso);
    tokens.clear();
  };
  return {
    svc,
    ids,
    D,
    zone,
    id,
    t,
    day: (plusDays = 0) => D.plus({ days: plusDays }).toISODate()!,
    aliceToken,
    bookAt,
    book: (key, from, to, plusDays = 0, extra = {}) => bookAt(key, t(from, plusDays), t(to, plusDays), extra),
    action: async (mid, action) =>
      svc.request('POST', `/meetings/${mid}/${action}`, { token: await aliceToken(meetingOf.get(mid)), body: {} }),
    get: async (mid) => {
      const res = await svc.request('GET', `/meetings/${mid}`, { token: await aliceToken(meetingOf.get(mid)) });
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    },
    clockTo: (hhmm, plusDays = 0) => clockSet(at(D, hhmm, plusDays)),
    clockSet,
    reapply: async (next) => {
      current = { ...current, ...next };
      await applySite(svc, analyticsSite(current));
    },
    close: () => svc.close(),
  };
}
