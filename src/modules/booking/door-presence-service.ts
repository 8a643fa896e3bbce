/**
 * The door's actor on bookings: a granted member entry at a room's or desk's access device checks the
 * member's booking there in, exactly as the API's check-in does (status, organizer or attendee
 * checkInAt, history `check-in`), with actor source `device` (sourceDetail: the device id), under the
 * asset's lock through BookingChanges. What the entry did is decided by `rules/door-presence.ts`.
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { CatalogueService } from '../catalogue/index.js';
import { resolveMeetingConfig } from './rules/asset-config.js';
import { doorDecision, type DoorBooking } from './rules/door-presence.js';
import type { BookingChanges } from './booking-changes.js';
import type { MeetingRepository, MeetingRow } from './meeting-repository.js';
import type { SlotRepository } from './slot-repository.js';

/** Bookings read around an entry: a day either side (a booking the same local day is "booked", not a walk-in). */
const AROUND_MS = 24 * 3_600_000;

export interface DoorEntry {
  projectId: string;
  assetKind: 'room' | 'desk';
  assetId: string;
  userId: string;
  deviceId: string;
  /** Service time of the entry. */
  at: number;
}

export interface DoorPresenceResult {
  outcome: 'check-in' | 'booked' | 'walk-in' | 'recorded';
  meetingId: string | null;
}

const attendeeIds = (m: MeetingRow) => m.attendees.map((a) => a.userId).filter((id): id is string => id !== null);

export class DoorPresenceService {
  constructor(
    private readonly deps: {
      clock: Clock;
      catalogue: CatalogueService;
      meetings: MeetingRepository;
      slots: SlotRepository;
      changes: BookingChanges;
    },
  ) {}

  async entered(e: DoorEntry): Promise<DoorPresenceResult> {
    const ctx = await this.deps.catalogue.assetInContext(e.assetKind, e.assetId);
    if (!ctx || ctx.project.id !== e.projectId) return { outcome: 'recorded', meetingId: null };
    const rules = { preStartMinutes: resolveMeetingConfig(ctx.asset.config).preStartMinutes, timeZone: ctx.project.timezone };
    const slots = await this.deps.slots.assetSlots(e.assetId, e.at - AROUND_MS, e.at + AROUND_MS, ctx.project.max_hold_ms);
    const rows = new Map<string, MeetingRow>();
    for (const id of new Set(slots.map((s) => s.meeting_id))) {
      const m = await this.deps.meetings.byId(id);
      if (m) rows.set(id, m);
    }
    const bookings: DoorBooking[] = slots.flatMap((s) => {
      const m = rows.get(s.meeting_id);
      if (!m) return [];
      return [
        {
          id: m.id,
          status: m.status,
          start: s.start_at,
          end: s.end_at,
          organizerUserId: m.organizer_user_id,
          attendeeUserIds: attendeeIds(m),
        },
      ];
    });
    const decision = doorDecision(bookings, e.userId, e.at, rules);
    if (decision.outcome !== 'check-in') return { outcome: decision.outcome, meetingId: decision.meetingId };
    const window = bookings.find((b) => b.id === decision.meetingId)!;
    const result = await this.deps.changes.underLock(decision.meetingId, e.assetKind, ctx, async ({ meeting: m, write }) => {
      // Decided again on the booking as read under the lock: a check-in or cancel may have come in between.
      const again = doorDecision(
        [{ ...window, status: m.status, organizerUserId: m.organizer_user_id, attendeeUserIds: attendeeIds(m) }],
        e.userId,
        e.at,
        rules,
      );
      if (again.outcome !== 'check-in') return { outcome: again.outcome === 'walk-in' ? 'booked' : again.outcome, meetingId: m.id };
      const now = this.deps.clock.now();
      const organizer = again.asOrganizer ? { ...m.organizer, checkInAt: e.at } : m.organizer;
      const attendees = m.attendees.map((a) => (!again.asOrganizer && a.userId === e.userId ? { ...a, checkInAt: e.at } : a));
      await write({
        at: now,
        set: { status: 'checked-in', organizer, attendees, updated_at: now },
        history: { action: 'check-in', actor: { by: e.userId, source: 'device', sourceDetail: e.deviceId } },
      });
      return { outcome: 'check-in', meetingId: m.id };
    });
    return result as DoorPresenceResult;
  }
}
