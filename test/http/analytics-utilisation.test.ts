/**
 * Utilisation analytics over HTTP (issue 29, docs/analytics.md): hand-built scenarios driven as a client
 * would (tokens, POST /meetings, check-in/out, cancel, the sandbox clock, sandbox payments and badges),
 * each figure of GET /ops/v1/analytics/utilisation compared with the arithmetic written next to it.
 * Every scenario has its own assets and local days (the sandbox clock only moves forward); figures are
 * read once GET /ops/v1/analytics/status shows nothing pending.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import {
  FIGURES,
  expectFigures,
  figures,
  startAnalyticsService,
  utilisation,
  utilisationCsv,
  utilisationRequest,
  waitForAnalytics,
  type AnalyticsCtx,
  type AssetSpec,
  type Figures,
} from '../support/analytics.js';
import { appToken, applySite, expectError, idOf, UNKNOWN_ID, type SiteIds } from '../support/fixtures.js';
import { qs } from '../support/catalogue.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { doorSite } from '../support/doors.js';
import { settled, waitForDevice } from '../support/devices.js';
import { PARTNER_APP_ID, PARTNER_SECRET, PartnerClient } from '../support/partner-members.js';

const BREAK = [{ start: '12:00:00', end: '13:00:00' }];
const PAID = { perHour: 200, perDay: 0 };

/** Every room is open 08:00-18:00 (600 minutes a day) unless said otherwise. */
const ROOMS: AssetSpec[] = [
  { key: 'r-break', name: 'Break Room' },
  { key: 'r-out1', name: 'Checkout Room' },
  { key: 'r-out2', name: 'Early Checkin Room' },
  { key: 'r-noshow', name: 'NoShow Room' },
  { key: 'r-cancel-early', name: 'Cancel Early Room' },
  { key: 'r-cancel-late', name: 'Cancel Late Room' },
  { key: 'p-lapse', name: 'Paid Lapse', chargeRate: PAID },
  { key: 'p-settle', name: 'Paid Settle', chargeRate: PAID },
  { key: 'r-series', name: 'Series Room' },
  // The annex: zone North (floors N1F, N2F) and zone South (floor S1F).
  { key: 'a1', name: 'Annex One', floor: 'n1' },
  { key: 'a2', name: 'Annex Two', floor: 'n2' },
  { key: 'a3', name: 'Annex Three', floor: 's1' },
];
const DESKS: AssetSpec[] = [{ key: 'k1', name: 'Annex Desk', floor: 'n1' }];

/** Scenario days, as offsets from D (each scenario has days of its own). */
const DAY = { brk: 0, checkout: 1, noShow: 2, cancel: 3, paid: 4, series: 5, groups: 9 } as const;

describe('utilisation analytics (Asia/Bangkok)', () => {
  let c: AnalyticsCtx;
  let tower: string;
  let annex: string;

  beforeAll(async () => {
    c = await startAnalyticsService({ rooms: ROOMS, desks: DESKS });
    tower = c.id('tower');
    annex = c.id('annex');
  });
  afterAll(async () => {
    await c?.close();
  });

  /** The one row of the tower's figures for one asset over one day. */
  async function assetDay(key: string, plusDays: number): Promise<any> {
    const rows = await utilisation(c.svc, { project: tower, from: c.day(plusDays), to: c.day(plusDays), asset: c.id(key) });
    expect(rows, JSON.stringify(rows)).toHaveLength(1);
    return rows[0];
  }

  it('opening hours with a break: the break is not available, nor booked', async () => {
    // Booked 11:00-14:00 while the room had no break, then the break 12:00-13:00 is added (bookings
    // cannot be made across a break): the day's hours are the new ones.
    await c.book('r-break', '11:00', '14:00', DAY.brk);
    await waitForAnalytics(c.svc, tower); // the booking is counted under the old hours first
    await c.reapply({ rooms: ROOMS.map((r) => (r.key === 'r-break' ? { ...r, breaks: BREAK } : r)) });
    // The status counts the room as pending (pendingAssets) until the job has recorded its new hours and judged its
    // bookings again, in one transaction: no answer shows the new hours with the old figures.
    await waitForAnalytics(c.svc, tower);
    const row = await assetDay('r-break', DAY.brk);
    expect(row.group).toEqual({ projectId: tower, projectName: 'Acme Tower' });
    // available = 08:00-18:00 (600) - 12:00-13:00 (60) = 540
    // booked = 11:00-12:00 (60) + 13:00-14:00 (60) = 120 (the break hour is outside the available time)
    // utilisation = 120 / 540; nothing reached its start yet → noShowRate null
    expectFigures(row, figures({ availableMinutes: 540, bookedMinutes: 120, bookings: 1 }));
    expect(row.utilisation).toBeCloseTo(120 / 540, 12);
  });

  it('a checked-in booking checked out early; a check-in before the start counts occupied from the start', async () => {
    const d = DAY.checkout;
    await c.clockTo('09:00', d);
    const early = await c.book('r-out1', '10:00', '12:00', d);
    const before = await c.book('r-out2', '14:00', '15:00', d);
    await c.clockTo('10:10', d);
    expect((await c.action(early._id, 'check-in')).status).toBe(202);
    await c.clockTo('11:30', d);
    expect((await c.action(early._id, 'check-out')).status).toBe(202);
    await c.clockTo('13:50', d);
    expect((await c.action(before._id, 'check-in')).status).toBe(202);
    await c.clockTo('14:40', d);
    expect((await c.action(before._id, 'check-out')).status).toBe(202);

    // r-out1: booked 10:00→11:30 = 90; occupied 10:10→11:30 = 80; released 11:30→12:00 = 30;
    // checkIns 1; reached its start, no no-show → noShowRate 0/1 = 0; utilisation 90/600 = 0.15, occupancy 80/600
    expectFigures(
      await assetDay('r-out1', d),
      figures({ availableMinutes: 600, bookedMinutes: 90, occupiedMinutes: 80, releasedMinutes: 30, bookings: 1, checkIns: 1 }, 1),
    );
    // r-out2: checked in 13:50, before the 14:00 start → occupied from 14:00: 14:00→14:40 = 40;
    // booked 14:00→14:40 = 40; released 14:40→15:00 = 20
    expectFigures(
      await assetDay('r-out2', d),
      figures({ availableMinutes: 600, bookedMinutes: 40, occupiedMinutes: 40, releasedMinutes: 20, bookings: 1, checkIns: 1 }, 1),
    );
  });

  it('a no-show: booked until the release at start + 15, the rest released, noShowRate 1', async () => {
    const d = DAY.noShow;
    await c.clockTo('09:00', d);
    const m = await c.book('r-noshow', '10:00', '11:00', d);
    await c.clockTo('10:16', d);
    expect((await c.get(m._id)).status).toBe('cancelled');
    // booked 10:00→10:15 (the release) = 15; released 10:15→11:00 = 45; occupied 0;
    // noShows 1 of 1 reached start → noShowRate 1; utilisation 15/600 = 0.025
    expectFigures(
      await assetDay('r-noshow', d),
      figures({ availableMinutes: 600, bookedMinutes: 15, releasedMinutes: 45, bookings: 1, noShows: 1 }, 1),
    );
  });

  it('a cancellation before the start (a cancellation, 0 booked) and one after it (booked to the minute, not a cancellation)', async () => {
    const d = DAY.cancel;
    await c.clockTo('09:00', d);
    const early = await c.book('r-cancel-early', '10:00', '11:00', d);
    const late = await c.book('r-cancel-late', '10:00', '11:00', d);
    await c.clockTo('09:30', d);
    expect((await c.action(early._id, 'cancel')).status).toBe(202);
    await c.clockTo('10:07:40', d);
    expect((await c.action(late._id, 'cancel')).status).toBe(202);

    // early: bookings 1, cancellations 1, booked 0, released 0; never reached its start → noShowRate null
    expectFigures(await assetDay('r-cancel-early', d), figures({ availableMinutes: 600, bookings: 1, cancellations: 1 }));
    // late: cancelled at 10:07:40 → 10:07 (truncated): booked 10:00→10:07 = 7, released 10:07→11:00 = 53;
    // not a cancellation (after the start), not a no-show → noShowRate 0/1 = 0
    expectFigures(
      await assetDay('r-cancel-late', d),
      figures({ availableMinutes: 600, bookedMinutes: 7, releasedMinutes: 53, bookings: 1 }, 1),
    );
  });

  it('a lapsed unpaid booking counts nowhere; a settled one counts', async () => {
    const d = DAY.paid;
    await c.clockTo('08:00', d);
    const lapse = await c.book('p-lapse', '10:00', '11:00', d);
    const paid = await c.book('p-settle', '10:00', '11:00', d);
    expect([lapse.status, paid.status]).toEqual(['unpaid', 'unpaid']);
    const settle = await c.svc.ops('POST', `/ops/v1/payments/${paid.payment.paymentId}/settle`);
    expect(settle.status, settle.text).toBe(200);
    await c.clockTo('08:06', d); // past the 5-minute window of the unpaid one
    expect((await c.get(lapse._id)).status).toBe('cancelled');
    expect((await c.get(paid._id)).status).toBe('active');

    // p-lapse: nothing but the room's 600 available minutes; utilisation 0/600 = 0
    expectFigures(await assetDay('p-lapse', d), figures({ availableMinutes: 600 }));
    // p-settle: active, 10:00-11:00 ahead → booked 60, bookings 1; not reached its start → noShowRate null
    expectFigures(await assetDay('p-settle', d), figures({ availableMinutes: 600, bookedMinutes: 60, bookings: 1 }));
  });

  it('a series: each occurrence is a booking on its own day; every day of the range has a row; the CSV says the same', async () => {
    const d = DAY.series;
    await c.clockTo('09:00', d);
    await c.book('r-series', '10:00', '11:00', d, { recurrence: 'FREQ=DAILY;COUNT=3' });
    const query = { project: tower, from: c.day(d - 1), to: c.day(d + 3), groupBy: 'day', asset: c.id('r-series') };
    const rows = await utilisation(c.svc, query);
    expect(rows.map((r) => r.group)).toEqual([-1, 0, 1, 2, 3].map((i) => ({ day: c.day(d + i) })));
    // The day before and after: 600 available, nothing booked.
    expectFigures(rows[0], figures({ availableMinutes: 600 }));
    expectFigures(rows[4], figures({ availableMinutes: 600 }));
    // Each occurrence day: 10:00-11:00 = 60 booked of 600 → 0.1, one booking; none reached its start yet.
    for (const r of rows.slice(1, 4)) expectFigures(r, figures({ availableMinutes: 600, bookedMinutes: 60, bookings: 1 }), r.group.day);

    // CSV: a header (the group field, then the figures), one line per row, the same numbers.
    const { lines } = await utilisationCsv(c.svc, query);
    expect(lines[0]).toEqual(['day', ...FIGURES]);
    expect(lines.slice(1)).toHaveLength(rows.length);
    lines.slice(1).forEach((line, i) => {
      expect(line[0]).toBe(rows[i].group.day);
      FIGURES.forEach((k, j) => {
        const v = rows[i][k];
        if (v === null) expect(line[j + 1], k).toBe('');
        else expect(Number(line[j + 1]), k).toBeCloseTo(v, 12);
      });
    });
  });

  describe('groups of the annex (zones North: N1F, N2F; South: S1F)', () => {
    const g = DAY.groups;
    // Every room is open 600 minutes a day; the range is 2 days → 1200 a room.
    // Day g: a1 09:00-10:00 (60) and 14:00-16:00 (120); a2 10:00-10:30 (30); a3 nothing; desk k1 09:00-12:00 (180).
    // Day g+1: a2 09:00-11:00 (120). All ahead of the clock (no one reached the start: noShowRate null).
    let range: { project: string; from: string; to: string };
    beforeAll(async () => {
      await c.book('a1', '09:00', '10:00', g);
      await c.book('a1', '14:00', '16:00', g);
      await c.book('a2', '10:00', '10:30', g);
      await c.book('k1', '09:00', '12:00', g);
      await c.book('a2', '09:00', '11:00', g + 1);
      range = { project: annex, from: c.day(g), to: c.day(g + 1) };
    });
    const byId = (rows: any[], field: string) => rows.map((r) => r.group[field]);
    const sorted = (ids: string[]) => [...ids].sort();

    it('groupBy asset: every room, zeros included, with its floor and zone; floor, zone and asset filters', async () => {
      const rows = await utilisation(c.svc, { ...range, groupBy: 'asset' });
      const want: Record<string, { group: any; f: Figures }> = {
        // a1: 60 + 120 = 180 booked of 1200 → 0.15; 2 bookings
        a1: { group: { floorId: c.id('n1'), zoneId: c.id('zN') }, f: figures({ availableMinutes: 1200, bookedMinutes: 180, bookings: 2 }) },
        // a2: 30 + 120 = 150 of 1200 → 0.125; 2 bookings
        a2: { group: { floorId: c.id('n2'), zoneId: c.id('zN') }, f: figures({ availableMinutes: 1200, bookedMinutes: 150, bookings: 2 }) },
        // a3: nothing booked: 0 of 1200 → 0
        a3: { group: { floorId: c.id('s1'), zoneId: c.id('zS') }, f: figures({ availableMinutes: 1200 }) },
      };
      const ids = sorted(['a1', 'a2', 'a3'].map((k) => c.id(k)));
      expect(byId(rows, 'assetId')).toEqual(ids);
      for (const [key, w] of Object.entries(want)) {
        const row = rows.find((r) => r.group.assetId === c.id(key));
        expect(row.group).toMatchObject({ assetId: c.id(key), assetName: ROOMS.find((r) => r.key === key)!.name, ...w.group });
        expectFigures(row, w.f, key);
      }
      const onN1 = await utilisation(c.svc, { ...range, groupBy: 'asset', floor: c.id('n1') });
      expect(byId(onN1, 'assetId')).toEqual([c.id('a1')]);
      const inSouth = await utilisation(c.svc, { ...range, groupBy: 'asset', zone: c.id('zS') });
      expect(byId(inSouth, 'assetId')).toEqual([c.id('a3')]);
      const justA2 = await utilisation(c.svc, { ...range, groupBy: 'day', asset: c.id('a2') });
      // a2: day g 30 of 600; day g+1 120 of 600
      expect(justA2.map((r) => r.group)).toEqual([{ day: c.day(g) }, { day: c.day(g + 1) }]);
      expectFigures(justA2[0], figures({ availableMinutes: 600, bookedMinutes: 30, bookings: 1 }));
      expectFigures(justA2[1], figures({ availableMinutes: 600, bookedMinutes: 120, bookings: 1 }));
    });

    it('groupBy floor, zone and project: ids, names and sums', async () => {
      const floors = await utilisation(c.svc, { ...range, groupBy: 'floor' });
      expect(byId(floors, 'floorId')).toEqual(sorted(['n1', 'n2', 's1'].map((k) => c.id(k))));
      const floor = (k: string) => floors.find((r) => r.group.floorId === c.id(k));
      expect(floor('n1').group).toEqual({ floorId: c.id('n1'), floorName: 'N1F', zoneId: c.id('zN'), zoneName: 'North' });
      expect(floor('s1').group).toMatchObject({ floorName: 'S1F' });
      // n1 = a1 (180 of 1200), n2 = a2 (150 of 1200), s1 = a3 (0 of 1200)
      expectFigures(floor('n1'), figures({ availableMinutes: 1200, bookedMinutes: 180, bookings: 2 }), 'n1');
      expectFigures(floor('n2'), figures({ availableMinutes: 1200, bookedMinutes: 150, bookings: 2 }), 'n2');
      expectFigures(floor('s1'), figures({ availableMinutes: 1200 }), 's1');

      const zones = await utilisation(c.svc, { ...range, groupBy: 'zone' });
      expect(byId(zones, 'zoneId')).toEqual(sorted([c.id('zN'), c.id('zS')]));
      const zone = (k: string) => zones.find((r) => r.group.zoneId === c.id(k));
      expect(zone('zN').group).toMatchObject({ zoneName: 'North' });
      // North = a1 + a2: 2400 available, 180 + 150 = 330 booked, 4 bookings; South = a3: 1200, 0
      expectFigures(zone('zN'), figures({ availableMinutes: 2400, bookedMinutes: 330, bookings: 4 }), 'zN');
      expectFigures(zone('zS'), figures({ availableMinutes: 1200 }), 'zS');

      const project = await utilisation(c.svc, { ...range, groupBy: 'project' });
      expect(project.map((r) => r.group)).toEqual([{ projectId: annex, projectName: 'Acme Annex' }]);
      // 3 rooms × 1200 = 3600 available; 330 booked → 330/3600; 4 bookings (the desk is not a room)
      expectFigures(project[0], figures({ availableMinutes: 3600, bookedMinutes: 330, bookings: 4 }));
    });

    it('groupBy day, week and month; assetKind desk', async () => {
      const days = await utilisation(c.svc, { ...range, groupBy: 'day' });
      // day g: 3 × 600 = 1800 available, 60 + 120 + 30 = 210 booked, 3 bookings; day g+1: 1800, 120, 1
      const perDay: Record<string, Figures> = {
        [c.day(g)]: figures({ availableMinutes: 1800, bookedMinutes: 210, bookings: 3 }),
        [c.day(g + 1)]: figures({ availableMinutes: 1800, bookedMinutes: 120, bookings: 1 }),
      };
      expect(days.map((r) => r.group)).toEqual([{ day: c.day(g) }, { day: c.day(g + 1) }]);
      days.forEach((r) => expectFigures(r, perDay[r.group.day]!, r.group.day));

      // Weeks and months: the sums of the days above that fall in each (the two days may straddle one).
      const sumBy = (key: (day: string) => string) => {
        const out = new Map<string, { availableMinutes: number; bookedMinutes: number; bookings: number }>();
        for (const [day, f] of Object.entries(perDay)) {
          const k = key(day);
          const s = out.get(k) ?? { availableMinutes: 0, bookedMinutes: 0, bookings: 0 };
          out.set(k, {
            availableMinutes: s.availableMinutes + f.availableMinutes,
            bookedMinutes: s.bookedMinutes + f.bookedMinutes,
            bookings: s.bookings + f.bookings,
          });
        }
        return [...out.entries()].sort(([a], [b]) => a.localeCompare(b));
      };
      const weeks = await utilisation(c.svc, { ...range, groupBy: 'week' });
      const wantWeeks = sumBy((day) => DateTime.fromISO(day).startOf('week').toISODate()!);
      expect(weeks.map((r) => r.group)).toEqual(wantWeeks.map(([week]) => ({ week })));
      weeks.forEach((r, i) => expectFigures(r, figures(wantWeeks[i]![1]), r.group.week));
      const months = await utilisation(c.svc, { ...range, groupBy: 'month' });
      const wantMonths = sumBy((day) => day.slice(0, 7));
      expect(months.map((r) => r.group)).toEqual(wantMonths.map(([month]) => ({ month })));
      months.forEach((r, i) => expectFigures(r, figures(wantMonths[i]![1]), r.group.month));

      const desks = await utilisation(c.svc, { ...range, groupBy: 'asset', assetKind: 'desk' });
      expect(desks.map((r) => r.group)).toEqual([
        { assetId: c.id('k1'), assetName: 'Annex Desk', floorId: c.id('n1'), floorName: 'N1F', zoneId: c.id('zN'), zoneName: 'North' },
      ]);
      // k1: 2 × 600 = 1200 available, 09:00-12:00 = 180 booked → 0.15
      expectFigures(desks[0], figures({ availableMinutes: 1200, bookedMinutes: 180, bookings: 1 }));
    });
  });

  it('validation: 400 KS001 for to before from, more than 366 days, a bad date, an unknown groupBy; 404 for an unknown project', async () => {
    const ok = { project: tower, from: '2027-01-01', to: '2027-12-31' }; // 365 days
    expect((await utilisationRequest(c.svc, ok)).status).toBe(200);
    // 2027-01-01..2028-01-01 holds 365 + 1 = 366 days (both ends counted): the longest range
    expect((await utilisationRequest(c.svc, { ...ok, to: '2028-01-01' })).status).toBe(200);
    const bad = [
      { ...ok, from: '2027-02-02', to: '2027-02-01' },
      { ...ok, to: '2028-01-02' }, // 367 days
      { ...ok, to: '2028-06-01' },
      { ...ok, from: '2027-02-30' },
      { ...ok, from: 'tomorrow' },
      { ...ok, groupBy: 'building' },
      { from: ok.from, to: ok.to },
    ];
    for (const q of bad) expectError(await utilisationRequest(c.svc, q), 400, 'KS001');
    const unknown = await c.svc.ops('GET', `/ops/v1/analytics/utilisation${qs({ ...ok, project: UNKNOWN_ID })}`);
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.body.success).toBe(false);
    // Ops auth like every /ops/v1 route.
    const anonymous = await c.svc.request('GET', `/ops/v1/analytics/utilisation${qs(ok)}`);
    expect(anonymous.status).toBe(401);
  });

  it('named reports: 403 until the project turns them on in the site document, then rows per organizer', async () => {
    const query = `/ops/v1/analytics/organizers${qs({ project: tower, from: c.day(DAY.noShow), to: c.day(DAY.noShow) })}`;
    await waitForAnalytics(c.svc, tower);
    const off = await c.svc.ops('GET', query);
    expect(off.status, off.text).toBe(403);
    expect(off.body.success).toBe(false);

    await c.reapply({ namedReports: true });
    const on = await c.svc.ops('GET', query);
    expect(on.status, on.text).toBe(200);
    // The no-show day: alice's one booking, reached its start, no-show (a ghost meeting), booked 15 minutes.
    expect(on.body.data).toEqual([
      {
        userId: c.id('alice'),
        name: 'Alice Example',
        email: 'alice@example.com',
        bookings: 1,
        reachedStart: 1,
        noShows: 1,
        ghostMeetings: 1,
        bookedMinutes: 15,
        noShowRate: 1,
      },
    ]);
  });
});

describe('utilisation analytics across DST (Europe/Berlin)', () => {
  let c: AnalyticsCtx;
  let tower: string;
  const Z = 'Europe/Berlin';
  const local = (iso: string) => DateTime.fromISO(iso, { zone: Z }).toISO()!;

  beforeAll(async () => {
    c = await startAnalyticsService({
      timezone: Z,
      // Open all day; no no-show cancel (the clock later moves past the bookings).
      rooms: [{ key: 'r-dst', name: 'DST Room', open: '00:00:00', close: '24:00:00', meetingConfig: { postStartExpireMinutes: -1 } }],
    });
    tower = c.id('tower');
  });
  afterAll(async () => {
    await c?.close();
  });

  /** hourOfWeek rows: 168, weekday then hour; the ones on Sunday (weekday 7) by hour. */
  async function sundayHours(day: string): Promise<any[]> {
    const rows = await utilisation(c.svc, { project: tower, from: day, to: day, groupBy: 'hourOfWeek' });
    expect(rows).toHaveLength(168);
    expect(rows.map((r) => [r.group.weekday, r.group.hour])).toEqual(
      Array.from({ length: 168 }, (_, i) => [Math.floor(i / 24) + 1, i % 24]),
    );
    // The other weekdays are outside the one-day range: nothing available → ratios null.
    for (const r of rows.filter((x) => x.group.weekday !== 7)) expectFigures(r, figures({ availableMinutes: 0 }));
    return rows.filter((r) => r.group.weekday === 7);
  }

  it('spring forward (2027-03-28, a Sunday): a 23-hour day, a booking across the change counts its real minutes', async () => {
    await c.clockSet(local('2027-03-27T12:00'));
    // 01:00 CET (00:00Z) → 04:00 CEST (02:00Z): 120 real minutes (02:00-03:00 local does not exist)
    await c.bookAt('r-dst', local('2027-03-28T01:00'), local('2027-03-28T04:00'));
    const [row] = await utilisation(c.svc, { project: tower, from: '2027-03-28', to: '2027-03-28' });
    // available = 24 h - 1 h = 23 × 60 = 1380; booked 120 → 120/1380
    expectFigures(row, figures({ availableMinutes: 1380, bookedMinutes: 120, bookings: 1 }));
    const hours = await sundayHours('2027-03-28');
    hours.forEach((r) => {
      const h = r.group.hour as number;
      // hour 2 has no minutes; every other hour 60. Booked: hour 1 (01:00-02:00) 60, hour 3 (03:00-04:00) 60.
      // The booking counts at its start's hour (1).
      const available = h === 2 ? 0 : 60;
      const booked = h === 1 || h === 3 ? 60 : 0;
      expectFigures(r, figures({ availableMinutes: available, bookedMinutes: booked, bookings: h === 1 ? 1 : 0 }), `hour ${h}`);
    });
  });

  it('fall back (2027-10-31, a Sunday): a 25-hour day, the repeated hour counted twice', async () => {
    await c.clockSet(local('2027-10-30T12:00'));
    // 01:00 CEST (2027-10-30T23:00Z) → 04:00 CET (03:00Z): 240 real minutes
    await c.bookAt('r-dst', local('2027-10-31T01:00'), local('2027-10-31T04:00'));
    const [row] = await utilisation(c.svc, { project: tower, from: '2027-10-31', to: '2027-10-31' });
    // available = 25 × 60 = 1500; booked 240 → 240/1500 = 0.16
    expectFigures(row, figures({ availableMinutes: 1500, bookedMinutes: 240, bookings: 1 }));
    const hours = await sundayHours('2027-10-31');
    hours.forEach((r) => {
      const h = r.group.hour as number;
      // hour 2 happens twice: 120 available; booked hour 1: 60, hour 2: 120 (both passes), hour 3: 60
      const available = h === 2 ? 120 : 60;
      const booked = h === 1 || h === 3 ? 60 : h === 2 ? 120 : 0;
      expectFigures(r, figures({ availableMinutes: available, bookedMinutes: booked, bookings: h === 1 ? 1 : 0 }), `hour ${h}`);
    });
  });
});

describe('walk-ins', () => {
  let svc: TestService;
  let ids: SiteIds;

  beforeAll(async () => {
    svc = await startTestService();
    // The board room's doors: d1 (held only through bookings) and the lobby turnstile t1 (members for good).
    ids = await applySite(svc, doorSite({ roomDoors: ['d1', 't1'] }));
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('a granted badge at a room door with no booking there is a walk-in on that day', async () => {
    const api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
    const alice = (await api.putOk('walk-alice', { firstName: 'Alice', lastName: 'Example', email: 'alice@example.com' })).memberId;
    expect((await api.credentials('walk-alice', { cards: [{ cardNo: '0007654321' }] })).status).toBe(200);
    const t1 = idOf(ids, 't1');
    await waitForDevice(svc, t1, (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === alice));
    const res = await svc.ops('POST', `/ops/v1/devices/${t1}/badge`, { memberId: alice });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ granted: true });
    // Judged by the door-entries job (a walk-in: no booking at the board room), then counted.
    const entryId = res.body.data._id;
    let deviceAt = '';
    const until = Date.now() + 5_000;
    for (;;) {
      const list = await svc.ops('GET', `/ops/v1/access-entries${qs({ project: idOf(ids, 'tower') })}`);
      const e = (list.body.data as any[]).find((x) => x._id === entryId);
      if (e && e.outcome !== 'pending') {
        expect(e.outcome).toBe('walk-in');
        deviceAt = e.deviceAt;
        break;
      }
      if (Date.now() > until) throw new Error(`entry ${entryId} still pending`);
      await new Promise((r) => setTimeout(r, 25));
    }

    const tower = idOf(ids, 'tower');
    // The sandbox badge stamps the device time with the wall clock: the walk-in belongs to that local day.
    const day = DateTime.fromISO(deviceAt, { zone: 'Asia/Bangkok' }).toISODate()!;
    const rows = await utilisation(svc, { project: tower, from: day, to: day, asset: idOf(ids, 'board') });
    // The board room has no config: open all day (1440); no booking; one walk-in.
    expectFigures(rows[0], figures({ availableMinutes: 1440, walkIns: 1 }));
  });
});
