/**
 * GET /desks and GET /desks/{id} over HTTP (api-spec "Desk", "Asset config",
 * "Cleaning time", "GET /desks", "GET /desks/{id}", "Limits"): validation, the
 * paginated envelope, filters, windowed availability (explicit end or timePeriod,
 * cleaning at the property default), private desks and the single read's calendar.
 * Bookings are seeded in storage (test/support/bookings.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DateTime } from 'luxon';
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
const VIEWER_APP_ID = 'desk-viewer-dev';
const VIEWER_SECRET = 'desk-viewer-secret-0123456789abcdef-0123';
const MULTI_APP_ID = 'desk-multi-dev';
const MULTI_SECRET = 'desk-multi-secret-0123456789abcdef-01234';
const PIN = 'PIN-4471-NEVER-SHOWN';

const TOWER_DESKS = [
  'Corner Desk',
  'Desk 1',
  'Desk 2',
  'Desk 3',
  'Hot Desk',
  'In-Use Desk',
  'Period A',
  'Period B',
  'Period C',
  'Period D',
  'Period E',
  'Private Desk',
  'Window Desk',
];
const PUBLIC_TOWER_DESKS = TOWER_DESKS.filter((n) => n !== 'Private Desk');

function desksSite() {
  const doc = siteDocument() as any;
  doc.brands.push({ key: 'globex', name: 'Globex' });
  doc.projects.push({ key: 'lab', brand: 'globex', name: 'Globex Lab', timezone: TZ, currency: 'THB', defaultCleanupMinutes: 30 });
  doc.zones = [
    { key: 'zA', project: 'tower', name: 'Tower A' },
    { key: 'zB', project: 'tower', name: 'Tower B' },
    { key: 'zC', project: 'tower', name: 'Tower C' },
    { key: 'zX', project: 'annex', name: 'Annex' },
    { key: 'zL', project: 'lab', name: 'Lab' },
  ];
  doc.floors = [
    { key: 'fA12', zone: 'zA', name: '12F' },
    { key: 'fA14', zone: 'zA', name: '14F' },
    { key: 'fB03', zone: 'zB', name: '3F' },
    { key: 'fC01', zone: 'zC', name: '1F' },
    { key: 'fX01', zone: 'zX', name: '1F' },
    { key: 'fL01', zone: 'zL', name: '1F' },
  ];
  const std = standardHours();
  const noBreak = everyDay('08:00:00', '20:00:00');
  doc.rooms = [
    // a room of the same project with its own, longer cleaning: desks must not follow it
    { key: 'bigroom', floor: 'fA12', name: 'Big Room', cleanupMinutes: 30, config: std },
  ];
  doc.desks = [
    {
      key: 'd1',
      floor: 'fA12',
      name: 'Desk 1',
      index: 1,
      email: 'd1@desks.example',
      status: 'active',
      isPublic: true,
      capacity: 1,
      chargeRate: { perHour: 50, perDay: 300 },
      facilities: ['monitor'],
      pictureUrls: ['https://img.example/d1.jpg'],
      config: std,
    },
    { key: 'd2', floor: 'fA12', name: 'Desk 2', index: 2, email: 'd2@desks.example', config: std },
    { key: 'd3', floor: 'fA14', name: 'Desk 3', index: 3, config: std },
    { key: 'd4', floor: 'fB03', name: 'Window Desk', index: 4, status: 'reserved', config: std },
    { key: 'd5', floor: 'fB03', name: 'Corner Desk', index: 5, status: 'inactive', config: std },
    { key: 'd6', floor: 'fB03', name: 'Hot Desk', index: 6, status: 'suspended', config: std },
    { key: 'd7', floor: 'fA14', name: 'Private Desk', index: 7, isPublic: false, config: std },
    { key: 'd8', floor: 'fB03', name: 'In-Use Desk', index: 8, status: 'in-used', config: std },
    { key: 'p1', floor: 'fC01', name: 'Period A', index: 11, config: std },
    { key: 'p2', floor: 'fC01', name: 'Period B', index: 12, config: noBreak },
    {
      key: 'p3',
      floor: 'fC01',
      name: 'Period C',
      index: 13,
      config: everyDay('08:00:00', '20:00:00', [{ start: '11:30:00', end: '12:30:00' }]),
    },
    { key: 'p4', floor: 'fC01', name: 'Period D', index: 14, config: noBreak },
    { key: 'p5', floor: 'fC01', name: 'Period E', index: 15, config: std },
    { key: 'ax1', floor: 'fX01', name: 'Annex Desk', index: 1, config: std },
    { key: 'lb1', floor: 'fL01', name: 'Lab Desk', index: 1, config: std },
  ];
  doc.apps.push(
    { key: 'viewer', appId: VIEWER_APP_ID, appSecret: VIEWER_SECRET, name: 'Desk viewer', projects: ['tower'] },
    {
      key: 'multi',
      appId: MULTI_APP_ID,
      appSecret: MULTI_SECRET,
      name: 'Desk multi',
      projects: ['tower', 'annex', 'lab'],
      projectRoles: ['tower', 'annex', 'lab'].map((project) => ({ project, permissions: [MEETING_UPDATE] })),
    },
  );
  return doc;
}

describe('desks', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  const tok: Record<'portal' | 'viewer' | 'hub' | 'multi' | 'alice' | 'bob' | 'visitor', string> = {} as any;
  const id = (key: string) => idOf(ids, key);
  let bd1: string; // Desk 1 09:00-10:00, organizer alice, booked by the portal app

  const desks = (token: string | null, params: Record<string, QueryValue> = {}) => svc.request('GET', `/desks${qs(params)}`, { token });
  const tower = (params: Record<string, QueryValue> = {}, token = tok.portal) => desks(token, { projectId: id('tower'), ...params });
  const win = (from: string, to: string) => ({ startDateTime: at(D, from), endDateTime: at(D, to) });
  const desk = (token: string | null, key: string, params: Record<string, QueryValue> = {}) =>
    svc.request('GET', `/desks/${id(key)}${qs(params)}`, { token });
  const PERIOD_DESKS = () => ['p1', 'p2', 'p3', 'p4', 'p5'].map(id);
  const period = (timePeriod: string, start = '00:00', extra: Record<string, QueryValue> = {}) =>
    tower({ ids: PERIOD_DESKS(), startDateTime: at(D, start), timePeriod, ...extra });

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, desksSite());
    D = await dayAhead(svc, TZ, 3);
    tok.portal = (await appToken(svc)).access_token;
    tok.viewer = (await appToken(svc, VIEWER_APP_ID, VIEWER_SECRET)).access_token;
    tok.hub = (await appToken(svc, HUB_APP_ID, HUB_SECRET)).access_token;
    tok.multi = (await appToken(svc, MULTI_APP_ID, MULTI_SECRET)).access_token;
    tok.alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
    tok.bob = (await actAsToken(svc, { subject: 'ext-bob' })).access_token;
    tok.visitor = (await actAsToken(svc, { subject: 'ext-desk-visitor' })).access_token;

    const book = (key: string, start: string, end: string, more: Record<string, unknown> = {}) =>
      seedBooking(svc, {
        assetKind: 'desk',
        projectId: id('tower'),
        assetId: id(key),
        organizerUserId: id('carol'),
        start: at(D, start),
        end: at(D, end),
        pin: PIN,
        ...more,
      });
    bd1 = (
      await book('d1', '09:00', '10:00', {
        organizerUserId: id('alice'),
        appId: id('portal'),
        title: 'Desk focus',
        attendees: [
          { userId: id('carol'), email: 'carol@example.com', name: 'Carol Unlinked', type: 'required', responseStatus: 'accepted' },
        ],
      })
    ).meetingId;
    await book('d2', '14:00', '15:00', { organizerUserId: id('bob'), appId: id('hub'), title: 'Hub desk' });
    await book('p1', '14:00', '15:00');
    await book('p2', '12:10', '13:00');
    await book('p3', '11:40', '12:20');
    await book('p4', '12:05', '13:00');
    await book('p5', '08:00', '09:30');
  });
  afterAll(async () => {
    await svc?.close();
  });

  // -------------------------------------------------------------------------
  describe('validation and authentication', () => {
    it('401 KS002 without a token', async () => {
      expectError(await desks(null), 401, 'KS002');
      expectError(await desk(null, 'd1'), 401, 'KS002');
    });

    it.each([
      ['projectId', { projectId: 'tower' }],
      ['brandId', { brandId: 'ACME' }],
      ['zoneId', { zoneId: '0123456789abcdef0123456z' }],
      ['floorId', { floorId: '' }],
      ['locationId', { locationId: '0123456789abcdef012345678' }],
      ['ids', { ids: `${UNKNOWN_ID},bad` }],
    ])('a bad 24-hex id in %s → 400 KS001', async (field, params) => {
      const res = await desks(tok.portal, params);
      expectError(res, 400, 'KS001');
      expect(res.body.message.join('\n')).toContain(field);
    });

    it('limit 0-3000 and offset >= 0 (Limits)', async () => {
      for (const params of [{ limit: 3001 }, { limit: -1 }, { limit: 'ten' }, { limit: 1.5 }, { offset: -1 }, { offset: 'x' }]) {
        const res = await desks(tok.portal, params);
        expectError(res, 400, 'KS001');
        expect(res.body.message.join('\n')).toMatch(Object.keys(params)[0]);
      }
      expect(okData(await desks(tok.portal, { limit: 3000 }))).toHaveLength(TOWER_DESKS.length);
    });

    it.each([
      ['status', { status: 'broken' }],
      ['statuses', { statuses: ['active', 'broken'] }],
      ['timePeriod', { timePeriod: 'evening' }],
    ])('unknown %s → 400 KS001', async (field, params) => {
      const res = await desks(tok.portal, { startDateTime: field === 'timePeriod' ? '2030-01-01T00:00:00Z' : undefined, ...params });
      expectError(res, 400, 'KS001');
      expect(res.body.message.join('\n')).toContain(field);
    });

    it('startDateTime with both endDateTime and timePeriod → 400 KS001', async () => {
      expectError(await tower({ ...win('09:00', '10:00'), timePeriod: 'morning' }), 400, 'KS001');
    });

    it('startDateTime with neither endDateTime nor timePeriod → 400 KS001', async () => {
      expectError(await tower({ startDateTime: at(D, '09:00') }), 400, 'KS001');
    });

    it('endDateTime or timePeriod without startDateTime → 400 KS001', async () => {
      expectError(await tower({ endDateTime: at(D, '10:00') }), 400, 'KS001');
      expectError(await tower({ timePeriod: 'morning' }), 400, 'KS001');
    });

    it('end before start (after truncating seconds) → 400 KS001; date-time without offset → 400 KS001', async () => {
      expectError(await tower(win('10:00', '09:00')), 400, 'KS001');
      expectError(await tower(win('10:00:05', '10:00:55')), 400, 'KS001');
      expectError(
        await tower({ startDateTime: D.set({ hour: 9 }).toFormat("yyyy-MM-dd'T'HH:mm:ss"), endDateTime: at(D, '10:00') }),
        400,
        'KS001',
      );
    });

    it('several problems at once → one message each', async () => {
      const res = await desks(tok.portal, { limit: 3001, offset: -1, status: 'broken', zoneId: 'x', startDateTime: 'soon' });
      expectError(res, 400, 'KS001');
      const text = res.body.message.join('\n');
      for (const f of ['limit', 'offset', 'status', 'zoneId', 'startDateTime']) expect(text).toContain(f);
      expect(res.body.message.length).toBeGreaterThanOrEqual(5);
    });

    it("a projectId outside the caller's scope never lists its desks", async () => {
      for (const projectId of [id('annex'), UNKNOWN_ID]) {
        const res = await desks(tok.portal, { projectId });
        if (res.status === 200) expect(res.body.data).toEqual([]);
        else expectError(res, 403, 'KS003');
      }
      expectError(await desk(tok.portal, 'ax1'), 404, 'KS005');
    });
  });

  // -------------------------------------------------------------------------
  describe('listing, pagination and filters', () => {
    it('envelope with meta {limit, offset, total}', async () => {
      const res = await tower();
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'meta', 'success']);
      expect(Object.keys(res.body.meta).sort()).toEqual(['limit', 'offset', 'total']);
      expect(res.body.meta.offset).toBe(0);
      expect(res.body.meta.total).toBe(TOWER_DESKS.length);
      expect(Number.isInteger(res.body.meta.limit)).toBe(true);
      expect(res.body.meta.limit).toBeGreaterThanOrEqual(TOWER_DESKS.length);
      expect(namesOf(res)).toEqual(TOWER_DESKS);
    });

    it('every Desk field, with the right types', async () => {
      const [d] = okData(await tower({ ids: id('d1') }));
      expect(d).toMatchObject({
        _id: id('d1'),
        name: 'Desk 1',
        index: 1,
        email: 'd1@desks.example',
        status: 'active',
        isPublic: true,
        brandId: id('acme'),
        projectId: id('tower'),
        zoneId: id('zA'),
        floorId: id('fA12'),
        capacity: 1,
        facilities: ['monitor'],
        pictureUrls: ['https://img.example/d1.jpg'],
        chargeRate: { perHour: 50, perDay: 300 },
      });
      expect(d.config).toEqual(standardHours());
      for (const x of okData(await tower())) {
        for (const f of ['_id', 'name', 'email', 'status', 'brandId', 'projectId', 'zoneId', 'floorId'])
          expect(typeof x[f], `${x.name}.${f}`).toBe('string');
        expect(Number.isInteger(x.index) && Number.isInteger(x.capacity)).toBe(true);
        expect(typeof x.isPublic).toBe('boolean');
        expect(['active', 'inactive', 'in-used', 'reserved', 'suspended']).toContain(x.status);
        expect(Array.isArray(x.facilities) && Array.isArray(x.pictureUrls)).toBe(true);
        expect(typeof x.chargeRate.perHour).toBe('number');
        expect(typeof x.chargeRate.perDay).toBe('number');
        expect(typeof x.config).toBe('object');
        expect(x).not.toHaveProperty('cleanupMinutes');
        expect(x).not.toHaveProperty('unavailableReason');
        expect(x).not.toHaveProperty('calendar');
      }
    });

    it('limit/offset pages are stable, disjoint and cover the set; meta echoes them', async () => {
      const seen: string[] = [];
      for (let offset = 0; offset < TOWER_DESKS.length + 4; offset += 4) {
        const res = await tower({ limit: 4, offset });
        expect(res.body.meta).toEqual({ limit: 4, offset, total: TOWER_DESKS.length });
        expect(res.body.data.length).toBe(Math.max(0, Math.min(4, TOWER_DESKS.length - offset)));
        seen.push(...res.body.data.map((d: any) => d.name));
      }
      expect(seen.slice().sort()).toEqual(TOWER_DESKS);
      expect(new Set(seen).size).toBe(TOWER_DESKS.length);
      const page = await tower({ limit: 2, offset: 3 });
      expect(page.body.data.map((d: any) => d.name)).toEqual(seen.slice(3, 5));
    });

    it('limit 0 returns [] with the total; an offset past the end returns []', async () => {
      const zero = await tower({ limit: 0 });
      expect(okData(zero)).toEqual([]);
      expect(zero.body.meta).toEqual({ limit: 0, offset: 0, total: TOWER_DESKS.length });
      const past = await tower({ offset: 100 });
      expect(okData(past)).toEqual([]);
      expect(past.body.meta).toMatchObject({ offset: 100, total: TOWER_DESKS.length });
    });

    it("projectId is optional: without it, every project in the caller's scope", async () => {
      expect(namesOf(await desks(tok.portal))).toEqual(TOWER_DESKS);
      expect(namesOf(await desks(tok.multi))).toEqual([...TOWER_DESKS, 'Annex Desk', 'Lab Desk'].sort());
      expect(namesOf(await desks(tok.multi, { projectId: id('annex') }))).toEqual(['Annex Desk']);
      expect((await desks(tok.multi)).body.meta.total).toBe(TOWER_DESKS.length + 2);
    });

    it('brandId', async () => {
      expect(namesOf(await desks(tok.multi, { brandId: id('globex') }))).toEqual(['Lab Desk']);
      expect(namesOf(await desks(tok.multi, { brandId: id('acme') }))).toEqual([...TOWER_DESKS, 'Annex Desk'].sort());
      expect(namesOf(await desks(tok.portal, { brandId: id('globex') }))).toEqual([]);
    });

    it('zoneId, floorId, locationId (zone or floor)', async () => {
      expect(namesOf(await tower({ zoneId: id('zB') }))).toEqual(['Corner Desk', 'Hot Desk', 'In-Use Desk', 'Window Desk']);
      expect(namesOf(await tower({ floorId: id('fA14') }))).toEqual(['Desk 3', 'Private Desk']);
      expect(namesOf(await tower({ locationId: id('zA') }))).toEqual(['Desk 1', 'Desk 2', 'Desk 3', 'Private Desk']);
      expect(namesOf(await tower({ locationId: id('fA12') }))).toEqual(['Desk 1', 'Desk 2']);
      expect(namesOf(await desks(tok.multi, { locationId: id('zX') }))).toEqual(['Annex Desk']);
    });

    it('ids as repeated keys and as a comma list', async () => {
      expect(namesOf(await tower({ ids: [id('d1'), id('d3')] }))).toEqual(['Desk 1', 'Desk 3']);
      expect(namesOf(await tower({ ids: `${id('d2')},${id('d4')}` }))).toEqual(['Desk 2', 'Window Desk']);
      expect(namesOf(await tower({ ids: UNKNOWN_ID }))).toEqual([]);
      expect(namesOf(await tower({ ids: id('ax1') }))).toEqual([]);
    });

    it('name (case-insensitive substring) and email (case-insensitive)', async () => {
      expect(namesOf(await tower({ name: 'wInDoW' }))).toEqual(['Window Desk']);
      expect(namesOf(await tower({ name: 'period' }))).toEqual(['Period A', 'Period B', 'Period C', 'Period D', 'Period E']);
      expect(namesOf(await tower({ name: 'k_' }))).toEqual([]); // _ is not a wildcard ("k " would match)
      expect(namesOf(await tower({ email: 'D1@DESKS.example' }))).toEqual(['Desk 1']);
      expect(namesOf(await tower({ email: 'd2@desks.example' }))).toEqual(['Desk 2']);
      expect(namesOf(await tower({ email: 'nobody@desks.example' }))).toEqual([]);
    });

    it('status and statuses', async () => {
      expect(namesOf(await tower({ status: 'reserved' }))).toEqual(['Window Desk']);
      expect(namesOf(await tower({ status: 'in-used' }))).toEqual(['In-Use Desk']);
      expect(namesOf(await tower({ statuses: ['inactive', 'suspended'] }))).toEqual(['Corner Desk', 'Hot Desk']);
      expect(namesOf(await tower({ statuses: 'inactive,suspended,reserved' }))).toEqual(['Corner Desk', 'Hot Desk', 'Window Desk']);
      const active = await tower({ status: 'active' });
      expect(namesOf(active)).toEqual(TOWER_DESKS.filter((n) => !['Corner Desk', 'Hot Desk', 'In-Use Desk', 'Window Desk'].includes(n)));
      expect(active.body.meta.total).toBe(9);
    });
  });

  // -------------------------------------------------------------------------
  describe('private desks', () => {
    it('hidden from an app without a role and from a delegated visitor; visible to a role app and a member', async () => {
      expect(namesOf(await tower({}, tok.viewer))).toEqual(PUBLIC_TOWER_DESKS);
      expect((await tower({}, tok.viewer)).body.meta.total).toBe(PUBLIC_TOWER_DESKS.length);
      expect(namesOf(await tower({}, tok.visitor))).toEqual(PUBLIC_TOWER_DESKS);
      expect(namesOf(await tower({}, tok.alice))).toEqual(TOWER_DESKS);
      expect(namesOf(await tower({ ids: id('d7'), ...win('08:00', '09:00') }, tok.viewer))).toEqual([]);
      expect(namesOf(await tower({ ids: id('d7'), ...win('08:00', '09:00') }, tok.alice))).toEqual(['Private Desk']);
      expectError(await desk(tok.viewer, 'd7'), 404, 'KS005');
      expectError(await desk(tok.visitor, 'd7'), 404, 'KS005');
      expect(okData(await desk(tok.portal, 'd7')).isPublic).toBe(false);
      expect(okData(await desk(tok.alice, 'd7'))._id).toBe(id('d7'));
    });
  });

  // -------------------------------------------------------------------------
  describe('window with endDateTime', () => {
    it('removes booked desks; meta.total counts the free ones', async () => {
      const res = await tower({ ids: [id('d1'), id('d2'), id('d3')], ...win('09:30', '10:30') });
      expect(namesOf(res)).toEqual(['Desk 2', 'Desk 3']);
      expect(res.body.meta.total).toBe(2);
      const all = await tower({ status: 'active', limit: 1, ...win('09:30', '10:30') });
      // Period E is held 08:00-09:30 plus 10 minutes of cleaning
      expect(all.body.meta).toEqual({ limit: 1, offset: 0, total: 7 });
      expect(all.body.data).toHaveLength(1);
      const names = namesOf(await tower({ status: 'active', ...win('09:30', '10:30') }));
      expect(names).toEqual(['Desk 2', 'Desk 3', 'Period A', 'Period B', 'Period C', 'Period D', 'Private Desk']);
    });

    it("a window starting inside a booking's cleaning (project default 10) is refused; after it, free", async () => {
      const d1 = { ids: id('d1') }; // 09:00-10:00
      expect(namesOf(await tower({ ...d1, ...win('10:00', '11:00') }))).toEqual([]);
      expect(namesOf(await tower({ ...d1, ...win('10:05', '11:00') }))).toEqual([]);
      expect(namesOf(await tower({ ...d1, ...win('10:09', '11:00') }))).toEqual([]);
      expect(namesOf(await tower({ ...d1, ...win('10:10', '11:00') }))).toEqual(['Desk 1']);
    });

    it('a window whose own cleaning runs into the next booking is refused', async () => {
      const d2 = { ids: id('d2') }; // 14:00-15:00
      expect(namesOf(await tower({ ...d2, ...win('13:00', '13:55') }))).toEqual([]);
      expect(namesOf(await tower({ ...d2, ...win('13:00', '13:51') }))).toEqual([]);
      expect(namesOf(await tower({ ...d2, ...win('13:00', '13:50') }))).toEqual(['Desk 2']);
      expect(namesOf(await tower({ ...d2, ...win('13:00', '13:50:59') }))).toEqual(['Desk 2']); // seconds truncated
    });

    it("desks follow the project default cleaning, not a room's, and carry none of their own", async () => {
      // the same project has a room with 30 minutes of cleaning; the project default is 10 (grid 15)
      expect(namesOf(await tower({ ids: id('d1'), ...win('10:10', '11:00') }))).toEqual(['Desk 1']);
      expect(okData(await desk(tok.portal, 'd1')).calendar.cleanupMinutes).toBe(10);
      // a desk-level cleanupMinutes is not part of the site document; if accepted, it must not count
      const doc = desksSite();
      doc.desks[0].cleanupMinutes = 0;
      const res = await svc.ops('POST', '/ops/v1/apply', doc);
      if (res.status !== 200) expectError(res, 400, 'KS001');
      expect(namesOf(await tower({ ids: id('d1'), ...win('10:05', '11:00') }))).toEqual([]);
      expect(namesOf(await tower({ ids: id('d1'), ...win('10:10', '11:00') }))).toEqual(['Desk 1']);
      expect(okData(await desk(tok.portal, 'd1')).calendar.cleanupMinutes).toBe(10);
    });

    it('inactive and suspended desks are left out; nothing carries an unavailableReason', async () => {
      const names = namesOf(await tower(win('15:30', '16:30')));
      expect(names).not.toContain('Corner Desk');
      expect(names).not.toContain('Hot Desk');
      expect(names).toEqual(
        expect.arrayContaining(['Desk 1', 'Desk 2', 'Desk 3', 'Private Desk', 'Period A', 'Period B', 'Period C', 'Period D', 'Period E']),
      );
      // outside operating hours / over the break: removed, not flagged
      const closed = await tower({ ids: [id('d1'), id('d3')], ...win('06:00', '07:00') });
      expect(okData(closed)).toEqual([]);
      expect(closed.body.meta.total).toBe(0);
      expect(namesOf(await tower({ ids: [id('d3'), id('p3')], ...win('12:40', '12:55') }))).toEqual(['Period C']); // Desk 3: break 12-13
      for (const x of okData(await tower(win('15:30', '16:30')))) expect(x).not.toHaveProperty('unavailableReason');
    });

    it('no window → the unfiltered listing, booked and closed desks included', async () => {
      const res = await tower();
      expect(namesOf(res)).toEqual(TOWER_DESKS);
      expect(res.body.meta.total).toBe(TOWER_DESKS.length);
    });
  });

  // -------------------------------------------------------------------------
  describe('window with timePeriod', () => {
    // Bookings: A 14:00-15:00 (break 12-13); B 12:10-13:00 (no break); C 11:40-12:20 (break 11:30-12:30);
    // D 12:05-13:00 (no break); E 08:00-09:30 (break 12-13). Cleaning 10 minutes.
    it('morning = opening to 12:00, or to the start of a break containing noon', async () => {
      const res = await period('morning');
      expect(namesOf(res)).toEqual(['Period A', 'Period B', 'Period C']);
      expect(res.body.meta.total).toBe(3);
    });

    it('afternoon = 12:00 (or the end of the noon break) to closing', async () => {
      expect(namesOf(await period('afternoon'))).toEqual(['Period C', 'Period E']);
    });

    it('allDay = opening to closing, whatever the break', async () => {
      expect(namesOf(await period('allDay'))).toEqual([]);
      expect(namesOf(await tower({ ids: [id('d3'), id('d2')], startDateTime: at(D, '00:00'), timePeriod: 'allDay' }))).toEqual(['Desk 3']);
    });

    it('a booking 14:00-15:00 blocks afternoon and allDay but not morning', async () => {
      const one = (timePeriod: string) => tower({ ids: id('p1'), startDateTime: at(D, '00:00'), timePeriod });
      expect(namesOf(await one('morning'))).toEqual(['Period A']);
      expect(namesOf(await one('afternoon'))).toEqual([]);
      expect(namesOf(await one('allDay'))).toEqual([]);
      expect(namesOf(await tower({ ids: id('d2'), startDateTime: at(D, '00:00'), timePeriod: 'morning' }))).toEqual(['Desk 2']);
    });

    it("the period is resolved on the start's local date, from the later of start and the period start", async () => {
      const e = { ids: id('p5') }; // 08:00-09:30, cleaning until 09:40
      expect(namesOf(await tower({ ...e, startDateTime: at(D, '09:35'), timePeriod: 'morning' }))).toEqual([]);
      expect(namesOf(await tower({ ...e, startDateTime: at(D, '09:40'), timePeriod: 'morning' }))).toEqual(['Period E']);
      expect(namesOf(await period('morning', '00:00', { startDateTime: at(D, '00:00', 1) }))).toHaveLength(5);
      expect(namesOf(await period('allDay', '00:00', { startDateTime: at(D, '00:00', 1) }))).toHaveLength(5);
    });
  });

  // -------------------------------------------------------------------------
  describe('GET /desks/{id}: the desk and its calendar', () => {
    const busyOf = (res: any) => okData(res).calendar.busy as any[];

    it('the desk fields plus calendar {from, to, timeZone, cleanupMinutes, busy[]}', async () => {
      const res = await desk(tok.viewer, 'd1');
      const { calendar, ...fields } = okData(res);
      expect(res.body).not.toHaveProperty('meta');
      expect(fields).toEqual(okData(await tower({ ids: id('d1') }))[0]);
      expect(Object.keys(calendar).sort()).toEqual(['busy', 'cleanupMinutes', 'from', 'timeZone', 'to']);
      expect(calendar).toMatchObject({ timeZone: TZ, cleanupMinutes: 10 });
      expect(calendar.from).toMatch(ISO_DATE_TIME);
      expect(calendar.to).toMatch(ISO_DATE_TIME);
      expect(calendar.busy).toHaveLength(1);
      const [b] = calendar.busy;
      expect([b.startDateTime, b.endDateTime, b.cleaningEndsAt].map(Date.parse)).toEqual(
        [at(D, '09:00'), at(D, '10:00'), at(D, '10:10')].map(Date.parse),
      );
    });

    it('participants see meetingId and title; others do not; never attendees or PINs', async () => {
      const seen = async (token: string) => busyOf(await desk(token, 'd1')).map((b) => (b.meetingId ? `${b.meetingId}:${b.title}` : null));
      expect(await seen(tok.portal)).toEqual([`${bd1}:Desk focus`]); // the booking app
      expect(await seen(tok.alice)).toEqual([`${bd1}:Desk focus`]); // the organizer through act_as
      expect(await seen(tok.hub)).toEqual([null]);
      expect(await seen(tok.bob)).toEqual([null]);
      expect(await seen(tok.viewer)).toEqual([null]);
      expect(await seen(tok.visitor)).toEqual([null]);
      const d2 = busyOf(await desk(tok.hub, 'd2'));
      expect(d2.map((b) => b.title)).toEqual(['Hub desk']);
      for (const token of [tok.portal, tok.alice, tok.hub]) {
        const res = await desk(token, 'd1');
        for (const b of busyOf(res)) {
          for (const k of Object.keys(b)) expect(['startDateTime', 'endDateTime', 'cleaningEndsAt', 'meetingId', 'title']).toContain(k);
        }
        expect(res.text).not.toContain(PIN);
        expect(res.text).not.toContain('carol@example.com');
        expect(res.text).not.toMatch(/attendee|pinCode|organizer/i);
      }
    });

    it('from/to restrict the range; to before from → 400 KS001', async () => {
      const range = async (from: string, to: string) => busyOf(await desk(tok.portal, 'd1', { from, to })).length;
      expect(await range(at(D, '00:00'), at(D, '00:00', 1))).toBe(1);
      expect(await range(at(D, '00:00'), at(D, '09:00'))).toBe(0);
      expect(await range(at(D, '10:05'), at(D, '12:00'))).toBe(1); // still cleaning
      expect(await range(at(D, '10:10'), at(D, '12:00'))).toBe(0);
      expect(await range(at(D, '00:00', 1), at(D, '00:00', 2))).toBe(0);
      expectError(await desk(tok.portal, 'd1', { from: at(D, '12:00'), to: at(D, '08:00') }), 400, 'KS001');
      expectError(await desk(tok.portal, 'd1', { from: 'noon' }), 400, 'KS001');
    });

    it('unknown id → 404 KS005; non-hex id → 400 KS001; a room id is not a desk', async () => {
      expectError(await svc.request('GET', `/desks/${UNKNOWN_ID}`, { token: tok.portal }), 404, 'KS005');
      expectError(await svc.request('GET', '/desks/desk-1', { token: tok.portal }), 400, 'KS001');
      expectError(await svc.request('GET', `/desks/${id('d1').toUpperCase()}`, { token: tok.portal }), 400, 'KS001');
      expectError(await svc.request('GET', `/desks/${id('bigroom')}`, { token: tok.portal }), 404, 'KS005');
    });
  });
});

// ---------------------------------------------------------------------------
describe('desk timePeriod across a DST change (America/New_York, 08:00-20:00)', () => {
  let svc: TestService;
  let ids: SiteIds;
  let token: string;
  const NY_APP_ID = 'ny-desks-dev';
  const NY_SECRET = 'ny-desks-secret-0123456789abcdef-012345';
  const id = (key: string) => idOf(ids, key);

  const morning = (start: string) =>
    svc.request('GET', `/desks${qs({ projectId: id('nyc'), startDateTime: start, timePeriod: 'morning' })}`, { token });
  const book = (key: string, start: string, end: string) =>
    seedBooking(svc, { assetKind: 'desk', projectId: id('nyc'), assetId: id(key), organizerUserId: id('nyuser'), start, end });

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, {
      brands: [{ key: 'nyb', name: 'NY Brand' }],
      projects: [{ key: 'nyc', brand: 'nyb', name: 'Midtown', timezone: 'America/New_York', currency: 'USD', defaultCleanupMinutes: 10 }],
      zones: [{ key: 'nyz', project: 'nyc', name: 'Main' }],
      floors: [{ key: 'nyf', zone: 'nyz', name: '5F' }],
      desks: [
        { key: 'early', floor: 'nyf', name: 'Early', index: 1, config: everyDay('08:00:00', '20:00:00') },
        { key: 'before', floor: 'nyf', name: 'Before', index: 2, config: everyDay('08:00:00', '20:00:00') },
      ],
      users: [{ key: 'nyuser', name: 'NY User', email: 'ny@example.com', memberships: [{ project: 'nyc' }] }],
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

  it('2027-03-14: morning opens at 08:00 EDT = 12:00Z', async () => {
    await setClock(svc, '2027-03-10T00:00:00Z');
    await book('early', '2027-03-14T12:00:00Z', '2027-03-14T12:30:00Z'); // 08:00-08:30 EDT: inside the morning
    await book('before', '2027-03-14T11:00:00Z', '2027-03-14T11:50:00Z'); // 07:00-07:50 EDT: cleaning ends 08:00
    expect(namesOf(await morning('2027-03-14T00:00:00-05:00'))).toEqual(['Before']);
  });

  it('2027-11-07: morning opens at 08:00 EST = 13:00Z', async () => {
    await setClock(svc, '2027-11-03T00:00:00Z');
    await book('early', '2027-11-07T13:00:00Z', '2027-11-07T13:30:00Z'); // 08:00-08:30 EST
    await book('before', '2027-11-07T12:00:00Z', '2027-11-07T12:50:00Z'); // 07:00-07:50 EST
    expect(namesOf(await morning('2027-11-07T00:00:00-04:00'))).toEqual(['Before']);
  });
});
