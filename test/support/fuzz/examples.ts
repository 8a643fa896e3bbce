/**
 * Hand-written valid-ish request bodies per operation, over the world's real ids
 * and instants near its bookings: schema-derived bodies alone rarely pass every
 * business rule, these reach the deep code (then get mutated like any other).
 */
import fc from 'fast-check';
import { PORTAL_APP_ID, PORTAL_SECRET, HUB_APP_ID, HUB_SECRET } from '../fixtures.js';
import { PARTNER_APP_ID, PARTNER_SECRET } from '../partner-members.js';
import { fuzzSite, type World } from './world.js';

/** Local instants (+07:00) on D-1..D+3 every 30 minutes from 05:00 to 23:30. */
export function instantsOf(w: World): string[] {
  const out: string[] = [];
  for (let day = -1; day <= 3; day++) {
    for (let h = 5; h <= 23; h++) for (const m of ['00', '30']) out.push(w.t(`${String(h).padStart(2, '0')}:${m}`, day));
  }
  return out;
}

export function examplesFor(w: World): Record<string, fc.Arbitrary<unknown>[]> {
  const k = w.known;
  const one = (xs: string[]) => fc.constantFrom(...(xs.length ? xs : ['ffffffffffffffffffffffff']));
  const day = fc.integer({ min: -1, max: 3 });
  const slot = fc
    .tuple(day, fc.integer({ min: 6, max: 21 }), fc.constantFrom('00', '15', '30', '45'), fc.integer({ min: 1, max: 8 }))
    .map(([d, h, m, quarters]) => {
      const start = w.t(`${String(h).padStart(2, '0')}:${m}`, d);
      const end = new Date(Date.parse(start) + quarters * 15 * 60_000).toISOString();
      return { start, end };
    });
  const pin = fc.constantFrom(...w.names.pin, '000000', '12345');
  const attendees = fc.array(
    fc.record({
      email: fc.constantFrom(...w.names.email, 'guest@partner.example'),
      type: fc.constantFrom('required', 'optional', 'resource'),
    }),
    { maxLength: 3 },
  );
  const roomBooking = fc
    .record({
      slot,
      room: one(k.room),
      title: fc.constantFrom('Fuzz', '', 'x'.repeat(300), '\u202Eevil'),
      attendees,
      draft: fc.option(fc.boolean(), { nil: undefined }),
      organizerId: fc.option(one(k.user), { nil: undefined }),
    })
    .map(({ slot: s, room, title, attendees: a, draft, organizerId }) => ({
      meetingRoomId: room,
      title,
      startDateTime: s.start,
      endDateTime: s.end,
      attendees: a,
      ...(draft !== undefined ? { draft } : {}),
      ...(organizerId ? { organizerId } : {}),
    }));
  const deskBooking = fc
    .record({ slot, desk: one(k.desk), period: fc.option(fc.constantFrom('morning', 'afternoon', 'allDay'), { nil: undefined }) })
    .map(({ slot: s, desk, period }) => ({
      deskId: desk,
      title: 'Fuzz desk',
      startDateTime: s.start,
      ...(period ? { timePeriod: period } : { endDateTime: s.end }),
    }));
  const action = fc.oneof(
    fc.constant({}),
    pin.map((pinCode) => ({ pinCode })),
    one(k.payment).map((paymentId) => ({ paymentId })),
  );
  const member = fc.record({
    firstName: fc.constantFrom('Nina', 'N', '😀'),
    lastName: fc.constantFrom('Fuzz', ''),
    email: fc.option(fc.constantFrom(...w.names.email, 'new@example.com'), { nil: undefined }),
    phone: fc.option(fc.constantFrom('02 555 0101', '+66812345600', 'abc'), { nil: undefined }),
    employeeId: fc.option(fc.constantFrom('E-200', 'E-900', ''), { nil: undefined }),
    unitIds: fc.option(fc.subarray(['U-A-101', 'U-B-101', 'NOPE']), { nil: undefined }),
  });
  return {
    'POST /auth/accessToken': [
      fc.constantFrom(
        { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
        { grant_type: 'app_credentials', app_id: HUB_APP_ID, app_secret: HUB_SECRET },
        { grant_type: 'app_credentials', app_id: PARTNER_APP_ID, app_secret: PARTNER_SECRET },
        { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: 'wrong-secret-0123456789abcdef-0123456789' },
        { grant_type: 'act_as', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET, subject: 'ext-alice' },
        { grant_type: 'act_as', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET, subject: 'nobody' },
        { grant_type: 'act_as', app_id: HUB_APP_ID, app_secret: HUB_SECRET, subject: 'hub-alice' },
        { grant_type: 'act_as', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET, subject: k.user[0], subject_type: 'service_member_id' },
        { grant_type: 'client_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
      ),
      fc.constant(null).map(() => ({ grant_type: 'refresh_token', refresh_token: w.tokens.refresh })),
    ],
    'POST /meetings': [roomBooking, deskBooking],
    'PATCH /meetings/{id}': [
      fc
        .record({ slot, title: fc.option(fc.constantFrom('Renamed', ''), { nil: undefined }), pinCode: fc.option(pin, { nil: undefined }) })
        .map(({ slot: s, title, pinCode }) => ({
          startDateTime: s.start,
          endDateTime: s.end,
          ...(title !== undefined ? { title } : {}),
          ...(pinCode ? { pinCode } : {}),
        })),
      fc.record({ title: fc.constantFrom('Renamed', 'x'), attendees }),
      slot.map((s) => ({ endDateTime: s.end })),
    ],
    'POST /meetings/{id}/cancel': [action],
    'POST /meetings/{id}/check-in': [action],
    'POST /meetings/{id}/check-out': [action],
    'PUT /partner/members/{externalUserId}': [member],
    'PUT /partner/members/{externalUserId}/credentials': [
      fc.constantFrom(
        { cards: [{ cardNo: '1234567890' }] },
        { cards: [] },
        { face: null },
        { cards: [{ cardNo: 'FFFFFFFF', cardCodeFormat: 'hex' }] },
        { cards: Array.from({ length: 21 }, (_, i) => ({ cardNo: String(1000000000 + i) })) },
      ),
    ],
    'POST /ops/v1/clock': [
      fc.integer({ min: 1, max: 240 }).map((advanceMinutes) => ({ advanceMinutes })),
      slot.map((s) => ({ set: s.start })),
    ],
    'POST /ops/v1/apply': [fc.constant(null).map(() => fuzzSite()), fc.constant({ brands: [{ key: 'acme', name: 'Acme Estates' }] })],
    'POST /ops/v1/visitors/invites': [
      fc
        .record({ slot, host: one(k.user), project: one(k.project), name: fc.constantFrom('Vera', '', '😀'), end: fc.boolean() })
        .map(({ slot: s, host, project, name, end }) => ({
          projectId: project,
          hostUserId: host,
          visitorName: name,
          startDateTime: s.start,
          endDateTime: end ? s.end : null,
        })),
    ],
    'POST /ops/v1/devices/{deviceId}/scans': [
      fc.constantFrom(...w.names.cardCode.map((cardCode) => ({ cardCode })), { licensePlate: '1กข 1234' }, { cardCode: '' }),
    ],
    'POST /ops/v1/payments/{paymentId}/settle': [fc.constantFrom({}, { eventId: 'evt-1' }, { eventId: 'evt-1', amount: 100 })],
    'POST /ops/v1/payments/{paymentId}/fail': [fc.constantFrom({}, { eventId: 'evt-2' })],
  };
}
