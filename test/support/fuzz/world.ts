/**
 * The fuzz test's world: the real service over a throwaway database with a small
 * site (rooms free and paid with mailboxes, desks, units, access devices, a
 * partner app, a webhook listener on a closed loopback port) and one of each kind
 * of thing a route can name: bookings, a payment, deliveries, a visitor invite, a
 * partner member, a room feed, a calendar booking. Every id and token the request
 * generators draw from lives here.
 */
import { expect } from 'vitest';
import type { DateTime } from 'luxon';
import { OPS_TOKEN, startTestService, type HttpResult, type TestService } from '../test-service.js';
import { actAsToken, appToken, applySite, idOf, HUB_APP_ID, HUB_SECRET, type SiteIds } from '../fixtures.js';
import { PARTNER_APP_ID, PARTNER_SECRET, partnerSite } from '../partner-members.js';
import { at, dayAhead, everyDay, setClock } from '../catalogue.js';
import { face } from '../devices.js';
import { ical } from '../calendar.js';

export const TZ = 'Asia/Bangkok';
export const ROOM_MAIL = 'orchid@rooms.example';
export const PAID_ROOM_MAIL = 'lotus@rooms.example';
/** Nothing listens there: deliveries fail fast (development allows loopback receivers). */
export const CLOSED_URL = 'http://127.0.0.1:9/hook';

export function fuzzSite() {
  const doc = partnerSite() as any;
  const cfg = (open: string, close: string) =>
    everyDay(open, close, [], {
      minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
      maxAdvanceBookingDays: 60,
      maxDurationMinutes: 900,
      bookMultipleDayRoom: false,
    });
  doc.floors.push({ key: 'f12', zone: 'zA', name: '12F' });
  doc.rooms.push(
    { key: 'orchid', floor: 'f12', name: 'Orchid', capacity: 6, cleanupMinutes: 15, email: ROOM_MAIL, config: cfg('06:00:00', '23:00:00') },
    {
      key: 'lotus',
      floor: 'f12',
      name: 'Lotus',
      capacity: 4,
      cleanupMinutes: 0,
      email: PAID_ROOM_MAIL,
      config: cfg('06:00:00', '23:00:00'),
      chargeRate: { perHour: 100, perDay: 0 },
    },
    { key: 'iris', floor: 'f12', name: 'Iris', capacity: 2, isPublic: false, config: cfg('06:00:00', '23:00:00') },
  );
  doc.desks = [
    { key: 'd1', floor: 'f12', name: 'Desk 1', index: 1, config: cfg('07:00:00', '22:00:00') },
    { key: 'd2', floor: 'f12', name: 'Desk 2', index: 2, config: cfg('07:00:00', '22:00:00'), chargeRate: { perHour: 50, perDay: 300 } },
  ];
  doc.accessGroups[0].devices.push({ key: 't2', name: 'Turnstile 2', kind: 'card-reader', cardFormat: 'hex' });
  doc.accessGroups[1].devices = [{ key: 'cam', name: 'Gate camera', kind: 'lpr-camera', location: { en: 'Gate', th: 'ประตู' } }];
  doc.webhooks = [
    {
      key: 'hook',
      project: 'tower',
      url: CLOSED_URL,
      secret: 'whsec-fuzz-0123456789abcdef0123456789abcdef',
      events: ['ROOM_BOOK', 'ROOM_MODIFY', 'ROOM_CANCEL', 'DESK_BOOK', 'DESK_CANCEL', 'VMS_INVITE_SENT'],
    },
  ];
  return doc;
}

export interface Tokens {
  /** act_as alice through portal (organizer of the seeded bookings). */
  alice: string;
  bob: string;
  /** app tokens */
  portal: string;
  hub: string;
  partner: string;
  /** A refresh token (rotates when the fuzzer uses it; re-minted with the others). */
  refresh: string;
}

export interface World {
  svc: TestService;
  ids: SiteIds;
  D: DateTime;
  id(key: string): string;
  t(hhmm: string, plusDays?: number): string;
  tokens: Tokens;
  /** Known ids by kind, for path parameters and id fields. */
  known: Record<string, string[]>;
  /** Strings that name things (emails, external ids, feed tokens, payment page tokens). */
  names: Record<string, string[]>;
  /** Mints fresh tokens (after a revoke, or any time). */
  refreshTokens(): Promise<void>;
  close(): Promise<void>;
}

function ok(res: HttpResult, status = 200): any {
  expect(res.status, res.text).toBe(status);
  return res.body?.data ?? res.body;
}

export async function startWorld(): Promise<World> {
  // No background workers: the state a request leaves is the state the next snapshot sees.
  const svc = await startTestService({
    noWorkers: true,
    env: { PARTNER_RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_FAILURES_PER_ADDRESS: '1000000' },
  });
  const ids = await applySite(svc, fuzzSite());
  const id = (key: string) => idOf(ids, key);
  const D = await dayAhead(svc, TZ, 2);
  await setClock(svc, at(D, '06:00'));
  const t = (hhmm: string, plusDays = 0) => at(D, hhmm, plusDays);

  const tokens = {} as Tokens;
  const refreshTokens = async () => {
    tokens.alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
    tokens.bob = (await actAsToken(svc, { subject: 'ext-bob' })).access_token;
    const portal = await appToken(svc);
    tokens.portal = portal.access_token;
    tokens.refresh = portal.refresh_token ?? 'no-refresh-token';
    tokens.hub = (await appToken(svc, HUB_APP_ID, HUB_SECRET)).access_token;
    tokens.partner = (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token;
  };
  await refreshTokens();

  const book = async (body: Record<string, unknown>, token = tokens.alice) =>
    ok(await svc.request('POST', '/meetings', { token, body }), 201);
  const free = await book({
    meetingRoomId: id('orchid'),
    title: 'Fuzz free',
    startDateTime: t('09:00'),
    endDateTime: t('10:00'),
    attendees: [{ email: 'bob@example.com', type: 'required' }],
  });
  const paid = await book({ meetingRoomId: id('lotus'), title: 'Fuzz paid', startDateTime: t('10:00'), endDateTime: t('11:00') });
  const desk = await book({ deskId: id('d1'), title: 'Fuzz desk', startDateTime: t('07:00'), timePeriod: 'morning' });
  const later = await book({ meetingRoomId: id('orchid'), title: 'Fuzz later', startDateTime: t('12:00', 1), endDateTime: t('13:00', 1) });
  const gone = await book({ meetingRoomId: id('orchid'), title: 'Fuzz cancelled', startDateTime: t('15:00'), endDateTime: t('16:00') });
  ok(await svc.request('POST', `/meetings/${gone._id}/cancel`, { token: tokens.alice, body: {} }), 202);
  const paymentId: string | undefined = paid.payment?.id ?? paid.payment?._id ?? paid.payment?.paymentId;
  const payUrl: string | undefined = paid.payment?.webPaymentUrl;

  // Deliveries to the closed port: attempted once each (failed, to be retried).
  await svc.services.jobs.drain();
  const deliveries = ok(await svc.ops('GET', `/ops/v1/webhooks/${id('hook')}/deliveries?limit=20`)) as any[];

  const visitor = ok(
    await svc.ops('POST', '/ops/v1/visitors/invites', {
      projectId: id('tower'),
      hostUserId: id('alice'),
      visitorName: 'Vera Visitor',
      startDateTime: t('09:00'),
      endDateTime: t('11:00'),
    }),
    201,
  );
  const member = ok(
    await svc.request('PUT', '/partner/members/crm-fuzz-1', {
      token: tokens.partner,
      body: { firstName: 'Nina', lastName: 'Fuzz', email: 'nina@example.com', phone: '02 555 0101' },
    }),
  );
  ok(
    await svc.request('PUT', '/partner/members/crm-fuzz-1/credentials', {
      token: tokens.partner,
      body: { cards: [{ cardNo: '1234567890' }], face: face(3), faceConsentAt: t('06:00') },
    }),
  );
  const feed = ok(await svc.ops('POST', `/ops/v1/calendar-sync/rooms/${id('orchid')}/feed/rotate`));
  const feedUrl: string = feed.url ?? feed.feedUrl ?? '';
  const calendar = ok(
    await svc.request('POST', '/ops/v1/calendar-sync/google/messages', {
      raw: ical({ uid: 'fuzz-seed-1@google.com', start: t('17:00'), end: t('18:00'), rooms: [ROOM_MAIL] }),
      token: OPS_TOKEN,
      headers: { 'content-type': 'text/calendar; charset=utf-8; method=REQUEST' },
    }),
  );
  await svc.services.jobs.drain();

  const meetings = [
    free._id,
    paid._id,
    desk._id,
    later._id,
    gone._id,
    ...(calendar?.meetings ?? []).map((m: any) => m._id ?? m.meetingId).filter(Boolean),
  ];
  const known: Record<string, string[]> = {
    meeting: meetings,
    room: [id('orchid'), id('lotus'), id('iris'), id('uA101')],
    desk: [id('d1'), id('d2')],
    project: [id('tower'), id('annex')],
    user: [id('alice'), id('bob'), id('carol'), id('frank')],
    zone: [id('zA')],
    floor: [id('f12')],
    webhook: [id('hook')],
    delivery: deliveries.map((d) => d.id ?? d._id).filter(Boolean),
    payment: paymentId ? [paymentId] : [],
    device: [id('t1'), id('t2'), id('cam')],
    invite: [visitor._id],
    brand: [id('acme')],
  };
  const names: Record<string, string[]> = {
    externalUserId: ['crm-fuzz-1', 'ext-alice', 'crm-new-1', 'crm-erin'],
    email: ['alice@example.com', 'bob@example.com', 'nina@example.com', ROOM_MAIL, PAID_ROOM_MAIL],
    feedToken: feedUrl ? [feedUrl.split('/').pop()!] : [],
    payToken: payUrl ? [new URL(payUrl).pathname.split('/').pop()!] : [],
    pin: [free.pinCode, paid.pinCode].filter(Boolean),
    cardCode: [visitor.qrCardCode, '1234567890'].filter(Boolean),
    provider: ['google', 'microsoft'],
  };
  void member;
  return { svc, ids, D, id, t, tokens, known, names, refreshTokens, close: () => svc.close() };
}
