/**
 * The operator console's API (CONSOLE-CONTRACT.md), driven over HTTP like the
 * console: sign-in for the session cookie and its CSRF token, the reads (site,
 * a floor now under the sandbox clock, an asset's day, meetings, listeners,
 * devices, invites, payments), the staff cancel, and the change stream — also
 * from a second instance over the same database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySite, expectError, idOf } from '../support/fixtures.js';
import { OPS_TOKEN, startTestService, type HttpResult, type TestService } from '../support/test-service.js';
import { accepted, meetingSite, roomConfig, startMeetingService, type MeetingCtx } from '../support/meetings.js';
import { everyDay } from '../support/catalogue.js';

const ROOM_EVENTS = ['ROOM_BOOK', 'ROOM_CANCEL'];

function site() {
  const opts = {
    rooms: [
      { key: 'r1', name: 'Room One', cleanupMinutes: 15 },
      { key: 'r2', name: 'Room Two', status: 'inactive' as const },
    ],
    desks: [{ key: 'd1', name: 'Desk One', config: everyDay('08:00:00', '22:00:00') }],
  };
  const doc = meetingSite(opts);
  doc.rooms[0].polygon = [
    { xPct: 1, yPct: 1 },
    { xPct: 20, yPct: 1 },
    { xPct: 20, yPct: 20 },
  ];
  doc.webhooks = [
    {
      key: 'hook',
      project: 'tower',
      url: 'http://127.0.0.1:9/hook',
      secret: 'whsec-console-0123456789abcdef0123456789',
      events: ROOM_EVENTS,
    },
  ];
  doc.accessGroups = [
    { key: 'lobby', project: 'tower', name: 'Lobby', devices: [{ key: 'reader', name: 'Lobby reader', kind: 'card-reader' }] },
  ];
  return { opts, doc };
}

/** Signs in with the ops token; returns the cookie pair and the CSRF token. */
async function signIn(svc: TestService): Promise<{ cookie: string; csrf: string; res: HttpResult }> {
  const res = await svc.request('POST', '/ops/v1/session', { body: { token: OPS_TOKEN } });
  expect(res.status, res.text).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0]!, csrf: res.body.data.csrfToken, res };
}

interface Stream {
  /** Resolves with the first `change` event matching `pred`. */
  until(
    pred: (c: { kind: string; id: string; projectId: string | null }) => boolean,
  ): Promise<{ kind: string; id: string; projectId: string | null }>;
  headers: Headers;
  close(): void;
}

async function openStream(url: string, headers: Record<string, string>): Promise<Stream> {
  const ac = new AbortController();
  const res = await fetch(`${url}/ops/v1/stream`, { headers, signal: ac.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  // Wait for the greeting: the stream is subscribed from then on.
  while (!buf.includes(': connected')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('stream ended');
    buf += dec.decode(value, { stream: true });
  }
  return {
    headers: res.headers,
    close: () => ac.abort(),
    async until(pred) {
      for (;;) {
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const lines = block.split('\n');
          if (!lines.includes('event: change')) continue;
          const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6));
          if (pred(data)) return data;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        buf += dec.decode(value, { stream: true });
      }
    },
  };
}

describe('console API', () => {
  let ctx: MeetingCtx;
  let svc: TestService;
  let ids: Record<string, unknown>;
  const id = (key: string) => idOf(ids, key);

  beforeAll(async () => {
    const { opts, doc } = site();
    ctx = await startMeetingService(opts);
    svc = ctx.svc;
    ids = await applySite(svc, doc);
  });
  afterAll(async () => {
    await ctx.close();
  });

  describe('session', () => {
    it('a wrong token is 401 KS002 and sets no cookie', async () => {
      const res = await svc.request('POST', '/ops/v1/session', { body: { token: 'wrong-token' } });
      expectError(res, 401, 'KS002');
      expect(res.headers.get('set-cookie')).toBeNull();
    });

    it('the ops token gives an HttpOnly, SameSite=Strict cookie on Path=/ for 12 hours and a CSRF token', async () => {
      const { res, csrf } = await signIn(svc);
      const setCookie = res.headers.get('set-cookie')!;
      expect(setCookie).toMatch(/^ops_session=[^;]+;/);
      expect(setCookie).toContain('HttpOnly');
      expect(setCookie).toContain('SameSite=Strict');
      expect(setCookie).toContain('Path=/');
      expect(setCookie).toContain('Max-Age=43200');
      expect(setCookie).not.toContain('Secure'); // PUBLIC_BASE_URL is http here
      expect(csrf).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      expect(Date.parse(res.body.data.expiresAt)).toBeGreaterThan(Date.now() + 11 * 3_600_000);
    });

    it('the cookie reads; a cookie write needs x-csrf-token (403 KS003 without or with a wrong one); Bearer needs none', async () => {
      const { cookie, csrf } = await signIn(svc);
      const read = await svc.request('GET', '/ops/v1/site', { headers: { cookie } });
      expect(read.status, read.text).toBe(200);
      const session = await svc.request('GET', '/ops/v1/session', { headers: { cookie } });
      expect(session.status).toBe(200);
      expect(session.body.data.expiresAt).toBeTruthy();
      // A reloaded page gets the same CSRF token back from the cookie (the UI keeps working without signing in again).
      expect(session.body.data.csrfToken).toBe(csrf);

      const m = await ctx.bookRoom('alice', 'r1', '16:00', '17:00');
      expectError(await svc.request('POST', `/ops/v1/meetings/${m._id}/cancel`, { headers: { cookie }, body: {} }), 403, 'KS003');
      expectError(
        await svc.request('POST', `/ops/v1/meetings/${m._id}/cancel`, { headers: { cookie, 'x-csrf-token': 'nope' }, body: {} }),
        403,
        'KS003',
      );
      const other = await signIn(svc);
      expectError(
        await svc.request('POST', `/ops/v1/meetings/${m._id}/cancel`, { headers: { cookie, 'x-csrf-token': other.csrf }, body: {} }),
        403,
        'KS003',
      );
      const done = await svc.request('POST', `/ops/v1/meetings/${m._id}/cancel`, { headers: { cookie, 'x-csrf-token': csrf }, body: {} });
      expect(accepted(done).status).toBe('cancelled');
      // The clock (an ops write) with the Bearer token: no CSRF header.
      expect((await svc.ops('GET', '/ops/v1/clock')).status).toBe(200);
    });

    it('a forged or missing cookie is 401; sign-out clears the cookie', async () => {
      expectError(
        await svc.request('GET', '/ops/v1/site', {
          headers: { cookie: 'ops_session=v1.9999999999999.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
        }),
        401,
        'KS002',
      );
      expectError(await svc.request('GET', '/ops/v1/site'), 401, 'KS002');
      expectError(await svc.request('GET', '/ops/v1/session'), 401, 'KS002');
      const { cookie } = await signIn(svc);
      const out = await svc.request('DELETE', '/ops/v1/session', { headers: { cookie } });
      expect(out.status).toBe(204);
      expect(out.headers.get('set-cookie')).toMatch(/^ops_session=; .*Max-Age=0/);
    });
  });

  describe('sign-out and the stored session', () => {
    const read = (on: TestService, cookie: string) => on.request('GET', '/ops/v1/site', { headers: { cookie } });
    // A write that changes nothing: authorized, it reaches the route (404 for an unknown meeting); else 401.
    const write = (on: TestService, cookie: string, csrf: string) =>
      on.request('POST', '/ops/v1/meetings/ffffffffffffffffffffffff/cancel', { headers: { cookie, 'x-csrf-token': csrf }, body: {} });
    const wrote = (res: HttpResult) => expectError(res, 404, 'KS005');

    it('after sign-out the old cookie reads nothing, gets no CSRF token and writes nothing (401); other sessions carry on', async () => {
      const kept = await signIn(svc);
      const { cookie, csrf } = await signIn(svc);
      expect((await read(svc, cookie)).status).toBe(200);
      wrote(await write(svc, cookie, csrf));
      expect((await svc.request('DELETE', '/ops/v1/session', { headers: { cookie } })).status).toBe(204);
      expectError(await read(svc, cookie), 401, 'KS002');
      expectError(await svc.request('GET', '/ops/v1/session', { headers: { cookie } }), 401, 'KS002');
      expectError(await write(svc, cookie, csrf), 401, 'KS002');
      expectError(await svc.request('GET', '/ops/v1/stream', { headers: { cookie } }), 401, 'KS002');
      // Signing out again is harmless; the other session is untouched.
      expect((await svc.request('DELETE', '/ops/v1/session', { headers: { cookie } })).status).toBe(204);
      expect((await read(svc, kept.cookie)).status).toBe(200);
      wrote(await write(svc, kept.cookie, kept.csrf));
    });

    it('signed out on one instance, the cookie fails on another instance over the same database at once', async () => {
      const second = await startTestService({ database: svc.database, keepDatabase: true });
      try {
        const { cookie, csrf } = await signIn(svc);
        expect((await read(second, cookie)).status).toBe(200);
        wrote(await write(second, cookie, csrf));
        expect((await svc.request('DELETE', '/ops/v1/session', { headers: { cookie } })).status).toBe(204);
        expectError(await read(second, cookie), 401, 'KS002');
        expectError(await write(second, cookie, csrf), 401, 'KS002');
        // And the other way round.
        const b = await signIn(second);
        expect((await read(svc, b.cookie)).status).toBe(200);
        expect((await second.request('DELETE', '/ops/v1/session', { headers: { cookie: b.cookie } })).status).toBe(204);
        expectError(await read(svc, b.cookie), 401, 'KS002');
      } finally {
        await second.close();
      }
    });

    it('a restart keeps a valid session and not a revoked one', async () => {
      let first: TestService | undefined = await startTestService({ keepDatabase: true });
      const database = first.database;
      let again: TestService | undefined;
      try {
        const valid = await signIn(first);
        const revoked = await signIn(first);
        expect((await first.request('DELETE', '/ops/v1/session', { headers: { cookie: revoked.cookie } })).status).toBe(204);
        await first.close();
        first = undefined;
        again = await startTestService({ database });
        expect((await read(again, valid.cookie)).status).toBe(200);
        wrote(await write(again, valid.cookie, valid.csrf));
        const session = await again.request('GET', '/ops/v1/session', { headers: { cookie: valid.cookie } });
        expect(session.body.data?.csrfToken).toBe(valid.csrf);
        expectError(await read(again, revoked.cookie), 401, 'KS002');
        expectError(await write(again, revoked.cookie, revoked.csrf), 401, 'KS002');
      } finally {
        await first?.close();
        if (again) await again.close();
        else await database.drop();
      }
    });

    it('a cookie minted in one environment is refused by another with the same OPS_TOKEN and database', async () => {
      const prodEnv = { BOOKING_ENV: 'production', SECRETS_KEY: 'cd'.repeat(32) };
      const uat = await startTestService({ database: svc.database, keepDatabase: true, env: { BOOKING_ENV: 'uat' } });
      const prod = await startTestService({ database: svc.database, keepDatabase: true, env: prodEnv });
      try {
        const fromUat = await signIn(uat);
        expect((await read(uat, fromUat.cookie)).status).toBe(200);
        expectError(await read(prod, fromUat.cookie), 401, 'KS002');
        expectError(await write(prod, fromUat.cookie, fromUat.csrf), 401, 'KS002');
        expectError(await prod.request('GET', '/ops/v1/session', { headers: { cookie: fromUat.cookie } }), 401, 'KS002');
        expectError(await read(svc, fromUat.cookie), 401, 'KS002'); // development
        const fromProd = await signIn(prod);
        expect((await read(prod, fromProd.cookie)).status).toBe(200);
        expectError(await read(uat, fromProd.cookie), 401, 'KS002');
        expectError(await read(svc, fromProd.cookie), 401, 'KS002');
      } finally {
        await prod.close();
        await uat.close();
      }
    });
  });

  describe('reads', () => {
    it('GET /ops/v1/site lists projects, floors with their zone, rooms with polygons, desks', async () => {
      const res = await svc.ops('GET', '/ops/v1/site');
      expect(res.status, res.text).toBe(200);
      const d = res.body.data;
      expect(d.projects.map((p: any) => p.key).sort()).toEqual(['annex', 'tower']);
      expect(d.projects.find((p: any) => p.key === 'tower')).toMatchObject({ timezone: 'Asia/Bangkok', currency: 'THB' });
      const fT = d.floors.find((f: any) => f.key === 'fT');
      expect(fT).toMatchObject({ name: '10F', zoneName: 'Tower', projectId: id('tower'), planImageUrl: null });
      const r1 = d.rooms.find((r: any) => r.key === 'r1');
      expect(r1).toMatchObject({ _id: id('r1'), name: 'Room One', floorId: fT._id, capacity: 6, status: 'active', isPublic: true });
      expect(r1.polygon).toHaveLength(3);
      expect(d.rooms.find((r: any) => r.key === 'r2')).toMatchObject({ status: 'inactive', polygon: null });
      expect(d.desks.find((x: any) => x.key === 'd1')).toMatchObject({ name: 'Desk One', index: 1, floorId: fT._id });
      // Members with their projects (the console's host picker for visitor invites).
      const alice = d.users.find((u: any) => u._id === id('alice'));
      expect(alice).toMatchObject({ name: 'Alice Example', email: 'alice@example.com' });
      expect([...alice.projectIds].sort()).toEqual([id('annex'), id('tower')].sort());
      expect(d.users.find((u: any) => u._id === id('carol')).projectIds).toEqual([id('tower')]);
    });

    it('listeners (no secret), devices, payments', async () => {
      const hooks = await svc.ops('GET', '/ops/v1/webhooks');
      expect(hooks.status, hooks.text).toBe(200);
      expect(hooks.body.data).toEqual([
        expect.objectContaining({ key: 'hook', projectId: id('tower'), events: ROOM_EVENTS, enabled: true, consecutiveFailures: 0 }),
      ]);
      expect(hooks.text).not.toContain('whsec');
      const devices = await svc.ops('GET', '/ops/v1/devices');
      expect(devices.status, devices.text).toBe(200);
      expect(devices.body.data).toEqual([expect.objectContaining({ name: 'Lobby reader', kind: 'card-reader', online: true })]);
      expect(typeof devices.body.data[0].pendingChanges).toBe('number');
      const payments = await svc.ops('GET', '/ops/v1/payments?status=pending');
      expect(payments.status, payments.text).toBe(200);
      expect(payments.body.data).toEqual([]);
      expectError(await svc.ops('GET', '/ops/v1/payments?status=bogus'), 400, 'KS001');
    });

    it('the invites of a property-local day, without QR codes', async () => {
      const made = await svc.ops('POST', '/ops/v1/visitors/invites', {
        projectId: id('tower'),
        hostUserId: id('alice'),
        visitorName: 'Vera Visitor',
        startDateTime: ctx.t('10:00'),
        endDateTime: ctx.t('11:00'),
      });
      expect(made.status, made.text).toBe(201);
      const day = ctx.D.toISODate();
      const res = await svc.ops('GET', `/ops/v1/visitors/invites?projectId=${id('tower')}&date=${day}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.map((i: any) => i._id)).toEqual([made.body.data._id]);
      expect(res.body.data[0]).not.toHaveProperty('qrCardCode');
      expect(res.text).not.toContain(made.body.data.qrCardCode);
      const other = await svc.ops('GET', `/ops/v1/visitors/invites?projectId=${id('tower')}&date=${ctx.D.plus({ days: 1 }).toISODate()}`);
      expect(other.body.data).toEqual([]);
    });
  });

  describe('floor now, day view, meetings, staff cancel', () => {
    let booking: any;
    const floorNow = async () => {
      const res = await svc.ops('GET', `/ops/v1/floors/${id('fT')}/now`);
      expect(res.status, res.text).toBe(200);
      return Object.fromEntries(res.body.data.assets.map((a: any) => [a.name, a]));
    };
    const advance = async (minutes: number) => {
      const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: minutes });
      expect(res.status, res.text).toBe(200);
    };

    it('free, booked, checked-in, cleaning and closed follow the sandbox clock', async () => {
      booking = await ctx.bookRoom('alice', 'r1', '09:00', '10:00');
      // 07:00: r1 open and free (next: the 09:00 booking); r2 inactive; d1 opens at 08:00.
      let now = await floorNow();
      expect(now['Room One']).toMatchObject({ kind: 'room', state: 'free', current: null });
      expect(now['Room One'].next).toMatchObject({ _id: booking._id, organizerName: 'Alice Example', status: 'active' });
      expect(now['Room Two'].state).toBe('closed');
      expect(now['Desk One']).toMatchObject({ kind: 'desk', state: 'closed' });

      await advance(125); // 09:05
      now = await floorNow();
      expect(now['Room One']).toMatchObject({ state: 'booked', current: { _id: booking._id } });
      expect(now['Desk One'].state).toBe('free');

      accepted(await ctx.action('alice', booking._id, 'check-in'));
      now = await floorNow();
      expect(now['Room One']).toMatchObject({ state: 'checked-in', current: { _id: booking._id, status: 'checked-in' } });

      await advance(60); // 10:05: ended at 10:00, cleaning until 10:15
      now = await floorNow();
      expect(now['Room One']).toMatchObject({ state: 'cleaning', current: null });

      await advance(15); // 10:20
      expect((await floorNow())['Room One'].state).toBe('free');

      await advance(110); // 12:10: the 12:00-13:00 break
      expect((await floorNow())['Room One'].state).toBe('closed');
      expectError(await svc.ops('GET', '/ops/v1/floors/ffffffffffffffffffffffff/now'), 404, 'KS005');
    });

    it('the day view shows hours, breaks and bookings with their cleaning block in the property zone', async () => {
      const date = ctx.D.toISODate();
      const res = await svc.ops('GET', `/ops/v1/assets/${id('r1')}/day?date=${date}`);
      expect(res.status, res.text).toBe(200);
      const d = res.body.data;
      expect(d).toMatchObject({ asset: { _id: id('r1'), kind: 'room', name: 'Room One' }, date, timeZone: 'Asia/Bangkok' });
      const same = (a: string, b: string) => expect(Date.parse(a)).toBe(Date.parse(b));
      expect(d.open).toHaveLength(1);
      same(d.open[0].start, ctx.t('07:00'));
      same(d.open[0].end, ctx.t('22:00'));
      expect(d.breaks).toHaveLength(1);
      same(d.breaks[0].start, ctx.t('12:00'));
      same(d.breaks[0].end, ctx.t('13:00'));
      const b = d.bookings.find((x: any) => x._id === booking._id);
      expect(b).toMatchObject({ status: 'done', organizerName: 'Alice Example' });
      same(b.startDateTime, ctx.t('09:00'));
      same(b.cleaningEndsAt, ctx.t('10:15'));
      // The cancelled 16:00 booking is left out.
      expect(d.bookings.every((x: any) => x.status !== 'cancelled')).toBe(true);
      expectError(await svc.ops('GET', `/ops/v1/assets/${id('r1')}/day?date=2024-02-30`), 400, 'KS001');
      expectError(await svc.ops('GET', `/ops/v1/assets/${id('r1')}/day?date=tomorrow`), 400, 'KS001');
    });

    it('the ops meeting list spans projects, filters and searches, and never shows a PIN', async () => {
      const annexRoomDoc = site().doc;
      annexRoomDoc.rooms.push({
        key: 'ax',
        floor: 'fX',
        name: 'Annex Room',
        capacity: 4,
        status: 'active',
        isPublic: true,
        cleanupMinutes: 0,
        config: roomConfig(),
      });
      ids = await applySite(svc, annexRoomDoc);
      const annex = await ctx.book('hub', {
        meetingRoomId: id('ax'),
        title: 'Annex sync',
        startDateTime: ctx.t('15:00'),
        endDateTime: ctx.t('16:00'),
      });
      expect(annex.status, annex.text).toBe(201);
      const q = `from=${encodeURIComponent(ctx.t('00:00'))}&to=${encodeURIComponent(ctx.t('23:59'))}`;
      const all = await svc.ops('GET', `/ops/v1/meetings?${q}`);
      expect(all.status, all.text).toBe(200);
      const idsSeen = all.body.data.map((m: any) => m._id);
      expect(idsSeen).toEqual(expect.arrayContaining([booking._id, annex.body.data._id]));
      expect(all.body.meta.total).toBe(all.body.data.length);
      expect(all.text).not.toContain('pinCode');
      const byAsset = await svc.ops('GET', `/ops/v1/meetings?${q}&assetId=${id('ax')}`);
      expect(byAsset.body.data.map((m: any) => m._id)).toEqual([annex.body.data._id]);
      const search = await svc.ops('GET', `/ops/v1/meetings?${q}&search=ANNEX%20sy`);
      expect(search.body.data.map((m: any) => m._id)).toEqual([annex.body.data._id]);
      const project = await svc.ops('GET', `/ops/v1/meetings?${q}&projectId=${id('tower')}`);
      expect(project.body.data.map((m: any) => m._id)).not.toContain(annex.body.data._id);

      const detail = await svc.ops('GET', `/ops/v1/meetings/${booking._id}`);
      expect(detail.status, detail.text).toBe(200);
      expect(detail.body.data).not.toHaveProperty('pinCode');
      expect(detail.body.data.payment).toBeNull();
      expect(detail.body.data.history.map((h: any) => h.action)).toEqual(expect.arrayContaining(['create', 'check-in']));
      expect(detail.body.data.history[0]).toEqual(
        expect.objectContaining({ actor: expect.any(String), source: expect.any(String), at: expect.any(String) }),
      );
      // Who acted, by name and kind (not only the stored id): Alice booked; the annex booking is the hub app's own.
      expect(detail.body.data.history[0]).toMatchObject({ action: 'create', actorKind: 'member', actorName: 'Alice Example' });
      const annexDetail = await svc.ops('GET', `/ops/v1/meetings/${annex.body.data._id}`);
      expect(annexDetail.body.data.history[0]).toMatchObject({
        action: 'create',
        source: 'partner',
        actorKind: 'app',
        actorName: 'Multi-site hub',
      });
      expectError(await svc.ops('GET', '/ops/v1/meetings/ffffffffffffffffffffffff'), 404, 'KS005');
    });

    it('staff cancel: 202, history actor ops / source console with the reason, the CANCEL event; again is 409 MEETING_011', async () => {
      const m = await ctx.bookRoom('alice', 'r1', '14:00', '15:00');
      const res = await svc.ops('POST', `/ops/v1/meetings/${m._id}/cancel`, { reason: 'Room needed for maintenance' });
      const data = accepted(res);
      expect(data).toMatchObject({ _id: m._id, status: 'cancelled', cancelReason: 'Room needed for maintenance' });
      expect(data).not.toHaveProperty('pinCode');
      expect(data.history.at(-1)).toEqual({
        action: 'cancel',
        actor: 'ops',
        actorKind: 'staff',
        actorName: null,
        source: 'console',
        reason: 'Room needed for maintenance',
        at: expect.any(String),
      });
      // The public read shows the same history entry.
      const pub = await ctx.get('portal', m._id);
      expect(pub.body.data.histories.at(-1)).toMatchObject({
        action: 'cancel',
        by: 'ops',
        source: 'console',
        reason: 'Room needed for maintenance',
      });
      // The spec's CANCEL event went to the subscribed listener.
      const deliveries = await svc.ops('GET', `/ops/v1/webhooks/${id('hook')}/deliveries?limit=100`);
      expect(deliveries.status, deliveries.text).toBe(200);
      expect(deliveries.body.data.map((d: any) => d.type)).toContain('ROOM_CANCEL');
      expectError(await svc.ops('POST', `/ops/v1/meetings/${m._id}/cancel`, {}), 409, 'MEETING_011');
      expectError(await svc.ops('POST', '/ops/v1/meetings/ffffffffffffffffffffffff/cancel', {}), 404, 'KS005');
      expectError(await svc.ops('POST', `/ops/v1/meetings/${m._id}/cancel`, { reason: 'x', extra: 1 }), 400, 'KS001');
    });
  });

  describe('stream', () => {
    it('sends a change when a booking is made through the public API, with no-store and no buffering', async () => {
      const stream = await openStream(svc.url, { authorization: `Bearer ${OPS_TOKEN}` });
      try {
        expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
        expect(stream.headers.get('cache-control')).toBe('no-store');
        expect(stream.headers.get('x-accel-buffering')).toBe('no');
        const m = await ctx.bookRoom('alice', 'r1', '18:00', '19:00');
        const change = await stream.until((c) => c.kind === 'meeting' && c.id === m._id);
        expect(change.projectId).toBe(id('tower'));
      } finally {
        stream.close();
      }
    });

    it('a console session reads the stream; without one it is 401', async () => {
      expectError(await svc.request('GET', '/ops/v1/stream'), 401, 'KS002');
      const { cookie } = await signIn(svc);
      const stream = await openStream(svc.url, { cookie });
      stream.close();
    });

    it('a stream opened with a cookie ends within seconds of sign-out on another instance; a Bearer stream is untouched', async () => {
      const second = await startTestService({ database: svc.database, keepDatabase: true });
      try {
        const { cookie } = await signIn(svc);
        const byCookie = await openStream(svc.url, { cookie });
        const byToken = await openStream(svc.url, { authorization: `Bearer ${OPS_TOKEN}` });
        try {
          expect((await second.request('DELETE', '/ops/v1/session', { headers: { cookie } })).status).toBe(204);
          const started = Date.now();
          await expect(byCookie.until(() => false)).rejects.toThrow('stream ended');
          expect(Date.now() - started).toBeLessThan(12_000); // the recheck runs every 5 s
          // The Bearer stream still gets changes.
          const m = await ctx.bookRoom('alice', 'r1', '21:00', '21:30');
          expect((await byToken.until((c) => c.kind === 'meeting' && c.id === m._id)).projectId).toBe(id('tower'));
          // The console's reconnect is refused.
          expectError(await svc.request('GET', '/ops/v1/stream', { headers: { cookie } }), 401, 'KS002');
        } finally {
          byCookie.close();
          byToken.close();
        }
      } finally {
        await second.close();
      }
    });

    it("a booking made on another instance over the same database reaches this instance's stream; shutdown does not wait on it", async () => {
      const second = await startTestService({ database: svc.database, keepDatabase: true });
      let closed = false;
      try {
        const stream = await openStream(second.url, { authorization: `Bearer ${OPS_TOKEN}` });
        const m = await ctx.bookRoom('alice', 'r1', '19:30', '20:30');
        const change = await stream.until((c) => c.kind === 'meeting' && c.id === m._id);
        expect(change.projectId).toBe(id('tower'));
        // Close the second instance with its stream still open: it ends the stream and finishes.
        await second.close();
        closed = true;
        await expect(stream.until(() => false)).rejects.toThrow();
      } finally {
        if (!closed) await second.close();
      }
    });
  });
});
