/**
 * Hostile and unusual inputs over HTTP (issue 16, section 1): impossible instants
 * (leap seconds, 30 February, no offset) refused with 400 KS001 everywhere, ISO
 * times without seconds accepted; numeric query parameters bounded; bracket array
 * parameters; one message per bad enum value; an empty JSON body on the action
 * routes; the refresh-token message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, refreshRequest, UNKNOWN_ID } from '../support/fixtures.js';
import { okData, qs } from '../support/catalogue.js';
import { accepted, created, startMeetingService, type MeetingCtx } from '../support/meetings.js';

const LEAP = '2030-12-31T23:59:60Z';
const BAD_INSTANTS = [
  LEAP,
  '2030-02-30T10:00:00Z',
  '2030-12-31T24:00:00Z',
  '2030-12-31T10:00:00',
  '2030-13-01T10:00:00Z',
  '2030-12-31T10:00:00+25:00',
  '9999-12-31T23:59:59Z',
];
const INSTANT_MESSAGE = /must be an ISO 8601 date-time with a timezone offset .*no leap second/;

/** The messages of a 400 KS001, asserting its shape. */
function messages(res: { status: number; body: any; text: string }): string[] {
  expectError(res as any, 400, 'KS001');
  return res.body.message as string[];
}

describe('input hardening', () => {
  let c: MeetingCtx;
  let room: string;
  let desk: string;
  let tower: string;
  beforeAll(async () => {
    c = await startMeetingService({ rooms: [{ key: 'r1' }, { key: 'r2' }], desks: [{ key: 'd1' }] });
    room = c.id('r1');
    desk = c.id('d1');
    tower = c.id('tower');
  });
  afterAll(async () => {
    await c?.close();
  });
  const get = (path: string, token = c.tok.portal) => c.request('GET', path, token);

  describe('one grammar for every instant in a request', () => {
    it.each(BAD_INSTANTS)('%s is refused with 400 KS001 by every read that takes a time', async (bad) => {
      const later = c.t('10:00');
      const cases: [string, string][] = [
        [`/meeting-rooms${qs({ projectId: tower, startDateTime: bad, endDateTime: later })}`, 'query.startDateTime'],
        [`/meeting-rooms${qs({ projectId: tower, startDateTime: c.t('09:00'), endDateTime: bad })}`, 'query.endDateTime'],
        [`/meeting-rooms/${room}${qs({ from: bad })}`, 'query.from'],
        [`/meeting-rooms/${room}${qs({ to: bad })}`, 'query.to'],
        [`/desks/${desk}${qs({ from: bad })}`, 'query.from'],
        [`/desks${qs({ projectId: tower, startDateTime: bad, endDateTime: later })}`, 'query.startDateTime'],
        [`/meetings${qs({ from: bad, to: later })}`, 'query.from'],
        [`/meetings${qs({ from: c.t('09:00'), to: bad })}`, 'query.to'],
      ];
      for (const [path, field] of cases) {
        const res = await get(path);
        expect(messages(res), path).toEqual([expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')} ${INSTANT_MESSAGE.source}`))]);
      }
    });

    it('the latest accepted instant still gives date-times a client can read (found by the route fuzzer)', async () => {
      // Before: from=9999-12-31T23:59:59Z answered 200 with calendar.to "+010000-01-07T…", outside ISO 8601's four-digit years.
      const data = okData(await get(`/meeting-rooms/${room}${qs({ from: '9998-12-31T00:00:00Z' })}`));
      expect(data.calendar.from).toBe('9998-12-31T00:00:00.000Z');
      expect(data.calendar.to).toBe('9999-01-07T00:00:00.000Z');
    });

    it('a leap second no longer yields the undocumented unavailableReason INVALID_WINDOW', async () => {
      const res = await get(
        `/meeting-rooms${qs({ projectId: tower, startDateTime: c.t('09:00').replace(/:00(?:\.000)?(?=[+-]|Z)/, ':60'), endDateTime: c.t('10:00') })}`,
      );
      expectError(res, 400, 'KS001');
      expect(res.text).not.toContain('INVALID_WINDOW');
    });

    it.each(BAD_INSTANTS)('%s is refused in every booking body', async (bad) => {
      const book = await c.book('alice', { meetingRoomId: room, title: 'leap', startDateTime: bad, endDateTime: c.t('10:00') });
      expect(messages(book)).toEqual([expect.stringMatching(INSTANT_MESSAGE)]);
      expect(book.body.message[0]).toMatch(/^body\.startDateTime /);
      const draft = await c.book('alice', {
        meetingRoomId: room,
        title: 'draft',
        startDateTime: c.t('09:00'),
        endDateTime: c.t('10:00'),
        draft: true,
        draftEndDateTimes: [c.t('10:30'), bad],
      });
      expect(messages(draft)).toEqual([expect.stringMatching(/^body\.draftEndDateTimes\[1\] must be an ISO 8601/)]);
      const m = await c.bookRoom('alice', 'r2', '14:00', '15:00', {}, 3 + BAD_INSTANTS.indexOf(bad));
      const patch = await c.patch('alice', m._id, { endDateTime: bad });
      expect(messages(patch)).toEqual([expect.stringMatching(/^body\.endDateTime must be an ISO 8601/)]);
      // Nothing changed.
      expect(okData(await c.get('alice', m._id)).endDateTime).toBe(m.endDateTime);
    });

    it.each(['20301231T235960Z', '20300230T100000Z', '20301231T240000Z', '20300230'])(
      'a series UNTIL=%s that is no real instant → 400',
      async (until) => {
        const res = await c.book('alice', {
          meetingRoomId: room,
          title: 'series',
          startDateTime: c.t('08:00', 4),
          endDateTime: c.t('08:30', 4),
          recurrence: `FREQ=DAILY;UNTIL=${until}`,
        });
        expect(messages(res)).toEqual(['body.recurrence: UNTIL must be YYYYMMDD or YYYYMMDDTHHMMSSZ']);
      },
    );

    it('a leap second is refused in a visitor invite and in faceConsentAt', async () => {
      const invite = await c.svc.ops('POST', '/ops/v1/visitors/invites', {
        projectId: tower,
        hostUserId: c.id('alice'),
        visitorName: 'Leap Visitor',
        startDateTime: LEAP,
        endDateTime: null,
      });
      expect(messages(invite)).toContainEqual(expect.stringMatching(/^body\.startDateTime must be an ISO 8601/));
      const creds = await c.request('PUT', '/partner/members/ext-alice/credentials', c.tok.portal, {
        face: 'aGVsbG8=',
        faceConsentAt: LEAP,
      });
      expect(messages(creds)).toContainEqual(expect.stringMatching(/^body\.faceConsentAt must be an ISO 8601/));
    });

    it('ISO 8601 times without seconds are accepted (seconds are dropped anyway)', async () => {
      const noSeconds = (iso: string) => iso.replace(/:00\.000(?=[+-])|:00(?=[+-])/, '');
      const start = noSeconds(c.t('16:00'));
      const end = noSeconds(c.t('17:00'));
      expect(start).toMatch(/T16:00[+-]\d\d:\d\d$/);
      const m = created(await c.book('alice', { meetingRoomId: room, title: 'no seconds', startDateTime: start, endDateTime: end }));
      expect(Date.parse(m.startDateTime)).toBe(Date.parse(c.t('16:00')));
      const listed = okData(await get(`/meetings${qs({ from: noSeconds(c.t('15:00')), to: noSeconds(c.t('18:00')) })}`));
      expect(listed.map((x: any) => x._id)).toContain(m._id);
      okData(await get(`/meeting-rooms${qs({ projectId: tower, startDateTime: start, endDateTime: end })}`));
      okData(await get(`/meeting-rooms/${room}${qs({ from: noSeconds(c.t('07:00')) })}`));
    });

    it('the OpenAPI document describes the instant grammar', async () => {
      const doc = (await c.svc.request('GET', '/openapi.json')).body;
      expect(doc.info.description).toMatch(/leap second/);
      expect(doc.info.description).toMatch(/seconds may be left out/);
    });
  });

  describe('numeric query parameters', () => {
    const HOSTILE = ['Infinity', '1e309', '-1', '1.5', 'abc', '99999999999999999999', '-Infinity', 'NaN', ''];
    const routes = () => [
      { name: 'GET /desks', path: (q: Record<string, string>) => `/desks${qs({ projectId: tower, ...q })}`, ops: false },
      {
        name: 'GET /meetings',
        path: (q: Record<string, string>) => `/meetings${qs({ from: c.t('07:00'), to: c.t('22:00'), ...q })}`,
        ops: false,
      },
      {
        name: 'GET /ops/v1/webhooks/{id}/deliveries',
        path: (q: Record<string, string>) => `/ops/v1/webhooks/${UNKNOWN_ID}/deliveries${qs(q)}`,
        ops: true,
      },
    ];
    const call = (r: { ops: boolean }, path: string) => (r.ops ? c.svc.ops('GET', path) : get(path));

    it.each(HOSTILE)('limit or offset = %j → 400 KS001 naming the parameter, never 5xx', async (value) => {
      for (const r of routes()) {
        for (const param of ['limit', 'offset']) {
          const res = await call(r, r.path({ [param]: value }));
          expect(res.status, `${r.name} ${param}=${value}: ${res.text}`).toBe(400);
          expect(
            messages(res).every((m) => m.startsWith(`query.${param} `)),
            res.text,
          ).toBe(true);
        }
      }
    });

    it('the bounds are named: limit at most 3000, offset at most 2^53-1 (what a JSON number carries exactly)', async () => {
      for (const r of routes()) {
        expect(messages(await call(r, r.path({ limit: '3001' })))).toEqual(['query.limit must be <= 3000']);
        expect(messages(await call(r, r.path({ offset: '9007199254740992' })))).toEqual(['query.offset must be <= 9007199254740991']);
      }
      // At the bounds: fine.
      expect((await get(routes()[0].path({ limit: '3000', offset: '9007199254740991' }))).status).toBe(200);
      expect((await get(routes()[1].path({ limit: '0', offset: '0' }))).status).toBe(200);
    });

    it('minCapacity is bounded too', async () => {
      for (const v of ['Infinity', '1e309', '0', '1.5', '9007199254740992']) {
        const res = await get(`/meeting-rooms${qs({ projectId: tower, minCapacity: v })}`);
        expect(
          messages(res).every((m) => m.startsWith('query.minCapacity ')),
          res.text,
        ).toBe(true);
      }
      expect((await get(`/meeting-rooms${qs({ projectId: tower, minCapacity: '9007199254740991' })}`)).status).toBe(200);
    });

    it('every numeric query parameter in the OpenAPI document has a maximum', async () => {
      const doc = (await c.svc.request('GET', '/openapi.json')).body;
      const numeric: string[] = [];
      for (const [path, item] of Object.entries<any>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(item)) {
          for (const p of op.parameters ?? []) {
            if (p.in !== 'query' || !['integer', 'number'].includes(p.schema?.type)) continue;
            numeric.push(`${method} ${path} ${p.name}`);
            expect(p.schema.maximum, `${method} ${path} ${p.name}`).toBeTypeOf('number');
            expect(p.schema.minimum, `${method} ${path} ${p.name}`).toBeTypeOf('number');
          }
        }
      }
      expect(numeric.length).toBeGreaterThanOrEqual(7);
    });
  });

  describe('bracket and repeated query parameters', () => {
    it('statuses[]=cancelled filters exactly like statuses=cancelled on GET /meetings', async () => {
      const kept = await c.bookRoom('alice', 'r1', '18:00', '19:00');
      const gone = await c.bookRoom('alice', 'r1', '19:30', '20:30');
      accepted(await c.action('alice', gone._id, 'cancel'));
      const window = { from: c.t('17:30'), to: c.t('21:00') };
      const plain = okData(await get(`/meetings${qs({ ...window, statuses: 'cancelled' })}`)).map((m: any) => m._id);
      const bracket = okData(await get(`/meetings${qs({ ...window, 'statuses[]': 'cancelled' })}`)).map((m: any) => m._id);
      expect(plain).toEqual([gone._id]);
      expect(bracket).toEqual(plain);
      const both = okData(await get(`/meetings${qs({ ...window, 'statuses[]': ['cancelled', 'active'] })}`)).map((m: any) => m._id);
      expect(both.sort()).toEqual([kept._id, gone._id].sort());
      // A bracket key mixed with the plain one: the union.
      const mixed = okData(await get(`/meetings${qs({ ...window, statuses: 'active', 'statuses[]': 'cancelled' })}`)).map(
        (m: any) => m._id,
      );
      expect(mixed.sort()).toEqual([kept._id, gone._id].sort());
      // A bad value behind brackets is still validated.
      expect(messages(await get(`/meetings${qs({ ...window, 'statuses[]': 'gone' })}`))[0]).toMatch(
        /^query\.statuses\[0\] must be one of: /,
      );
    });

    it('status[] and ids[] on the searches', async () => {
      const r2 = c.id('r2');
      const rooms = okData(await get(`/meeting-rooms${qs({ projectId: tower, 'ids[]': r2, 'status[]': 'active' })}`));
      expect(rooms.map((r: any) => r._id)).toEqual([r2]);
      expect(okData(await get(`/meeting-rooms${qs({ projectId: tower, 'status[]': 'inactive' })}`))).toEqual([]);
      const desks = await get(`/desks${qs({ projectId: tower, 'statuses[]': 'inactive' })}`);
      expect(okData(desks)).toEqual([]);
      expect(okData(await get(`/desks${qs({ projectId: tower, 'ids[]': desk })}`)).map((d: any) => d._id)).toEqual([desk]);
    });

    it('an unknown bracket parameter or brackets on a single-valued one → 400, never an unapplied filter', async () => {
      expect(messages(await get(`/meeting-rooms${qs({ projectId: tower, 'foo[]': 'x' })}`))).toEqual([
        'query.foo[] is not an allowed parameter',
      ]);
      expect(messages(await get(`/desks${qs({ projectId: tower, 'limit[]': '5' })}`))).toEqual([
        'query.limit[] is not an allowed parameter: limit takes one value',
      ]);
      expect(messages(await get(`/meeting-rooms${qs({ 'projectId[]': tower })}`))).toContain(
        'query.projectId[] is not an allowed parameter: projectId takes one value',
      );
      expect(messages(await c.svc.ops('GET', `/ops/v1/webhooks/${UNKNOWN_ID}/deliveries?offset[]=1`))).toEqual([
        'query.offset[] is not an allowed parameter: offset takes one value',
      ]);
    });

    it('a single-valued parameter given twice → 400 naming it, not 500', async () => {
      expect(messages(await get(`/desks?projectId=${tower}&limit=1&limit=2`))).toEqual(['query.limit must be given once']);
      expect(
        messages(await get(`/meetings${qs({ from: c.t('07:00'), to: c.t('22:00') })}&from=${encodeURIComponent(c.t('08:00'))}`)),
      ).toEqual(['query.from must be given once']);
      expect(messages(await c.svc.ops('GET', `/ops/v1/webhooks/${UNKNOWN_ID}/deliveries?limit=1&limit=1`))).toEqual([
        'query.limit must be given once',
      ]);
    });
  });

  describe('one message per bad enum value', () => {
    it('GET /meeting-rooms?type=suite → exactly one message naming the allowed values', async () => {
      expect(messages(await get(`/meeting-rooms${qs({ projectId: tower, type: 'suite' })}`))).toEqual([
        'query.type must be one of: normal, bedroom',
      ]);
    });

    it('GET /desks with a bad timePeriod and a bad status → one message each', async () => {
      const res = await get(`/desks${qs({ projectId: tower, startDateTime: c.t('09:00'), timePeriod: 'evening', status: 'broken' })}`);
      expect(messages(res).sort()).toEqual([
        'query.status must be one of: active, inactive, in-used, reserved, suspended',
        'query.timePeriod must be one of: morning, afternoon, allDay',
      ]);
    });
  });

  describe('an empty body with content-type application/json', () => {
    const send = (id: string, action: string, raw: string) =>
      c.svc.request('POST', `/meetings/${id}/${action}`, { token: c.tok.alice, raw, headers: { 'content-type': 'application/json' } });

    it.each(['', '   ', '\n\t '])('cancel with body %j is treated as {}', async (raw) => {
      const m = await c.bookRoom('alice', 'r2', '09:00', '10:00', {}, 1);
      expect(accepted(await send(m._id, 'cancel', raw)).status).toBe('cancelled');
    });

    it('check-in and check-out with an empty body reach the action (not 400 KS001)', async () => {
      const m = await c.bookRoom('alice', 'r2', '11:00', '11:30', {}, 2);
      for (const action of ['check-in', 'check-out']) {
        const res = await send(m._id, action, '');
        // Too early to check in or out: the state answer, not a body error.
        expect(res.status, res.text).not.toBe(400);
        expect(res.body.code).not.toBe('KS001');
      }
    });

    it('a non-empty invalid JSON body is still 400', async () => {
      const m = await c.bookRoom('alice', 'r2', '13:00', '14:00', {}, 1);
      expect(messages(await send(m._id, 'cancel', '{'))).toEqual(['body is not valid JSON']);
      expect(okData(await c.get('alice', m._id)).status).toBe('active');
    });
  });

  describe('numbers in bodies', () => {
    const roomDoc = (key: string, extra: Record<string, unknown>) => ({
      zones: [{ key: 'nz', project: 'tower', name: 'Numbers zone' }],
      floors: [{ key: 'nf', zone: 'nz', name: 'Numbers floor' }],
      rooms: [{ key, floor: 'nf', name: key, email: `${key}@rooms.example`, ...extra }],
    });

    it('a number sent as text that coerces to Infinity ("1e999", "Infinity") is 400 naming the field, and nothing is stored', async () => {
      // Before: capacity "1e999" was stored as Infinity on SQLite (200) and failed the statement on PostgreSQL (500).
      for (const [field, extra] of [
        ['body.rooms[0].capacity', { capacity: '1e999' }],
        ['body.rooms[0].chargeRate.perHour', { chargeRate: { perHour: 'Infinity', perDay: 0 } }],
      ] as const) {
        const res = await c.svc.ops('POST', '/ops/v1/apply', roomDoc('numbers-inf', extra));
        expect(messages(res), field).toEqual([expect.stringContaining(field)]);
      }
      const rooms = okData(await get(`/meeting-rooms${qs({ projectId: tower })}`));
      expect(rooms.some((r: any) => r.name === 'numbers-inf')).toBe(false);
    });

    it('huge finite numbers are refused against a documented maximum (before: 500 on PostgreSQL)', async () => {
      for (const [extra, field] of [
        [{ capacity: 1e300 }, /body\.rooms\[0\]\.capacity must be <= 100000/],
        [{ chargeRate: { perHour: 1e308, perDay: 0 } }, /body\.rooms\[0\]\.chargeRate\.perHour must be <= 1000000000/],
        [{ config: { maxAdvanceBookingDays: 4_000_000_000 } }, /maxAdvanceBookingDays must be <= 3660/],
        [{ config: { meetingConfig: { preStartMinutes: 2 ** 40 } } }, /preStartMinutes must be <= 10080/],
      ] as const) {
        const res = await c.svc.ops('POST', '/ops/v1/apply', roomDoc('numbers-big', extra));
        expect(messages(res)).toEqual([expect.stringMatching(field)]);
      }
    });
  });

  describe('the refresh token grant', () => {
    it('a garbage refresh token → 401 KS002 whose message is about the refresh token', async () => {
      for (const value of ['garbage', 'krt_nope', `kat_${'0'.repeat(24)}_${'a'.repeat(43)}`]) {
        const res = await refreshRequest(c.svc, value);
        expectError(res, 401, 'KS002');
        expect(res.body.message).toMatch(/^Refresh token /);
        expect(res.body.message).not.toMatch(/access token/i);
      }
    });
  });
});
