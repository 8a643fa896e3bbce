/**
 * PATCH /meetings/{id}: move, extend or edit a booking under its asset's lock. A
 * longer (dearer) window on a paid asset waits unpaid for the difference.
 */
import type { Kysely } from 'kysely';
import type { Principal } from '../auth/index.js';
import { errors } from '../../platform/errors.js';
import type { Database } from '../../platform/db/schema.js';
import type { ProjectRow } from '../catalogue/index.js';
import type { MeetingRow } from './meeting-repository.js';
import { truncateToMinute } from './rules/availability.js';
import { updateRefusal } from './rules/meeting-rules.js';
import { actor, callerOf } from './meeting-access.js';
import type { Actor, BookingChange } from './booking-change.js';
import { checkoutDeadline } from '../payments/rules/deadlines.js';
import { fromMinor } from '../payments/rules/pricing.js';
import type { Static } from 'typebox';
import type { UpdateMeetingBody } from '../../contract/meetings.js';
import { parseInstant } from '../../platform/time/instant.js';
import type { Asset, ChangeContext, MeetingSupport, Window } from './meeting-support.js';

export type UpdateMeetingInput = Static<typeof UpdateMeetingBody>;

export const PIN_PATTERN = /^\d{4,8}$/;

export class MeetingUpdateService {
  constructor(private readonly s: MeetingSupport) {}

  async update(p: Principal, id: string, input: UpdateMeetingInput) {
    const caller0 = await this.peek(p, id);
    // The organizer's pinCode sets a new PIN; anyone else's authorizes the change.
    const authPin = caller0.isOrganizer ? undefined : input.pinCode;
    const attendees = input.attendees !== undefined ? await this.s.resolveAttendees(input.attendees) : undefined;
    return this.s.change(p, id, authPin, async (ctx) => {
      const { meeting: m, now, appUser, pinMatches, organizerBlocked } = ctx;
      const caller = callerOf(p, m, appUser, pinMatches);
      const newStart =
        input.startDateTime !== undefined ? truncateToMinute(parseInstant(input.startDateTime, 'body.startDateTime')) : m.start_at;
      const newEnd = input.endDateTime !== undefined ? truncateToMinute(parseInstant(input.endDateTime, 'body.endDateTime')) : m.end_at;
      const changesTimes = newStart !== m.start_at || newEnd !== m.end_at;
      const current = this.s.facts(m, now);
      const refusal = updateRefusal(current, caller, { movesStart: newStart !== m.start_at, changesTimes, organizerBlocked });
      if (refusal) throw refusal;
      if (changesTimes && m.recurrence)
        throw errors.conflict('The times of a recurring series cannot be changed; cancel it and book a new one');
      if (caller.isOrganizer && input.pinCode !== undefined && !PIN_PATTERN.test(input.pinCode)) {
        throw errors.validation(['body.pinCode must be 4 to 8 digits']);
      }

      const who = actor(p, appUser);
      const set: Record<string, unknown> = { updated_at: now };
      const change: BookingChange = { at: now, set };
      if (changesTimes) await this.moveTimes(ctx, change, { start: newStart, end: newEnd }, who);
      if (input.title !== undefined) set.title = input.title;
      if (input.body !== undefined) set.body = input.body;
      if (attendees !== undefined) change.attendees = attendees;
      if (caller.isOrganizer && input.pinCode !== undefined)
        Object.assign(set, { pin_enc: this.s.deps.secretBox.seal(input.pinCode), pin_failures: 0 });
      if (!change.history && (Object.keys(set).length > 1 || attendees !== undefined)) change.history = { action: 'update', actor: who };
      const window = changesTimes ? { start: newStart, end: newEnd } : { start: current.start, end: current.end };
      change.event = { window, detail: { kind: 'MODIFY', oldStart: current.start, oldEnd: current.end } };
      return change;
    });
  }

  /** New times: the rules and conflicts for the new window, its slot, history and steps, and the charge for a dearer one. */
  private async moveTimes(ctx: ChangeContext, change: BookingChange, to: Window, who: Actor): Promise<void> {
    const { trx, meeting: m, now, asset, project } = ctx;
    const set = change.set!;
    if (to.end <= to.start) throw errors.validation(['body.endDateTime must be after body.startDateTime']);
    const config = asset.row.config;
    // Lead time and advance days concern the start; they do not apply when only the end moves.
    this.s.checkRules([to], config, project, asset.kind, now, m.all_day, to.start === m.start_at);
    await this.s.checkConflicts(trx, [to], asset, project, m.id);
    Object.assign(set, { start_at: to.start, end_at: to.end, booked_end_at: to.end, span_end_at: to.end });
    change.slots = { replace: { start: to.start, end: to.end } };
    change.history = { action: 'update', actor: who, oldStart: m.start_at, oldEnd: m.end_at, newStart: to.start, newEnd: to.end };
    change.timers = { window: { start: to.start, end: to.end } };
    const extra = await this.extensionCharge(asset, project, m, to, now);
    if (extra) await this.holdForExtension(trx, change, m, project, to, extra, now);
  }

  /**
   * The new window costs more: the booking waits unpaid for the difference, holding both windows,
   * and a lapse puts the old times and status back (payments module).
   */
  private async holdForExtension(
    trx: Kysely<Database>,
    change: BookingChange,
    m: MeetingRow,
    project: ProjectRow,
    to: Window,
    extra: { minor: number; amount: number },
    now: number,
  ): Promise<void> {
    const opened = await this.s.deps.payments.open(trx, {
      meetingId: m.id,
      projectId: project.id,
      kind: 'extension',
      currency: project.currency,
      amountMinor: extra.minor,
      summary: { subtotal: extra.amount, total: extra.amount, discounts: [] },
      expiresAt: checkoutDeadline(now),
      nudgeAt: null,
      redirectUrl: null,
      promoCodeId: null,
      restore: { status: m.status, start: m.start_at, end: m.end_at },
      payerEmail: m.organizer.email,
      now,
    });
    const billing = [...m.billing_summaries, opened.billing];
    Object.assign(change.set!, { status: 'unpaid', payment: opened.snapshot, billing_summaries: billing });
    const inside = m.start_at >= to.start && m.end_at <= to.end;
    change.slots = inside
      ? { replace: { start: to.start, end: to.end } }
      : {
          hold: [
            { start: m.start_at, end: m.end_at },
            { start: to.start, end: to.end },
          ],
        };
  }

  /** What moving a booking to `to` costs on top of its current window (null when nothing; shortening refunds nothing). */
  private async extensionCharge(
    asset: Asset,
    project: ProjectRow,
    m: MeetingRow,
    to: Window,
    now: number,
  ): Promise<{ minor: number; amount: number } | null> {
    const pricer = await this.s.pricer({}, asset, project, m.all_day, now);
    if (pricer.free) return null;
    const minor = pricer.at(to).minor.subtotal - pricer.at({ start: m.start_at, end: m.end_at }).minor.subtotal;
    return minor > 0 ? { minor, amount: fromMinor(minor, project.currency) } : null;
  }

  /** The caller's relation to a meeting, before any lock (decides how a pinCode is read). */
  private async peek(p: Principal, id: string) {
    const appUser = await this.s.appUserForWrite(p, this.s.deps.clock.now());
    const m = await this.s.deps.meetings.byId(id);
    if (!m || !p.projects.has(m.project_id)) throw errors.notFound('Meeting not found');
    return callerOf(p, m, appUser);
  }
}
