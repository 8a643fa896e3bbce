/** Maps a stored booking to the API's Meeting object. */
import type { HistoryRow, MeetingRow } from './meeting-repository.js';
import type { Meeting } from '../../contract/meetings.js';
import type { PaymentSnapshot } from './payment-port.js';

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

export interface StoredRecurrence {
  rule: string;
  occurrences: StoredOccurrence[];
}

export const parseOrganizer = (m: MeetingRow) => JSON.parse(m.organizer) as StoredOrganizer;
export const parseAttendees = (m: MeetingRow) => JSON.parse(m.attendees) as StoredAttendee[];
export const parseRecurrence = (m: MeetingRow) => (m.recurrence ? (JSON.parse(m.recurrence) as StoredRecurrence) : null);

/**
 * The occurrence a series master currently stands for: the first one that has
 * not ended, or the last one once the series is over.
 */
export function currentOccurrence(series: StoredRecurrence, now: number): StoredOccurrence {
  return series.occurrences.find((o) => o.end > now) ?? series.occurrences[series.occurrences.length - 1];
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
  /** For a list row of a series: the occurrence this row stands for. */
  occurrence?: StoredOccurrence;
}

export function meetingView(m: MeetingRow, ctx: ViewContext): MeetingView {
  const organizer = parseOrganizer(m);
  const series = parseRecurrence(m);
  const window = ctx.occurrence ?? (series ? currentOccurrence(series, ctx.now) : { start: m.start_at, end: m.end_at });
  const isRoom = m.asset_kind === 'room';
  return {
    _id: m.id,
    status: m.status,
    projectId: m.project_id,
    ...(isRoom ? { meetingRoomId: m.room_id!, meetingRoomName: ctx.assetName } : { deskId: m.desk_id!, deskName: ctx.assetName }),
    title: m.title,
    body: m.body,
    startDateTime: iso(window.start),
    endDateTime: iso(window.end),
    ...(m.time_period ? { timePeriod: m.time_period } : {}),
    allDay: m.all_day === 1,
    ...(ctx.pinCode !== null ? { pinCode: ctx.pinCode } : {}),
    organizer: {
      userId: m.organizer_user_id,
      email: organizer.email ?? '',
      name: organizer.name,
      displayName: organizer.displayName,
      checkInDateTime: isoOrNull(organizer.checkInAt),
      checkOutDateTime: isoOrNull(organizer.checkOutAt),
    },
    attendees: parseAttendees(m).map((a) => ({
      userId: a.userId,
      email: a.email,
      name: a.name,
      type: a.type,
      responseStatus: a.responseStatus,
      checkInDateTime: isoOrNull(a.checkInAt),
    })),
    ...(m.payment ? { payment: JSON.parse(m.payment) as PaymentSnapshot } : {}),
    ...(m.payment_due_at !== null ? { paymentDueAt: iso(m.payment_due_at) } : {}),
    ...(m.booked_via ? { bookedVia: m.booked_via } : {}),
    ...(m.booked_by_user_id ? { bookedByUserId: m.booked_by_user_id } : {}),
    billingSummaries: JSON.parse(m.billing_summaries) as object[],
    histories: ctx.histories.map(historyView),
    ...(series
      ? {
          seriesMasterId: m.id,
          recurrence: series.rule,
          ...(ctx.occurrence ? { occurrenceEventId: ctx.occurrence.id } : {}),
        }
      : {}),
    ...(m.cancel_reason ? { cancelReason: m.cancel_reason } : {}),
    createdAt: iso(m.created_at),
    updatedAt: iso(m.updated_at),
  };
}

