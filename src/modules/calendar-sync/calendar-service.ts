/**
 * Calendar sync (operator-api.md "Calendar sync"): the room's mailbox hands every
 * iTIP message it receives to the service, which stays the one source of truth.
 * This module is an actor of the booking-change writer, like the API and the clock:
 * it reads under the room's lock, decides with the pure rules of `rules/decision.ts`
 * (the decision table) and the booking rules, and writes the booking and the calendar
 * record in one transaction.
 *
 * - REQUEST, new UID: booked under every rule, or stored `rejected` and declined.
 * - REQUEST, known UID: a move (before check-in: moved, or cancelled with the rule
 *   as reason; checked-in: only the end moves, when the room is free); the room no
 *   longer among the attendees cancels with an explicit reason.
 * - REPLY with the room declining: cancelled with an explicit reason.
 * - CANCEL: active → cancelled; checked-in → done, ending now. With a
 *   RECURRENCE-ID only that occurrence of a series goes.
 * - Older SEQUENCEs change nothing; the same message twice gets the same answer.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { CalendarMessageResult, CalendarProvider } from '../../contract/calendar-sync.js';
import {
  newPinCode,
  scopeOf,
  withoutOccurrence,
  type Actor,
  type BookingChange,
  type BookingChanges,
  type BookingScope,
  type HistoryEntry,
  type MeetingRow,
  type NewBooking,
  type StoredAttendee,
  type Window,
  plainBookingColumns,
} from '../booking/index.js';
import { truncateToMinute } from '../booking/rules/availability.js';
import { checkedInAtCreate, isClosedStatus } from '../booking/rules/asset-config.js';
import { expandRecurrence, parseRecurrence } from '../booking/rules/recurrence.js';
import { configProblems, conflictMessage } from '../booking/rules/window-refusals.js';
import { checkOutEnd } from '../booking/rules/meeting-rules.js';
import { buildReply, messageHash, parseItip, type ItipEvent, type ItipMessage } from './itip.js';
import type { CalendarEvent, CalendarRepository } from './calendar-repository.js';
import type { CalendarOrganizer, CalendarOrganizers, CalendarRoom, CalendarRooms } from './ports.js';
import { describeWindow, eventWindow, REASONS, verdict } from './rules/sync-rules.js';
import {
  afterWindowCheck,
  bookingRefusal,
  currentOccurrence,
  decide,
  newInvitation,
  organizerRefusal,
  planDropOccurrence,
  planMove,
  planMoveOccurrence,
  type MessageFacts,
  type Outcome,
} from './rules/decision.js';

export interface CalendarSyncServiceDeps {
  changes: BookingChanges;
  rooms: CalendarRooms;
  organizers: CalendarOrganizers;
  repo: CalendarRepository;
  secretBox: SecretBox;
  clock: Clock;
}

export type { Outcome } from './rules/decision.js';

export interface RoomResult extends CalendarMessageResult {
  roomId: string;
}

/** What one message decided for one room (before the reply is written). */
interface Decision {
  outcome: Outcome;
  meeting: MeetingRow | null;
  accepted: boolean;
  reason: string | null;
  window?: Window;
}

type Room = CalendarRoom;
type Trx = Kysely<Database>;

export class CalendarSync {
  constructor(private readonly deps: CalendarSyncServiceDeps) {}

  /**
   * Applies one iTIP message for every room of the service it concerns (`roomHint`,
   * an email or id, narrows it to one). The first room's result leads.
   */
  async receive(provider: CalendarProvider, text: string, roomHint?: string): Promise<CalendarMessageResult & { rooms: RoomResult[] }> {
    const parsed = parseItip(text);
    if (!parsed.ok) throw errors.validation(parsed.errors.map((e) => `body: ${e}`));
    const message = parsed.message;
    if (!['REQUEST', 'CANCEL', 'REPLY'].includes(message.method)) {
      throw errors.validation([
        `body: METHOD ${message.method || '(none)'} is not handled; the room's mailbox forwards REQUEST, CANCEL and REPLY messages`,
      ]);
    }
    const uid = message.events[0]!.uid;
    const rooms = await this.roomsOf(provider, message, roomHint);
    if (!rooms.length) throw errors.notFound('No room of this service is invited by this message');
    const hash = messageHash(text);
    const results: RoomResult[] = [];
    for (const room of rooms) results.push(await this.forRoom(provider, room, message, hash));
    const { roomId: _first, ...lead } = results[0]!;
    return { ...lead, uid, rooms: results };
  }

  /** The rooms among the attendees, plus rooms that already hold this UID (a room removed from the invitation). */
  private async roomsOf(provider: string, message: ItipMessage, hint?: string): Promise<Room[]> {
    const emails = [...new Set(message.events.flatMap((e) => e.attendees.map((a) => a.email)))];
    const rooms = await this.deps.rooms.roomsByEmail(emails);
    for (const roomId of await this.deps.repo.roomsOf(provider, message.events[0]!.uid)) {
      if (rooms.some((r) => r.asset.id === roomId)) continue;
      const ctx = await this.deps.rooms.assetInContext('room', roomId);
      if (ctx) rooms.push({ ...ctx, email: (ctx.asset.email ?? '').toLowerCase() });
    }
    if (hint === undefined) return rooms;
    const h = hint.toLowerCase();
    return rooms.filter((r) => r.asset.id === hint || r.email === h);
  }

  /**
   * One change read from a connected room calendar (connected-sync.ts), decided for
   * that room exactly like an iTIP message. `serviceEvent`: an event the service wrote
   * (only its times and removal count; the booking's title and guests stay). `within`
   * runs in the same transaction once the answer is known (links and the outbox).
   */
  applyRemote(provider: CalendarProvider, room: Room, message: ItipMessage, opts: RemoteOptions): Promise<RoomResult> {
    return this.forRoom(provider, room, message, opts.hash, opts);
  }

  private async forRoom(
    provider: CalendarProvider,
    room: Room,
    message: ItipMessage,
    hash: string,
    opts: Partial<RemoteOptions> = {},
  ): Promise<RoomResult> {
    const { changes, repo, clock } = this.deps;
    const master = message.events.find((e) => e.recurrenceId === null) ?? message.events[0]!;
    const uid = master.uid;
    const sequence = Math.max(...message.events.map((e) => e.sequence));
    const dtstamp = master.dtstamp;
    // Read before the lock: the organizer's account (outside any transaction).
    const organizer = master.organizer
      ? await this.deps.organizers.organizerByEmail(room.project.id, room.project.brand_id, master.organizer.email)
      : undefined;
    const accounts = await this.deps.organizers.accountsByEmail(master.attendees.map((a) => a.email));

    return changes.withLock('room', room.asset.id, async (trx) => {
      const now = clock.now();
      const stored = (await repo.event(provider, room.asset.id, uid, trx)) ?? null;
      const v = verdict(stored, { sequence, dtstamp, hash });
      if (v !== 'apply') {
        const meeting = stored?.meetingId ? ((await changes.meetingIn(trx, stored.meetingId)) ?? null) : null;
        return this.result(room, uid, v, meeting, stored!.lastReply, answerOf(stored!.lastReply));
      }
      const serviceEvent = opts.serviceEvent ?? false;
      const actor: Actor = { by: organizer?.userId ?? 'calendar', source: provider, sourceDetail: uid };
      const current = stored?.meetingId ? ((await changes.meetingIn(trx, stored.meetingId)) ?? null) : null;
      const ctx: Ctx = {
        trx,
        room,
        scope: scopeOf('room', room),
        now,
        actor,
        organizer: organizer ?? null,
        message,
        master,
        accounts,
        serviceEvent,
      };
      const decision = await this.decide(ctx, current);

      const w =
        decision.window ??
        (decision.meeting ? { start: decision.meeting.start_at, end: decision.meeting.end_at } : eventWindowOf(master, room));
      const reply = buildReply({
        // A message about one occurrence (RECURRENCE-ID only) is answered for that occurrence.
        uid,
        recurrenceId: message.events.length === 1 ? message.events[0]!.recurrenceId : null,
        sequence,
        summary: master.summary,
        start: w.start,
        end: w.end,
        roomEmail: room.email,
        roomName: room.asset.name,
        organizer: master.organizer,
        partstat: decision.accepted ? 'ACCEPTED' : 'DECLINED',
        comment: decision.reason ?? `Accepted: ${room.asset.name} is booked ${describeWindow(w, room.project.timezone)}`,
        now,
      });
      const seen: CalendarEvent = {
        provider,
        roomId: room.asset.id,
        uid,
        meetingId: decision.meeting?.id ?? stored?.meetingId ?? null,
        sequence: Math.max(sequence, stored?.sequence ?? 0),
        dtstamp: dtstamp ?? stored?.dtstamp ?? null,
        lastHash: hash,
        lastReply: reply,
        createdAt: stored?.createdAt ?? now,
        updatedAt: now,
      };
      await repo.put(seen, trx);
      const result = this.result(room, uid, decision.outcome, decision.meeting, reply, {
        accepted: decision.accepted,
        reason: decision.reason,
      });
      if (opts.within) await opts.within(trx, result);
      return result;
    });
  }

  private result(
    room: Room,
    uid: string,
    outcome: Outcome,
    meeting: MeetingRow | null,
    reply: string,
    answer: { accepted: boolean; reason: string | null },
  ): RoomResult {
    return {
      roomId: room.asset.id,
      uid,
      meetingId: meeting?.id ?? null,
      status: meeting?.status ?? (outcome === 'rejected' ? 'rejected' : null),
      reply,
      partstat: answer.accepted ? 'ACCEPTED' : 'DECLINED',
      reason: answer.accepted ? null : answer.reason,
      outcome,
    };
  }

  // -------------------------------------------------------------------------

  /** Asks the decision table (rules/decision.ts) what the message does, and carries out that step. */
  private async decide(c: Ctx, meeting: MeetingRow | null): Promise<Decision> {
    const { message, master } = c;
    const roomAttendee = (e: ItipEvent) => e.attendees.find((a) => a.email === c.room.email);
    // The override of one occurrence (REQUEST) or the occurrence deleted (CANCEL).
    const occurrence = message.events.find((e) => e.recurrenceId !== null);
    const step = decide(
      {
        method: message.method as MessageFacts['method'],
        roomInvited: roomAttendee(master) !== undefined,
        cancelled: master.status === 'CANCELLED',
        occurrence: occurrence ? occurrence.recurrenceId : null,
        roomPartstat: message.events.map(roomAttendee).find((a) => a !== undefined)?.partstat ?? null,
      },
      meeting && { status: meeting.status, series: Boolean(meeting.recurrence) },
    );
    switch (step.kind) {
      case 'answer':
        return { outcome: step.outcome, meeting, accepted: step.accepted, reason: step.reason };
      case 'book':
        return this.book(c);
      // The steps below come only with a booking (the table answers a missing one itself).
      case 'withdraw':
        return this.withdraw(c, meeting!, step.reason);
      case 'move':
        return this.move(c, meeting!);
      case 'moveOccurrence':
        return this.moveOccurrence(c, meeting!, occurrence!);
      case 'dropOccurrence':
        return this.dropOccurrence(c, meeting!, step.originalStart);
    }
  }

  /** The windows of a new invitation (a series expanded), or the reason it cannot be booked. */
  private requested(c: Ctx): { windows: Window[]; rule: string | null } | { reason: string } {
    const tz = c.room.project.timezone;
    const w = eventWindowOf(c.master, c.room);
    const first = { start: truncateToMinute(w.start), end: truncateToMinute(w.end) };
    if (first.end <= first.start) return { reason: 'The event ends before it starts' };
    if (!c.master.rrule) return { windows: [first], rule: null };
    const parsed = parseRecurrence(c.master.rrule, tz);
    if (!parsed.ok)
      return { reason: `The repeat rule is not supported (${parsed.errors.join('; ')}); invite the room to each meeting instead` };
    const expanded = expandRecurrence(parsed.rule, first, tz);
    if (!expanded.ok)
      return { reason: `The repeat rule is not supported (${expanded.errors.join('; ')}); invite the room to each meeting instead` };
    const skipped = new Set(c.master.exdates.map(truncateToMinute));
    const windows = expanded.occurrences.map((o) => ({ start: o.start, end: o.end })).filter((o) => !skipped.has(o.start));
    if (!windows.length) return { reason: 'Every occurrence of the series is excluded' };
    return { windows, rule: c.master.rrule.replace(/^RRULE:/i, '') };
  }

  /** The first broken rule or clash among `windows` (null when all can be booked). */
  private async windowRefusal(
    c: Ctx,
    windows: Window[],
    excludeId: string | null,
    opts: { allDay: boolean; ignoreLeadTime?: boolean },
  ): Promise<string | null> {
    const { room, now } = c;
    const tz = room.project.timezone;
    const config = c.scope.asset.config;
    const [problem] = configProblems(windows, {
      config,
      timeZone: tz,
      asset: 'room',
      now,
      allDay: opts.allDay,
      ignoreLeadTime: opts.ignoreLeadTime,
    });
    if (problem)
      return opts.allDay ? `All-day events book the whole day, and ${problem.charAt(0).toLowerCase()}${problem.slice(1)}` : problem;
    const clashes = await this.deps.changes.clashes(c.trx, 'room', room, windows, excludeId);
    const at = clashes.findIndex((x) => x !== null);
    if (at >= 0) return `${windows.length > 1 ? `occurrence ${at + 1}: ` : ''}${conflictMessage(clashes[at]!, tz, 'room', windows[at])}`;
    return null;
  }

  /** A new invitation: booked under every rule, or stored as `rejected` (when there is an organizer to hold it). */
  private async book(c: Ctx): Promise<Decision> {
    const { room, master } = c;
    const asset = room.asset;
    const rate = asset.charge_rate;
    const requested = this.requested(c);
    const windows = 'windows' in requested ? requested.windows : [eventWindowOf(master, room)];
    const organizer = organizerRefusal({
      invitedBy: master.organizer ? master.organizer.email : null,
      account: c.organizer,
      projectName: room.project.name,
      roomName: asset.name,
      roomIsPublic: asset.is_public,
    });
    let reason = bookingRefusal({
      organizer,
      roomName: asset.name,
      closedStatus: isClosedStatus('room', asset.status) ? asset.status : null,
      paid: Boolean(rate.perHour || rate.perDay || rate.amount),
      times: 'reason' in requested ? requested.reason : null,
    });
    if (!reason) reason = await this.windowRefusal(c, windows, null, { allDay: master.allDay });

    const invitation = newInvitation(reason, c.organizer !== null);
    if (invitation.kind === 'reject' && !invitation.store)
      return { outcome: 'rejected', meeting: null, accepted: false, reason: invitation.reason, window: windows[0] };
    const rule = 'windows' in requested ? requested.rule : null;
    const { meeting } = await this.deps.changes.writer.create(c.trx, c.scope, this.newBooking(c, windows, rule, reason));
    return invitation.kind === 'reject'
      ? { outcome: 'rejected', meeting, accepted: false, reason: invitation.reason, window: windows[0] }
      : { outcome: 'booked', meeting, accepted: true, reason: null, window: windows[0] };
  }

  /** The booking a new invitation makes for its organizer: active (or checked in at once), or `rejected` with `reason`. */
  private newBooking(c: Ctx, windows: Window[], rule: string | null, reason: string | null): NewBooking {
    const { room, now, master } = c;
    const asset = room.asset;
    const id = newId(now);
    const startsCheckedIn = !reason && checkedInAtCreate(c.scope.asset.config, now, windows[0]!.start);
    const series =
      !reason && rule && windows.length > 1
        ? { rule, occurrences: windows.map((w, i) => ({ id: i === 0 ? id : newId(now), ...w })) }
        : null;
    const o = c.organizer!;
    const histories: HistoryEntry[] = reason
      ? [{ action: 'rejected', actor: c.actor, statusBefore: null, reason, newStart: windows[0]!.start, newEnd: windows[0]!.end }]
      : [{ action: 'create', actor: c.actor, statusBefore: null, newStart: windows[0]!.start, newEnd: windows[0]!.end }];
    if (startsCheckedIn)
      histories.push({
        action: 'check-in',
        actor: { by: 'system', source: 'system', sourceDetail: 'check-in not required' },
        statusBefore: 'active',
      });
    const attendees = attendeesOf(master, room.email, c.accounts);
    return {
      meeting: {
        id,
        project_id: room.project.id,
        asset_kind: 'room',
        asset_id: asset.id,
        room_id: asset.id,
        desk_id: null,
        title: master.summary,
        body: master.description,
        start_at: windows[0]!.start,
        end_at: windows[0]!.end,
        booked_end_at: windows[0]!.end,
        span_end_at: windows[windows.length - 1]!.end,
        all_day: master.allDay,
        time_period: null,
        status: reason ? 'rejected' : startsCheckedIn ? 'checked-in' : 'active',
        pin_enc: this.deps.secretBox.seal(newPinCode()),
        pin_failures: 0,
        organizer_user_id: o.userId,
        organizer: { email: o.email, name: o.name, displayName: o.displayName, checkInAt: startsCheckedIn ? now : null, checkOutAt: null },
        attendees,
        ...plainBookingColumns(),
        recurrence: series,
        cancel_reason: reason,
        created_at: now,
        updated_at: now,
      },
      slots: reason
        ? []
        : (series?.occurrences ?? [{ id, ...windows[0]! }]).map((occ, i) => ({
            id: occ.id,
            meeting_id: id,
            project_id: room.project.id,
            asset_id: asset.id,
            occurrence_index: i,
            start_at: occ.start,
            end_at: occ.end,
          })),
      attendees,
      histories,
      event: reason ? undefined : { window: windows[0]!, detail: { kind: 'BOOK' } },
      timersFor: reason ? null : windows[0]!,
    };
  }

  private write(c: Ctx, meeting: MeetingRow, change: BookingChange): Promise<MeetingRow> {
    return this.deps.changes.writer.apply(c.trx, c.scope, meeting, change);
  }

  /** Details that change no time: the title, the description, the guests. */
  private details(c: Ctx, meeting: MeetingRow): BookingChange['set'] & object {
    const set: Record<string, unknown> = {};
    if (c.master.summary !== meeting.title) set.title = c.master.summary;
    if (c.master.description !== meeting.body) set.body = c.master.description;
    return set;
  }

  /** A known invitation with (maybe) new times: planned by `planMove`, the window checked when the plan asks. */
  private async move(c: Ctx, meeting: MeetingRow): Promise<Decision> {
    const { now } = c;
    const tz = c.room.project.timezone;
    const series = meeting.recurrence;
    const w = eventWindowOf(c.master, c.room);
    const to = { start: truncateToMinute(w.start), end: truncateToMinute(w.end) };
    // An event the service wrote carries the booking's own title and guests: only its times are read back.
    const details = c.serviceEvent ? {} : this.details(c, meeting);
    const attendees = attendeesOf(c.master, c.room.email, c.accounts);
    // Compared as stored (the same serialization on both sides), as when the column was compared as text.
    const attendeesChanged = !c.serviceEvent && JSON.stringify(attendees) !== JSON.stringify(meeting.attendees);
    const sameTimes = series
      ? to.start === series.occurrences[0]!.start &&
        to.end === series.occurrences[0]!.end &&
        (c.master.rrule ?? '').replace(/^RRULE:/i, '') === series.rule
      : to.start === meeting.start_at && to.end === meeting.end_at;
    const booked = { start: meeting.start_at, end: meeting.end_at };
    let plan = planMove({ status: meeting.status, booked, series: series !== null, sameTimes, to });
    if (plan.kind === 'moveEnd' && plan.check) {
      const refusal = await this.windowRefusal(c, [{ start: booked.start, end: plan.end }], meeting.id, {
        allDay: false,
        ignoreLeadTime: true,
      });
      plan = afterWindowCheck(plan, booked, refusal, tz);
    } else if (plan.kind === 'move') {
      const refusal = await this.windowRefusal(c, [plan.to], meeting.id, { allDay: c.master.allDay, ignoreLeadTime: plan.ignoreLeadTime });
      plan = afterWindowCheck(plan, booked, refusal, tz);
    }
    switch (plan.kind) {
      case 'unchanged': {
        if (!Object.keys(details).length && !attendeesChanged) return { outcome: 'unchanged', meeting, accepted: true, reason: null };
        const touched = await this.write(c, meeting, {
          at: now,
          set: { ...details, updated_at: now },
          ...(attendeesChanged ? { attendees } : {}),
          history: { action: 'update', actor: c.actor },
        });
        return { outcome: 'unchanged', meeting: touched, accepted: true, reason: null };
      }
      case 'refuse':
        return { outcome: 'refused', meeting, accepted: false, reason: plan.reason };
      case 'cancel':
        return this.cancelFor(c, meeting, plan.reason);
      case 'moveEnd': {
        const end = plan.end;
        const set = { ...details, end_at: end, booked_end_at: end, span_end_at: end, updated_at: now };
        const moved = await this.writeMove(c, meeting, set, { start: meeting.start_at, end }, attendeesChanged ? attendees : null);
        return { outcome: 'moved', meeting: moved, accepted: true, reason: null };
      }
      case 'move': {
        const set = { ...details, start_at: to.start, end_at: to.end, booked_end_at: to.end, span_end_at: to.end, updated_at: now };
        const moved = await this.writeMove(c, meeting, set, to, attendeesChanged ? attendees : null);
        return { outcome: 'moved', meeting: moved, accepted: true, reason: null, window: to };
      }
    }
  }

  /** A booking moved to `window` (times in `set`): its slot, history, MODIFY event and re-planned steps. */
  private writeMove(c: Ctx, meeting: MeetingRow, set: BookingChange['set'], window: Window, attendees: StoredAttendee[] | null) {
    return this.write(c, meeting, {
      at: c.now,
      set,
      ...(attendees ? { attendees } : {}),
      slots: { replace: window },
      history: {
        action: 'update',
        actor: c.actor,
        oldStart: meeting.start_at,
        oldEnd: meeting.end_at,
        newStart: window.start,
        newEnd: window.end,
      },
      event: { window, detail: { kind: 'MODIFY', oldStart: meeting.start_at, oldEnd: meeting.end_at } },
      timers: { window },
    });
  }

  /** A rule-breaking move: the booking is cancelled with the rule as its reason, and its PIN stops working. */
  private async cancelFor(c: Ctx, meeting: MeetingRow, reason: string): Promise<Decision> {
    const cancelled = await this.write(c, meeting, {
      at: c.now,
      set: { status: 'cancelled', cancel_reason: reason, pin_enc: this.deps.secretBox.seal(newPinCode()), updated_at: c.now },
      slots: { release: true },
      history: { action: 'cancel', actor: c.actor, reason },
      event: { window: { start: meeting.start_at, end: meeting.end_at }, detail: { kind: 'CANCEL', cancelReason: reason } },
      timers: { window: null },
    });
    return { outcome: 'cancelled', meeting: cancelled, accepted: false, reason };
  }

  /**
   * The invitation is gone for the room: deleted by the organizer (`reason` null),
   * the room removed from it, or declined in the room's calendar. Before check-in the
   * booking is cancelled; once checked in it ends now.
   */
  private async withdraw(c: Ctx, meeting: MeetingRow, reason: string | null): Promise<Decision> {
    const { now } = c;
    const why = reason ?? REASONS.deleted;
    if (meeting.status === 'checked-in') {
      const series = meeting.recurrence;
      const current = series
        ? (series.occurrences.find((o) => o.end > now) ?? series.occurrences[series.occurrences.length - 1]!)
        : { id: meeting.id, start: meeting.start_at, end: meeting.end_at };
      const end = checkOutEnd({ start: current.start, end: current.end }, now);
      const organizer = { ...meeting.organizer, checkOutAt: now };
      const ended = await this.write(c, meeting, {
        at: now,
        set: { status: 'done', end_at: series ? meeting.end_at : end, span_end_at: end, organizer, updated_at: now },
        slots: series ? { release: true } : { endSlot: { id: meeting.id, end } },
        history: { action: 'check-out', actor: c.actor, reason: why, oldEnd: current.end, newEnd: end },
        timers: { window: null },
      });
      return { outcome: 'ended', meeting: ended, accepted: false, reason: why };
    }
    const cancelled = await this.write(c, meeting, {
      at: now,
      set: { status: 'cancelled', cancel_reason: reason, pin_enc: this.deps.secretBox.seal(newPinCode()), updated_at: now },
      slots: { release: true },
      history: { action: 'cancel', actor: c.actor, reason: why },
      event: {
        window: { start: meeting.start_at, end: meeting.end_at },
        detail: reason ? { kind: 'CANCEL', cancelReason: reason } : { kind: 'CANCEL' },
      },
      timers: { window: null },
    });
    return { outcome: 'cancelled', meeting: cancelled, accepted: false, reason: why };
  }

  /** One occurrence of a series deleted in the calendar: only it goes; the series rolls on. */
  private async dropOccurrence(c: Ctx, meeting: MeetingRow, originalStart: number): Promise<Decision> {
    const series = meeting.recurrence!;
    const plan = planDropOccurrence({
      occurrences: series.occurrences,
      originalStart: truncateToMinute(originalStart),
      status: meeting.status,
      now: c.now,
    });
    if (plan.kind === 'answer') return { outcome: plan.outcome, meeting, accepted: plan.accepted, reason: plan.reason };
    if (plan.kind === 'withdraw') return this.withdraw(c, meeting, null);
    const occ = plan.occurrence;
    // Kept in the series as cancelled, so GET /meetings still lists it under its own status.
    const kept = withoutOccurrence(series, occ.id, 'Deleted in the calendar');
    const remaining = kept.occurrences;
    const next = currentOccurrence(remaining, c.now);
    const updated = await this.write(c, meeting, {
      at: c.now,
      set: { recurrence: kept, span_end_at: remaining[remaining.length - 1]!.end, updated_at: c.now },
      slots: { dropSlot: occ.id },
      history: {
        action: 'update',
        actor: c.actor,
        reason: `Occurrence of ${describeWindow(occ, c.room.project.timezone)} deleted in the calendar`,
        oldStart: occ.start,
        oldEnd: occ.end,
      },
      event: { window: occ, detail: { kind: 'CANCEL' } },
      ...(plan.isCurrent ? { timers: { window: next ?? null } } : {}),
    });
    return { outcome: 'cancelled', meeting: updated, accepted: true, reason: null, window: occ };
  }

  /** One occurrence of a series moved in the calendar (RECURRENCE-ID): that occurrence alone moves when the room allows it. */
  private async moveOccurrence(c: Ctx, meeting: MeetingRow, override: ItipEvent): Promise<Decision> {
    const series = meeting.recurrence!;
    const w = eventWindowOf(override, c.room);
    const plan = planMoveOccurrence({
      occurrences: series.occurrences,
      originalStart: truncateToMinute(override.recurrenceId!),
      cancelled: override.status === 'CANCELLED',
      to: { start: truncateToMinute(w.start), end: truncateToMinute(w.end) },
      status: meeting.status,
      now: c.now,
    });
    if (plan.kind === 'answer')
      return {
        outcome: plan.outcome,
        meeting,
        accepted: plan.accepted,
        reason: plan.reason,
        ...(plan.window ? { window: plan.window } : {}),
      };
    if (plan.kind === 'drop') return this.dropOccurrence(c, meeting, override.recurrenceId!);
    const { occurrence: occ, to } = plan;
    const refusal = await this.windowRefusal(c, [to], meeting.id, { allDay: override.allDay });
    if (refusal) return { outcome: 'refused', meeting, accepted: false, reason: refusal, window: to };
    const current = currentOccurrence(series.occurrences, c.now);
    const others = series.occurrences.filter((o) => o.id !== occ.id);
    const occurrences = [...others, { ...occ, ...to }].sort((a, b) => a.start - b.start);
    const updated = await this.write(c, meeting, {
      at: c.now,
      set: { recurrence: { ...series, occurrences }, span_end_at: occurrences[occurrences.length - 1]!.end, updated_at: c.now },
      slots: { moveSlot: { id: occ.id, start: to.start, end: to.end } },
      history: { action: 'update', actor: c.actor, oldStart: occ.start, oldEnd: occ.end, newStart: to.start, newEnd: to.end },
      event: { window: to, detail: { kind: 'MODIFY', oldStart: occ.start, oldEnd: occ.end } },
      ...(plan.isCurrent || (current && to.start < current.start)
        ? { timers: { window: currentOccurrence(occurrences, c.now) ?? null } }
        : {}),
    });
    return { outcome: 'moved', meeting: updated, accepted: true, reason: null, window: to };
  }
}

interface Ctx {
  trx: Trx;
  room: Room;
  scope: BookingScope;
  now: number;
  actor: Actor;
  organizer: CalendarOrganizer | null;
  message: ItipMessage;
  master: ItipEvent;
  /** Accounts of the invitation's attendees, by email (guests without one are not in it). */
  accounts: Map<string, { id: string; name: string }>;
  /** The message describes an event the service wrote to the room's calendar. */
  serviceEvent: boolean;
}

/** How a change read from a connected calendar is applied (CalendarSync.applyRemote). */
export interface RemoteOptions {
  /** Hash of the event's state (the same state twice is a duplicate). */
  hash: string;
  serviceEvent: boolean;
  /** Runs in the decision's transaction, after the booking and the calendar record are written. */
  within?: (trx: Kysely<Database>, result: RoomResult) => Promise<void>;
}

function eventWindowOf(e: ItipEvent, room: Room): Window {
  return eventWindow(e, room.project.timezone);
}

/**
 * The invitation's guests as the booking's attendees (the room, other rooms and the
 * organizer left out); a guest with an account is linked to it, an external guest
 * is kept by email.
 */
function attendeesOf(e: ItipEvent, roomEmail: string, accounts: Map<string, { id: string; name: string }>): StoredAttendee[] {
  const out: StoredAttendee[] = [];
  for (const a of e.attendees) {
    if (a.email === roomEmail || a.email === e.organizer?.email || a.cutype === 'ROOM' || a.cutype === 'RESOURCE') continue;
    if (out.some((x) => x.email === a.email)) continue;
    const account = accounts.get(a.email);
    out.push({
      userId: account?.id ?? null,
      email: a.email,
      name: account?.name ?? a.name ?? a.email,
      type: 'required',
      responseStatus: 'accepted',
      checkInAt: null,
    });
  }
  return out;
}

/** The room's answer in a stored reply with its comment (the answer written back to a connected calendar). */
export function replyAnswer(reply: string): { accepted: boolean; comment: string | null } {
  return { accepted: /PARTSTAT=ACCEPTED/i.test(reply.replace(/\r?\n[ \t]/g, '')), comment: commentOf(reply) };
}

/** The answer a stored reply gave (a stale or repeated message is answered with it again). */
function answerOf(reply: string): { accepted: boolean; reason: string | null } {
  const accepted = /PARTSTAT=ACCEPTED/i.test(reply.replace(/\r?\n[ \t]/g, ''));
  return { accepted, reason: accepted ? null : commentOf(reply) };
}

function commentOf(reply: string): string | null {
  const m = reply.replace(/\r?\n[ \t]/g, '').match(/^COMMENT[^:]*:(.*)$/m);
  return m ? m[1]!.replace(/\\,/g, ',').replace(/\\;/g, ';').replace(/\\n/gi, '\n').replace(/\\\\/g, '\\').trim() : null;
}
