/**
 * The SDK against the running service (both engines): the token lifecycle with
 * rotation, act_as and revocation; every public operation once; the retry policy
 * and the create reconcile through a fault-injecting loopback proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthError,
  BookingClient,
  ComeBackLaterError,
  ConflictError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  OPERATIONS,
  RateLimitedError,
  ServerError,
  UnavailableError,
  ValidationError,
  type Meeting,
} from '../../sdk/src/index.js';
import { startWebhookService, type WebhookCtx } from '../support/webhook-site.js';
import { PORTAL_APP_ID, PORTAL_SECRET, refreshRequest, UNKNOWN_ID } from '../support/fixtures.js';
import { FaultProxy } from './fault-proxy.js';

describe('SDK against the service', () => {
  let c: WebhookCtx;
  let proxy: FaultProxy;
  const sleeps: number[] = [];
  /** Added to the client's clock: token expiry is decided on it. */
  let skew = 0;
  const client = (baseUrl: string, extra: Partial<ConstructorParameters<typeof BookingClient>[0]> = {}) =>
    new BookingClient({
      baseUrl,
      appId: PORTAL_APP_ID,
      appSecret: PORTAL_SECRET,
      now: () => Date.now() + skew,
      sleep: async (ms) => void sleeps.push(ms),
      ...extra,
    });

  beforeAll(async () => {
    c = await startWebhookService({
      rooms: [
        { key: 'orchid', name: 'Orchid' },
        { key: 'lotus', name: 'Lotus' },
      ],
      desks: [{ key: 'desk7', name: 'Desk 7' }],
      clockAt: '06:00',
    });
    proxy = await FaultProxy.start(c.svc.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await c?.close();
  });

  it('token lifecycle: grant, early refresh with rotation, the spent refresh token refused, revoke, re-grant', async () => {
    const stored: string[] = [];
    const sdk = client(c.svc.url, { onTokens: (t) => stored.push(t.refreshToken!) });
    expect(await sdk.whoami()).toMatchObject({ kind: 'app', appId: PORTAL_APP_ID, userId: null });
    const first = sdk.currentTokens()!;
    expect(first.refreshToken).toBeTypeOf('string');

    skew = 3_600_000; // the access token (3600 s) is due for refresh on the client's clock
    await sdk.whoami();
    const second = sdk.currentTokens()!;
    expect((sdk.tokens as any).grants).toEqual({ app_credentials: 1, refresh_token: 1 });
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(stored).toEqual([first.refreshToken, second.refreshToken]);
    // The spent refresh token: inside the reuse grace the service answers 503 KS234 (and the SDK never sends it again).
    const reuse = await refreshRequest(c.svc, first.refreshToken!);
    expect([reuse.status, reuse.body.code]).toEqual([503, 'KS234']);

    // Revoked out of band: the next call gets 401 KS002, the SDK refreshes (refused: family revoked), re-grants, retries once.
    const revoked = await c.svc.request('POST', '/auth/revoke', { token: second.accessToken });
    expect(revoked.status, revoked.text).toBe(200);
    skew = 0;
    expect(await sdk.whoami()).toMatchObject({ kind: 'app' });
    expect((sdk.tokens as any).grants).toEqual({ app_credentials: 2, refresh_token: 2 });

    // revoke() through the SDK: the token is dead on the service, the client forgets it and re-grants on the next call.
    const held = sdk.currentTokens()!.accessToken;
    expect(await sdk.revoke()).toEqual({ revoked: true });
    expect(sdk.currentTokens()).toBeUndefined();
    expect((await c.svc.request('GET', '/auth/whoami', { token: held })).status).toBe(401);
    await sdk.whoami();
    expect((sdk.tokens as any).grants.app_credentials).toBe(3);
  });

  it('raw grants: app_credentials, refresh_token, act_as', async () => {
    const sdk = client(c.svc.url);
    const app = await sdk.grantAppCredentials();
    expect(app).toMatchObject({ access_token: expect.any(String), expires_in: expect.any(Number), refresh_token: expect.any(String) });
    const refreshed = await sdk.grantRefresh(app.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(app.refresh_token);
    const delegated = await sdk.grantActAs('ext-alice');
    expect(delegated.refresh_token).toBeUndefined();
    const wrong = await new BookingClient({
      baseUrl: c.svc.url,
      appId: PORTAL_APP_ID,
      appSecret: 'wrong-secret-0123456789abcdef0123456789',
    })
      .grantAppCredentials()
      .catch((e) => e);
    expect(wrong).toBeInstanceOf(AuthError);
    expect(wrong).toMatchObject({ status: 401, code: 'KS002', attempts: 1 });
  });

  it('act_as: the member acts, the delegated token is obtained again on expiry', async () => {
    const sdk = client(c.svc.url);
    const alice = sdk.actingAs('ext-alice');
    expect(await alice.whoami()).toMatchObject({ kind: 'member', userId: c.id('alice') });
    skew = 24 * 3_600_000;
    await alice.whoami();
    skew = 0;
    expect((alice.tokens as any).grants).toBe(2);
    // Partner routes take the plain app token only.
    const refused = await alice.getMember('ext-alice').catch((e) => e);
    expect(refused).toBeInstanceOf(ForbiddenError);
    expect(refused.code).toBe('KS003');
  });

  it('has one method for every public operation of /openapi.json', async () => {
    const { body } = await c.svc.request('GET', '/openapi.json');
    const publicOps = Object.entries<any>(body.paths)
      // Ops routes, and the endpoints payment and calendar providers post to, are not an integrator's to call.
      .filter(
        ([path]) =>
          !path.startsWith('/ops/') &&
          !path.startsWith('/payments/webhooks/') &&
          !path.startsWith('/calendar/webhooks/') &&
          !path.startsWith('/devices/isapi/'),
      )
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(Object.keys(OPERATIONS).sort()).toEqual(publicOps);
    for (const method of Object.values(OPERATIONS)) expect(typeof (BookingClient.prototype as any)[method]).toBe('function');
  });

  it('every public operation once', async () => {
    const sdk = client(c.svc.url);
    const alice = sdk.actingAs('ext-alice');
    const projectId = c.projectId;
    expect(await sdk.health()).toEqual({ status: 'ok' });
    expect(await sdk.ready()).toEqual({ status: 'ready' });

    const rooms = await alice.searchRooms({ projectId, startDateTime: c.t('10:00'), endDateTime: c.t('11:00') });
    expect(rooms.map((r) => r.name).sort()).toEqual(['Lotus', 'Orchid']);
    const room = await alice.getRoom(c.id('orchid'), { from: c.t('00:00'), to: c.t('00:00', 1) });
    expect(room.calendar.busy).toEqual([]);
    const desks = await alice.searchDesks({ projectId, limit: 10 });
    expect(desks.meta.total).toBe(1);
    const desk = await alice.getDesk(desks.items[0]._id);
    expect(desk.name).toBe('Desk 7');

    const draft = await alice.draftMeeting({
      meetingRoomId: c.id('orchid'),
      startDateTime: c.t('10:00'),
      endDateTime: c.t('11:00'),
      draftEndDateTimes: [c.t('12:00')],
    });
    expect(draft.draftInfo.map((d) => d.isAvailable)).toEqual([true, true]);

    const booked = await alice.createMeeting({
      meetingRoomId: c.id('orchid'),
      title: 'SDK all ops',
      startDateTime: c.t('10:00'),
      endDateTime: c.t('11:00'),
    });
    expect(booked).toMatchObject({ status: 'active', title: 'SDK all ops', pinCode: expect.any(String) });
    const listed = await alice.listMeetings({
      from: c.t('00:00'),
      to: c.t('00:00', 1),
      meetingRoomId: c.id('orchid'),
      statuses: ['active'],
    });
    expect(listed.items.map((m) => m._id)).toEqual([booked._id]);
    expect(listed.meta.total).toBe(1);
    expect((await alice.listAllMeetings({ from: c.t('00:00'), to: c.t('00:00', 1) })).map((m) => m._id)).toContain(booked._id);
    expect((await alice.getMeeting(booked._id)).histories[0].action).toBe('create');
    const updated = await alice.updateMeeting(booked._id, { title: 'SDK renamed', endDateTime: c.t('11:30') });
    expect(updated).toMatchObject({ title: 'SDK renamed' });

    // Check-in too early: come back later, with the minutes from the answer.
    const early = await alice.checkIn(booked._id).catch((e) => e);
    expect(early).toBeInstanceOf(ComeBackLaterError);
    expect(early).toMatchObject({ status: 409, code: 'MEETING_040', kind: 'comeBackLater', attempts: 1 });
    expect(early.minutesUntilOpen).toBe(225); // 06:00 → 09:45
    await c.clockTo('09:50');
    const checkedIn = await alice.reReadThen(booked._id, (fresh, me) => (fresh.status === 'active' ? me.checkIn(fresh._id) : fresh));
    expect(checkedIn.status).toBe('checked-in');
    const cannotCancel = await alice.cancelMeeting(booked._id).catch((e) => e);
    expect(cannotCancel).toBeInstanceOf(ConflictError);
    expect(cannotCancel).toMatchObject({ status: 409, code: 'MEETING_011', attempts: 1 });
    expect((await alice.checkOut(booked._id)).status).toBe('done');

    const deskBooking = await alice.createMeeting({
      deskId: c.id('desk7'),
      title: 'SDK desk',
      startDateTime: c.t('13:00'),
      timePeriod: 'afternoon',
    });
    expect((await alice.cancelMeeting(deskBooking._id)).status).toBe('cancelled');
    const conflict = await alice
      .createMeeting({ meetingRoomId: c.id('lotus'), title: 'x', startDateTime: c.t('14:00'), endDateTime: c.t('15:00') })
      .then(() => alice.createMeeting({ meetingRoomId: c.id('lotus'), title: 'y', startDateTime: c.t('14:30'), endDateTime: c.t('15:30') }))
      .catch((e) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict.code).toBe('KS012');
    const invalid = await alice.createMeeting({ meetingRoomId: c.id('lotus'), startDateTime: 'tomorrow' } as any).catch((e) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid.messages.length).toBeGreaterThan(0);
    expect(await alice.getMeeting(UNKNOWN_ID).catch((e) => e)).toBeInstanceOf(NotFoundError);

    const put = await sdk.putMember('ext-sdk-1', { firstName: 'Sam', lastName: 'Dee', email: 'sam.sdk@example.com' });
    expect(put).toMatchObject({ externalUserId: 'ext-sdk-1', created: true, matchedBy: 'provisioned' });
    const creds = await sdk.putCredentials('ext-sdk-1', { cards: [{ cardNo: '0472621828' }] });
    expect(creds.cards.map((k) => k.cardNo)).toEqual(['0472621828']);
    expect(await sdk.getMember('ext-sdk-1')).toMatchObject({
      memberId: put.memberId,
      status: 'active',
      profile: { email: 'sam.sdk@example.com' },
    });
    await expect(sdk.deleteMember('ext-sdk-1')).resolves.toBeUndefined();
    expect((await sdk.getMember('ext-sdk-1')).status).toBe('deactivated');
  });

  it('retries network failures, 5xx, 503 KS234 and 429 (Retry-After) through a faulty proxy, at most 3 times', async () => {
    const sdk = client(proxy.url);
    await sdk.whoami(); // token obtained
    const key = 'GET /meeting-rooms';
    proxy.inject(key, { status: 503, code: 'KS234' }, { status: 500, code: 'KS004' }, 'reset');
    sleeps.length = 0;
    const rooms = await sdk.searchRooms({ projectId: c.projectId });
    expect(rooms.length).toBe(2);
    expect(proxy.count(key)).toBe(4);
    expect(sleeps).toHaveLength(3);

    proxy.inject(key, { status: 429, code: 'KS036', retryAfter: '2' });
    sleeps.length = 0;
    await sdk.searchRooms({ projectId: c.projectId });
    expect(sleeps).toEqual([2000]);

    const before = proxy.count(key);
    proxy.inject(key, ...Array.from({ length: 4 }, () => ({ status: 502, code: 'HTTP_502' })));
    const err = await sdk.searchRooms({ projectId: c.projectId }).catch((e) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.attempts).toBe(4);
    expect(proxy.count(key) - before).toBe(4);

    proxy.inject(key, ...Array.from({ length: 4 }, () => 'reset' as const));
    expect(await sdk.searchRooms({ projectId: c.projectId }).catch((e) => e)).toBeInstanceOf(NetworkError);

    proxy.inject(
      key,
      { status: 503, code: 'KS234' },
      { status: 503, code: 'KS234' },
      { status: 503, code: 'KS234' },
      { status: 503, code: 'KS234' },
    );
    const unavailable = await sdk.searchRooms({ projectId: c.projectId }).catch((e) => e);
    expect(unavailable).toBeInstanceOf(UnavailableError);
    expect(unavailable.code).toBe('KS234');
    // The token was kept through all of it.
    expect((sdk.tokens as any).grants).toEqual({ app_credentials: 1, refresh_token: 0 });
  });

  it("never retries another 4xx (the service's own answers through the proxy)", async () => {
    const sdk = client(proxy.url);
    const alice = sdk.actingAs('ext-alice');
    const key = `GET /meetings/${UNKNOWN_ID}`;
    expect(await alice.getMeeting(UNKNOWN_ID).catch((e) => e)).toBeInstanceOf(NotFoundError);
    expect(proxy.count(key)).toBe(1);
    const before = proxy.count('GET /meeting-rooms');
    const bad = await alice.searchRooms({ projectId: 'not-an-id' }).catch((e) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    expect(proxy.count('GET /meeting-rooms') - before).toBe(1);
    proxy.inject('PUT /partner/members/ext-rate', { status: 429, code: 'KS036', retryAfter: '3600' });
    expect(await sdk.putMember('ext-rate', { firstName: 'R', lastName: 'L' }).catch((e) => e)).toBeInstanceOf(RateLimitedError);
    expect(proxy.count('PUT /partner/members/ext-rate')).toBe(1);
  });

  it('create after a lost answer: reconciled through GET /meetings, not resent; resent when nothing was booked', async () => {
    const alice = client(proxy.url).actingAs('ext-alice');
    const body = { meetingRoomId: c.id('lotus'), title: 'Lost answer', startDateTime: c.t('16:00'), endDateTime: c.t('17:00') };
    proxy.inject('POST /meetings', 'drop-answer');
    const found: (Meeting | undefined)[] = [];
    const m = await alice.createMeeting(body, { onReconcile: (r) => found.push(r.found) });
    expect(m).toMatchObject({ title: 'Lost answer', status: 'active', pinCode: expect.any(String) });
    expect(found.map((f) => f?._id)).toEqual([m._id]);
    const onService = await c.svc.request(
      'GET',
      `/meetings?from=${encodeURIComponent(c.t('00:00'))}&to=${encodeURIComponent(c.t('00:00', 1))}&meetingRoomId=${c.id('lotus')}`,
      { token: c.alice },
    );
    expect(onService.body.data.filter((x: any) => x.title === 'Lost answer')).toHaveLength(1);

    // Reset before the service saw it: the reconcile finds nothing and the create is sent again.
    const posts = proxy.count('POST /meetings');
    proxy.inject('POST /meetings', 'reset');
    const again = await alice.createMeeting(
      { ...body, title: 'Never arrived', startDateTime: c.t('18:00'), endDateTime: c.t('19:00') },
      { onReconcile: (r) => found.push(r.found) },
    );
    expect(again.title).toBe('Never arrived');
    expect(found.at(-1)).toBeUndefined();
    expect(proxy.count('POST /meetings') - posts).toBe(2);
  });
});
