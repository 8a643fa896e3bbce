/**
 * Seeds bookings straight into storage, for tests of features that read them
 * (availability search, calendars) before POST /meetings exists. One `meetings`
 * row plus one `meeting_slots` row (and `meeting_attendees` index rows), written in
 * one transaction through MeetingRepository.insertHeld (which also keeps
 * projects.max_hold_ms up to date).
 */
import { plainBookingColumns } from '../../src/modules/booking/index.js';
import { MeetingRepository, type NewMeeting } from '../../src/modules/booking/meeting-repository.js';
import { newId } from '../../src/platform/ids.js';
import type { TestService } from './test-service.js';

export interface SeedAttendee {
  userId?: string;
  email?: string;
  name?: string;
  type?: string;
  responseStatus?: string;
  [k: string]: unknown;
}

export interface SeedBookingInput {
  assetKind: 'room' | 'desk';
  assetId: string;
  projectId: string;
  organizerUserId: string;
  /** ISO 8601 instants with an offset. */
  start: string;
  end: string;
  title?: string;
  /** The app `_id` (not the client id) that made the booking. */
  appId?: string | null;
  attendees?: SeedAttendee[];
  /** Stored as-is in pin_enc; tests use it to check PINs never leak. */
  pin?: string;
}

export interface SeededBooking {
  meetingId: string;
  slotId: string;
  start: number;
  end: number;
}

function instant(text: string, what: string): number {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) throw new Error(`seedBooking: ${what} is not a date-time: ${text}`);
  return ms;
}

export async function seedBooking(svc: TestService, b: SeedBookingInput): Promise<SeededBooking> {
  const start = instant(b.start, 'start');
  const end = instant(b.end, 'end');
  if (!(end > start)) throw new Error('seedBooking: end must be after start');
  const db = svc.services.storage.db;
  const now = svc.services.clock.now();
  const meetingId = newId(now);
  const slotId = newId(now);
  await db.transaction().execute(async (trx) => {
    await new MeetingRepository(db).insertHeld(
      {
        id: meetingId,
        project_id: b.projectId,
        asset_kind: b.assetKind,
        asset_id: b.assetId,
        room_id: b.assetKind === 'room' ? b.assetId : null,
        desk_id: b.assetKind === 'desk' ? b.assetId : null,
        title: b.title ?? 'Seeded booking',
        body: '',
        start_at: start,
        end_at: end,
        booked_end_at: end,
        span_end_at: end,
        all_day: false,
        time_period: null,
        status: 'active',
        pin_enc: b.pin ?? `seeded-pin-${meetingId}`,
        organizer_user_id: b.organizerUserId,
        organizer: {} as NewMeeting['organizer'],
        attendees: (b.attendees ?? []) as NewMeeting['attendees'],
        ...plainBookingColumns(),
        app_id: b.appId ?? null,
        created_at: now,
        updated_at: now,
      },
      [
        {
          id: slotId,
          meeting_id: meetingId,
          project_id: b.projectId,
          asset_id: b.assetId,
          occurrence_index: 0,
          start_at: start,
          end_at: end,
        },
      ],
      trx,
    );
    // The attendee index that visibility and filters read, kept in step with the JSON column.
    const attendees = b.attendees ?? [];
    if (attendees.length) {
      await trx
        .insertInto('meeting_attendees')
        .values(
          attendees.map((a, position) => ({
            meeting_id: meetingId,
            position,
            user_id: a.userId ?? null,
            email_lower: (a.email ?? '').toLowerCase(),
          })),
        )
        .execute();
    }
  });
  return { meetingId, slotId, start, end };
}
