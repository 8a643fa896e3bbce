/**
 * The one writer of booking changes.
 *
 * Whoever changes a booking — an API call, a lifecycle step, and later a payment,
 * a calendar message or an offboarding — is an *actor*: it reads the booking
 * under its asset's lock, decides with a pure rule, and describes the result as a
 * `BookingChange` (column changes, held slots, attendees, one history entry, one
 * outbox event, the re-planned lifecycle steps). The writer applies that change in
 * the actor's transaction using the asset and project it is handed (`BookingScope`),
 * never reading them again. Events and timers leave through two ports so this
 * module does not depend on the webhook or lifecycle machinery.
 */
import { resolveMeetingConfig, type AssetConfig } from './rules/asset-config.js';
import type { BookingFacts, EventDetail } from '../webhooks/index.js';
import { newId } from '../../platform/ids.js';
import type { Db } from '../../platform/db/db.js';
import {
  type HistoryRow,
  type MeetingChanges,
  type MeetingRepository,
  type MeetingRow,
  type NewHistory,
  type NewMeeting,
  type NewSlot,
} from './meeting-repository.js';
import { occurrenceAt, type StoredAttendee } from './meeting-view.js';
import { randomInt } from 'node:crypto';
import { finalStateRefusal } from './rules/meeting-rules.js';

export interface Window {
  start: number;
  end: number;
}

/** What a change is written against, as the actor already holds it. */
export interface BookingScope {
  asset: {
    kind: 'room' | 'desk';
    id: string;
    name: string;
    floorName: string;
    config: AssetConfig;
    /** A room's email (its calendar, when the project connects one); null for desks and rooms without one. */
    calendarEmail: string | null;
    /** Ids of the devices at the asset's door (site document `accessDevices`); empty for most assets. */
    accessDevices: readonly string[];
  };
  project: { id: string; timezone: string; maxHoldMs: number };
}

/** Who made a change, as history records it. */
export interface Actor {
  by: string;
  source: string;
  sourceDetail: string | null;
}

/** A new booking's PIN: six random digits (crypto). Every actor that creates or voids a PIN takes it from here. */
export function newPinCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

export const SYSTEM_ACTOR: Actor = { by: 'system', source: 'system', sourceDetail: null };

export interface HistoryEntry {
  action: string;
  actor: Actor;
  reason?: string | null;
  /** Defaults to the booking's status before the change. */
  statusBefore?: string | null;
  oldStart?: number | null;
  oldEnd?: number | null;
  newStart?: number | null;
  newEnd?: number | null;
}

export type SlotChange =
  /** A single booking holds this window now (its one slot keeps the booking's id). */
  | { replace: Window }
  /** A single booking holds several windows for now (an unpaid move holds the old and the new one). */
  | { hold: Window[] }
  /** The booking holds nothing any more. */
  | { release: true }
  /** One held slot ends earlier (check-out). */
  | { endSlot: { id: string; end: number } }
  /** One occurrence's slot is let go (a series occurrence cancelled). */
  | { dropSlot: string }
  /** One occurrence's slot moves (a series occurrence moved in a calendar). */
  | { moveSlot: { id: string; start: number; end: number } };

export interface BookingChange {
  /** When it happened (service time): history time, event time, timer planning. */
  at: number;
  set?: MeetingChanges;
  slots?: SlotChange;
  attendees?: StoredAttendee[];
  history?: HistoryEntry;
  event?: { window: Window; detail: EventDetail };
  /** Re-plans the lifecycle steps for this window; null drops every pending step. */
  timers?: { window: Window | null };
}

export interface NewBooking {
  meeting: NewMeeting;
  slots: NewSlot[];
  attendees: StoredAttendee[];
  histories: HistoryEntry[];
  /** The event of the new booking (`*_BOOK`; `*_PAYMENT_DUE` for a back-office hold; none while a checkout is unpaid). */
  event?: { window: Window; detail: EventDetail };
  /** The window whose lifecycle steps are planned; null plans none (a declined invitation). */
  timersFor: Window | null;
}

/** Port: records a booking event in the outbox (same transaction). */
export interface BookingEventSink {
  emit(trx: Db, e: { meetingId: string; facts: BookingFacts; detail: EventDetail; at: number }): Promise<void>;
  /** Starts, in `trx`, the read an event of the project will need (its listeners), ahead of `emit`. */
  prefetch(trx: Db, projectId: string): Promise<void>;
}

/** Port: plans and stores the clock-driven steps of a booking (same transaction). */
export interface LifecyclePlanner {
  /** Replaces the booking's pending steps with those of `window` (none when null); `fresh`: it has none yet. */
  replan(
    trx: Db,
    p: { meetingId: string; allDay: boolean; config: AssetConfig; window: Window | null; now: number; fresh?: boolean },
  ): Promise<void>;
}

/**
 * Port: hears of every booking change in its transaction (e.g. connected room
 * calendars queue the write to the room's calendar in the same commit).
 */
export interface BookingChangeObserver {
  changed(
    trx: Db,
    c: {
      meetingId: string;
      assetKind: 'room' | 'desk';
      assetId: string;
      calendarEmail: string | null;
      at: number;
      /** Set only for assets with door devices: what the booking's door access hangs on, after the change. */
      door: DoorAccessFacts | null;
    },
  ): Promise<void>;
}

/** A booking's facts its participants' door access is planned from (assets with `accessDevices` only). */
export interface DoorAccessFacts {
  projectId: string;
  timeZone: string;
  deviceIds: readonly string[];
  /** The asset's check-in window before the start (minutes; -1: from the start of the booking's local day). */
  preStartMinutes: number;
  status: string;
  /** The times held: a single booking's window, or a series' remaining occurrences. */
  windows: { start: number; end: number }[];
  /** The organizer and the attendees who are users. */
  userIds: string[];
}

/** The door facts of `m` after a change, or null when the asset has no door devices. */
function doorFacts(scope: BookingScope, m: MeetingRow): DoorAccessFacts | null {
  if (!scope.asset.accessDevices.length) return null;
  const windows = m.recurrence
    ? m.recurrence.occurrences.map((o) => ({ start: o.start, end: o.end }))
    : [{ start: m.start_at, end: m.end_at }];
  const userIds = [m.organizer_user_id, ...m.attendees.flatMap((a) => (a.userId ? [a.userId] : []))];
  return {
    projectId: m.project_id,
    timeZone: scope.project.timezone,
    deviceIds: scope.asset.accessDevices,
    preStartMinutes: resolveMeetingConfig(scope.asset.config).preStartMinutes,
    status: m.status,
    windows,
    userIds: [...new Set(userIds)],
  };
}

/**
 * The facts of a booking an event describes: `m` as it is after the change, `window`
 * the times the event carries (on a series, those of the occurrence it is about).
 */
export function bookingFacts(scope: BookingScope, m: MeetingRow, window: Window): BookingFacts {
  const organizer = m.organizer;
  return {
    projectId: m.project_id,
    timeZone: scope.project.timezone,
    meetingId: m.id,
    occurrenceId: occurrenceAt(m.recurrence, window)?.id ?? null,
    assetKind: scope.asset.kind,
    assetId: scope.asset.id,
    assetName: scope.asset.name,
    floorName: scope.asset.floorName,
    organizerUserId: m.organizer_user_id,
    organizerName: organizer.name,
    organizerEmail: organizer.email,
    attendeeNames: m.attendees.map((a) => a.name),
    start: window.start,
    end: window.end,
  };
}

function historyRow(meetingId: string, statusBefore: string | null, at: number, h: HistoryEntry): NewHistory {
  return {
    id: newId(at),
    meeting_id: meetingId,
    action: h.action,
    at,
    by: h.actor.by,
    source: h.actor.source,
    source_detail: h.actor.sourceDetail,
    reason: h.reason ?? null,
    status_before: h.statusBefore === undefined ? statusBefore : h.statusBefore,
    old_start_at: h.oldStart ?? null,
    old_end_at: h.oldEnd ?? null,
    new_start_at: h.newStart ?? null,
    new_end_at: h.newEnd ?? null,
  };
}

export class BookingChangeWriter {
  constructor(
    private readonly deps: {
      meetings: MeetingRepository;
      events: BookingEventSink;
      lifecycle: LifecyclePlanner;
      /** Late-bound: whoever else must hear of a change in its transaction. */
      observers?: () => readonly BookingChangeObserver[];
    },
  ) {}

  private async observed(trx: Db, scope: BookingScope, m: MeetingRow, at: number): Promise<void> {
    const { kind: assetKind, id: assetId, calendarEmail } = scope.asset;
    const door = doorFacts(scope, m);
    for (const o of this.deps.observers?.() ?? []) await o.changed(trx, { meetingId: m.id, assetKind, assetId, calendarEmail, at, door });
  }

  /**
   * Called in the actor's transaction before its conflict read when the change will record an
   * event: what the event needs is read beside that read (on PostgreSQL in the same round trip).
   */
  prepare(trx: Db, scope: BookingScope): Promise<void> {
    return this.deps.events.prefetch(trx, scope.project.id);
  }

  /** Stores a new booking with its slots, attendees, first history entries, BOOK event and lifecycle steps. */
  async create(trx: Db, scope: BookingScope, b: NewBooking): Promise<{ meeting: MeetingRow; histories: HistoryRow[] }> {
    const { meetings } = this.deps;
    const at = b.meeting.created_at;
    const meeting = { ...b.meeting, pin_failures: b.meeting.pin_failures ?? 0 } as MeetingRow;
    await meetings.insert(b.meeting, trx);
    await meetings.insertSlots(b.slots, trx);
    await this.keepLongestHold(trx, scope, b.slots);
    const histories = await meetings.insertFirstHistories(
      b.histories.map((h) => historyRow(meeting.id, null, at, h)),
      trx,
    );
    await meetings.insertAttendees(meeting.id, b.attendees, trx);
    if (b.event)
      await this.deps.events.emit(trx, {
        meetingId: meeting.id,
        facts: bookingFacts(scope, meeting, b.event.window),
        detail: b.event.detail,
        at,
      });
    await this.deps.lifecycle.replan(trx, {
      meetingId: meeting.id,
      allDay: meeting.all_day,
      config: scope.asset.config,
      window: b.timersFor,
      now: at,
      fresh: true,
    });
    await this.observed(trx, scope, meeting, at);
    return { meeting, histories };
  }

  /**
   * Applies one change to `before` (as read under the lock); returns the booking after it.
   * A booking in a final state (done, cancelled, rejected) is never changed, whoever asks.
   */
  async apply(trx: Db, scope: BookingScope, before: MeetingRow, change: BookingChange): Promise<MeetingRow> {
    const final = finalStateRefusal(before.status);
    if (final) throw final;
    const { meetings } = this.deps;
    const after = { ...before, ...change.set } as MeetingRow;
    const slots = change.slots;
    if (slots && 'replace' in slots) {
      const w = slots.replace;
      const slot = {
        id: before.id,
        meeting_id: before.id,
        project_id: before.project_id,
        asset_id: before.asset_id,
        occurrence_index: 0,
        start_at: w.start,
        end_at: w.end,
      };
      await meetings.replaceSlots(before.id, [slot], trx);
      await this.keepLongestHold(trx, scope, [slot]);
    } else if (slots && 'hold' in slots) {
      const held = slots.hold.map((w, i) => ({
        id: i === 0 ? before.id : newId(change.at),
        meeting_id: before.id,
        project_id: before.project_id,
        asset_id: before.asset_id,
        occurrence_index: i,
        start_at: w.start,
        end_at: w.end,
      }));
      await meetings.replaceSlots(before.id, held, trx);
      await this.keepLongestHold(trx, scope, held);
    } else if (slots && 'release' in slots) {
      await meetings.releaseSlots(before.id, trx);
    } else if (slots && 'endSlot' in slots) {
      await meetings.updateSlotEnd(slots.endSlot.id, slots.endSlot.end, trx);
    } else if (slots && 'dropSlot' in slots) {
      await meetings.deleteSlot(slots.dropSlot, trx);
    } else if (slots && 'moveSlot' in slots) {
      const { id, start, end } = slots.moveSlot;
      await meetings.moveSlot(id, start, end, trx);
      await this.keepLongestHold(trx, scope, [{ start_at: start, end_at: end }]);
    }
    if (change.attendees) {
      after.attendees = change.attendees;
      await meetings.replaceAttendees(before.id, change.attendees, trx);
    }
    const set = change.attendees ? { ...change.set, attendees: after.attendees } : change.set;
    if (set && Object.keys(set).length) await meetings.update(before.id, set, trx);
    if (change.history) await meetings.appendHistory(historyRow(before.id, before.status, change.at, change.history), trx);
    if (change.event) {
      await this.deps.events.emit(trx, {
        meetingId: before.id,
        facts: bookingFacts(scope, after, change.event.window),
        detail: change.event.detail,
        at: change.at,
      });
    }
    if (change.timers) {
      await this.deps.lifecycle.replan(trx, {
        meetingId: before.id,
        allDay: after.all_day,
        config: scope.asset.config,
        window: change.timers.window,
        now: change.at,
      });
    }
    await this.observed(trx, scope, after, change.at);
    return after;
  }

  /**
   * projects.max_hold_ms only grows, so a scope that already holds at least this
   * length needs no write; otherwise the conditional update raises it.
   */
  private async keepLongestHold(trx: Db, scope: BookingScope, slots: Pick<NewSlot, 'start_at' | 'end_at'>[]): Promise<void> {
    const longest = Math.max(0, ...slots.map((s) => s.end_at - s.start_at));
    if (longest > scope.project.maxHoldMs) await this.deps.meetings.raiseLongestHold(scope.project.id, longest, trx);
  }
}
