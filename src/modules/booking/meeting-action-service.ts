/**
 * The actions on a booking: cancel (and the console's staff cancel), check-in and
 * check-out, each decided by the state rules under the asset's lock.
 */
import type { Kysely } from 'kysely';
import type { Principal } from '../auth/index.js';
import { errors } from '../../platform/errors.js';
import type { Database } from '../../platform/db/schema.js';
import type { MeetingRow } from './meeting-repository.js';
import { resolveMeetingConfig } from './rules/asset-config.js';
import { cancelRefusal, checkInRefusal, checkOutEnd, checkOutRefusal } from './rules/meeting-rules.js';
import { actor, callerOf } from './meeting-access.js';
import { currentOccurrence } from './meeting-view.js';
import type { BookingChange, HistoryEntry } from './booking-change.js';
import { billingWithStatus } from './payment-port.js';
import type { MeetingSupport } from './meeting-support.js';

export class MeetingActionService {
  constructor(private readonly s: MeetingSupport) {}

  async cancel(p: Principal, id: string, input: { pinCode?: string; paymentId?: string }) {
    return this.s.change(p, id, input.pinCode, async ({ trx, meeting: m, now, appUser, pinMatches }) => {
      const refusal = cancelRefusal(this.s.facts(m, now), callerOf(p, m, appUser, pinMatches), now);
      if (refusal) throw refusal;
      return this.cancelChange(trx, m, now, actor(p, appUser), input.paymentId);
    });
  }

  /**
   * Staff cancel from the operator console: the same state rules as a project
   * admin's cancel, through the same writer, recorded as actor `ops`, source
   * `console` (with the staff's reason). Returns the booking after it; 404 when unknown.
   */
  async staffCancel(id: string, input: { reason?: string }): Promise<MeetingRow> {
    const staff = { isOrganizer: false, isAttendee: false, isProjectAdmin: true };
    const after = await this.s.deps.changes.change(id, async ({ trx, meeting: m, write }) => {
      const now = this.s.deps.clock.now();
      const refusal = cancelRefusal(this.s.facts(m, now), staff, now);
      if (refusal) throw refusal;
      const change = await this.cancelChange(trx, m, now, { by: 'ops', source: 'console', sourceDetail: null });
      const reason = input.reason?.trim() || null;
      if (reason) {
        change.set = { ...change.set, cancel_reason: reason };
        change.history = { ...change.history!, reason };
      }
      return write(change);
    });
    if (!after) throw errors.notFound('Meeting not found');
    return after;
  }

  /** The change that cancels booking `m` (voiding a pending payment, refunding a paid one before its start). */
  private async cancelChange(
    trx: Kysely<Database>,
    m: MeetingRow,
    now: number,
    who: HistoryEntry['actor'],
    paymentId?: string,
  ): Promise<BookingChange> {
    const f = this.s.facts(m, now);
    const payments = this.s.deps.payments;
    let billing = m.billing_summaries;
    if (m.status === 'unpaid') {
      // The pending payment is voided; a paymentId sent with the cancel must be that payment.
      const pending = await payments.pendingOf(m.id, trx);
      if (paymentId !== undefined && pending?.id !== paymentId) {
        throw errors.validation(['body.paymentId is not the pending payment of this booking']);
      }
      billing = billingWithStatus(billing, await payments.voidPending(trx, m.id, now), 'voided');
    } else if (now < f.start) {
      // A paid booking cancelled before it starts is refunded in full (docs/decisions.md).
      billing = billingWithStatus(billing, await payments.refundSettled(trx, m.id, now), 'refunded');
    }
    return {
      at: now,
      set: { status: 'cancelled', updated_at: now, ...(billing !== m.billing_summaries ? { billing_summaries: billing } : {}) },
      slots: { release: true },
      history: { action: 'cancel', actor: who },
      event: { window: { start: f.start, end: f.end }, detail: { kind: 'CANCEL' } },
      timers: { window: null },
    };
  }

  async checkIn(p: Principal, id: string, input: { pinCode?: string }) {
    return this.s.change(p, id, input.pinCode, async ({ meeting: m, now, appUser, pinMatches, asset, project }) => {
      const preStartMinutes = resolveMeetingConfig(asset.row.config).preStartMinutes;
      const caller = callerOf(p, m, appUser, pinMatches);
      const refusal = checkInRefusal(this.s.facts(m, now), caller, { now, preStartMinutes, timeZone: project.timezone });
      if (refusal) throw refusal;
      const organizer = { ...m.organizer };
      const attendees = m.attendees.map((a) => ({ ...a }));
      if (caller.isAttendee && !caller.isOrganizer) {
        for (const a of attendees) if (p.kind === 'member' && a.userId === p.userId) a.checkInAt = now;
      } else {
        organizer.checkInAt = now;
      }
      return {
        at: now,
        set: { status: 'checked-in', organizer, attendees, updated_at: now },
        history: { action: 'check-in', actor: actor(p, appUser) },
      };
    });
  }

  async checkOut(p: Principal, id: string, input: { pinCode?: string }) {
    return this.s.change(p, id, input.pinCode, async ({ meeting: m, now, appUser, pinMatches }) => {
      const refusal = checkOutRefusal(this.s.facts(m, now), callerOf(p, m, appUser, pinMatches));
      if (refusal) throw refusal;
      const facts = this.s.facts(m, now);
      const end = checkOutEnd(facts, now);
      const organizer = { ...m.organizer, checkOutAt: now };
      // A copy: the current occurrence's end is changed below, the record read stays as it was.
      const series = m.recurrence ? structuredClone(m.recurrence) : null;
      const history: HistoryEntry = { action: 'check-out', actor: actor(p, appUser), oldEnd: facts.end, newEnd: end };
      if (series) {
        // The occurrence ends now; a later occurrence keeps the series active.
        const current = currentOccurrence(series, now);
        current.end = end;
        const next = series.occurrences.find((o) => o.start > current.start);
        return {
          at: now,
          set: {
            recurrence: series,
            status: next ? 'active' : 'done',
            updated_at: now,
            organizer: next ? { ...organizer, checkInAt: null, checkOutAt: null } : organizer,
          },
          slots: { endSlot: { id: current.id, end } },
          history,
          timers: { window: next ?? null },
        };
      }
      return {
        at: now,
        set: { status: 'done', organizer, end_at: end, span_end_at: end, updated_at: now },
        slots: { endSlot: { id: m.id, end } },
        history,
        timers: { window: null },
      };
    });
  }
}
