/**
 * GET /meeting-rooms and GET /meeting-rooms/{id} over HTTP (api-spec "MeetingRoom",
 * "Asset config", "Cleaning time", "GET /meeting-rooms", "GET /meeting-rooms/{id}",
 * Authentication item 9): validation, filters, the MeetingRoom shape, windowed
 * availability (bookings, cleaning time, unavailableReason), private rooms, and the
 * single read's booking calendar. Bookings are seeded in storage (test/support/bookings.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import {
  actAsToken,
  appToken,
  applySite,
  expectError,
  HUB_APP_ID,
  HUB_SECRET,
  idOf,
  MEETING_UPDATE,
  siteDocument,
  UNKNOWN_ID,
  type SiteIds,
} from '../support/fixtures.js';
import { seedBooking } from '../support/bookings.js';
import {
  at,
  dayAhead,
  everyDay,
  ISO_DATE_TIME,
  namesOf,
  okData,
  qs,
  setClock,
  standardHours,
  type QueryValue,
} from '../support/catalogue.js';

const TZ = 'Asia/Bangkok';
const VIEWER_APP_ID = 'room-viewer-dev';
const VIEWER_SECRET = 'room-viewer-secret-0123456789abcdef-0123';
const LAB_APP_ID = 'room-lab-dev';
const LAB_SECRET = 'room-lab-secret-0123456789abcdef-0123456';
const PIN = 'PIN-7319-NEVER-SHOWN';

const ORCHID_CONFIG = standardHours({
  minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
  maxAdvanceBookingDays: 90,
  maxDurationMinutes: 480,
  bookMultipleDayRoom: false,
  meetingConfig: { preStartMinutes: 15, postStartWarnMinutes: 10, postStartExpireMinutes: 15, preEndMinutes: 15 },
});
const ORCHID_POLYGON = [
  { xPct: 10, yPct: 10 },
  { xPct: 30, yPct: 10 },
  { xPct: 30.5, yPct: 25 },
];

/**
 * The fixtures' site plus:
 * - tower: zones zA (floors fA12, fA14) and zB (floor fB03); rooms Orchid (fA12, own cleaning 15),
 *   Lotus_2 (fA14, project default cleaning), Jasmine Suite (fB03, bedroom), Dormant Room
 *   (fB03, inactive), Board Room (fA12, private);
 * - annex: Annex Room;
 * - lab (brand globex, grid 10, default cleaning 5): rooms with special configs;
 * - apps `viewer` (tower, no role) and `lab` (lab, with a role).
 */
function roomsSite() {
  const doc = siteDocument() as any;
  doc.brands.push({ key: 'globex', name: 'Globex' });
  doc.projects.push({
    key: 'lab',
    brand: 'globex',
    name: 'Globex Lab',
    timezone: TZ,
    currency: 'THB',
    defaultCleanupMinutes: 5,
    bookingGridMinutes: 10,
  });
  doc.zones = [
    { key: 'zA', project: 'tower', name: 'Tower A' },
    { key: 'zB', project: 'tower', name: 'Tower B' },
    { key: 'zX', project: 'annex', name: 'Annex' },
    { key: 'zL', project: 'lab', name: 'Lab' },
  ];
  doc.floors = [
    { key: 'fA12', zone: 'zA', name: '12F' },
    { key: 'fA14', zone: 'zA', name: '14F' },
    { key: 'fB03', zone: 'zB', name: '3F' },
    { key: 'fX01', zone: 'zX', name: '1F' },
    { key: 'fL01', zone: 'zL', name: '1F' },
  ];
  const std = standardHours();
  doc.rooms = [
    {
      key: 'orchid',
      floor: 'fA12',
      name: 'Orchid',
      email: 'orchid@rooms.example',
      capacity: 8,
      status: 'active',
      type: 'normal',
      isPublic: true,
      cleanupMinutes: 15,
      chargeRate: { perHour: 100, perDay: 600, amount: 50 },
      equipmentsAvailability: { camera: true, display: true, mic: true, projector: false, speaker: true },
      facilities: ['whiteboard', 'tv'],
      pictureUrls: ['https://img.example/orchid.jpg'],
      polygon: ORCHID_POLYGON,
      config: ORCHID_CONFIG,
    },
    { key: 'lotus', floor: 'fA14', name: 'Lotus_2', email: 'lotus@rooms.example', capacity: 4, config: std },
    { key: 'jasmine', floor: 'fB03', name: 'Jasmine Suite', capacity: 20, type: 'bedroom', config: std },
    { key: 'dormant', floor: 'fB03', name: 'Dormant Room', capacity: 6, status: 'inactive', config: std },
    { key: 'board', floor: 'fA12', name: 'Board Room', capacity: 12, isPublic: false, config: std },
    { key: 'annexroom', floor: 'fX01', name: 'Annex Room', capacity: 10, config: std },
    { key: 'gridroom', floor: 'fL01', name: 'Grid Room', cleanupMinutes: 15, config: std },
    { key: 'nocleanroom', floor: 'fL01', name: 'No-Clean Room', cleanupMinutes: 0, config: std },
    { key: 'leadroom', floor: 'fL01', name: 'Lead Room', config: standardHours({ minimumLeadTime: { days: 30 } }) },
    { key: 'advroom', floor: 'fL01', name: 'Advance Room', config: standardHours({ maxAdvanceBookingDays: 1 }) },
    { key: 'durroom', floor: 'fL01', name: 'Short Room', config: standardHours({ maxDurationMinutes: 30 }) },
    { key: 'multiroom', floor: 'fL01', name: 'Multi Room', config: standardHours({ bookMultipleDayRoom: true }) },
  ];
  doc.apps.push(
    { key: 'viewer', appId: VIEWER_APP_ID, appSecret: VIEWER_SECRET, name: 'Room viewer', projects: ['tower'] },
    {
      key: 'lab',
      appId: LAB_APP_ID,
      appSecret: LAB_SECRET,
      name: 'Lab integration',
      projects: ['lab'],
      projectRoles: [{ project: 'lab', permissions: [MEETING_UPDATE] }],
    },
  );
  return doc;
}

describe('meeting rooms', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime; // local midnight, 3 days after the service's local today
  const tok: Record<'portal' | 'viewer' | 'hub' | 'lab' | 'alice' | 'bob' | 'visitor', string> = {} as any;
  const id = (key: string) => idOf(ids, key);
  let b1: string; // Orchid 10:00-11:00, organizer bob, booked by the portal app
  let b2: string; // Orchid 15:00-16:00, organizer alice, attendee bob, booked by the hub app

  const rooms = (token: string | null, params: Record<string, QueryValue>) => svc.request('GET', `/meeting-rooms${qs(params)}`, { token });
  const tower = (params: Record<string, QueryValue> = {}, token = tok.portal) => rooms(token, { projectId: id('tower'), ...params });
  const lab = (params: Record<string, QueryValue> = {}) => rooms(tok.lab, { projectId: id('lab'), ...params });
  /** Windowed search on day D, local HH:mm[:ss] times. */
  const win = (from: string, to: string, toPlusDays = 0) => ({ startDateTime: at(D, from), endDateTime: at(D, to, toPlusDays) });
  const room = (token: string | null, key: string, params: Record<string, QueryValue> = {}) =>
    svc.request('GET', `/meeting-rooms/${id(key)}${qs(params)}`, { token });

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, roomsSite());
    D = await dayAhead(svc, TZ, 3);
    tok.portal = (await appToken(svc)).access_token;
    tok.viewer = (await appToken(svc, VIEWER_APP_ID, VIEWER_SECRET)).access_token;
    tok.hub = (await appToken(svc, HUB_APP_ID, HUB_SECRET)).access_token;
    tok.lab = (await appToken(svc, LAB_APP_ID, LAB_SECRET)).access_token;
    tok.alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
    tok.bob = (await actAsToken(svc, { subject: 'ext-bob' })).access_token;
    tok.visitor = (await actAsToken(svc, { subject: 'ext-room-visitor' })).access_token;

    const towerBooking = { assetKind: 'room' as const, projectId: id('tower') };
    b1 = (
      await seedBooking(svc, {
        ...towerBooking,
        assetId: id('orchid'),
        organizerUserId: id('bob'),
        appId: id('portal'),
        start: at(D, '10:00'),
        end: at(D, '11:00'),
        title: 'Portal standup',
        pin: PIN,
      })
    ).meetingId;
    b2 = (
      await seedBooking(svc, {
        ...towerBooking,
        assetId: id('orchid'),
        organizerUserId: id('alice'),
        appId: id('hub'),
        start: at(D, '15:00'),
        end: at(D, '16:00'),
        title: 'Quarterly review',
        pin: PIN,
        attendees: [{ userId: id('bob'), email: 'bob@example.com', name: 'Bob Admin', type: 'required', responseStatus: 'accepted' }],
      })
    ).meetingId;
    await seedBooking(svc, {
      ...towerBooking,
      assetId: id('lotus'),
      organizerUserId: id('alice'),
      appId: id('portal'),
      start: at(D, '17:00'),
      end: at(D, '18:00'),
    });
    for (const key of ['gridroom', 'nocleanroom']) {
      await seedBooking(svc, {
        assetKind: 'room',
        projectId: id('lab'),
        assetId: id(key),
        organizerUserId: id('alice'),
        start: at(D, '10:00'),
        end: at(D, '11:00'),
      });
    }
  });
  afterAll(async () => {
    await svc?.close();
  });

  // -------------------------------------------------------------------------
  describe('validation and authentication', () => {
    it('401 KS002 without a token, and with a junk token', async () => {
      expectError(await tower({}, null as any), 401, 'KS002');
      expectError(await rooms('not-a-token', { projectId: id('tower') }), 401, 'KS002');
      expectError(await room(null, 'orchid'), 401, 'KS002');
    });

    it('projectId is required: 400 KS001 with a message array naming it', async () => {
      const res = await rooms(tok.portal, {});
      expectError(res, 400, 'KS001');
      expect(res.body.message.join('\n')).toMatch(/projectId/);
    });

    it.each([
      ['projectId', { projectId: 'tower' }],
      ['projectId (uppercase hex)', { projectId: 'ABCDEFABCDEFABCDEFABCDEF' }],
      ['zoneId', { zoneId: '123' }],
      ['floorId', { floorId: 'zzzzzzzzzzzzzzzzzzzzzzzz' }],
      ['locationId', { locationId: '0123456789abcdef0123456' }],
      ['ids', { ids: ['0123456789abcdef01234567', 'nope'] }],
    ])('a bad 24-hex id in %s → 400 KS001', async (field, params) => {
      const res = await rooms(tok.portal, { projectId: id('tower'), ...params });
      expectError(res, 400, 'KS001');
      expect(res.body.message.join('\n')).toContain(field.split(' ')[0]);
    });

    it('end before start, and end equal to start after truncating seconds → 400 KS001', async () => {
      expectError(await tower(win('11:00', '10:00')), 400, 'KS001');
      expectError(await tower(win('10:00', '10:00')), 400, 'KS001');
      expectError(await tower(win('10:00:10', '10:00:50')), 400, 'KS001');
    });

    it('only one of startDateTime / endDateTime → 400 KS001', async () => {
      expectError(await tower({ startDateTime: at(D, '10:00') }), 400, 'KS001');
      expectError(await tower({ endDateTime: at(D, '11:00') }), 400, 'KS001');
    });

    it('a date-time without an offset, or not a date-time, → 400 KS001', async () => {
      const local = D.set({ hour: 10 }).toFormat("yyyy-MM-dd'T'HH:mm:ss");
      expectError(await tower({ startDateTime: local, endDateTime: at(D, '11:00') }), 400, 'KS001');
      expectError(await tower({ startDateTime: at(D, '10:00'), endDateTime: 'tomorrow' }), 400, 'KS001');
      expectError(await tower({ startDateTime: D.toISODate()!, endDateTime: at(D, '11:00') }), 400, 'KS001');
    });

    it('an offset whose + arrived unencoded (as a space) is still understood', async () => {
      const start = at(D, '08:00').replace('+', ' ');
      const end = at(D, '09:00').replace('+', ' ');
      const res = await svc.request('GET', `/meeting-rooms?projectId=${id('tower')}&startDateTime=${start}&endDateTime=${end}`, {
        token: tok.portal,
      });
      expect(namesOf(res)).toContain('Orchid');
    });

    it.each([
      ['type', { type: 'suite' }],
      ['status', { status: 'closed' }],
      ['status', { status: ['active', 'deleted'] }],
      ['minCapacity', { minCapacity: 0 }],
      ['minCapacity', { minCapacity: 'many' }],
    ])('bad %s → 400 KS001', async (field, params) => {
      const res = await tower(params);
      expectError(res, 400, 'KS001');
      expect(res.body.message.join('\n')).toContain(field);
    });

    it('several problems at once → one message each', async () => {
      const res = await rooms(tok.portal, { zoneId: 'bad', type: 'suite', minCapacity: 0, startDateTime: 'soon' });
      expectError(res, 400, 'KS001');
      const text = res.body.message.join('\n');
      for (const f of ['projectId', 'zoneId', 'type', 'minCapacity', 'startDateTime']) expect(text).toContain(f);
      expect(res.body.message.length).toBeGreaterThanOrEqual(5);
    });

    it("a projectId outside the caller's scope → 403 KS003", async () => {
      expectError(await rooms(tok.portal, { projectId: id('annex') }), 403, 'KS003');
      expectError(await rooms(tok.portal, { projectId: UNKNOWN_ID }), 403, 'KS003');
      expectError(await rooms(tok.viewer, { projectId: id('lab') }), 403, 'KS003');
      // alice belongs to annex, but the portal app does not: a delegated token gets the intersection
      expectError(await rooms(tok.alice, { projectId: id('annex') }), 403, 'KS003');
      // the multi-project hub app reaches annex
      expect(namesOf(await rooms(tok.hub, { projectId: id('annex') }))).toEqual(['Annex Room']);
    });
  });

  // -------------------------------------------------------------------------
  describe('listing and filters', () => {
    it("envelope: an array of rooms with no meta; only the project's rooms", async () => {
      const res = await tower();
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'success']);
      expect(res.body).toMatchObject({ code: 'KS000', success: true });
      expect(namesOf(res)).toEqual(['Board Room', 'Dormant Room', 'Jasmine Suite', 'Lotus_2', 'Orchid']);
    });

    it('zoneId, floorId and locationId (zone or floor)', async () => {
      expect(namesOf(await tower({ zoneId: id('zA') }))).toEqual(['Board Room', 'Lotus_2', 'Orchid']);
      expect(namesOf(await tower({ floorId: id('fA12') }))).toEqual(['Board Room', 'Orchid']);
      expect(namesOf(await tower({ locationId: id('zB') }))).toEqual(['Dormant Room', 'Jasmine Suite']);
      expect(namesOf(await tower({ locationId: id('fA14') }))).toEqual(['Lotus_2']);
      expect(namesOf(await tower({ zoneId: id('zA'), floorId: id('fB03') }))).toEqual([]);
      expect(namesOf(await tower({ zoneId: id('zX') }))).toEqual([]); // a zone of another project
    });

    it('ids as repeated keys and as a comma list', async () => {
      expect(namesOf(await tower({ ids: [id('orchid'), id('jasmine')] }))).toEqual(['Jasmine Suite', 'Orchid']);
      expect(namesOf(await tower({ ids: `${id('orchid')},${id('lotus')}` }))).toEqual(['Lotus_2', 'Orchid']);
      expect(namesOf(await tower({ ids: [`${id('orchid')},${id('lotus')}`, id('board')] }))).toEqual(['Board Room', 'Lotus_2', 'Orchid']);
      expect(namesOf(await tower({ ids: UNKNOWN_ID }))).toEqual([]);
      expect(namesOf(await tower({ ids: id('annexroom') }))).toEqual([]); // another project's room
    });

    it('name: case-insensitive substring, with _ and % taken literally', async () => {
      expect(namesOf(await tower({ name: 'oRCh' }))).toEqual(['Orchid']);
      expect(namesOf(await tower({ name: 'ROOM' }))).toEqual(['Board Room', 'Dormant Room']);
      expect(namesOf(await tower({ name: 's_2' }))).toEqual(['Lotus_2']);
      expect(namesOf(await tower({ name: 'r_h' }))).toEqual([]); // not a wildcard for "rch"
      expect(namesOf(await tower({ name: '%' }))).toEqual([]);
      expect(namesOf(await tower({ name: 'nothing like it' }))).toEqual([]);
    });

    it('status as an array; type; minCapacity', async () => {
      expect(namesOf(await tower({ status: 'inactive' }))).toEqual(['Dormant Room']);
      expect(namesOf(await tower({ status: 'active' }))).toEqual(['Board Room', 'Jasmine Suite', 'Lotus_2', 'Orchid']);
      expect(namesOf(await tower({ status: ['active', 'inactive'] }))).toHaveLength(5);
      expect(namesOf(await tower({ status: 'active,inactive' }))).toHaveLength(5);
      expect(namesOf(await tower({ type: 'bedroom' }))).toEqual(['Jasmine Suite']);
      expect(namesOf(await tower({ type: 'normal' }))).toEqual(['Board Room', 'Dormant Room', 'Lotus_2', 'Orchid']);
      expect(namesOf(await tower({ minCapacity: 8 }))).toEqual(['Board Room', 'Jasmine Suite', 'Orchid']);
      expect(namesOf(await tower({ minCapacity: 9 }))).toEqual(['Board Room', 'Jasmine Suite']);
      expect(namesOf(await tower({ minCapacity: 21 }))).toEqual([]);
      expect(namesOf(await tower({ minCapacity: 5, type: 'normal', status: 'active', zoneId: id('zA') }))).toEqual([
        'Board Room',
        'Orchid',
      ]);
    });

    it('every MeetingRoom field, with the right types', async () => {
      const data = okData(await tower({ ids: id('orchid') }));
      expect(data).toHaveLength(1);
      const r = data[0];
      expect(r).toMatchObject({
        _id: id('orchid'),
        name: 'Orchid',
        email: 'orchid@rooms.example',
        capacity: 8,
        status: 'active',
        type: 'normal',
        brandId: id('acme'),
        projectId: id('tower'),
        zoneId: id('zA'),
        floorId: id('fA12'),
        equipmentsAvailability: { camera: true, display: true, mic: true, projector: false, speaker: true },
        pictureUrls: ['https://img.example/orchid.jpg'],
        facilities: ['whiteboard', 'tv'],
        isPublic: true,
        cleanupMinutes: 15,
        chargeRate: { perHour: 100, perDay: 600, amount: 50 },
        polygon: ORCHID_POLYGON,
      });
      expect(r.config).toEqual(ORCHID_CONFIG);
      for (const f of ['createdAt', 'updatedAt']) {
        expect(r[f]).toMatch(ISO_DATE_TIME);
        expect(Number.isFinite(Date.parse(r[f]))).toBe(true);
      }
      expect(r).not.toHaveProperty('unavailableReason');
      expect(r).not.toHaveProperty('calendar');
      expect(r).not.toHaveProperty('meta');
    });

    it('types of every field on every room; polygon and cleanupMinutes only when set', async () => {
      const all = okData(await tower());
      for (const r of all) {
        for (const f of ['_id', 'name', 'email', 'status', 'type', 'brandId', 'projectId', 'zoneId', 'floorId', 'createdAt', 'updatedAt']) {
          expect(typeof r[f], `${r.name}.${f}`).toBe('string');
        }
        for (const f of ['_id', 'brandId', 'projectId', 'zoneId', 'floorId']) expect(r[f]).toMatch(/^[0-9a-f]{24}$/);
        expect(Number.isInteger(r.capacity)).toBe(true);
        expect(['active', 'inactive']).toContain(r.status);
        expect(['normal', 'bedroom']).toContain(r.type);
        expect(typeof r.isPublic).toBe('boolean');
        expect(Array.isArray(r.pictureUrls) && Array.isArray(r.facilities)).toBe(true);
        expect(typeof r.chargeRate.perHour).toBe('number');
        expect(typeof r.chargeRate.perDay).toBe('number');
        expect(typeof r.config).toBe('object');
        // equipmentsAvailability: booleans camera, display, mic, projector, speaker (left out = false)
        for (const e of ['camera', 'display', 'mic', 'projector', 'speaker']) {
          expect(typeof r.equipmentsAvailability?.[e], `${r.name}.equipmentsAvailability.${e}`).toBe('boolean');
        }
      }
      const lotus = all.find((r: any) => r.name === 'Lotus_2');
      expect(lotus).not.toHaveProperty('cleanupMinutes');
      expect(lotus).not.toHaveProperty('polygon');
      expect(lotus.equipmentsAvailability).toEqual({ camera: false, display: false, mic: false, projector: false, speaker: false });
      expect(lotus.chargeRate).toMatchObject({ perHour: 0, perDay: 0 });
      expect(all.find((r: any) => r.name === 'Board Room').isPublic).toBe(false);
      const noClean = okData(await lab({ ids: id('nocleanroom') }))[0];
      expect(noClean.cleanupMinutes).toBe(0); // 0 is set (none), not absent
    });
  });

  // -------------------------------------------------------------------------
  describe('windowed search: bookings and cleaning time', () => {
    it('a room with a booking overlapping the window is excluded; others stay', async () => {
      expect(namesOf(await tower(win('17:30', '18:30')))).toEqual(['Board Room', 'Jasmine Suite', 'Orchid']);
      expect(namesOf(await tower(win('10:30', '10:45')))).toEqual(['Board Room', 'Jasmine Suite', 'Lotus_2']);
      expect(namesOf(await tower(win('09:00', '11:45')))).not.toContain('Orchid'); // window contains the booking
    });

    it('room cleanupMinutes 15, booking 10:00-11:00: 11:00 excluded, 11:15 included', async () => {
      const orchid = { ids: id('orchid') };
      expect(namesOf(await tower({ ...orchid, ...win('11:00', '12:00') }))).toEqual([]);
      expect(namesOf(await tower({ ...orchid, ...win('11:14', '12:00') }))).toEqual([]);
      const ok = okData(await tower({ ...orchid, ...win('11:15', '12:00') }));
      expect(ok.map((r: any) => r.name)).toEqual(['Orchid']);
      expect(ok[0]).not.toHaveProperty('unavailableReason');
    });

    it('a window whose own cleaning runs into the next booking: 09:00-09:50 excluded, 09:00-09:45 included', async () => {
      const orchid = { ids: id('orchid') };
      expect(namesOf(await tower({ ...orchid, ...win('09:00', '09:50') }))).toEqual([]);
      expect(namesOf(await tower({ ...orchid, ...win('09:00', '09:46') }))).toEqual([]);
      expect(namesOf(await tower({ ...orchid, ...win('09:00', '09:45') }))).toEqual(['Orchid']);
    });

    it('seconds are truncated: 09:00:59-09:45:59 counts as 09:00-09:45', async () => {
      expect(namesOf(await tower({ ids: id('orchid'), ...win('09:00:59', '09:45:59') }))).toEqual(['Orchid']);
      expect(namesOf(await tower({ ids: id('orchid'), ...win('11:14:59', '11:50:00') }))).toEqual([]);
    });

    it('a room without its own cleanupMinutes follows the project default (10)', async () => {
      const lotus = { ids: id('lotus') }; // booking 17:00-18:00
      expect(namesOf(await tower({ ...lotus, ...win('18:05', '19:00') }))).toEqual([]);
      expect(namesOf(await tower({ ...lotus, ...win('18:10', '19:00') }))).toEqual(['Lotus_2']);
      expect(namesOf(await tower({ ...lotus, ...win('16:00', '16:55') }))).toEqual([]);
      expect(namesOf(await tower({ ...lotus, ...win('16:00', '16:50') }))).toEqual(['Lotus_2']);
    });

    it('a booking grid shorter than the cleaning shortens it: grid 10, cleanup 15 → 11:10 allowed', async () => {
      const grid = { ids: id('gridroom') }; // booking 10:00-11:00
      expect(namesOf(await lab({ ...grid, ...win('11:05', '11:50') }))).toEqual([]);
      expect(namesOf(await lab({ ...grid, ...win('11:10', '11:50') }))).toEqual(['Grid Room']);
      expect(namesOf(await lab({ ...grid, ...win('09:00', '09:50') }))).toEqual(['Grid Room']);
      expect(namesOf(await lab({ ...grid, ...win('09:00', '09:51') }))).toEqual([]);
    });

    it('cleanupMinutes 0 on the room means none, even with a project default', async () => {
      const room0 = { ids: id('nocleanroom') }; // booking 10:00-11:00, project default 5
      expect(namesOf(await lab({ ...room0, ...win('11:00', '11:50') }))).toEqual(['No-Clean Room']);
      expect(namesOf(await lab({ ...room0, ...win('09:00', '10:00') }))).toEqual(['No-Clean Room']);
      expect(namesOf(await lab({ ...room0, ...win('10:59', '11:50') }))).toEqual([]);
    });

    it('an inactive room is left out of a windowed search (but listed without a window)', async () => {
      expect(namesOf(await tower(win('08:00', '09:00')))).not.toContain('Dormant Room');
      expect(namesOf(await tower({ status: 'inactive', ...win('08:00', '09:00') }))).toEqual([]);
      expect(namesOf(await tower({ status: 'inactive' }))).toEqual(['Dormant Room']);
    });

    it('filters still apply to a windowed search', async () => {
      expect(namesOf(await tower({ zoneId: id('zA'), minCapacity: 5, ...win('08:00', '09:00') }))).toEqual(['Board Room', 'Orchid']);
    });
  });

  // -------------------------------------------------------------------------
  describe('windowed search: unavailableReason', () => {
    const reasons = (data: any[]) => Object.fromEntries(data.map((r) => [r.name, r.unavailableReason ?? null]));

    it('a free bookable room has no unavailableReason', async () => {
      const data = okData(await tower(win('08:00', '09:00')));
      expect(data.map((r: any) => r.name).sort()).toEqual(['Board Room', 'Jasmine Suite', 'Lotus_2', 'Orchid']);
      for (const r of data) expect(r, r.name).not.toHaveProperty('unavailableReason');
    });

    it('outside operating hours → returned with OPERATING_HOURS', async () => {
      for (const [from, to] of [
        ['06:00', '07:00'],
        ['07:30', '08:30'],
        ['19:30', '20:30'],
        ['20:00', '21:00'],
      ]) {
        const data = okData(await tower(win(from, to)));
        expect(reasons(data), `${from}-${to}`).toEqual({
          'Board Room': 'OPERATING_HOURS',
          'Jasmine Suite': 'OPERATING_HOURS',
          Lotus_2: 'OPERATING_HOURS',
          Orchid: 'OPERATING_HOURS',
        });
      }
      // up to closing time is fine
      expect(reasons(okData(await tower({ ids: id('orchid'), ...win('19:00', '20:00') })))).toEqual({ Orchid: null });
    });

    it('overlapping the break → BREAK_TIME; touching it is fine', async () => {
      expect(reasons(okData(await tower({ ids: [id('orchid'), id('lotus')], ...win('11:30', '12:30') })))).toEqual({
        Orchid: 'BREAK_TIME',
        Lotus_2: 'BREAK_TIME',
      });
      expect(reasons(okData(await tower({ ids: id('lotus'), ...win('12:59', '13:30') })))).toEqual({ Lotus_2: 'BREAK_TIME' });
      expect(reasons(okData(await tower({ ids: id('lotus'), ...win('13:00', '14:00') })))).toEqual({ Lotus_2: null });
      expect(reasons(okData(await tower({ ids: id('orchid'), ...win('11:15', '12:00') })))).toEqual({ Orchid: null });
    });

    it('lead time, advance days, max duration → LEAD_TIME, ADVANCE_DAYS, MAX_DURATION', async () => {
      const keys = ['leadroom', 'advroom', 'durroom', 'multiroom'];
      expect(reasons(okData(await lab({ ids: keys.map(id), ...win('09:00', '10:00') })))).toEqual({
        'Lead Room': 'LEAD_TIME',
        'Advance Room': 'ADVANCE_DAYS',
        'Short Room': 'MAX_DURATION',
        'Multi Room': null,
      });
      expect(reasons(okData(await lab({ ids: id('durroom'), ...win('09:00', '09:30') })))).toEqual({ 'Short Room': null });
    });

    it('only free rooms carry a reason: a booked room is excluded even when its config also refuses the window', async () => {
      // Orchid is booked 10:00-11:00 (cleaning until 11:15); Jasmine Suite has no booking
      const both = { ids: [id('orchid'), id('jasmine')] };
      expect(reasons(okData(await tower({ ...both, ...win('10:30', '12:30') })))).toEqual({ 'Jasmine Suite': 'BREAK_TIME' });
      expect(reasons(okData(await tower({ ...both, ...win('07:00', '10:30') })))).toEqual({ 'Jasmine Suite': 'OPERATING_HOURS' });
      expect(reasons(okData(await tower({ ...both, ...win('11:00', '09:00', 1) })))).toEqual({ 'Jasmine Suite': 'MULTI_DAY' });
      expect(reasons(okData(await tower({ ...both, ...win('11:30', '12:30') })))).toEqual({
        Orchid: 'BREAK_TIME',
        'Jasmine Suite': 'BREAK_TIME',
      });
    });

    it('a window over two local dates → MULTI_DAY unless bookMultipleDayRoom', async () => {
      expect(reasons(okData(await tower({ ids: id('orchid'), ...win('19:00', '09:00', 1) })))).toEqual({ Orchid: 'MULTI_DAY' });
      expect(reasons(okData(await lab({ ids: [id('multiroom'), id('leadroom')], ...win('14:00', '11:00', 1) })))).toEqual({
        'Multi Room': null,
        'Lead Room': 'MULTI_DAY',
      });
      // ending exactly at the next midnight stays on one date (and is outside hours here)
      expect(reasons(okData(await tower({ ids: id('orchid'), ...win('19:00', '00:00', 1) })))).toEqual({ Orchid: 'OPERATING_HOURS' });
    });
  });

  // -------------------------------------------------------------------------
  describe('private rooms (isPublic false)', () => {
    const freeWindow = () => win('08:00', '09:00');

    it('hidden from an app token without a role on the project (list, windowed list, single read)', async () => {
      expect(namesOf(await tower({}, tok.viewer))).toEqual(['Dormant Room', 'Jasmine Suite', 'Lotus_2', 'Orchid']);
      expect(namesOf(await tower(freeWindow(), tok.viewer))).not.toContain('Board Room');
      expect(namesOf(await tower({ ids: id('board') }, tok.viewer))).toEqual([]);
      expectError(await room(tok.viewer, 'board'), 404, 'KS005');
      expect((await room(tok.viewer, 'orchid')).status).toBe(200);
    });

    it('visible to an app with a projectRoles entry', async () => {
      expect(namesOf(await tower({}, tok.portal))).toContain('Board Room');
      expect(namesOf(await tower(freeWindow(), tok.portal))).toContain('Board Room');
      expect(okData(await room(tok.portal, 'board'))).toMatchObject({ _id: id('board'), isPublic: false });
    });

    it('visible to a delegated token of a project member', async () => {
      expect(namesOf(await tower({}, tok.alice))).toContain('Board Room');
      expect(namesOf(await tower(freeWindow(), tok.alice))).toContain('Board Room');
      expect(okData(await room(tok.alice, 'board'))._id).toBe(id('board'));
    });

    it('hidden from a delegated visitor (federated act_as member)', async () => {
      expect(namesOf(await tower({}, tok.visitor))).toEqual(['Dormant Room', 'Jasmine Suite', 'Lotus_2', 'Orchid']);
      expect(namesOf(await tower(freeWindow(), tok.visitor))).not.toContain('Board Room');
      expectError(await room(tok.visitor, 'board'), 404, 'KS005');
      expect((await room(tok.visitor, 'orchid')).status).toBe(200);
    });

    it("a room of a project outside the caller's scope reads as 404 KS005", async () => {
      expectError(await room(tok.portal, 'annexroom'), 404, 'KS005');
      expect(okData(await room(tok.hub, 'annexroom')).name).toBe('Annex Room');
    });
  });

  // -------------------------------------------------------------------------
  describe('GET /meeting-rooms/{id}: the room and its calendar', () => {
    const busyOf = (res: any) => okData(res).calendar.busy as any[];

    it('the room fields plus calendar {from, to, timeZone, cleanupMinutes, busy[]}', async () => {
      const res = await room(tok.viewer, 'orchid');
      const data = okData(res);
      expect(res.body).not.toHaveProperty('meta');
      const listed = okData(await tower({ ids: id('orchid') }))[0];
      const { calendar, ...fields } = data;
      expect(fields).toEqual(listed);
      expect(Object.keys(calendar).sort()).toEqual(['busy', 'cleanupMinutes', 'from', 'timeZone', 'to']);
      expect(calendar.timeZone).toBe(TZ);
      expect(calendar.cleanupMinutes).toBe(15);
      expect(calendar.from).toMatch(ISO_DATE_TIME);
      expect(calendar.to).toMatch(ISO_DATE_TIME);
      expect(Date.parse(calendar.to)).toBeGreaterThan(Date.parse(calendar.from));
      expect(calendar.busy.map((b: any) => [Date.parse(b.startDateTime), Date.parse(b.endDateTime), Date.parse(b.cleaningEndsAt)])).toEqual(
        [
          [Date.parse(at(D, '10:00')), Date.parse(at(D, '11:00')), Date.parse(at(D, '11:15'))],
          [Date.parse(at(D, '15:00')), Date.parse(at(D, '16:00')), Date.parse(at(D, '16:15'))],
        ],
      );
      for (const b of calendar.busy)
        for (const f of ['startDateTime', 'endDateTime', 'cleaningEndsAt']) expect(b[f]).toMatch(ISO_DATE_TIME);
    });

    it('the calendar follows the effective cleaning time (default, grid cap, 0)', async () => {
      const lotus = okData(await room(tok.portal, 'lotus')).calendar;
      expect(lotus.cleanupMinutes).toBe(10);
      expect(lotus.busy.map((b: any) => Date.parse(b.cleaningEndsAt))).toEqual([Date.parse(at(D, '18:10'))]);
      const grid = okData(await svc.request('GET', `/meeting-rooms/${id('gridroom')}`, { token: tok.lab })).calendar;
      expect(grid.cleanupMinutes).toBe(10);
      expect(Date.parse(grid.busy[0].cleaningEndsAt)).toBe(Date.parse(at(D, '11:10')));
      const none = okData(await svc.request('GET', `/meeting-rooms/${id('nocleanroom')}`, { token: tok.lab })).calendar;
      expect(none.cleanupMinutes).toBe(0);
      expect(Date.parse(none.busy[0].cleaningEndsAt)).toBe(Date.parse(at(D, '11:00')));
    });

    it('participants see meetingId and title; others do not', async () => {
      const seen = async (token: string) =>
        busyOf(await room(token, 'orchid')).map((b) => (b.meetingId ? `${b.meetingId}:${b.title}` : null));
      // organizer acting through act_as (alice organizes b2)
      expect(await seen(tok.alice)).toEqual([null, `${b2}:Quarterly review`]);
      // the app whose id is in the meeting's app_id (portal booked b1, hub booked b2)
      expect(await seen(tok.portal)).toEqual([`${b1}:Portal standup`, null]);
      expect(await seen(tok.hub)).toEqual([null, `${b2}:Quarterly review`]);
      // bob organizes b1 and is an attendee of b2
      expect(await seen(tok.bob)).toEqual([`${b1}:Portal standup`, `${b2}:Quarterly review`]);
      // neither organizer, attendee nor booking app
      expect(await seen(tok.viewer)).toEqual([null, null]);
      expect(await seen(tok.visitor)).toEqual([null, null]);
    });

    it('never shows attendees, organizer details or PINs', async () => {
      for (const token of [tok.alice, tok.bob, tok.portal, tok.hub, tok.viewer]) {
        const res = await room(token, 'orchid');
        for (const b of busyOf(res)) {
          for (const k of Object.keys(b)) expect(['startDateTime', 'endDateTime', 'cleaningEndsAt', 'meetingId', 'title']).toContain(k);
        }
        expect(res.text).not.toContain(PIN);
        expect(res.text).not.toContain('bob@example.com');
        expect(res.text).not.toMatch(/attendee|pinCode|organizer/i);
      }
    });

    it('from/to restrict the range; cleaning that reaches into it counts', async () => {
      const range = async (from: string, to: string) =>
        busyOf(await room(tok.portal, 'orchid', { from, to })).map((b) => Date.parse(b.startDateTime));
      const t10 = Date.parse(at(D, '10:00'));
      const t15 = Date.parse(at(D, '15:00'));
      expect(await range(at(D, '00:00'), at(D, '00:00', 1))).toEqual([t10, t15]);
      expect(await range(at(D, '00:00'), at(D, '10:00'))).toEqual([]);
      expect(await range(at(D, '00:00'), at(D, '10:01'))).toEqual([t10]);
      expect(await range(at(D, '11:10'), at(D, '14:00'))).toEqual([t10]); // cleaning until 11:15
      expect(await range(at(D, '11:15'), at(D, '15:00'))).toEqual([]);
      expect(await range(at(D, '12:00'), at(D, '00:00', 1))).toEqual([t15]);
      expect(await range(at(D, '00:00', 1), at(D, '00:00', 2))).toEqual([]);
      const cal = okData(await room(tok.portal, 'orchid', { from: at(D, '12:00'), to: at(D, '18:00') })).calendar;
      expect(Date.parse(cal.from)).toBe(Date.parse(at(D, '12:00')));
      expect(Date.parse(cal.to)).toBe(Date.parse(at(D, '18:00')));
    });

    it('without from/to the calendar starts now and covers the coming days', async () => {
      const cal = okData(await room(tok.portal, 'orchid')).calendar;
      const now = Date.parse((await svc.ops('GET', '/ops/v1/clock')).body.data.now);
      expect(Math.abs(Date.parse(cal.from) - now)).toBeLessThan(2 * 60_000);
      expect(Date.parse(cal.to)).toBeGreaterThan(Date.parse(at(D, '16:15')));
    });

    it('to before from, or equal → 400 KS001; bad date-times → 400 KS001', async () => {
      expectError(await room(tok.portal, 'orchid', { from: at(D, '12:00'), to: at(D, '11:00') }), 400, 'KS001');
      expectError(await room(tok.portal, 'orchid', { from: at(D, '12:00'), to: at(D, '12:00') }), 400, 'KS001');
      expectError(await room(tok.portal, 'orchid', { from: 'yesterday' }), 400, 'KS001');
      expectError(await room(tok.portal, 'orchid', { to: D.toFormat("yyyy-MM-dd'T'HH:mm:ss") }), 400, 'KS001');
    });

    it('unknown id → 404 KS005; non-hex id → 400 KS001', async () => {
      expectError(await svc.request('GET', `/meeting-rooms/${UNKNOWN_ID}`, { token: tok.portal }), 404, 'KS005');
      expectError(await svc.request('GET', `/meeting-rooms/${id('lotus').replace(/.$/, 'g')}`, { token: tok.portal }), 400, 'KS001');
      expectError(await svc.request('GET', '/meeting-rooms/orchid', { token: tok.portal }), 400, 'KS001');
      // another kind of entity's id is not a room id
      expectError(await svc.request('GET', `/meeting-rooms/${id('tower')}`, { token: tok.portal }), 404, 'KS005');
    });
  });
});

// ---------------------------------------------------------------------------
describe('meeting rooms across a DST change (America/New_York, 08:00-20:00)', () => {
  let svc: TestService;
  let ids: SiteIds;
  let token: string;
  const NY_APP_ID = 'ny-rooms-dev';
  const NY_SECRET = 'ny-rooms-secret-0123456789abcdef-012345';

  const search = (start: string, end: string) =>
    svc.request('GET', `/meeting-rooms${qs({ projectId: idOf(ids, 'nyc'), startDateTime: start, endDateTime: end })}`, { token });
  const reasonOf = async (start: string, end: string) => {
    const data = okData(await search(start, end));
    expect(data.map((r: any) => r.name)).toEqual(['Hudson']);
    return data[0].unavailableReason ?? null;
  };

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, {
      brands: [{ key: 'nyb', name: 'NY Brand' }],
      projects: [{ key: 'nyc', brand: 'nyb', name: 'Midtown', timezone: 'America/New_York', currency: 'USD' }],
      zones: [{ key: 'nyz', project: 'nyc', name: 'Main' }],
      floors: [{ key: 'nyf', zone: 'nyz', name: '5F' }],
      rooms: [{ key: 'hudson', floor: 'nyf', name: 'Hudson', capacity: 6, config: everyDay('08:00:00', '20:00:00') }],
      apps: [
        {
          key: 'nyapp',
          appId: NY_APP_ID,
          appSecret: NY_SECRET,
          name: 'NY app',
          projects: ['nyc'],
          projectRoles: [{ project: 'nyc', permissions: [MEETING_UPDATE] }],
        },
      ],
    });
    token = (await appToken(svc, NY_APP_ID, NY_SECRET)).access_token;
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('2027-03-14 (spring forward): 08:00 EDT = 12:00Z opens the day', async () => {
    await setClock(svc, '2027-03-10T00:00:00Z');
    expect(await reasonOf('2027-03-14T12:00:00Z', '2027-03-14T13:00:00Z')).toBeNull(); // 08:00-09:00 EDT
    expect(await reasonOf('2027-03-14T08:00:00-04:00', '2027-03-14T09:00:00-04:00')).toBeNull();
    expect(await reasonOf('2027-03-14T11:30:00Z', '2027-03-14T12:30:00Z')).toBe('OPERATING_HOURS'); // 07:30-08:30 EDT
    expect(await reasonOf('2027-03-14T07:30:00-04:00', '2027-03-14T08:30:00-04:00')).toBe('OPERATING_HOURS');
    expect(await reasonOf('2027-03-14T23:00:00Z', '2027-03-15T00:00:00Z')).toBeNull(); // 19:00-20:00 EDT
    expect(await reasonOf('2027-03-14T23:30:00Z', '2027-03-15T00:30:00Z')).toBe('OPERATING_HOURS'); // 19:30-20:30 EDT
    // the day before is still EST: 08:00 EST = 13:00Z
    expect(await reasonOf('2027-03-13T12:00:00Z', '2027-03-13T13:00:00Z')).toBe('OPERATING_HOURS');
    expect(await reasonOf('2027-03-13T13:00:00Z', '2027-03-13T14:00:00Z')).toBeNull();
  });

  it('2027-11-07 (fall back): 08:00 EST = 13:00Z opens the day', async () => {
    await setClock(svc, '2027-11-03T00:00:00Z');
    expect(await reasonOf('2027-11-07T13:00:00Z', '2027-11-07T14:00:00Z')).toBeNull(); // 08:00-09:00 EST
    expect(await reasonOf('2027-11-07T12:30:00Z', '2027-11-07T13:30:00Z')).toBe('OPERATING_HOURS'); // 07:30-08:30 EST
    expect(await reasonOf('2027-11-07T12:00:00Z', '2027-11-07T13:00:00Z')).toBe('OPERATING_HOURS'); // 07:00-08:00 EST
    expect(await reasonOf('2027-11-07T07:30:00-05:00', '2027-11-07T08:30:00-05:00')).toBe('OPERATING_HOURS');
    expect(await reasonOf('2027-11-08T00:00:00Z', '2027-11-08T01:00:00Z')).toBeNull(); // 19:00-20:00 EST
    expect(await reasonOf('2027-11-08T00:30:00Z', '2027-11-08T01:30:00Z')).toBe('OPERATING_HOURS');
  });
});

describe('meeting rooms: changes to the site show up at once', () => {
  it('a room added or changed by apply is searched with its new values on the next call', async () => {
    const svc = await startTestService();
    try {
      const doc = siteDocument() as any;
      doc.zones = [{ key: 'z', project: 'tower', name: 'Z' }];
      doc.floors = [{ key: 'f', zone: 'z', name: '1F' }];
      doc.rooms = [{ key: 'a', floor: 'f', name: 'Alpha', capacity: 4, config: standardHours() }];
      const ids = await applySite(svc, doc);
      const token = (await appToken(svc)).access_token;
      const search = async () => {
        const res = await svc.request('GET', `/meeting-rooms${qs({ projectId: idOf(ids, 'tower') })}`, { token });
        return (res.body.data as { name: string; capacity: number }[]).map((r) => `${r.name}:${r.capacity}`);
      };
      expect(await search()).toEqual(['Alpha:4']);
      doc.rooms = [
        { key: 'a', floor: 'f', name: 'Alpha', capacity: 12, config: standardHours() },
        { key: 'b', floor: 'f', name: 'Beta', capacity: 2, config: standardHours() },
      ];
      await applySite(svc, doc);
      expect(await search()).toEqual(['Alpha:12', 'Beta:2']);
    } finally {
      await svc.close();
    }
  });
});
