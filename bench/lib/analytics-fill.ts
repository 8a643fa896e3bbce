/**
 * bench:analytics, the data: the site document (one project in Asia/Bangkok, 1,000 rooms on 20 floors in
 * 4 zones, weekday hours with a lunch break, short Saturdays, closed Sundays) and a year of past bookings
 * written straight into `meetings`, `meeting_histories` and `meeting_slots` with bulk SQL, one transaction
 * per local day (prepared statements on SQLite, INSERT … SELECT FROM unnest(…) on PostgreSQL).
 *
 * Each booking holds the rows a real one would once its story is over:
 * - checked in (70 %): `create`, `check-in` (source user, from 10 minutes before to 12 after the start),
 *   for a fifth of them an early `check-out` (old_end_at the booked end, new_end_at the check-out minute);
 *   status `done`, end_at the actual end, booked_end_at the booked one, a slot up to the actual end;
 * - no-show (10 %): `create`, `cancel` by the system 15 minutes after the start with the no-show reason;
 * - cancelled before the start by its organizer (8 %): `create`, `cancel` (source user);
 * - cancelled by its organizer shortly after the start without a check-in (12 %).
 * Cancelled bookings hold no slot. Every history entry's analytics_at is left null, as a real change leaves it.
 */
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { DateTime } from 'luxon';
import { newId } from '../../src/platform/ids.js';
import type { Engine } from './databases.js';

export const TZ = 'Asia/Bangkok';
export const ROOMS = 1000;
export const FLOORS = 20;
export const ZONES = 4;
export const ORGANIZERS = 200;
export const APP_ID = 'bench-analytics-app';
export const APP_SECRET = 'bench-analytics-secret-0123456789abcdef';
const NO_SHOW_REASON = 'No-show — auto-cancelled by system';
const MINUTE = 60_000;

const WEEKDAY_HOURS = { availableTime: { start: '08:00', end: '20:00' }, breakTimes: [{ start: '12:00', end: '13:00' }] };
/** Open minutes of each ISO weekday (1 = Monday), the break taken out: what the fill books inside. */
const OPEN_SEGMENTS: Record<number, [number, number][]> = {
  1: [
    [480, 720],
    [780, 1200],
  ],
  6: [[540, 780]],
  7: [],
};
for (const d of [2, 3, 4, 5]) OPEN_SEGMENTS[d] = OPEN_SEGMENTS[1]!;

/** The site document of the bench: rooms r0…r999, floors f0…f19 (5 per zone), users u0…u199, one app. */
export function analyticsSite() {
  const floorsPerZone = FLOORS / ZONES;
  return {
    brands: [{ key: 'b', name: 'Analytics Brand' }],
    projects: [{ key: 'p', brand: 'b', name: 'Analytics Tower', timezone: TZ, currency: 'THB', bookingGridMinutes: 15 }],
    zones: Array.from({ length: ZONES }, (_, z) => ({ key: `z${z}`, project: 'p', name: `Zone ${String.fromCharCode(65 + z)}` })),
    floors: Array.from({ length: FLOORS }, (_, f) => ({ key: `f${f}`, zone: `z${Math.floor(f / floorsPerZone)}`, name: `${f + 1}F` })),
    users: Array.from({ length: ORGANIZERS }, (_, u) => ({
      key: `u${u}`,
      email: `person${u}@analytics.example`,
      name: `Person ${u}`,
      memberships: [{ project: 'p', role: 'member' }],
    })),
    apps: [
      {
        key: 'app',
        appId: APP_ID,
        appSecret: APP_SECRET,
        name: 'Analytics bench',
        projects: ['p'],
        projectRoles: [{ project: 'p', permissions: ['MEETING_UPDATE'] }],
      },
    ],
    rooms: Array.from({ length: ROOMS }, (_, i) => ({
      key: `r${i}`,
      floor: `f${i % FLOORS}`,
      name: `Room ${String(i).padStart(4, '0')}`,
      capacity: 4 + (i % 12),
      isPublic: true,
      config: {
        dayConfig: {
          Mon: WEEKDAY_HOURS,
          Tue: WEEKDAY_HOURS,
          Wed: WEEKDAY_HOURS,
          Thu: WEEKDAY_HOURS,
          Fri: WEEKDAY_HOURS,
          Sat: { availableTime: { start: '09:00', end: '13:00' } },
        },
        maxAdvanceBookingDays: 365,
        maxDurationMinutes: 480,
      },
    })),
  };
}

// ---------------------------------------------------------------------------
// Bulk writing, one engine or the other
// ---------------------------------------------------------------------------

type ColumnType = 'text' | 'bigint' | 'integer';
interface TableSpec {
  name: string;
  columns: [string, ColumnType][];
}
type Row = (string | number | null)[];

const MEETINGS: TableSpec = {
  name: 'meetings',
  columns: [
    ['id', 'text'],
    ['project_id', 'text'],
    ['asset_kind', 'text'],
    ['asset_id', 'text'],
    ['room_id', 'text'],
    ['title', 'text'],
    ['body', 'text'],
    ['start_at', 'bigint'],
    ['end_at', 'bigint'],
    ['booked_end_at', 'bigint'],
    ['span_end_at', 'bigint'],
    ['all_day', 'integer'],
    ['status', 'text'],
    ['pin_enc', 'text'],
    ['organizer_user_id', 'text'],
    ['organizer', 'text'],
    ['attendees', 'text'],
    ['booked_via', 'text'],
    ['booked_by_user_id', 'text'],
    ['billing_summaries', 'text'],
    ['cancel_reason', 'text'],
    ['created_at', 'bigint'],
    ['updated_at', 'bigint'],
  ],
};
const HISTORIES: TableSpec = {
  name: 'meeting_histories',
  columns: [
    ['id', 'text'],
    ['meeting_id', 'text'],
    ['seq', 'integer'],
    ['action', 'text'],
    ['at', 'bigint'],
    ['by', 'text'],
    ['source', 'text'],
    ['source_detail', 'text'],
    ['reason', 'text'],
    ['status_before', 'text'],
    ['old_start_at', 'bigint'],
    ['old_end_at', 'bigint'],
    ['new_start_at', 'bigint'],
    ['new_end_at', 'bigint'],
  ],
};
const SLOTS: TableSpec = {
  name: 'meeting_slots',
  columns: [
    ['id', 'text'],
    ['meeting_id', 'text'],
    ['project_id', 'text'],
    ['asset_id', 'text'],
    ['occurrence_index', 'integer'],
    ['start_at', 'bigint'],
    ['end_at', 'bigint'],
  ],
};

export interface BulkWriter {
  /** Writes the tables' rows in one transaction. */
  write(batch: [TableSpec, Row[]][]): Promise<void>;
  /** One statement (set-up and checks). */
  exec(sqlText: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

const quoted = (c: string) => `"${c}"`;

function sqliteWriter(file: string): BulkWriter {
  const conn = new Sqlite(file);
  conn.pragma('busy_timeout = 60000');
  conn.pragma('journal_mode = WAL');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('cache_size = -262144');
  const statements = new Map<string, Sqlite.Statement>();
  const insert = (t: TableSpec) => {
    let s = statements.get(t.name);
    if (!s) {
      const cols = t.columns.map(([c]) => quoted(c)).join(', ');
      s = conn.prepare(`insert into ${t.name} (${cols}) values (${t.columns.map(() => '?').join(', ')})`);
      statements.set(t.name, s);
    }
    return s;
  };
  const tx = conn.transaction((batch: [TableSpec, Row[]][]) => {
    for (const [t, rows] of batch) {
      const s = insert(t);
      for (const r of rows) s.run(r);
    }
  });
  return {
    write: async (batch) => void tx.immediate(batch),
    exec: async (sqlText, params = []) => {
      // $1, $2… as named parameters (one may be used twice).
      const s = conn.prepare(sqlText.replace(/\$(\d+)/g, '@p$1'));
      const named = Object.fromEntries(params.map((v, i) => [`p${i + 1}`, v]));
      const args = params.length ? [named] : [];
      if (s.reader) return s.all(...args) as Record<string, unknown>[];
      s.run(...args);
      return [];
    },
    close: async () => void conn.close(),
  };
}

/** Rows per INSERT … SELECT FROM unnest(…) statement. */
const PG_ROWS_PER_STATEMENT = 5000;

async function postgresWriter(url: string): Promise<BulkWriter> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const insertSql = (t: TableSpec) =>
    `insert into ${t.name} (${t.columns.map(([c]) => quoted(c)).join(', ')}) ` +
    `select * from unnest(${t.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})`;
  return {
    async write(batch) {
      await client.query('begin');
      await client.query('set local synchronous_commit = off');
      try {
        for (const [t, rows] of batch) {
          const text = insertSql(t);
          for (let i = 0; i < rows.length; i += PG_ROWS_PER_STATEMENT) {
            const chunk = rows.slice(i, i + PG_ROWS_PER_STATEMENT);
            await client.query(
              text,
              t.columns.map((_, c) => chunk.map((r) => r[c])),
            );
          }
        }
        await client.query('commit');
      } catch (err) {
        await client.query('rollback');
        throw err;
      }
    },
    exec: async (sqlText, params = []) => (await client.query(sqlText, params)).rows as Record<string, unknown>[],
    close: () => client.end(),
  };
}

/**
 * Drops the secondary indexes of `tables` (not their primary keys or unique constraints) and returns what
 * recreates them from their stored definitions: building an index once after a bulk load is much faster
 * than keeping it up to date row by row, and it ends up the same.
 */
export async function dropSecondaryIndexes(w: BulkWriter, engine: Engine, tables: string[]): Promise<() => Promise<void>> {
  const list = tables.map((t) => `'${t}'`).join(', ');
  const rows =
    engine === 'sqlite'
      ? await w.exec(`select name, sql as def from sqlite_master where type = 'index' and sql is not null and tbl_name in (${list})`)
      : await w.exec(
          `select indexname as name, indexdef as def from pg_indexes where schemaname = current_schema() and tablename in (${list}) ` +
            `and indexname not in (select conname from pg_constraint)`,
        );
  for (const r of rows) await w.exec(`drop index ${quoted(r.name as string)}`);
  return async () => {
    for (const r of rows) await w.exec(r.def as string);
  };
}

export const openWriter = (engine: Engine, url: string): Promise<BulkWriter> =>
  engine === 'sqlite' ? Promise.resolve(sqliteWriter(url)) : postgresWriter(url);

// ---------------------------------------------------------------------------
// The bookings
// ---------------------------------------------------------------------------

/** A small seeded generator (mulberry32), so every run fills the same bookings. */
function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  /** An integer in [lo, hi]. */
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  return { next, int };
}
type Rand = ReturnType<typeof seeded>;

/** Booked lengths (minutes) and their weights: mostly short meetings, some long ones. */
const DURATIONS: [number, number][] = [
  [30, 0.35],
  [45, 0.2],
  [60, 0.25],
  [90, 0.12],
  [120, 0.08],
];
function duration(rand: Rand): number {
  let r = rand.next();
  for (const [d, w] of DURATIONS) if ((r -= w) < 0) return d;
  return 60;
}

/** Bookings wanted on a room's day: 8-12 on a weekday, 3-5 on a Saturday, none on a Sunday. */
const wanted = (weekday: number, rand: Rand) => (weekday <= 5 ? rand.int(8, 12) : weekday === 6 ? rand.int(3, 5) : 0);

/**
 * Non-overlapping bookings (local minutes of the day) inside the open segments, on the quarter hour,
 * with gaps of 0 or 15 minutes; what does not fit is left out.
 */
export function dayPlan(weekday: number, rand: Rand): [number, number][] {
  const segments = OPEN_SEGMENTS[weekday] ?? [];
  const lengths = Array.from({ length: wanted(weekday, rand) }, () => duration(rand));
  const out: [number, number][] = [];
  let s = 0;
  let cursor = segments[0]?.[0] ?? 0;
  for (const len of lengths) {
    while (s < segments.length) {
      const start = cursor + 15 * rand.int(0, 1);
      if (start + len <= segments[s]![1]) {
        out.push([start, start + len]);
        cursor = start + len;
        break;
      }
      s++;
      cursor = segments[s]?.[0] ?? 0;
    }
  }
  return out;
}

export interface FillIds {
  projectId: string;
  roomIds: string[];
  organizerIds: string[];
  pinEnc: string;
}

interface Person {
  id: string;
  json: (checkInAt: number | null, checkOutAt: number | null) => string;
}

interface DayRows {
  meetings: Row[];
  histories: Row[];
  slots: Row[];
}

export interface FillCounts {
  bookings: number;
  histories: number;
  slots: number;
  checkedIn: number;
  checkedOutEarly: number;
  noShows: number;
  cancelledBefore: number;
  cancelledAfterStart: number;
}

const history = (
  meetingId: string,
  seq: number,
  action: string,
  at: number,
  who: { by: string; source: string; detail: string | null },
  more: { reason?: string; before?: string | null; oldEnd?: number; newStart?: number; newEnd?: number } = {},
): Row => [
  newId(at),
  meetingId,
  seq,
  action,
  at,
  who.by,
  who.source,
  who.detail,
  more.reason ?? null,
  more.before ?? null,
  null,
  more.oldEnd ?? null,
  more.newStart ?? null,
  more.newEnd ?? null,
];

/** One booking's rows: the meeting, its history, its slot when it kept one; `counts` is added to. */
function bookingRows(
  out: DayRows,
  ids: FillIds,
  roomId: string,
  person: Person,
  start: number,
  end: number,
  rand: Rand,
  counts: FillCounts,
) {
  const created = start - rand.int(1, 14 * 24 * 60) * MINUTE - rand.int(0, 59_999);
  const id = newId(created);
  const user = { by: person.id, source: 'user', detail: APP_ID };
  const system = { by: 'system', source: 'system', detail: null };
  const h: Row[] = [history(id, 1, 'create', created, user, { newStart: start, newEnd: end })];
  const fate = rand.next();
  let status = 'cancelled';
  let endAt = end;
  let updated: number;
  let reason: string | null = null;
  let checkIn: number | null = null;
  let checkOut: number | null = null;
  if (fate < 0.7) {
    counts.checkedIn++;
    status = 'done';
    checkIn = start + rand.int(-10, 12) * MINUTE + rand.int(0, 59_999);
    h.push(history(id, 2, 'check-in', checkIn, user, { before: 'active' }));
    updated = end;
    const earliest = Math.max(start, checkIn) + 15 * MINUTE;
    if (rand.next() < 0.2 && earliest < end - 15 * MINUTE) {
      counts.checkedOutEarly++;
      checkOut = earliest + rand.int(0, (end - 15 * MINUTE - earliest) / MINUTE) * MINUTE + rand.int(0, 59_999);
      endAt = checkOut - (checkOut % MINUTE);
      h.push(history(id, 3, 'check-out', checkOut, user, { before: 'checked-in', oldEnd: end, newEnd: endAt }));
      updated = checkOut;
    }
  } else if (fate < 0.8) {
    counts.noShows++;
    reason = NO_SHOW_REASON;
    updated = start + 15 * MINUTE + rand.int(0, 2_999);
    h.push(history(id, 2, 'cancel', updated, system, { reason, before: 'active' }));
  } else if (fate < 0.88) {
    counts.cancelledBefore++;
    updated = Math.max(created + MINUTE, start - rand.int(30, 2 * 24 * 60) * MINUTE) + rand.int(0, 59_999);
    h.push(history(id, 2, 'cancel', updated, user, { before: 'active' }));
  } else {
    counts.cancelledAfterStart++;
    updated = start + rand.int(1, 13) * MINUTE + rand.int(0, 59_999);
    h.push(history(id, 2, 'cancel', updated, user, { before: 'active' }));
  }
  out.meetings.push([
    id,
    ids.projectId,
    'room',
    roomId,
    roomId,
    'Team meeting',
    '',
    start,
    endAt,
    end,
    endAt,
    0,
    status,
    ids.pinEnc,
    person.id,
    person.json(checkIn, checkOut),
    '[]',
    'api',
    person.id,
    '[]',
    reason,
    created,
    updated,
  ]);
  out.histories.push(...h);
  if (status === 'done') out.slots.push([id, id, ids.projectId, roomId, 0, start, endAt]);
  counts.bookings++;
  counts.histories += h.length;
}

/** The local days filled: `days` days ending yesterday (local), oldest first. */
export function filledDays(days: number, now = Date.now()): DateTime[] {
  const today = DateTime.fromMillis(now, { zone: TZ }).startOf('day');
  return Array.from({ length: days }, (_, i) => today.minus({ days: days - i }));
}

/**
 * Fills the bookings of `days` (one transaction per day). Rooms are backdated to exist
 * before the first day, as a building in use for a year would be.
 */
export async function fillBookings(
  w: BulkWriter,
  engine: Engine,
  ids: FillIds,
  days: DateTime[],
  log: (line: string) => void,
): Promise<FillCounts> {
  const counts: FillCounts = {
    bookings: 0,
    histories: 0,
    slots: 0,
    checkedIn: 0,
    checkedOutEarly: 0,
    noShows: 0,
    cancelledBefore: 0,
    cancelledAfterStart: 0,
  };
  const people: Person[] = ids.organizerIds.map((id, u) => ({
    id,
    json: (checkInAt, checkOutAt) =>
      JSON.stringify({ email: `person${u}@analytics.example`, name: `Person ${u}`, displayName: `Person ${u}`, checkInAt, checkOutAt }),
  }));
  const created = days[0]!.minus({ days: 1 }).toMillis();
  await w.exec('update rooms set created_at = $1 where project_id = $2', [created, ids.projectId]);
  // Overlap look-ups reach back by the project's longest hold, as insertHeld keeps it.
  await w.exec('update projects set max_hold_ms = $1 where id = $2 and max_hold_ms < $1', [120 * MINUTE, ids.projectId]);
  const restoreIndexes = await dropSecondaryIndexes(w, engine, [MEETINGS.name, HISTORIES.name, SLOTS.name]);
  const rand = seeded(29);
  const t0 = performance.now();
  let writeMs = 0;
  for (const [d, day] of days.entries()) {
    const rows: DayRows = { meetings: [], histories: [], slots: [] };
    // Asia/Bangkok keeps one offset all year: a local minute of the day is the day's start plus that many minutes.
    const base = day.toMillis();
    for (const [r, roomId] of ids.roomIds.entries()) {
      for (const [from, to] of dayPlan(day.weekday, rand)) {
        const start = base + from * MINUTE;
        const end = base + to * MINUTE;
        bookingRows(rows, ids, roomId, people[(r * 7 + from) % people.length]!, start, end, rand, counts);
      }
    }
    counts.slots += rows.slots.length;
    const tw = performance.now();
    await w.write([
      [MEETINGS, rows.meetings],
      [HISTORIES, rows.histories],
      [SLOTS, rows.slots],
    ]);
    writeMs += performance.now() - tw;
    if ((d + 1) % 30 === 0 || d === days.length - 1) {
      const s = (performance.now() - t0) / 1000;
      log(
        `  ${day.toISODate()}: ${counts.bookings.toLocaleString('en')} bookings so far, ${s.toFixed(0)} s (${(writeMs / 1000).toFixed(0)} s of it writing)`,
      );
    }
  }
  const ti = performance.now();
  await restoreIndexes();
  log(`  secondary indexes rebuilt in ${((performance.now() - ti) / 1000).toFixed(1)} s`);
  return counts;
}
