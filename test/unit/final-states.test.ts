/**
 * Terminal states stay terminal: the state machine's final-state rule, the one
 * writer's guard that applies it to every actor, and the payments actor's
 * decision for money that arrives (a late settlement is refunded, never re-confirms).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MEETING_STATUSES, TERMINAL_STATUSES, finalStateRefusal } from '../../src/modules/booking/rules/meeting-rules.js';
import { BookingChangeWriter, type BookingScope } from '../../src/modules/booking/booking-change.js';
import type { MeetingRow } from '../../src/modules/booking/meeting-repository.js';
import { settlementDecision } from '../../src/modules/payments/rules/settlement.js';

describe('final states', () => {
  it('done, cancelled and rejected are final; the others are not', () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual(['cancelled', 'done', 'rejected']);
    for (const s of MEETING_STATUSES) {
      const r = finalStateRefusal(s);
      if (TERMINAL_STATUSES.has(s)) expect(r).toMatchObject({ status: 409, code: 'KS006' });
      else expect(r).toBeNull();
    }
  });

  it('the writer refuses any change to a booking in a final state and touches nothing', async () => {
    const touched: string[] = [];
    const spy = new Proxy(
      {},
      {
        get: (_t, name) => async () => {
          touched.push(String(name));
        },
      },
    );
    const writer = new BookingChangeWriter({ meetings: spy as never, events: spy as never, lifecycle: spy as never });
    const scope = {
      asset: { kind: 'room', id: 'a', name: 'A', floorName: 'F', config: {}, calendarEmail: null, accessDevices: [] },
      project: { id: 'p', timezone: 'UTC', maxHoldMs: 0 },
    } as BookingScope;
    for (const status of ['cancelled', 'done', 'rejected']) {
      const before = { id: 'm', status, start_at: 0, end_at: 1 } as MeetingRow;
      await expect(
        writer.apply({} as never, scope, before, {
          at: 1,
          set: { status: 'active' },
          slots: { replace: { start: 0, end: 1 } },
          event: { window: { start: 0, end: 1 }, detail: { kind: 'BOOK' } },
        }),
      ).rejects.toMatchObject({ status: 409, code: 'KS006' });
    }
    expect(touched).toEqual([]);
    // A live booking is written.
    await writer.apply({} as never, scope, { id: 'm', status: 'unpaid', start_at: 0, end_at: 1 } as MeetingRow, {
      at: 1,
      set: { status: 'active' },
    });
    expect(touched).toEqual(['update']);
  });
});

describe('what a settlement does', () => {
  const due = 1_000_000;
  it('pays a pending payment inside its deadline while the booking waits for it', () => {
    expect(settlementDecision({ status: 'pending', expiresAt: due }, 'unpaid', due - 1)).toEqual({ action: 'settle' });
  });
  it('refunds at and after the deadline: the booking lapsed, or lapses first when the job has not run', () => {
    expect(settlementDecision({ status: 'pending', expiresAt: due }, 'unpaid', due)).toEqual({ action: 'refund', lapseFirst: true });
    expect(settlementDecision({ status: 'expired', expiresAt: due }, 'cancelled', due + 1)).toEqual({
      action: 'refund',
      lapseFirst: false,
    });
  });
  it('refuses voided and refunded payments, and repeats nothing for a settled one', () => {
    expect(settlementDecision({ status: 'voided', expiresAt: due }, 'cancelled', 0)).toEqual({ action: 'refuse', status: 'voided' });
    expect(settlementDecision({ status: 'refunded', expiresAt: due }, 'cancelled', 0)).toEqual({ action: 'refuse', status: 'refunded' });
    expect(settlementDecision({ status: 'settled', expiresAt: due }, 'active', due * 2)).toEqual({ action: 'already-settled' });
  });
  it('never settles for a booking in a final state, whatever the payment and the time', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('pending', 'expired', 'settled', 'voided', 'refunded'),
        fc.constantFrom(...TERMINAL_STATUSES),
        fc.integer({ min: 0, max: 2 * due }),
        fc.boolean(),
        (status, meetingStatus, now, confirmed) =>
          settlementDecision({ status, expiresAt: due }, meetingStatus, now, confirmed).action !== 'settle',
      ),
    );
  });
  it('settles after the deadline when a real provider confirms the money and the booking has not lapsed yet', () => {
    expect(settlementDecision({ status: 'pending', expiresAt: due }, 'unpaid', due + 60_000, true)).toEqual({ action: 'settle' });
    // Once lapsed (payment expired, booking cancelled), the provider's word changes nothing: the money goes back.
    expect(settlementDecision({ status: 'expired', expiresAt: due }, 'cancelled', due + 60_000, true)).toEqual({
      action: 'refund',
      lapseFirst: false,
    });
  });
  it('a confirmed settlement decides as an unconfirmed one inside the deadline', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('pending', 'expired', 'settled', 'voided', 'refunded'),
        fc.constantFrom('unpaid', 'active', 'cancelled', 'done'),
        fc.integer({ min: 0, max: due - 1 }),
        (status, meetingStatus, now) =>
          JSON.stringify(settlementDecision({ status, expiresAt: due }, meetingStatus, now, true)) ===
          JSON.stringify(settlementDecision({ status, expiresAt: due }, meetingStatus, now, false)),
      ),
    );
  });
});
