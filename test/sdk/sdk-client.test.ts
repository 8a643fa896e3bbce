/**
 * The SDK's client rules with an injected fetch, clock and sleep (no service):
 * the retry policy, token expiry and rotation, act_as, typed errors, the create
 * reconcile, occurrence de-duplication and re-reads.
 */
import { describe, expect, it } from 'vitest';
import {
  AuthError,
  BookingClient,
  ComeBackLaterError,
  ConflictError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  UnavailableError,
  ValidationError,
  ForbiddenError,
  dedupeOccurrences,
  type Meeting,
} from '../../sdk/src/index.js';
import { FakeApi, fail, json, networkFailure, ok } from './fake-api.js';

const ROOM = 'aaaaaaaaaaaaaaaaaaaaaaaa';

function setup(handler: ConstructorParameters<typeof FakeApi>[0], o: { random?: number } = {}) {
  const api = new FakeApi(handler);
  const clock = { now: 1_700_000_000_000 };
  const sleeps: number[] = [];
  const client = new BookingClient({
    baseUrl: 'http://127.0.0.1:9',
    appId: 'app',
    appSecret: 'secret',
    fetch: api.fetch,
    now: () => clock.now,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => o.random ?? 0.5,
    baseDelayMs: 100,
  });
  return { api, clock, sleeps, client };
}

/** A handler that issues tokens and answers everything else with `rest`. */
function withTokens(
  rest: (req: Parameters<ConstructorParameters<typeof FakeApi>[0]>[0], n: number) => Response | Promise<Response>,
  tokenOpts = {},
) {
  let api!: FakeApi;
  const handler = (req: any, n: number) => (req.path === '/auth/accessToken' ? api.issue(tokenOpts) : rest(req, n));
  const s = setup(handler);
  api = s.api;
  return s;
}

function meeting(over: Partial<Meeting> = {}): Meeting {
  return {
    _id: 'bbbbbbbbbbbbbbbbbbbbbbbb',
    status: 'active',
    projectId: 'p',
    meetingRoomId: ROOM,
    title: 'Standup',
    body: '',
    startDateTime: '2030-01-07T03:00:00.000Z',
    endDateTime: '2030-01-07T04:00:00.000Z',
    allDay: false,
    pinCode: '123456',
    organizer: { userId: 'u', email: 'a@example.com', name: 'A', displayName: 'A', checkInDateTime: null, checkOutDateTime: null },
    attendees: [],
    billingSummaries: [],
    histories: [],
    createdAt: '2030-01-01T00:00:00.000Z',
    updatedAt: '2030-01-01T00:00:00.000Z',
    ...over,
  } as Meeting;
}

describe('retry policy', () => {
  it('retries 5xx with exponential backoff and jitter, then succeeds', async () => {
    const answers = [fail(500, 'KS004'), fail(502, 'HTTP_502'), ok({ status: 'ok' })];
    const { api, sleeps, client } = withTokens(() => answers.shift()!);
    await expect(client.whoami()).resolves.toEqual({ status: 'ok' });
    expect(api.to('/auth/whoami')).toHaveLength(3);
    // random 0.5: half of the step plus a quarter: 100 → 75, 200 → 150
    expect(sleeps).toEqual([75, 150]);
  });

  it('jitter stays within [step/2, step] and the step doubles', async () => {
    for (const random of [0, 0.999]) {
      const api = new FakeApi(() => fail(503, 'KS004'));
      const sleeps: number[] = [];
      const client = new BookingClient({
        baseUrl: 'http://127.0.0.1:9',
        appId: 'a',
        appSecret: 's',
        fetch: api.fetch,
        random: () => random,
        baseDelayMs: 100,
        sleep: async (ms) => void sleeps.push(ms),
      });
      await expect(client.health()).rejects.toBeInstanceOf(UnavailableError);
      expect(sleeps).toHaveLength(3);
      sleeps.forEach((ms, i) => {
        const step = 100 * 2 ** i;
        expect(ms).toBeGreaterThanOrEqual(step / 2);
        expect(ms).toBeLessThanOrEqual(step);
      });
    }
  });

  it('gives up after 3 retries (4 attempts) with the typed error of the last answer', async () => {
    const { api, client } = withTokens(() => fail(503, 'KS004', 'upstream down'));
    const err = await client.getMeeting('x').catch((e) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ status: 503, code: 'KS004', kind: 'unavailable', messages: ['upstream down'], attempts: 4 });
    expect(api.to('/meetings/x')).toHaveLength(4);
  });

  it('honours Retry-After on 429 (and on 503)', async () => {
    const answers = [
      fail(429, 'KS036', 'slow down', { 'retry-after': '7' }),
      fail(503, 'KS004', 'x', { 'retry-after': '2' }),
      ok({ revoked: true }),
    ];
    const { sleeps, client } = withTokens(() => answers.shift()!);
    await client.whoami();
    expect(sleeps).toEqual([7000, 2000]);
  });

  it('does not wait for a Retry-After beyond the limit: the 429 surfaces', async () => {
    const { api, client } = withTokens(() => fail(429, 'KS036', 'limit', { 'retry-after': '3600' }));
    const err = await client.getMember('ext-1').catch((e) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err.retryAfterMs).toBe(3_600_000);
    expect(api.to('/partner/members/ext-1')).toHaveLength(1);
  });

  it('retries network failures', async () => {
    let n = 0;
    const { api, client } = withTokens(() => (++n < 3 ? networkFailure() : ok([])));
    await expect(client.searchRooms({ projectId: 'p' })).resolves.toEqual([]);
    expect(api.to('/meeting-rooms')).toHaveLength(3);
    const { client: c2 } = withTokens(() => networkFailure());
    const err = await c2.searchRooms({ projectId: 'p' }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ status: 0, code: 'NETWORK', kind: 'network', attempts: 4, timedOut: false });
  });

  it('an attempt that times out is a network failure (timedOut)', async () => {
    const api = new FakeApi(() => new Promise<Response>(() => {}));
    const hanging = (input: string, init: RequestInit) =>
      new Promise<Response>((_, reject) => {
        void api.fetch(input, init);
        init.signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      });
    const client = new BookingClient({
      baseUrl: 'http://127.0.0.1:9',
      appId: 'a',
      appSecret: 's',
      fetch: hanging,
      timeoutMs: 20,
      maxRetries: 1,
      sleep: async () => {},
    });
    const err = await client.health().catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ code: 'TIMEOUT', timedOut: true, attempts: 2 });
  });

  it.each([
    [400, 'KS001', ValidationError, 'validation'],
    [403, 'KS003', ForbiddenError, 'forbidden'],
    [403, 'MEETING_049', ForbiddenError, 'forbidden'],
    [404, 'KS005', NotFoundError, 'notFound'],
    [409, 'KS012', ConflictError, 'conflict'],
    [409, 'MEETING_011', ConflictError, 'conflict'],
    [410, 'KS006', ConflictError, 'conflict'],
    [422, 'MEETING_005', ConflictError, 'conflict'],
    [409, 'KS072', ConflictError, 'conflict'],
  ])('never retries %i %s', async (status, code, type, kind) => {
    const { api, sleeps, client } = withTokens(() => fail(status, code, code === 'KS001' ? ['body.title must be a string', 'x'] : 'no'));
    const err = await client.updateMeeting('m1', { title: 't' }).catch((e) => e);
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject({ status, code, kind, attempts: 1 });
    if (code === 'KS001') expect(err.messages).toEqual(['body.title must be a string', 'x']);
    expect(api.to('/meetings/m1')).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe('tokens', () => {
  it('503 KS234 is retried with backoff and the token is kept', async () => {
    const answers = [fail(503, 'KS234', 'auth unavailable'), fail(503, 'KS234', 'auth unavailable'), ok({ kind: 'app' })];
    const { api, client } = withTokens(() => answers.shift()!);
    await client.whoami();
    const calls = api.to('/auth/whoami');
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.headers.authorization))).toEqual(new Set(['Bearer kat_1']));
    expect(api.grants()).toHaveLength(1);
  });

  it('503 KS234 on the token endpoint itself is retried', async () => {
    let n = 0;
    const api: FakeApi = new FakeApi((req): Response =>
      req.path === '/auth/accessToken' ? (++n < 3 ? fail(503, 'KS234') : api.issue()) : ok({}),
    );
    const client = new BookingClient({
      baseUrl: 'http://127.0.0.1:9',
      appId: 'a',
      appSecret: 's',
      fetch: api.fetch,
      sleep: async () => {},
    });
    await client.whoami();
    expect(api.grants('app_credentials')).toHaveLength(3);
  });

  it('expiry comes from expires_in; refreshes a little early, rotating to the newest pair', async () => {
    const stored: string[] = [];
    let api!: FakeApi;
    const clock = { now: 1_000_000 };
    api = new FakeApi((req) => (req.path === '/auth/accessToken' ? api.issue({ expiresIn: 100 }) : ok({})));
    const client = new BookingClient({
      baseUrl: 'http://127.0.0.1:9',
      appId: 'a',
      appSecret: 's',
      fetch: api.fetch,
      now: () => clock.now,
      onTokens: (t) => stored.push(`${t.accessToken}/${t.refreshToken}`),
    });
    await client.whoami();
    clock.now += 89_000; // 100 s lifetime, refreshed 10 s early
    await client.whoami();
    expect(api.grants()).toHaveLength(1);
    clock.now += 2_000;
    await client.whoami();
    expect(api.grants('refresh_token').map((r) => r.body.refresh_token)).toEqual(['krt_1']);
    clock.now += 91_000;
    await client.whoami();
    // Rotation: the second refresh presents the newest refresh token, never the spent one.
    expect(api.grants('refresh_token').map((r) => r.body.refresh_token)).toEqual(['krt_1', 'krt_2']);
    expect(api.to('/auth/whoami').map((r) => r.headers.authorization)).toEqual([
      'Bearer kat_1',
      'Bearer kat_1',
      'Bearer kat_2',
      'Bearer kat_3',
    ]);
    expect(stored).toEqual(['kat_1/krt_1', 'kat_2/krt_2', 'kat_3/krt_3']);
    expect(client.currentTokens()).toMatchObject({ accessToken: 'kat_3', refreshToken: 'krt_3' });
  });

  it('concurrent callers share one refresh in flight', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let api!: FakeApi;
    const clock = { now: 0 };
    api = new FakeApi(async (req) => {
      if (req.path !== '/auth/accessToken') return ok({});
      if (req.body.grant_type === 'refresh_token') await gate;
      return api.issue({ expiresIn: 60 });
    });
    const client = new BookingClient({ baseUrl: 'http://127.0.0.1:9', appId: 'a', appSecret: 's', fetch: api.fetch, now: () => clock.now });
    await client.whoami();
    clock.now += 3_600_000;
    const calls = Array.from({ length: 8 }, () => client.whoami());
    await new Promise((r) => setImmediate(r));
    release();
    await Promise.all(calls);
    expect(api.grants('refresh_token')).toHaveLength(1);
    expect(
      new Set(
        api
          .to('/auth/whoami')
          .slice(1)
          .map((r) => r.headers.authorization),
      ),
    ).toEqual(new Set(['Bearer kat_2']));
  });

  it('a refused refresh (401) falls back to the app_credentials grant', async () => {
    let api!: FakeApi;
    const clock = { now: 0 };
    api = new FakeApi((req) => {
      if (req.path !== '/auth/accessToken') return ok({});
      if (req.body.grant_type === 'refresh_token') return fail(401, 'KS002', 'Refresh token was already used');
      return api.issue({ expiresIn: 60 });
    });
    const client = new BookingClient({ baseUrl: 'http://127.0.0.1:9', appId: 'a', appSecret: 's', fetch: api.fetch, now: () => clock.now });
    await client.whoami();
    clock.now += 120_000;
    await client.whoami();
    expect(api.grants().map((r) => r.body.grant_type)).toEqual(['app_credentials', 'refresh_token', 'app_credentials']);
    expect(api.to('/auth/whoami').at(-1)!.headers.authorization).toBe('Bearer kat_2');
  });

  it('401 KS002 on a call: a new token, then the call once more; a second 401 surfaces', async () => {
    const answers = [fail(401, 'KS002', 'revoked'), ok({ kind: 'app' })];
    const s1 = withTokens(() => answers.shift()!);
    await s1.client.whoami();
    expect(s1.api.to('/auth/whoami').map((r) => r.headers.authorization)).toEqual(['Bearer kat_1', 'Bearer kat_2']);
    expect(s1.api.grants('refresh_token')).toHaveLength(1);

    const s2 = withTokens(() => fail(401, 'KS002', 'revoked'));
    const err = await s2.client.whoami().catch((e) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect(s2.api.to('/auth/whoami')).toHaveLength(2);
  });

  it('act_as clients: one per subject, re-obtained with act_as on expiry (never refreshed)', async () => {
    let api!: FakeApi;
    const clock = { now: 0 };
    api = new FakeApi((req) =>
      req.path === '/auth/accessToken' ? api.issue(req.body.grant_type === 'act_as' ? { expiresIn: 300, refresh: false } : {}) : ok({}),
    );
    const client = new BookingClient({ baseUrl: 'http://127.0.0.1:9', appId: 'a', appSecret: 's', fetch: api.fetch, now: () => clock.now });
    const alice = client.actingAs('ext-alice');
    expect(client.actingAs('ext-alice')).toBe(alice);
    await alice.whoami();
    await alice.whoami();
    clock.now += 300_000;
    await alice.whoami();
    const grants = api.grants();
    expect(grants.map((g) => g.body.grant_type)).toEqual(['act_as', 'act_as']);
    expect(grants[0].body).toMatchObject({ app_id: 'a', app_secret: 's', subject: 'ext-alice', subject_type: 'external_user_id' });
    const bob = client.actingAs('0123456789abcdef01234567', 'service_member_id');
    await bob.whoami();
    expect(api.grants().at(-1)!.body).toMatchObject({ subject_type: 'service_member_id' });
    // The app's own token is separate.
    await client.whoami();
    expect(api.grants('app_credentials')).toHaveLength(1);
  });
});

describe('come back later', () => {
  it('MEETING_040 carries the minutes and the time to come back; MEETING_041 the day', async () => {
    const answers = [
      fail(409, 'MEETING_040', 'Check-in opens in 7 minutes, 15 minutes before the start'),
      fail(409, 'MEETING_041', 'Check-in is open only on the day of the booking (2030-01-07)'),
    ];
    const { clock, client, api } = withTokens(() => answers.shift()!);
    const early = await client.checkIn('m1').catch((e) => e);
    expect(early).toBeInstanceOf(ComeBackLaterError);
    expect(early).toMatchObject({ kind: 'comeBackLater', status: 409, code: 'MEETING_040', minutesUntilOpen: 7 });
    expect(early.retryAt.getTime()).toBe(clock.now + 7 * 60_000);
    const wrongDay = await client.checkIn('m1').catch((e) => e);
    expect(wrongDay).toMatchObject({ kind: 'comeBackLater', code: 'MEETING_041', bookingDate: '2030-01-07' });
    expect(api.to('/meetings/m1/check-in')).toHaveLength(2);
  });
});

describe('client rules', () => {
  it('dedupeOccurrences keeps one row per occurrenceEventId (per _id without one)', () => {
    const rows = [
      meeting({ _id: 'm', occurrenceEventId: 'm_1' }),
      meeting({ _id: 'm', occurrenceEventId: 'm_2' }),
      meeting({ _id: 'm', occurrenceEventId: 'm_1', title: 'again' }),
      meeting({ _id: 'n' }),
      meeting({ _id: 'n', title: 'again' }),
    ];
    expect(dedupeOccurrences(rows).map((r) => `${r._id}/${r.occurrenceEventId ?? ''}/${r.title}`)).toEqual([
      'm/m_1/Standup',
      'm/m_2/Standup',
      'n//Standup',
    ]);
  });

  const body = {
    meetingRoomId: ROOM,
    title: 'Standup',
    startDateTime: '2030-01-07T10:00:00+07:00',
    endDateTime: '2030-01-07T11:00:00+07:00',
  };

  it('createMeeting after no answer reconciles through GET /meetings and does not resend when found', async () => {
    const { api, client } = withTokens((req) =>
      req.method === 'POST'
        ? networkFailure()
        : ok([meeting({ _id: 'cccccccccccccccccccccccc', title: 'Other' }), meeting()], 200, { limit: 500, offset: 0, total: 2 }),
    );
    const m = await client.createMeeting(body);
    expect(m._id).toBe('bbbbbbbbbbbbbbbbbbbbbbbb');
    expect(api.to('/meetings', 'POST')).toHaveLength(1);
    const list = api.to('/meetings', 'GET')[0];
    expect(list.query.get('meetingRoomId')).toBe(ROOM);
    expect(list.query.get('from')).toBe('2030-01-07T03:00:00.000Z');
    expect(list.query.getAll('statuses')).toEqual(['unpaid', 'active', 'checked-in']);
  });

  it('createMeeting resends only when the reconcile finds nothing (5xx), at most 3 times', async () => {
    let posts = 0;
    const { api, client } = withTokens((req) =>
      req.method === 'POST'
        ? ++posts < 3
          ? fail(500, 'KS004', 'internal')
          : ok(meeting(), 201)
        : ok([], 200, { limit: 500, offset: 0, total: 0 }),
    );
    const reconciles: unknown[] = [];
    await client.createMeeting(body, { onReconcile: (r) => reconciles.push(r.found) });
    expect(api.to('/meetings', 'POST')).toHaveLength(3);
    expect(api.to('/meetings', 'GET')).toHaveLength(2);
    expect(reconciles).toEqual([undefined, undefined]);

    const always = withTokens((req) => (req.method === 'POST' ? networkFailure() : ok([], 200, { limit: 500, offset: 0, total: 0 })));
    await expect(always.client.createMeeting(body)).rejects.toBeInstanceOf(NetworkError);
    expect(always.api.to('/meetings', 'POST')).toHaveLength(4);
  });

  it('createMeeting: a 4xx is neither resent nor reconciled; 503 KS234 and 429 are resent without a reconcile', async () => {
    const s1 = withTokens(() => fail(409, 'KS012', 'slot taken'));
    await expect(s1.client.createMeeting(body)).rejects.toBeInstanceOf(ConflictError);
    expect(s1.api.requests.filter((r) => r.path === '/meetings')).toHaveLength(1);

    const answers = [fail(503, 'KS234'), fail(429, 'KS036'), ok(meeting(), 201)];
    const s2 = withTokens(() => answers.shift()!);
    await s2.client.createMeeting(body);
    expect(s2.api.to('/meetings', 'POST')).toHaveLength(3);
    expect(s2.api.to('/meetings', 'GET')).toHaveLength(0);
  });

  it('a failed reconcile read does not resend', async () => {
    const { api, client } = withTokens((req) => (req.method === 'POST' ? networkFailure() : fail(400, 'KS001', ['bad'])));
    const err = await client.createMeeting(body).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.reconcileError).toBeInstanceOf(ValidationError);
    expect(api.to('/meetings', 'POST')).toHaveLength(1);
  });

  it('a state action whose retry is refused after a lost answer re-reads: already done counts as done', async () => {
    let n = 0;
    const { client } = withTokens((req) => {
      if (req.method === 'POST') return ++n === 1 ? networkFailure() : fail(409, 'MEETING_011', 'already cancelled');
      return ok(meeting({ status: 'cancelled' }));
    });
    await expect(client.cancelMeeting('bbbbbbbbbbbbbbbbbbbbbbbb')).resolves.toMatchObject({ status: 'cancelled' });
    // Without a lost answer before it, the refusal stands.
    const s2 = withTokens((req) => (req.method === 'POST' ? fail(409, 'MEETING_011', 'started') : ok(meeting({ status: 'cancelled' }))));
    await expect(s2.client.cancelMeeting('bbbbbbbbbbbbbbbbbbbbbbbb')).rejects.toBeInstanceOf(ConflictError);
  });

  it('reReadThen reads the booking again before acting', async () => {
    const { api, client } = withTokens((req) =>
      req.method === 'GET' ? ok(meeting({ status: 'checked-in' })) : ok(meeting({ status: 'done' }), 202),
    );
    const out = await client.reReadThen('bbbbbbbbbbbbbbbbbbbbbbbb', (fresh, c) =>
      fresh.status === 'checked-in' ? c.checkOut(fresh._id) : c.cancelMeeting(fresh._id),
    );
    expect(out.status).toBe('done');
    expect(api.requests.filter((r) => r.path.startsWith('/meetings')).map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /meetings/bbbbbbbbbbbbbbbbbbbbbbbb',
      'POST /meetings/bbbbbbbbbbbbbbbbbbbbbbbb/check-out',
    ]);
  });

  it('query arrays are repeated keys; path segments are encoded', async () => {
    const { api, client } = withTokens(() => ok([], 200, { limit: 10, offset: 0, total: 0 }));
    await client.searchDesks({ statuses: ['active', 'reserved'], limit: 10 });
    await client.getMember('a/b c');
    expect(api.to('/desks')[0].query.getAll('statuses')).toEqual(['active', 'reserved']);
    expect(api.requests.at(-1)!.path).toBe('/partner/members/a%2Fb%20c');
    expect(json(200, {}).status).toBe(200);
  });
});
