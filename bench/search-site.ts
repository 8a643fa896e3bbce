/**
 * The generated site of the search benchmark (bench/search.ts): one project in
 * Asia/Bangkok, rooms and desks applied through POST /ops/v1/apply, and bookings
 * inserted through MeetingRepository.insertHeld in a few big transactions.
 */
import { plainBookingColumns } from '../src/modules/booking/index.js';
import { sql } from 'kysely';
import { BENCH_OPS_TOKEN } from './support.js';
import { MeetingRepository, type NewMeeting, type NewSlot } from '../src/modules/booking/meeting-repository.js';
import { newId } from '../src/platform/ids.js';
import type { Services } from '../src/services.js';

/** What seeding needs of a running service: its services (in this process) and HTTP calls to it. */
export interface SeedTarget {
  services: Services;
  call(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
}

const ROOMS = Number(process.env.BENCH_ROOMS || 1000);
const DESKS = Number(process.env.BENCH_DESKS || 2000);
const BOOKINGS = Number(process.env.BENCH_BOOKINGS || 100_000);
const TX_COUNT = 4;
/** Assets per apply document; the whole site fits one document under the default 15 MB body limit. */
const APPLY_BATCH = Number(process.env.BENCH_APPLY_BATCH || 3000);

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
const TZ_OFFSET = 7 * 60 * MINUTE; // Asia/Bangkok, no DST
const OPEN = 7 * 60; // 07:00, minutes of the local day
const CLOSE = 22 * 60; // 22:00
const SPREAD_DAYS = 45;

// ---------------------------------------------------------------------------
// Deterministic generator
// ---------------------------------------------------------------------------

function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(20240611);
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const LUNCH = { start: '12:00:00', end: '13:00:00' };

function weekConfig(withBreak: boolean) {
  const day = { availableTime: { start: '07:00:00', end: '22:00:00' }, ...(withBreak ? { breakTimes: [LUNCH] } : {}) };
  return Object.fromEntries(WEEKDAYS.map((d) => [d, day]));
}

function roomConfig(withBreak: boolean, variant: number) {
  return {
    dayConfig: weekConfig(withBreak),
    minimumLeadTime: { minutes: variant === 0 ? 0 : 30, hours: 0, days: 0 },
    maxAdvanceBookingDays: variant === 2 ? 30 : 90,
    maxDurationMinutes: 480,
    bookMultipleDayRoom: false,
    meetingConfig: { preStartMinutes: 15, postStartWarnMinutes: 10, postStartExpireMinutes: 15, preEndMinutes: 15 },
  };
}

// ---------------------------------------------------------------------------
// Site document
// ---------------------------------------------------------------------------

const ZONES = 4;
const FLOORS_PER_ZONE = 10;
const APP_SECRET = 'bench-secret-0123456789abcdef0123456789';

/** Each asset's own rectangle on its floor plan. */
function outline(i: number) {
  const x = (i % 8) * 12 + 2;
  const y = (Math.floor(i / 8) % 8) * 12 + 2;
  return [
    { xPct: x, yPct: y },
    { xPct: x + 10, yPct: y },
    { xPct: x + 10, yPct: y + 10 },
    { xPct: x, yPct: y + 10 },
  ];
}

interface GenRoom {
  key: string;
  floor: string;
  withBreak: boolean;
  doc: Record<string, unknown>;
}

function generateSite() {
  const zones = Array.from({ length: ZONES }, (_, z) => ({ key: `z${z}`, project: 'p', name: `Tower ${String.fromCharCode(65 + z)}` }));
  const floors = zones.flatMap((z, zi) =>
    Array.from({ length: FLOORS_PER_ZONE }, (_, f) => ({ key: `f${zi}-${f + 1}`, zone: z.key, name: `${f + 1}F` })),
  );
  const rooms: GenRoom[] = Array.from({ length: ROOMS }, (_, i) => {
    const floor = floors[i % floors.length].key;
    const withBreak = rand() < 0.4;
    const cleanup15 = rand() < 0.3;
    const doc = {
      key: `r${i}`,
      floor,
      name: `Room ${String(i).padStart(4, '0')}`,
      email: `room${i}@rooms.example`,
      capacity: int(2, 20),
      status: rand() < 0.03 ? 'inactive' : 'active',
      type: 'normal',
      isPublic: rand() < 0.9,
      ...(cleanup15 ? { cleanupMinutes: 15 } : {}),
      chargeRate: { perHour: pick([0, 0, 200, 500]), perDay: 0 },
      equipmentsAvailability: { camera: rand() < 0.6, display: true, mic: rand() < 0.6, projector: rand() < 0.3, speaker: rand() < 0.6 },
      facilities: rand() < 0.5 ? ['whiteboard'] : ['whiteboard', 'video-conference'],
      pictureUrls: [`https://cdn.example/rooms/${i}.jpg`],
      polygon: outline(i),
      config: roomConfig(withBreak, i % 3),
    };
    return { key: doc.key, floor, withBreak, doc };
  });
  const desks = Array.from({ length: DESKS }, (_, i) => ({
    key: `d${i}`,
    floor: floors[i % floors.length].key,
    name: `Desk ${String(i).padStart(4, '0')}`,
    index: i + 1,
    email: `desk${i}@desks.example`,
    status: rand() < 0.02 ? 'suspended' : 'active',
    isPublic: true,
    capacity: 1,
    chargeRate: { perHour: 50, perDay: 300 },
    facilities: ['monitor'],
    pictureUrls: [],
    polygon: outline(i),
    config: { dayConfig: weekConfig(false), maxAdvanceBookingDays: 90, maxDurationMinutes: 900 },
  }));
  const base = {
    brands: [{ key: 'b', name: 'Bench Brand' }],
    projects: [{ key: 'p', brand: 'b', name: 'Bench Tower', timezone: 'Asia/Bangkok', currency: 'THB', defaultCleanupMinutes: 10 }],
    zones,
    floors,
    users: [
      { key: 'organizer', email: 'organizer@bench.example', name: 'Bench Organizer', memberships: [{ project: 'p', role: 'member' }] },
    ],
    apps: [
      {
        key: 'app',
        appId: 'bench-search-app',
        appSecret: APP_SECRET,
        name: 'Bench search',
        projects: ['p'],
        projectRoles: [{ project: 'p', permissions: ['MEETING_UPDATE'] }],
      },
    ],
  };
  return { base, rooms, desks };
}

// ---------------------------------------------------------------------------
// Bookings
// ---------------------------------------------------------------------------

interface BenchAsset {
  id: string;
  kind: 'room' | 'desk';
  withBreak: boolean;
  /** Gap kept after each booking: its cleaning time (rooms 10 or 15, desks 10). */
  gapMinutes: number;
}

/** Local-day number (days since 1970-01-01 on the Bangkok wall clock). */
const localDay = (t: number) => Math.floor((t + TZ_OFFSET) / DAY);
const instantOf = (day: number, minutes: number) => day * DAY + minutes * MINUTE - TZ_OFFSET;

/**
 * `count` bookings per asset, non-overlapping including the cleaning gap, inside
 * 07:00-22:00 (and outside the lunch break where the asset has one), 30-120 minutes.
 */
function bookingsFor(asset: BenchAsset, count: number, today: number): { start: number; end: number }[] {
  const taken = new Map<number, [number, number][]>(); // local day -> [from, to) minutes incl. gap
  const out: { start: number; end: number }[] = [];
  for (let tries = 0; out.length < count && tries < count * 50; tries++) {
    const day = today + int(-SPREAD_DAYS, SPREAD_DAYS);
    const duration = int(2, 8) * 15;
    const from = OPEN + int(0, (CLOSE - OPEN - duration) / 15) * 15;
    const to = from + duration;
    if (asset.withBreak && from < 13 * 60 && 12 * 60 < to) continue;
    const list = taken.get(day) ?? [];
    if (list.some(([a, b]) => from < b && a < to + asset.gapMinutes)) continue;
    list.push([from, to + asset.gapMinutes]);
    taken.set(day, list);
    out.push({ start: instantOf(day, from), end: instantOf(day, to) });
  }
  return out;
}

export interface SearchSite {
  projectId: string;
  /** Local day number of the service's now. */
  today: number;
  /** Bearer header of an app token with a role on the project. */
  headers: Record<string, string>;
  counts: { rooms: number; desks: number; bookings: number };
  /** The i-th windowed room search (path and query), cycling through `windowCount` windows. */
  roomPath(i: number): string;
  /** The i-th windowed desk page (limit 50). */
  deskPath(i: number): string;
  windowCount: number;
}

/**
 * The request mix (exported so a process that did not seed can rebuild it from
 * the project id and day): 64 windows of 30-120 minutes between 08:00 and 20:00 local on
 * each of the next 7 days (some overlap a room's lunch break, as real searches do).
 */
export function requestMix(projectId: string, today: number) {
  const windows = Array.from({ length: 64 }, (_, i) => {
    const day = today + 1 + (i % 7);
    const from = (8 + ((i * 5) % 12)) * 60 + (i % 2) * 30;
    const len = [30, 60, 60, 90, 120][i % 5];
    const iso = (minutes: number) => encodeURIComponent(new Date(instantOf(day, minutes)).toISOString());
    return `projectId=${projectId}&startDateTime=${iso(from)}&endDateTime=${iso(from + len)}`;
  });
  return {
    windowCount: windows.length,
    roomPath: (i: number) => `/meeting-rooms?${windows[i % windows.length]}`,
    deskPath: (i: number) => `/desks?${windows[i % windows.length]}&limit=50`,
  };
}

const fmtMs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function seedSearchSite(svc: SeedTarget, log: (line: string) => void = console.log): Promise<SearchSite> {
  const engine = svc.services.storage.engine;
  const db = svc.services.storage.db;
  log(`engine: ${engine}; ${ROOMS} rooms, ${DESKS} desks, ${BOOKINGS} bookings`);

  // 1. Site through the apply endpoint (in batches of assets if asked to).
  const tApply = performance.now();
  const { base, rooms, desks } = generateSite();
  const assetDocs: { rooms?: unknown[]; desks?: unknown[] }[] = [
    ...rooms.map((r) => ({ rooms: [r.doc] })),
    ...desks.map((d) => ({ desks: [d] })),
  ];
  const idsByKind: Record<string, Record<string, string>> = {};
  let batches = 0;
  for (let i = 0; i < Math.max(1, assetDocs.length); i += APPLY_BATCH) {
    const chunk = assetDocs.slice(i, i + APPLY_BATCH);
    const doc = { ...base, rooms: chunk.flatMap((c) => c.rooms ?? []), desks: chunk.flatMap((c) => c.desks ?? []) };
    const applied = await svc.call('POST', '/ops/v1/apply', doc, BENCH_OPS_TOKEN);
    if (applied.status !== 200) throw new Error(`apply failed (${applied.status}): ${JSON.stringify(applied.body).slice(0, 2000)}`);
    for (const [kind, map] of Object.entries(applied.body.data.idsByKind as Record<string, Record<string, string>>)) {
      idsByKind[kind] = { ...(idsByKind[kind] ?? {}), ...map };
    }
    batches++;
  }
  const projectId = idsByKind.projects.p;
  const organizerId = idsByKind.users.organizer;
  const appDbId = idsByKind.apps.app;
  log(`apply: ${batches} document(s) in ${fmtMs(performance.now() - tApply)}`);

  const existing = await db
    .selectFrom('meetings')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  if (Number(existing.n) > 0)
    throw new Error(`the database already holds ${existing.n} bookings of the bench project; give BENCH_DATABASE_URL an empty database`);

  // 2. Bookings straight through the repository, in a few big transactions.
  const tSeed = performance.now();
  const now = svc.services.clock.now();
  const today = localDay(now);
  const assets: BenchAsset[] = [
    ...rooms.map((r) => ({
      id: idsByKind.rooms[r.key],
      kind: 'room' as const,
      withBreak: r.withBreak,
      gapMinutes: (r.doc.cleanupMinutes as number | undefined) ?? 10,
    })),
    ...desks.map((d) => ({ id: idsByKind.desks[d.key], kind: 'desk' as const, withBreak: false, gapMinutes: 10 })),
  ];
  // Rooms are busier than desks: 60% of the bookings go to rooms.
  const roomShare = Math.round(BOOKINGS * 0.6);
  const perAsset = (i: number) => {
    const [n, total, offset] = i < ROOMS ? [ROOMS, roomShare, 0] : [DESKS, BOOKINGS - roomShare, ROOMS];
    const k = i - offset;
    return Math.floor(((k + 1) * total) / n) - Math.floor((k * total) / n);
  };
  const pinEnc = svc.services.secretBox.seal('482913');
  const rows: { meeting: NewMeeting; slot: NewSlot }[] = [];
  assets.forEach((a, i) => {
    for (const b of bookingsFor(a, perAsset(i), today)) {
      const id = newId(now);
      rows.push({
        meeting: {
          id,
          project_id: projectId,
          asset_kind: a.kind,
          asset_id: a.id,
          room_id: a.kind === 'room' ? a.id : null,
          desk_id: a.kind === 'desk' ? a.id : null,
          title: `Bench ${a.kind} booking`,
          body: '',
          start_at: b.start,
          end_at: b.end,
          booked_end_at: b.end,
          span_end_at: b.end,
          all_day: false,
          time_period: null,
          status: 'active',
          pin_enc: pinEnc,
          organizer_user_id: organizerId,
          organizer: {} as NewMeeting['organizer'],
          attendees: [],
          ...plainBookingColumns(),
          app_id: appDbId,
          booked_via: 'api',
          created_at: now,
          updated_at: now,
        },
        slot: {
          id: newId(now),
          meeting_id: id,
          project_id: projectId,
          asset_id: a.id,
          occurrence_index: 0,
          start_at: b.start,
          end_at: b.end,
        },
      });
    }
  });
  const perTx = Math.ceil(rows.length / TX_COUNT);
  for (let i = 0; i < rows.length; i += perTx) {
    await db.transaction().execute(async (trx) => {
      for (const r of rows.slice(i, i + perTx)) await new MeetingRepository(trx).insertHeld(r.meeting, [r.slot]);
    });
  }
  // PostgreSQL's autovacuum would analyze the freshly loaded tables within a minute; do it now.
  // SQLite never analyzes on its own, so it is left as production would have it.
  if (engine === 'postgres') await sql`analyze`.execute(db);
  log(`bookings: ${rows.length} inserted in ${TX_COUNT} transactions in ${fmtMs(performance.now() - tSeed)}`);

  const token = await svc.call('POST', '/auth/accessToken', {
    grant_type: 'app_credentials',
    app_id: 'bench-search-app',
    app_secret: APP_SECRET,
  });
  if (!token.body.access_token) throw new Error(`token failed: ${JSON.stringify(token.body)}`);
  return {
    projectId,
    today,
    headers: { authorization: `Bearer ${token.body.access_token}` },
    counts: { rooms: ROOMS, desks: DESKS, bookings: rows.length },
    ...requestMix(projectId, today),
  };
}
