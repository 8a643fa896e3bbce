/**
 * Property test of GET /ops/v1/analytics/utilisation (issue 29, "Exact"): each run builds a fresh project in a
 * zone with DST (and sometimes a second one in Asia/Bangkok) with random opening hours and breaks, books rooms
 * over the local days around the zone's next DST change, then checks in, checks out early, cancels before and
 * after the start and lets bookings lapse as no-shows, all through the HTTP API and the sandbox clock. The
 * endpoint's rows by asset, day and hourOfWeek must equal a computation made here from the test's own record
 * of what it did: every UTC minute of the range is walked and placed with luxon (local day, weekday, hour,
 * wall-clock minute), independently of src/modules/analytics.
 *
 * One service per file; each run applies new projects and moves the clock to the next DST change of its
 * zone (the clock only moves forward). ANALYTICS_PROP_RUNS sets numRuns, ANALYTICS_PROP_SEED replays a seed,
 * ANALYTICS_PROP_SHRINK=1 lets fast-check shrink a failure (slow: every step is a full run).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { startTestService, type HttpResult, type TestService } from '../support/test-service.js';
import { actAsToken, applySite, idOf, sleep } from '../support/fixtures.js';
import { qs, serviceNow, setClock } from '../support/catalogue.js';
import { FIGURES } from '../support/analytics.js';

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const DST_ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney'] as const;
const FLAT_ZONE = 'Asia/Bangkok';
const MINUTE = 60_000;
/** Days of the range on each side of the DST day. */
const SPAN = 2;
const PRE_START = 15;

// ---------------------------------------------------------------------------------------------------------
// Generated scenario (relative: real dates are picked at run time, after the clock's current position)

interface DayGen {
  open: number; // 15-minute slots from midnight
  length: number; // slots
  breaks: { at: number; length: number }[]; // slots from open
}
interface RoomGen {
  days: (DayGen | null)[]; // Mon..Sun; null = closed
  expire: 15 | 30; // postStartExpireMinutes
}
type OutcomeGen =
  | { t: 'noShow' }
  | { t: 'cancelBefore'; lead: number }
  | { t: 'cancelAfter'; after: number }
  | { t: 'checkIn'; at: number; checkOut: number | null };
interface BookingGen {
  room: number;
  day: number; // -SPAN..SPAN from the DST day
  slot: number;
  slots: number; // duration in 15-minute slots
  outcome: OutcomeGen;
}
interface ScenarioGen {
  zone: (typeof DST_ZONES)[number];
  rooms: RoomGen[];
  flatRoom: RoomGen | null;
  bookings: BookingGen[];
}

const dayGen: fc.Arbitrary<DayGen> = fc
  .record({
    open: fc.integer({ min: 0, max: 40 }),
    length: fc.integer({ min: 8, max: 96 }),
    breaks: fc.array(fc.record({ at: fc.integer({ min: 1, max: 60 }), length: fc.integer({ min: 1, max: 6 }) }), {
      maxLength: 2,
    }),
  })
  .map((d) => ({ ...d, length: Math.min(d.length, 96 - d.open) }));

const roomGen: fc.Arbitrary<RoomGen> = fc
  .record({
    days: fc.array(fc.option(dayGen, { freq: 4 }), { minLength: 7, maxLength: 7 }),
    expire: fc.constantFrom(15 as const, 30 as const),
  })
  .filter((r) => r.days.some((d) => d !== null));

const outcomeGen: fc.Arbitrary<OutcomeGen> = fc.oneof(
  fc.constant({ t: 'noShow' as const }),
  fc.record({ t: fc.constant('cancelBefore' as const), lead: fc.integer({ min: 1, max: 3000 }) }),
  fc.record({ t: fc.constant('cancelAfter' as const), after: fc.integer({ min: 1, max: 29 }) }),
  fc.record({
    t: fc.constant('checkIn' as const),
    at: fc.integer({ min: -PRE_START, max: 29 }),
    checkOut: fc.option(fc.integer({ min: 1, max: 200 }), { freq: 2 }),
  }),
);

const scenarioGen: fc.Arbitrary<ScenarioGen> = fc.record({
  zone: fc.constantFrom(...DST_ZONES),
  rooms: fc.array(roomGen, { minLength: 1, maxLength: 3 }),
  flatRoom: fc.option(roomGen, { freq: 2 }),
  bookings: fc.array(
    fc.record({
      room: fc.nat(),
      day: fc.integer({ min: -SPAN, max: SPAN }),
      slot: fc.nat({ max: 95 }),
      slots: fc.integer({ min: 3, max: 12 }),
      outcome: outcomeGen,
    }),
    { minLength: 4, maxLength: 24 },
  ),
});

// ---------------------------------------------------------------------------------------------------------
// Site building

/** Breaks inside the open hours, sorted, not overlapping (slots from midnight). */
function breaksOf(d: DayGen): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const close = d.open + d.length;
  for (const b of [...d.breaks].sort((x, y) => x.at - y.at)) {
    const start = d.open + b.at;
    const end = Math.min(start + b.length, close - 1);
    if (start >= end) continue;
    if (out.length && start <= out[out.length - 1].end) continue;
    out.push({ start, end });
  }
  return out;
}

const wall = (slot: number) => {
  const m = slot * 15;
  return m >= 1440 ? '24:00:00' : `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}:00`;
};

function roomConfig(r: RoomGen) {
  const dayConfig: Record<string, unknown> = {};
  r.days.forEach((d, i) => {
    if (!d) return;
    const breaks = breaksOf(d);
    dayConfig[WEEKDAYS[i]] = {
      availableTime: { start: wall(d.open), end: wall(d.open + d.length) },
      ...(breaks.length ? { breakTimes: breaks.map((b) => ({ start: wall(b.start), end: wall(b.end) })) } : {}),
    };
  });
  return {
    dayConfig,
    minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
    maxAdvanceBookingDays: 60,
    maxDurationMinutes: 240,
    bookMultipleDayRoom: false,
    ...(r.expire === 15 ? {} : { meetingConfig: { postStartExpireMinutes: r.expire } }),
  };
}

/** An asset as the expectation sees it: wall-clock minutes open and in breaks, per ISO weekday. */
interface AssetModel {
  key: string;
  id: string;
  floorId: string;
  zoneId: string;
  expire: number;
  days: ({ open: number; close: number; breaks: { start: number; end: number }[] } | null)[];
}
interface ProjectModel {
  key: string;
  id: string;
  zone: string;
  token: string;
  assets: AssetModel[];
}

function siteDoc(run: number, s: ScenarioGen) {
  const projects = [{ tag: 'a', zone: s.zone as string, rooms: s.rooms }];
  if (s.flatRoom) projects.push({ tag: 'b', zone: FLAT_ZONE, rooms: [s.flatRoom] });
  const doc = {
    brands: [{ key: 'prop-brand', name: 'Property brand' }],
    projects: projects.map((p) => ({
      key: `p${run}${p.tag}`,
      brand: 'prop-brand',
      name: `Run ${run} ${p.tag}`,
      timezone: p.zone,
      currency: 'THB',
      defaultCleanupMinutes: 0,
      bookingGridMinutes: 15,
      backofficePaymentDueMinutes: 1440,
    })),
    zones: projects.map((p) => ({ key: `z${run}${p.tag}`, project: `p${run}${p.tag}`, name: `Zone ${p.tag}` })),
    floors: projects.map((p) => ({ key: `f${run}${p.tag}`, zone: `z${run}${p.tag}`, name: `Floor ${p.tag}` })),
    rooms: projects.flatMap((p) =>
      p.rooms.map((r, i) => ({
        key: `r${run}${p.tag}${i}`,
        floor: `f${run}${p.tag}`,
        name: `Room ${p.tag}${i}`,
        capacity: 6,
        status: 'active',
        isPublic: true,
        cleanupMinutes: 0,
        config: roomConfig(r),
      })),
    ),
    users: [
      {
        key: `u${run}`,
        email: `organizer${run}@example.com`,
        name: `Organizer ${run}`,
        memberships: projects.map((p) => ({ project: `p${run}${p.tag}`, role: 'member' })),
        blockedFromBooking: false,
      },
    ],
    apps: projects.map((p) => ({
      key: `app${run}${p.tag}`,
      appId: `prop-app-${run}-${p.tag}`,
      appSecret: `prop-secret-${run}-${p.tag}-0123456789abcdef-0123456789`,
      name: `App ${run} ${p.tag}`,
      projects: [`p${run}${p.tag}`],
      projectRoles: [{ project: `p${run}${p.tag}`, permissions: ['MEETING_UPDATE'] }],
      actAs: true,
      links: [{ user: `u${run}`, externalUserId: `ext-${run}` }],
    })),
  };
  return { doc, projects };
}

async function buildSite(svc: TestService, run: number, s: ScenarioGen): Promise<ProjectModel[]> {
  const { doc, projects } = siteDoc(run, s);
  const ids = await applySite(svc, doc);
  const out: ProjectModel[] = [];
  for (const p of projects) {
    const tag = `${run}${p.tag}`;
    const token = (
      await actAsToken(svc, {
        appId: `prop-app-${run}-${p.tag}`,
        secret: `prop-secret-${run}-${p.tag}-0123456789abcdef-0123456789`,
        subject: `ext-${run}`,
      })
    ).access_token;
    out.push({
      key: `p${tag}`,
      id: idOf(ids, `p${tag}`, 'projects'),
      zone: p.zone,
      token,
      assets: p.rooms.map((r, i) => ({
        key: `r${tag}${i}`,
        id: idOf(ids, `r${tag}${i}`, 'rooms'),
        floorId: idOf(ids, `f${tag}`, 'floors'),
        zoneId: idOf(ids, `z${tag}`, 'zones'),
        expire: r.expire,
        days: r.days.map((d) =>
          d
            ? {
                open: d.open * 15,
                close: (d.open + d.length) * 15,
                breaks: breaksOf(d).map((b) => ({ start: b.start * 15, end: b.end * 15 })),
              }
            : null,
        ),
      })),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Time

/** The first local day on or after `from` whose length is not 24 hours. */
function nextDstDay(zone: string, fromMs: number): DateTime {
  let d = DateTime.fromMillis(fromMs, { zone }).startOf('day');
  for (let i = 0; i < 800; i++) {
    const next = d.plus({ days: 1 });
    if (next.toMillis() - d.toMillis() !== 86_400_000) return d;
    d = next;
  }
  throw new Error(`no DST change in ${zone} after ${new Date(fromMs).toISOString()}`);
}

const iso = (ms: number) => new Date(ms).toISOString();
const floorMinute = (ms: number) => Math.floor(ms / MINUTE) * MINUTE;

// ---------------------------------------------------------------------------------------------------------
// What the test did (its own record)

type Outcome =
  | { t: 'noShow'; releaseAt: number }
  | { t: 'cancelBefore'; at: number }
  | { t: 'cancelAfter'; at: number }
  | { t: 'checkIn'; at: number; checkOut: number | null };
interface Booked {
  id: string;
  project: ProjectModel;
  asset: AssetModel;
  start: number;
  end: number;
  outcome: Outcome;
}
interface Action {
  at: number;
  booking: Booked;
  action: 'cancel' | 'check-in' | 'check-out';
}

/** Concrete outcome of a generated one for a booking accepted at `createdAt`. */
function resolveOutcome(o: OutcomeGen, start: number, end: number, expire: number, createdAt: number): Outcome {
  switch (o.t) {
    case 'noShow':
      return { t: 'noShow', releaseAt: start + expire * MINUTE };
    case 'cancelBefore':
      return { t: 'cancelBefore', at: Math.max(createdAt + MINUTE, start - o.lead * MINUTE) };
    case 'cancelAfter':
      return { t: 'cancelAfter', at: start + Math.min(o.after, expire - 1) * MINUTE };
    case 'checkIn': {
      const at = start + Math.min(o.at, expire - 1) * MINUTE;
      const out = o.checkOut === null ? null : Math.max(at, start) + o.checkOut * MINUTE;
      return { t: 'checkIn', at, checkOut: out !== null && out < end ? out : null };
    }
  }
}

function actionsOf(b: Booked): Action[] {
  const o = b.outcome;
  if (o.t === 'cancelBefore' || o.t === 'cancelAfter') return [{ at: o.at, booking: b, action: 'cancel' }];
  if (o.t === 'checkIn') {
    const list: Action[] = [{ at: o.at, booking: b, action: 'check-in' }];
    if (o.checkOut !== null) list.push({ at: o.checkOut, booking: b, action: 'check-out' });
    return list;
  }
  return [];
}

function localStart(project: ProjectModel, dstDay: DateTime, g: BookingGen): number | null {
  const day = dstDay.plus({ days: g.day });
  const asset = project.assets[g.room % project.assets.length];
  const hours = asset.days[day.weekday - 1];
  // Aim inside the day's hours most of the time (refusals are simply left out).
  const open = hours ? hours.open / 15 : 0;
  const width = hours ? Math.max(1, hours.close / 15 - open - g.slots + 1) : 96;
  const slot = open + (g.slot % width);
  const dt = DateTime.fromObject(
    { year: day.year, month: day.month, day: day.day, hour: Math.floor(slot / 4), minute: (slot % 4) * 15 },
    { zone: project.zone },
  );
  return dt.isValid ? dt.toMillis() : null;
}

async function book(svc: TestService, p: ProjectModel, a: AssetModel, start: number, end: number): Promise<string | null> {
  const res = await svc.request('POST', '/meetings', {
    token: p.token,
    body: { meetingRoomId: a.id, title: 'Property', startDateTime: iso(start), endDateTime: iso(end) },
  });
  if (res.status === 201) {
    expect(res.body.data.status, res.text).toBe('active');
    return res.body.data._id as string;
  }
  expect([400, 409, 422], `POST /meetings ${iso(start)}..${iso(end)}: ${res.text}`).toContain(res.status);
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// The direct computation

interface Acc {
  availableMinutes: number;
  bookedMinutes: number;
  occupiedMinutes: number;
  releasedMinutes: number;
  bookings: number;
  checkIns: number;
  noShows: number;
  cancellations: number;
  walkIns: number;
  reached: number;
}
const emptyAcc = (): Acc => ({
  availableMinutes: 0,
  bookedMinutes: 0,
  occupiedMinutes: 0,
  releasedMinutes: 0,
  bookings: 0,
  checkIns: 0,
  noShows: 0,
  cancellations: 0,
  walkIns: 0,
  reached: 0,
});

interface Local {
  date: string;
  weekday: number;
  hour: number;
  wallMinute: number;
}
type GroupBy = 'asset' | 'day' | 'hourOfWeek';

class Expectation {
  private readonly cache = new Map<number, Local>();
  readonly groups: Record<GroupBy, Map<string, Acc>> = { asset: new Map(), day: new Map(), hourOfWeek: new Map() };

  constructor(
    private readonly project: ProjectModel,
    readonly from: string,
    readonly to: string,
  ) {
    for (const a of project.assets) this.groups.asset.set(a.id, emptyAcc());
    for (let d = DateTime.fromISO(from); d.toISODate()! <= to; d = d.plus({ days: 1 })) this.groups.day.set(d.toISODate()!, emptyAcc());
    for (let w = 1; w <= 7; w++) for (let h = 0; h < 24; h++) this.groups.hourOfWeek.set(`${w}-${h}`, emptyAcc());
  }

  local(ms: number): Local {
    let l = this.cache.get(ms);
    if (!l) {
      const dt = DateTime.fromMillis(ms, { zone: this.project.zone });
      l = { date: dt.toISODate()!, weekday: dt.weekday, hour: dt.hour, wallMinute: dt.hour * 60 + dt.minute };
      this.cache.set(ms, l);
    }
    return l;
  }

  inRange(l: Local): boolean {
    return l.date >= this.from && l.date <= this.to;
  }

  /**
   * Is minute `m` (local `l`) inside the asset's open time? A wall-clock time of day takes effect at the first
   * minute of its local day whose wall clock shows it or later (a repeated time: its first occurrence; a skipped
   * one: the first minute after the jump), as the booking rules judge opening hours; every minute between an
   * opening and its closing counts, so on a 25-hour day a room open through the repeated hour has it twice.
   */
  available(a: AssetModel, l: Local, m: number): boolean {
    return this.openInstants(a, l).some(([from, to]) => m >= from && m < to);
  }

  private readonly opens = new Map<string, [number, number][]>();
  private readonly dayMinutes = new Map<string, { ms: number; wall: number }[]>();

  private openInstants(a: AssetModel, l: Local): [number, number][] {
    const cached = this.opens.get(`${a.id} ${l.date}`);
    if (cached) return cached;
    const h = a.days[l.weekday - 1];
    const wallIntervals: [number, number][] = [];
    if (h) {
      let from = h.open;
      for (const b of h.breaks) {
        if (b.start > from) wallIntervals.push([from, b.start]);
        from = Math.max(from, b.end);
      }
      if (h.close > from) wallIntervals.push([from, h.close]);
    }
    const minutes = this.minutesOf(l.date);
    const dayEnd = minutes[minutes.length - 1].ms + MINUTE;
    const takesEffect = (wall: number) => minutes.find((x) => x.wall >= wall)?.ms ?? dayEnd;
    const out = wallIntervals.map(([f, t]) => [takesEffect(f), takesEffect(t)] as [number, number]);
    this.opens.set(`${a.id} ${l.date}`, out);
    return out;
  }

  /** Every minute of a local day, in order, with its wall-clock minute. */
  private minutesOf(date: string): { ms: number; wall: number }[] {
    let list = this.dayMinutes.get(date);
    if (!list) {
      const start = DateTime.fromISO(date, { zone: this.project.zone }).startOf('day');
      const end = start.plus({ days: 1 }).toMillis();
      list = [];
      for (let m = start.toMillis(); m < end; m += MINUTE) list.push({ ms: m, wall: this.local(m).wallMinute });
      this.dayMinutes.set(date, list);
    }
    return list;
  }

  private add(a: AssetModel, l: Local, f: (acc: Acc) => void): void {
    f(this.groups.asset.get(a.id)!);
    f(this.groups.day.get(l.date)!);
    f(this.groups.hourOfWeek.get(`${l.weekday}-${l.hour}`)!);
  }

  /** Adds one to `field` for every minute of [from, to) inside the range and the asset's available time. */
  minutes(
    a: AssetModel,
    from: number,
    to: number,
    field: 'availableMinutes' | 'bookedMinutes' | 'occupiedMinutes' | 'releasedMinutes',
  ): void {
    for (let m = floorMinute(from); m < to; m += MINUTE) {
      const l = this.local(m);
      if (this.inRange(l) && this.available(a, l, m)) this.add(a, l, (acc) => acc[field]++);
    }
  }

  rangeInstants(): [number, number] {
    const z = this.project.zone;
    const start = DateTime.fromISO(this.from, { zone: z }).startOf('day').toMillis();
    const end = DateTime.fromISO(this.to, { zone: z }).startOf('day').plus({ days: 1 }).toMillis();
    return [start, end];
  }

  booking(b: Booked): void {
    const o = b.outcome;
    let actualEnd = b.end;
    if (o.t === 'noShow') actualEnd = Math.min(b.end, floorMinute(o.releaseAt));
    if (o.t === 'cancelAfter') actualEnd = floorMinute(o.at);
    if (o.t === 'checkIn' && o.checkOut !== null) actualEnd = Math.min(b.end, Math.max(b.start, floorMinute(o.checkOut)));
    if (o.t !== 'cancelBefore') {
      this.minutes(b.asset, b.start, actualEnd, 'bookedMinutes');
      this.minutes(b.asset, actualEnd, b.end, 'releasedMinutes');
    }
    if (o.t === 'checkIn') this.minutes(b.asset, Math.max(b.start, floorMinute(o.at)), actualEnd, 'occupiedMinutes');
    const l = this.local(floorMinute(b.start));
    if (!this.inRange(l)) return;
    this.add(b.asset, l, (acc) => {
      acc.bookings++;
      if (o.t === 'checkIn') acc.checkIns++;
      if (o.t === 'noShow') acc.noShows++;
      if (o.t === 'cancelBefore') acc.cancellations++;
      else acc.reached++;
    });
  }
}

function expected(project: ProjectModel, from: string, to: string, bookings: Booked[]): Expectation {
  const e = new Expectation(project, from, to);
  const [start, end] = e.rangeInstants();
  for (const a of project.assets) e.minutes(a, start, end, 'availableMinutes');
  for (const b of bookings) if (b.project === project) e.booking(b);
  return e;
}

const ratio = (n: number, d: number) => (d === 0 ? null : Math.round((n / d) * 1e9) / 1e9);
const round = (x: unknown) => (typeof x === 'number' ? Math.round(x * 1e9) / 1e9 : x);

function figures(acc: Acc) {
  const { reached, ...rest } = acc;
  return {
    ...rest,
    utilisation: ratio(acc.bookedMinutes, acc.availableMinutes),
    occupancy: ratio(acc.occupiedMinutes, acc.availableMinutes),
    noShowRate: ratio(acc.noShows, reached),
  };
}

function groupKey(groupBy: GroupBy, g: Record<string, unknown>): string {
  if (groupBy === 'asset') return String(g.assetId);
  if (groupBy === 'day') return String(g.day);
  return `${String(g.weekday)}-${String(g.hour)}`;
}

// ---------------------------------------------------------------------------------------------------------
// Driving the service

async function clockTo(svc: TestService, state: { clock: number }, ms: number): Promise<void> {
  if (ms <= state.clock) return;
  await setClock(svc, iso(ms));
  state.clock = ms;
}

async function act(svc: TestService, a: Action): Promise<void> {
  const res: HttpResult = await svc.request('POST', `/meetings/${a.booking.id}/${a.action}`, { token: a.booking.project.token, body: {} });
  expect(res.status, `${a.action} of ${a.booking.id} at ${iso(a.at)}: ${res.text}`).toBe(202);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The history entries the test's record implies: [action, source, instant] (the instant to the minute). */
function recordOf(b: Booked): [string, string, number][] {
  const o = b.outcome;
  if (o.t === 'noShow') return [['cancel', 'system', o.releaseAt]];
  if (o.t === 'cancelBefore' || o.t === 'cancelAfter') return [['cancel', 'user', o.at]];
  return [['check-in', 'user', o.at], ...(o.checkOut !== null ? [['check-out', 'user', o.checkOut] as [string, string, number]] : [])];
}

/** Waits for the booking to end, then checks that the service did what the test's record says. */
async function settleBooking(svc: TestService, b: Booked): Promise<void> {
  let meeting: { status: string; histories: { action: string; source: string; at: string }[] } | undefined;
  await until(`booking ${b.id} to end`, async () => {
    const res = await svc.request('GET', `/meetings/${b.id}`, { token: b.project.token });
    meeting = res.body?.data;
    return ['done', 'cancelled'].includes(meeting?.status ?? '');
  });
  const seen = meeting!.histories
    .filter((h) => ['cancel', 'check-in', 'check-out'].includes(h.action))
    .map((h) => [h.action, h.source, floorMinute(Date.parse(h.at))]);
  const want = recordOf(b).map(([action, source, at]) => [action, source, floorMinute(at)]);
  expect(seen, `histories of ${b.id} (${iso(b.start)}..${iso(b.end)}) against the test's record`).toEqual(want);
  expect(meeting!.status).toBe(b.outcome.t === 'checkIn' ? 'done' : 'cancelled');
}

async function settle(svc: TestService, bookings: Booked[], projects: ProjectModel[]): Promise<void> {
  for (const b of bookings) await settleBooking(svc, b);
  for (const p of projects) {
    await until(`analytics of ${p.key} to catch up`, async () => {
      const res = await svc.ops('GET', `/ops/v1/analytics/status${qs({ project: p.id })}`);
      expect(res.status, res.text).toBe(200);
      return res.body.data.pendingBookings === 0 && res.body.data.pendingWalkIns === 0;
    });
  }
}

/** Lines "group field: expected X, got Y" for every figure that differs (and groups missing on either side). */
function differences(got: Record<string, unknown>[], want: Record<string, unknown>[]): string[] {
  const lines: string[] = [];
  const byKey = new Map(got.map((r) => [r.key, r]));
  if (got.map((r) => r.key).join() !== want.map((r) => r.key).join()) {
    lines.push(`groups: expected ${want.map((r) => String(r.key)).join(',')}, got ${got.map((r) => String(r.key)).join(',')}`);
  }
  for (const w of want) {
    const g = byKey.get(w.key);
    for (const f of FIGURES) {
      if (g?.[f] !== w[f]) lines.push(`${String(w.key)} ${f}: expected ${String(w[f])}, got ${String(g?.[f])}`);
    }
  }
  return lines;
}

async function compare(svc: TestService, e: Expectation, project: ProjectModel, groupBy: GroupBy, context: string): Promise<void> {
  const res = await svc.ops('GET', `/ops/v1/analytics/utilisation${qs({ project: project.id, from: e.from, to: e.to, groupBy })}`);
  expect(res.status, res.text).toBe(200);
  const rows = res.body.data as Record<string, unknown>[];
  const got = rows.map((r) => ({
    key: groupKey(groupBy, r.group as Record<string, unknown>),
    ...Object.fromEntries(FIGURES.map((f) => [f, round(r[f])])),
  }));
  const want = [...e.groups[groupBy].entries()].map(([key, acc]) => ({ key, ...figures(acc) }));
  if (groupBy === 'asset') {
    want.sort((a, b) => (a.key < b.key ? -1 : 1));
    for (const r of rows) {
      const a = project.assets.find((x) => x.id === (r.group as { assetId: string }).assetId);
      expect(r.group, `${context}: asset group`).toMatchObject({ floorId: a?.floorId, zoneId: a?.zoneId });
    }
  }
  const where = `groupBy=${groupBy} (project ${project.key}, ${project.zone}, ${e.from}..${e.to})`;
  const diff = differences(got, want);
  if (diff.length) throw new Error(`${context}\n${where}: endpoint differs from the direct computation\n${diff.join('\n')}`);
}

// ---------------------------------------------------------------------------------------------------------

describe('GET /ops/v1/analytics/utilisation agrees with a direct computation (property)', () => {
  let svc: TestService;
  let run = 0;
  const state = { clock: 0 };

  beforeAll(async () => {
    svc = await startTestService();
    state.clock = floorMinute(await serviceNow(svc));
  });
  afterAll(async () => {
    await svc?.close();
  });

  async function property(s: ScenarioGen): Promise<void> {
    run++;
    const dst = nextDstDay(s.zone, state.clock + (SPAN + 3) * 86_400_000);
    const from = dst.minus({ days: SPAN }).toISODate()!;
    const to = dst.plus({ days: SPAN }).toISODate()!;
    // The site exists before the range: the clock stands at noon, the day before `from`.
    await clockTo(
      svc,
      state,
      dst
        .minus({ days: SPAN + 1 })
        .set({ hour: 12 })
        .toMillis(),
    );
    const projects = await buildSite(svc, run, s);
    const createdAt = state.clock;
    const bookings: Booked[] = [];
    for (const g of s.bookings) {
      const project = g.room % (s.rooms.length + (s.flatRoom ? 1 : 0)) < s.rooms.length ? projects[0] : projects[projects.length - 1];
      const asset = project.assets[g.room % project.assets.length];
      const start = localStart(project, DateTime.fromISO(dst.toISODate()!, { zone: project.zone }), g);
      if (start === null) continue;
      const end = start + g.slots * 15 * MINUTE;
      const id = await book(svc, project, asset, start, end);
      if (!id) continue;
      bookings.push({ id, project, asset, start, end, outcome: resolveOutcome(g.outcome, start, end, asset.expire, createdAt) });
    }
    const actions = bookings.flatMap(actionsOf).sort((a, b) => a.at - b.at);
    for (const a of actions) {
      await clockTo(svc, state, a.at);
      await act(svc, a);
    }
    const lastEnd = Math.max(0, ...projects.map((p) => DateTime.fromISO(to, { zone: p.zone }).plus({ days: 1 }).toMillis()));
    await clockTo(svc, state, Math.max(lastEnd, ...bookings.map((b) => b.end)) + 60 * MINUTE);
    await settle(svc, bookings, projects);
    const context = describeRun(run, s, projects, bookings);
    for (const p of projects) {
      const e = expected(p, from, to, bookings);
      for (const groupBy of ['asset', 'day', 'hourOfWeek'] as const) await compare(svc, e, p, groupBy, context);
    }
  }

  it('by asset, day and hourOfWeek, to the minute, across a DST change', async () => {
    const seed = process.env.ANALYTICS_PROP_SEED ? Number(process.env.ANALYTICS_PROP_SEED) : undefined;
    const result = await fc.check(fc.asyncProperty(scenarioGen, property), {
      numRuns: Number(process.env.ANALYTICS_PROP_RUNS ?? 15),
      ...(seed !== undefined ? { seed } : {}),
      endOnFailure: process.env.ANALYTICS_PROP_SHRINK !== '1',
    });
    if (result.failed) {
      const cause = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
      const message = `${fc.defaultReportMessage(result) ?? 'property failed'}\n${cause}`;
      console.error(`analytics property failed: seed=${result.seed} path=${result.counterexamplePath ?? ''}\n${message}`);
      throw new Error(`seed=${result.seed} (ANALYTICS_PROP_SEED=${result.seed} to replay)\n${message}`);
    }
  }, 300_000);
});

describe('the direct computation itself', () => {
  const allDay = { open: 0, close: 1440, breaks: [] };
  const asset: AssetModel = { key: 'x', id: 'a1', floorId: 'f', zoneId: 'z', expire: 15, days: Array(7).fill(allDay) };
  const project: ProjectModel = { key: 'p', id: 'p', zone: 'Europe/Berlin', token: '', assets: [asset] };

  it('counts 23 and 25 hour days, and splits the repeated hour into one hourOfWeek row', () => {
    const spring = expected(project, '2027-03-27', '2027-03-29', []);
    expect([...spring.groups.day.values()].map((a) => a.availableMinutes)).toEqual([1440, 1380, 1440]);
    expect(spring.groups.hourOfWeek.get('7-2')!.availableMinutes).toBe(0);
    const autumn = expected(project, '2027-10-31', '2027-10-31', []);
    expect(autumn.groups.day.get('2027-10-31')!.availableMinutes).toBe(1500);
    expect(autumn.groups.hourOfWeek.get('7-2')!.availableMinutes).toBe(120);
  });

  it('an opening inside the repeated hour takes effect at its first occurrence; inside the skipped hour, after the jump', () => {
    const a: AssetModel = { ...asset, days: Array(7).fill({ open: 150, close: 1440, breaks: [] }) };
    const p: ProjectModel = { ...project, assets: [a] };
    // 02:30 CEST to midnight: 30 minutes, the repeated hour 02:00-03:00 CET, then 21 hours.
    expect(expected(p, '2027-10-31', '2027-10-31', []).groups.asset.get('a1')!.availableMinutes).toBe(30 + 60 + 21 * 60);
    expect(expected(p, '2027-03-28', '2027-03-28', []).groups.asset.get('a1')!.availableMinutes).toBe(21 * 60);
  });

  it('places a no-show and an early check-out per minute, inside the hours and outside breaks', () => {
    const hours = { open: 9 * 60, close: 18 * 60, breaks: [{ start: 12 * 60, end: 13 * 60 }] };
    const a: AssetModel = { ...asset, days: Array(7).fill(hours) };
    const p: ProjectModel = { ...project, assets: [a] };
    const t = (hhmm: string) => DateTime.fromISO(`2027-10-31T${hhmm}`, { zone: p.zone }).toMillis();
    const noShow: Booked = {
      id: 'b1',
      project: p,
      asset: a,
      start: t('11:30'),
      end: t('13:30'),
      outcome: { t: 'noShow', releaseAt: t('11:45') },
    };
    const early: Booked = {
      id: 'b2',
      project: p,
      asset: a,
      start: t('14:00'),
      end: t('16:00'),
      outcome: { t: 'checkIn', at: t('13:50') + 20_000, checkOut: t('15:10') + 59_000 },
    };
    const row = expected(p, '2027-10-31', '2027-10-31', [noShow, early]).groups.asset.get('a1')!;
    expect(row).toMatchObject({ availableMinutes: 480, bookedMinutes: 15 + 70, occupiedMinutes: 70, releasedMinutes: 15 + 30 + 50 });
    expect(figures(row)).toMatchObject({ bookings: 2, checkIns: 1, noShows: 1, noShowRate: 0.5 });
  });
});

/** A readable account of one run, for failure messages. */
function describeRun(run: number, s: ScenarioGen, projects: ProjectModel[], bookings: Booked[]): string {
  const lines = [`run ${run}: zone ${s.zone}`];
  for (const p of projects) {
    lines.push(`project ${p.key} (${p.zone})`);
    for (const a of p.assets) {
      const hours = a.days.map((d, i) =>
        d ? `${WEEKDAYS[i]} ${d.open}-${d.close}${d.breaks.map((b) => ` break ${b.start}-${b.end}`).join('')}` : `${WEEKDAYS[i]} closed`,
      );
      lines.push(`  ${a.key} ${a.id} expire ${a.expire}: ${hours.join('; ')} (wall-clock minutes)`);
    }
  }
  for (const b of bookings) {
    const o = b.outcome;
    const detail =
      o.t === 'noShow'
        ? `no-show released ${iso(o.releaseAt)}`
        : o.t === 'checkIn'
          ? `checked in ${iso(o.at)}${o.checkOut !== null ? `, out ${iso(o.checkOut)}` : ''}`
          : `${o.t} at ${iso(o.at)}`;
    lines.push(`  booking ${b.id} ${b.asset.key} ${iso(b.start)}..${iso(b.end)}: ${detail}`);
  }
  return lines.join('\n');
}
