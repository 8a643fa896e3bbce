/**
 * The specification's client rules as helpers:
 *  - after a create that may have booked anyway (timeout, no answer, 5xx), reconcile
 *    through GET /meetings instead of resending; resend only when nothing was booked;
 *  - GET /meetings rows of a recurring series are de-duplicated on occurrenceEventId;
 *  - statuses change without any call, so re-read before a state-dependent action;
 *  - MEETING_040/041 are "come back later" (ComeBackLaterError, with the time when derivable).
 */
import type { CreateMeetingBody, Meeting } from './types.js';
import type { BookingClient } from './client.js';
import { BookingApiError } from './errors.js';
import { MAX_RETRIES } from './transport.js';

export interface CreateSafelyOptions {
  /** Resends allowed after a reconcile found nothing (at most 3, the specification's retry budget). */
  maxResends?: number;
  /** Told about every reconcile (for logs and tests). */
  onReconcile?: (r: { attempt: number; error: BookingApiError; found: Meeting | undefined }) => void;
}

/** A failure after which the booking may exist: no answer, or a 5xx other than 503 KS234 (token not checked). */
export function mayHaveBooked(err: unknown): err is BookingApiError {
  return err instanceof BookingApiError && (err.status === 0 || (err.status >= 500 && !(err.status === 503 && err.code === 'KS234')));
}

const minute = (iso: string) => Math.floor(Date.parse(iso) / 60_000);

/** Whether a listed meeting is the one `body` asked for (same asset, start, end when given, title when given). */
export function matchesRequest(m: Meeting, body: CreateMeetingBody): boolean {
  if (body.meetingRoomId ? m.meetingRoomId !== body.meetingRoomId : m.deskId !== body.deskId) return false;
  if (minute(m.startDateTime) !== minute(body.startDateTime)) return false;
  if (body.endDateTime && !body.timePeriod && minute(m.endDateTime) !== minute(body.endDateTime)) return false;
  if (body.title !== undefined && m.title !== body.title) return false;
  if (body.organizerId !== undefined && m.organizer.userId !== body.organizerId) return false;
  return m.status !== 'cancelled' && m.status !== 'rejected';
}

/** Looks for the booking `body` would have made, through GET /meetings on its asset and window. */
export async function findCreated(client: BookingClient, body: CreateMeetingBody): Promise<Meeting | undefined> {
  const from = new Date(minute(body.startDateTime) * 60_000);
  const to = new Date(Math.max(from.getTime() + 60_000, body.endDateTime ? Date.parse(body.endDateTime) : from.getTime() + 86_400_000));
  const rows = await client.listAllMeetings({
    from: from.toISOString(),
    to: to.toISOString(),
    ...(body.meetingRoomId ? { meetingRoomId: body.meetingRoomId } : { deskId: body.deskId }),
    statuses: ['unpaid', 'active', 'checked-in'],
  });
  return rows.find((m) => matchesRequest(m, body));
}

/**
 * POST /meetings without blind resends. When the create may have booked anyway
 * (no answer, timeout, 5xx other than KS234), GET /meetings is asked for the same
 * asset, window and title: the booking found is answered; only when none is
 * found is the create sent again (with backoff, at most 3 times).
 * Note: the listed row of a found booking is answered; its pinCode is shown to
 * the organizer and the booking app (read it again with getMeeting otherwise).
 */
export async function createMeetingSafely(
  client: BookingClient,
  body: CreateMeetingBody,
  options: CreateSafelyOptions = {},
): Promise<Meeting> {
  const maxResends = Math.min(options.maxResends ?? MAX_RETRIES, MAX_RETRIES);
  for (let attempt = 0; ; attempt++) {
    try {
      return await client.createMeetingOnce(body);
    } catch (err) {
      if (!mayHaveBooked(err)) throw err;
      let found: Meeting | undefined;
      try {
        found = await findCreated(client, body);
      } catch (readErr) {
        // The reconcile itself failed: we cannot know, so we do not resend.
        (err as Error & { reconcileError?: unknown }).reconcileError = readErr;
        throw err;
      }
      options.onReconcile?.({ attempt, error: err, found });
      if (found) return found.pinCode === undefined ? client.getMeeting(found._id) : found;
      if (attempt >= maxResends) throw err;
      await client.transport.sleep(client.transport.backoffMs(attempt + 1, err.retryAfterMs));
    }
  }
}

/**
 * GET /meetings of a recurring series gives one row per occurrence, all with the
 * master `_id`: keeps the first row per occurrenceEventId (per `_id` for rows
 * without one). Use `_id` for check-in, cancel and detail.
 */
export function dedupeOccurrences<T extends { _id: string; occurrenceEventId?: string }>(rows: readonly T[]): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const row of rows) {
    const key = row.occurrenceEventId ? `o:${row.occurrenceEventId}` : `m:${row._id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(row);
  }
  return out;
}

/** Reads the booking again (GET /meetings/{id}) and runs `action` on the fresh state. */
export async function reReadThen<T>(
  client: BookingClient,
  id: string,
  action: (fresh: Meeting, client: BookingClient) => Promise<T> | T,
): Promise<T> {
  const fresh = await client.getMeeting(id);
  return action(fresh, client);
}

/**
 * When the check-in window of a booking opens: start − preStartMinutes of the
 * asset's meetingConfig (default 15). undefined when check-in is open all day
 * (preStartMinutes −1).
 */
export function checkInOpensAt(
  meeting: Pick<Meeting, 'startDateTime'>,
  asset?: { config?: { meetingConfig?: { preStartMinutes?: number } } },
): Date | undefined {
  const pre = asset?.config?.meetingConfig?.preStartMinutes ?? 15;
  if (pre < 0) return undefined;
  return new Date(Date.parse(meeting.startDateTime) - pre * 60_000);
}
