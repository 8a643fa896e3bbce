/**
 * bench:scale, the data: N bookings with the rows the writer leaves behind them (history, slots, timers,
 * the outbox's events and deliveries), written by bulk SQL through bench/lib/analytics-fill.ts's writer
 * (its own connection, not the service's pool) on the site of bench:analytics (1,000 rooms, Asia/Bangkok)
 * plus one webhook listener.
 *
 * What grows with N is the history, not what a request looks at:
 * - a fixed recent part (RECENT bookings) from 30 days ago to 14 days ahead, about 5 per room: past ones
 *   done, future ones active with their pending timers; PENDING_DUE timers and deliveries are due now
 *   (what the job runner's due reads find);
 * - the rest, older than 31 days, day after day backwards (7 bookings per room and day): done with a
 *   check-in (80 %) or cancelled by their organizer (20 %), their timers fired or cancelled, their events
 *   delivered.
 * So the room feed's window, a day's page and the due work are the same at every size.
 */
import { DateTime } from 'luxon';
import { newId } from '../../src/platform/ids.js';
import type { BulkWriter } from './analytics-fill.js';
import { APP_ID, ROOMS, TZ, dropSecondaryIndexes } from './analytics-fill.js';
import type { Engine } from './databases.js';

export const RECENT = 5_000;
export const PENDING_DUE = 200;
const PER_ROOM_DAY = 7;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type ColumnType = 'text' | 'bigint' | 'integer';
interface TableSpec {
  name: string;
  columns: [string, ColumnType][];
}
type Row = (string | number | null)[];
const spec = (name: string, cols: string): TableSpec => ({
  name,
  columns: cols.split(' ').map((c) => {
    const [n, t] = c.split(':');
    return [n!, (t === 'b' ? 'bigint' : t === 'i' ? 'integer' : 'text') as ColumnType];
  }),
});

const MEETINGS = spec(
  'meetings',
  'id project_id asset_kind asset_id room_id title body start_at:b end_at:b booked_end_at:b span_end_at:b all_day:i status pin_enc ' +
    'organizer_user_id organizer attendees booked_via booked_by_user_id billing_summaries cancel_reason created_at:b updated_at:b',
);
const HISTORIES = spec(
  'meeting_histories',
  'id meeting_id seq:i action at:b by source source_detail reason status_before old_start_at:b old_end_at:b new_start_at:b new_end_at:b',
);
const SLOTS = spec('meeting_slots', 'id meeting_id project_id asset_id occurrence_index:i start_at:b end_at:b');
const TIMERS = spec('timers', 'id meeting_id kind due_at:b window_start:b window_end:b status created_at:b fired_at:b');
const EVENTS = spec('events', 'id project_id meeting_id type occurred_at:b data');
const DELIVERIES = spec(
  'deliveries',
  'id event_id webhook_id type body status attempts:i next_attempt_at:b claimed_until:b last_status:i last_error created_at:b updated_at:b delivered_at:b',
);
const TABLES = [MEETINGS, HISTORIES, SLOTS, TIMERS, EVENTS, DELIVERIES];

export interface ScaleIds {
  projectId: string;
  roomIds: string[];
  organizerIds: string[];
  webhookId: string;
  pinEnc: string;
}

interface Rows {
  meetings: Row[];
  histories: Row[];
  slots: Row[];
  timers: Row[];
  events: Row[];
  deliveries: Row[];
}
const emptyRows = (): Rows => ({ meetings: [], histories: [], slots: [], timers: [], events: [], deliveries: [] });

interface Booking {
  roomId: string;
  organizerId: string;
  start: number;
  end: number;
  /** done, cancelled (past) or active (future). */
  status: 'done' | 'cancelled' | 'active';
  /** Its pending timer and its delivery are due now. */
  dueNow?: boolean;
}

let deliverySeq = 0;

function eventRows(out: Rows, ids: ScaleIds, meetingId: string, type: string, at: number, pending: boolean, now: number) {
  const eventId = newId(at);
  const data = JSON.stringify({ meetingId, meetingRoomId: null, at });
  out.events.push([eventId, ids.projectId, meetingId, type, at, data]);
  const id = `whk_scale_${(deliverySeq++).toString(36).padStart(10, '0')}`;
  const body = JSON.stringify({ id, type, createdAt: new Date(at).toISOString(), data: { meetingId } });
  out.deliveries.push(
    pending
      ? [id, eventId, ids.webhookId, type, body, 'pending', 0, now - MINUTE, null, null, null, at, at, null]
      : [id, eventId, ids.webhookId, type, body, 'delivered', 1, null, null, 200, null, at, at + 1000, at + 1000],
  );
}

function timerRows(out: Rows, b: Booking, meetingId: string, created: number, now: number) {
  const timer = (kind: string, due: number, status: string): Row => [
    newId(created),
    meetingId,
    kind,
    due,
    b.start,
    b.end,
    status,
    created,
    status === 'fired' ? due : null,
  ];
  if (b.status === 'active') {
    out.timers.push(timer('reminder', b.dueNow ? now - MINUTE : b.start - 15 * MINUTE, 'pending'), timer('end', b.end, 'pending'));
  } else if (b.status === 'done') {
    out.timers.push(timer('reminder', b.start - 15 * MINUTE, 'fired'), timer('end', b.end, 'fired'));
  } else {
    out.timers.push(timer('reminder', b.start - 15 * MINUTE, 'fired'), timer('end', b.end, 'cancelled'));
  }
}

/** One booking's rows, as the writer leaves them. */
function bookingRows(out: Rows, ids: ScaleIds, b: Booking, now: number) {
  const created = b.start - 3 * DAY;
  const id = newId(created);
  const user = [b.organizerId, 'user', APP_ID] as const;
  const history = (seq: number, action: string, at: number, before: string | null, newStart: number | null, newEnd: number | null): Row => [
    newId(at),
    id,
    seq,
    action,
    at,
    ...user,
    null,
    before,
    null,
    null,
    newStart,
    newEnd,
  ];
  out.histories.push(history(1, 'create', created, null, b.start, b.end));
  let updated = created;
  if (b.status === 'done') {
    updated = b.end;
    out.histories.push(history(2, 'check-in', b.start + MINUTE, 'active', null, null));
  } else if (b.status === 'cancelled') {
    updated = b.start - HOUR;
    out.histories.push(history(2, 'cancel', updated, 'active', null, null));
  }
  const organizer = JSON.stringify({ email: 'organizer@scale.example', name: 'Organizer', displayName: 'Organizer' });
  const m: Row = [id, ids.projectId, 'room', b.roomId, b.roomId, 'Team meeting', '', b.start, b.end, b.end, b.end, 0, b.status];
  m.push(ids.pinEnc, b.organizerId, organizer, '[]', 'api', b.organizerId, '[]', null, created, updated);
  out.meetings.push(m);
  if (b.status !== 'cancelled') out.slots.push([id, id, ids.projectId, b.roomId, 0, b.start, b.end]);
  timerRows(out, b, id, created, now);
  eventRows(out, ids, id, 'ROOM_BOOK', created, Boolean(b.dueNow), now);
  if (b.status === 'cancelled') eventRows(out, ids, id, 'ROOM_CANCEL', updated, false, now);
}

/** The fixed recent part: RECENT bookings from 30 days ago to 14 days ahead, an hour at 10:00 local. */
function recentBookings(ids: ScaleIds, today: DateTime, now: number): Booking[] {
  const out: Booking[] = [];
  let due = 0;
  for (let i = 0; i < RECENT; i++) {
    const r = i % ROOMS;
    const k = Math.floor(i / ROOMS);
    const start = today
      .plus({ days: -30 + 9 * k + (r % 9) })
      .set({ hour: 10 })
      .toMillis();
    const future = start > now;
    const dueNow = future && due < PENDING_DUE;
    if (dueNow) due++;
    out.push({
      roomId: ids.roomIds[r]!,
      organizerId: ids.organizerIds[i % ids.organizerIds.length]!,
      start,
      end: start + HOUR,
      status: future ? 'active' : 'done',
      dueNow,
    });
  }
  return out;
}

/** The old bookings of one local day: up to `left`, PER_ROOM_DAY per room from 08:00 local. */
function oldDay(ids: ScaleIds, day: DateTime, left: number, counter: { n: number }): Booking[] {
  const out: Booking[] = [];
  const base = day.set({ hour: 8 }).toMillis();
  for (let h = 0; h < PER_ROOM_DAY && out.length < left; h++) {
    for (let r = 0; r < ROOMS && out.length < left; r++) {
      const n = counter.n++;
      out.push({
        roomId: ids.roomIds[r]!,
        organizerId: ids.organizerIds[n % ids.organizerIds.length]!,
        start: base + h * HOUR,
        end: base + h * HOUR + 45 * MINUTE,
        status: n % 5 === 4 ? 'cancelled' : 'done',
      });
    }
  }
  return out;
}

async function write(w: BulkWriter, rows: Rows): Promise<void> {
  const list = [rows.meetings, rows.histories, rows.slots, rows.timers, rows.events, rows.deliveries];
  await w.write(TABLES.map((t, i) => [t, list[i]!]) as Parameters<BulkWriter['write']>[0]);
}

export interface ScaleCounts {
  bookings: number;
  histories: number;
  timers: number;
  events: number;
  deliveries: number;
  /** The oldest filled local day. */
  oldest: string;
}

/**
 * Fills `n` bookings (n ≥ RECENT): the recent part, then old days backwards from 31 days ago, one
 * transaction per day, with the tables' secondary indexes dropped during the load and rebuilt after it.
 */
export async function fillScale(w: BulkWriter, engine: Engine, ids: ScaleIds, n: number, now: number, log: (line: string) => void) {
  if (n < RECENT) throw new Error(`bench:scale fills at least ${RECENT} bookings`);
  const today = DateTime.fromMillis(now, { zone: TZ }).startOf('day');
  await w.exec('update rooms set created_at = $1 where project_id = $2', [today.minus({ years: 5 }).toMillis(), ids.projectId]);
  await w.exec('update projects set max_hold_ms = $1 where id = $2 and max_hold_ms < $1', [HOUR, ids.projectId]);
  const restore = await dropSecondaryIndexes(
    w,
    engine,
    TABLES.map((t) => t.name),
  );
  const counts: ScaleCounts = { bookings: 0, histories: 0, timers: 0, events: 0, deliveries: 0, oldest: '' };
  const add = async (bookings: Booking[]) => {
    const rows = emptyRows();
    for (const b of bookings) bookingRows(rows, ids, b, now);
    await write(w, rows);
    counts.bookings += rows.meetings.length;
    counts.histories += rows.histories.length;
    counts.timers += rows.timers.length;
    counts.events += rows.events.length;
    counts.deliveries += rows.deliveries.length;
  };
  const t0 = performance.now();
  await add(recentBookings(ids, today, now));
  const counter = { n: 0 };
  for (let d = 31; counts.bookings < n; d++) {
    const day = today.minus({ days: d });
    await add(oldDay(ids, day, n - counts.bookings, counter));
    counts.oldest = day.toISODate()!;
    if (d % 20 === 0) log(`    ${counts.bookings.toLocaleString('en')} bookings, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  const ti = performance.now();
  await restore();
  log(`    secondary indexes rebuilt in ${((performance.now() - ti) / 1000).toFixed(1)} s`);
  return counts;
}

/** The site of bench:analytics with a webhook listener of the project's bookings. */
export const SCALE_WEBHOOK = {
  key: 'hook',
  project: 'p',
  url: 'http://127.0.0.1:9/scale-hook',
  secret: 'bench-scale-webhook-secret-0123456789abcdef',
  events: ['ROOM_BOOK', 'ROOM_CANCEL'],
};
