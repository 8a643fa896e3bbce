/** Maps a stored booking to the API's Meeting object. */
import type { HistoryRow, MeetingRow } from './meeting-repository.js';
import type { Meeting } from '../../contract/meetings.js';

export type MeetingView = Meeting;

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : iso(ms));

export interface StoredOrganizer {
  email: string | null;
  name: string;
  displayName: string;
  checkInAt?: number | null;
  checkOutAt?: number | null;
}

export interface StoredAttendee {
  userId: string | null;
  email: string;
  name: string;
  type: string;
  responseStatus: string;
  checkInAt?: number | null;
}

export interface StoredOccurrence {
  id: string;
  start: number;
  end: number;
}

/** An occurrence cancelled on its own while the series went on (a no-show): kept to be listed under its status. */
export interface CancelledOccurrence extends StoredOccurrence {
  reason: string | null;
}

export interface StoredRecurrence {
  rule: string;
  /** The occurrences still held. */
  occurrences: StoredOccurrence[];
  /** Occurrences cancelled one by one; they hold nothing but are still listed, as cancelled. */
  cancelled?: CancelledOccurrence[];
}

/**
 * The occurrence a series master currently stands for: the first one that has
 * not ended, or the last one once the series is over.
 */
export function currentOccurrence(series: StoredRecurrence, now: number): StoredOccurrence {
  return series.occurrences.find((o) => o.end > now) ?? series.occurrences[series.occurrences.length - 1];
}

/** The series without one of its occurrences, which is kept as cancelled for `reason` (it holds nothing any more). */
export function withoutOccurrence(series: StoredRecurrence, occurrenceId: string, reason: string | null): StoredRecurrence {
  const gone = series.occurrences.find((o) => o.id === occurrenceId);
  return {
    ...series,
    occurrences: series.occurrences.filter((o) => o.id !== occurrenceId),
    cancelled: gone ? [...(series.cancelled ?? []), { id: gone.id, start: gone.start, end: gone.end, reason }] : series.cancelled,
  };
}

/** Every occurrence of a series, held or cancelled, in time order. */
export function allOccurrences(series: StoredRecurrence): (StoredOccurrence | CancelledOccurrence)[] {
  return [...series.occurrences, ...(series.cancelled ?? [])].sort((a, b) => a.start - b.start);
}

/**
 * The occurrence of a series a window describes (an event's window): the one,
 * held or cancelled on its own, that starts when the window starts; else the
 * first one still running at that start, else the last. Null for a single booking.
 */
export function occurrenceAt(series: StoredRecurrence | null, window: { start: number }): StoredOccurrence | null {
  if (!series) return null;
  const all = allOccurrences(series);
  if (!all.length) return null;
  return all.find((o) => o.start === window.start) ?? all.find((o) => o.end > window.start) ?? all[all.length - 1];
}

/**
 * One occurrence's own status. The series row's status belongs to the occurrence
 * it currently stands for; earlier held ones are done, later ones active, and one
 * cancelled on its own is cancelled. A status of the whole series (unpaid,
 * cancelled, rejected, done) is every occurrence's.
 */
export function occurrenceStatus(
  m: MeetingRow,
  series: StoredRecurrence,
  o: StoredOccurrence | CancelledOccurrence,
  now: number,
): { status: string; cancelReason: string | null } {
  if ((series.cancelled ?? []).some((c) => c.id === o.id)) {
    return { status: 'cancelled', cancelReason: (o as CancelledOccurrence).reason ?? null };
  }
  if (m.status !== 'active' && m.status !== 'checked-in') return { status: m.status, cancelReason: m.cancel_reason };
  const current = currentOccurrence(series, now);
  if (o.id === current.id) return { status: m.status, cancelReason: null };
  return { status: o.start < current.start ? 'done' : 'active', cancelReason: null };
}

export function historyView(h: HistoryRow) {
  return {
    action: h.action,
    at: iso(h.at),
    by: h.by,
    source: h.source,
    ...(h.source_detail ? { sourceDetail: h.source_detail } : {}),
    ...(h.reason ? { reason: h.reason } : {}),
    ...(h.status_before ? { statusBeforeUpdate: h.status_before } : {}),
    ...(h.old_start_at !== null ? { oldStartDateTime: iso(h.old_start_at) } : {}),
    ...(h.old_end_at !== null ? { oldEndDateTime: iso(h.old_end_at) } : {}),
    ...(h.new_start_at !== null ? { newStartDateTime: iso(h.new_start_at) } : {}),
    ...(h.new_end_at !== null ? { newEndDateTime: iso(h.new_end_at) } : {}),
  };
}

export interface ViewContext {
  assetName: string;
  histories: HistoryRow[];
  /** The PIN in clear, only for callers entitled to it. */
  pinCode: string | null;
  now: number;
  /** For a list row of a series: the occurrence this row stands for (it shows that occurrence's status). */
  occurrence?: StoredOccurrence | CancelledOccurrence;
}

export function meetingView(m: MeetingRow, ctx: ViewContext): MeetingView {
  const organizer = m.organizer;
  const series = m.recurrence;
  const window = ctx.occurrence ?? (series ? currentOccurrence(series, ctx.now) : { start: m.start_at, end: m.end_at });
  const isRoom = m.asset_kind === 'room';
  const own =
    series && ctx.occurrence ? occurrenceStatus(m, series, ctx.occurrence, ctx.now) : { status: m.status, cancelReason: m.cancel_reason };
  return {
    _id: m.id,
    status: own.status,
    projectId: m.project_id,
    ...(isRoom ? { meetingRoomId: m.room_id!, meetingRoomName: ctx.assetName } : { deskId: m.desk_id!, deskName: ctx.assetName }),
    title: m.title,
    body: m.body,
    startDateTime: iso(window.start),
    endDateTime: iso(window.end),
    ...(m.time_period ? { timePeriod: m.time_period } : {}),
    allDay: m.all_day,
    ...(ctx.pinCode !== null ? { pinCode: ctx.pinCode } : {}),
    organizer: {
      userId: m.organizer_user_id,
      email: organizer.email ?? '',
      name: organizer.name,
      displayName: organizer.displayName,
      checkInDateTime: isoOrNull(organizer.checkInAt),
      checkOutDateTime: isoOrNull(organizer.checkOutAt),
    },
    attendees: m.attendees.map((a) => ({
      userId: a.userId,
      email: a.email,
      name: a.name,
      type: a.type,
      responseStatus: a.responseStatus,
      checkInDateTime: isoOrNull(a.checkInAt),
    })),
    ...(m.payment ? { payment: m.payment } : {}),
    ...(m.payment_due_at !== null ? { paymentDueAt: iso(m.payment_due_at) } : {}),
    ...(m.booked_via ? { bookedVia: m.booked_via } : {}),
    ...(m.booked_by_user_id ? { bookedByUserId: m.booked_by_user_id } : {}),
    billingSummaries: m.billing_summaries as object[],
    histories: ctx.histories.map(historyView),
    ...(series
      ? {
          seriesMasterId: m.id,
          recurrence: series.rule,
          ...(ctx.occurrence ? { occurrenceEventId: ctx.occurrence.id } : {}),
        }
      : {}),
    ...(own.cancelReason ? { cancelReason: own.cancelReason } : {}),
    createdAt: iso(m.created_at),
    updatedAt: iso(m.updated_at),
  };
}

/** One row of a meeting list: a meeting, or one occurrence of a series. */
export interface ListedRow {
  m: MeetingRow;
  occurrence?: StoredOccurrence;
  start: number;
}

/**
 * The rows of a meeting list in time order (then by id): a plain meeting as
 * itself, a series as every occurrence (held or cancelled on its own) that
 * overlaps [from, to) under its own status, filtered by `statuses` when given.
 * Both the public and the ops list page through this.
 */
export function listedRows(
  meetings: MeetingRow[],
  window: { from: number; to: number },
  statuses: readonly string[] | undefined,
  now: number,
): ListedRow[] {
  const wanted = statuses?.length ? new Set<string>(statuses) : null;
  const rows: ListedRow[] = [];
  for (const m of meetings) {
    const series = m.recurrence;
    if (!series) {
      rows.push({ m, start: m.start_at });
      continue;
    }
    for (const o of allOccurrences(series)) {
      if (o.start >= window.to || o.end <= window.from) continue;
      if (wanted && !wanted.has(occurrenceStatus(m, series, o, now).status)) continue;
      rows.push({ m, occurrence: o, start: o.start });
    }
  }
  return rows.sort((a, b) => a.start - b.start || (a.m.id < b.m.id ? -1 : 1));
}
