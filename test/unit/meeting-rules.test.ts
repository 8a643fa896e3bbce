import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  PIN_LOCK_THRESHOLD,
  cancelRefusal,
  checkInRefusal,
  checkOutEnd,
  checkOutRefusal,
  updateRefusal,
  type Caller,
  type MeetingFacts,
  type MeetingStatus,
} from '../../src/modules/booking/rules/meeting-rules.js';

const MIN = 60_000;
const start = Date.UTC(2026, 11, 1, 3, 0); // 10:00 Asia/Bangkok
const end = start + 60 * MIN;
const tz = 'Asia/Bangkok';
const meeting = (over: Partial<MeetingFacts> = {}): MeetingFacts => ({ status: 'active', start, end, pinFailures: 0, ...over });
const organizer: Caller = { isOrganizer: true, isAttendee: false, isProjectAdmin: false };
const stranger: Caller = { isOrganizer: false, isAttendee: false, isProjectAdmin: false };
const code = (e: { code: string } | null) => e?.code ?? null;

describe('check-in refusals, in the spec order', () => {
  const ctx = (now: number, preStartMinutes = 15) => ({ now, preStartMinutes, timeZone: tz });

  it('cancelled → MEETING_043 before anything else', () => {
    expect(checkInRefusal(meeting({ status: 'cancelled' }), stranger, ctx(end + MIN))).toMatchObject({ status: 404, code: 'MEETING_043' });
  });
  it('ended → MEETING_004', () => {
    expect(checkInRefusal(meeting(), organizer, ctx(end))).toMatchObject({ status: 409, code: 'MEETING_004' });
    expect(code(checkInRefusal(meeting({ status: 'done' }), organizer, ctx(start)))).toBe('MEETING_004');
  });
  it('unpaid → MEETING_005', () => {
    expect(checkInRefusal(meeting({ status: 'unpaid' }), organizer, ctx(start))).toMatchObject({ status: 422, code: 'MEETING_005' });
  });
  it('too early → MEETING_040 with the minutes until the window opens', () => {
    const r = checkInRefusal(meeting(), organizer, ctx(start - 45 * MIN));
    expect(r).toMatchObject({ status: 409, code: 'MEETING_040' });
    expect(r!.message).toContain('30 minutes');
    expect(checkInRefusal(meeting(), organizer, ctx(start - 15 * MIN))).toBeNull();
  });
  it('preStartMinutes -1: any time on the day, MEETING_041 on another day', () => {
    expect(checkInRefusal(meeting(), organizer, ctx(start - 3 * 60 * MIN, -1))).toBeNull(); // 07:00 same day
    expect(checkInRefusal(meeting(), organizer, ctx(start - 11 * 60 * MIN, -1))).toMatchObject({ status: 409, code: 'MEETING_041' });
  });
  it('PIN rules for someone who is neither organizer nor attendee', () => {
    const open = ctx(start);
    expect(checkInRefusal(meeting(), { ...stranger, pinMatches: false }, open)).toMatchObject({ status: 404, code: 'MEETING_042' });
    expect(checkInRefusal(meeting(), { ...stranger, pinMatches: true }, open)).toBeNull();
    expect(checkInRefusal(meeting(), stranger, open)).toMatchObject({ status: 404, code: 'MEETING_003' });
    const locked = meeting({ pinFailures: PIN_LOCK_THRESHOLD });
    expect(checkInRefusal(locked, { ...stranger, pinMatches: true }, open)).toMatchObject({ status: 429, code: 'MEETING_039' });
    expect(checkInRefusal(locked, { ...stranger, pinMatches: false }, open)).toMatchObject({ status: 429, code: 'MEETING_039' });
    expect(checkInRefusal(locked, organizer, open)).toBeNull();
    expect(checkInRefusal(meeting(), { ...stranger, isAttendee: true }, open)).toBeNull();
  });
});

describe('cancel, check-out and update refusals', () => {
  it('cancel only from active or unpaid, by organizer, admin or PIN holder', () => {
    for (const status of ['checked-in', 'done', 'cancelled'] as MeetingStatus[]) {
      expect(cancelRefusal(meeting({ status }), organizer, start)).toMatchObject({ status: 409, code: 'MEETING_011' });
    }
    expect(cancelRefusal(meeting({ status: 'unpaid' }), organizer, start)).toBeNull();
    expect(cancelRefusal(meeting(), { ...stranger, isProjectAdmin: true }, start)).toBeNull();
    expect(cancelRefusal(meeting(), { ...stranger, pinMatches: true }, start)).toBeNull();
    expect(code(cancelRefusal(meeting(), stranger, start))).toBe('MEETING_003');
    expect(code(cancelRefusal(meeting(), organizer, end))).toBe('MEETING_011');
  });

  it('check-out only from checked-in', () => {
    expect(checkOutRefusal(meeting({ status: 'checked-in' }), organizer)).toBeNull();
    expect(checkOutRefusal(meeting(), organizer)).toMatchObject({ status: 409 });
    expect(checkOutRefusal(meeting({ status: 'cancelled' }), organizer)).toMatchObject({ status: 409, code: 'KS006' });
  });

  it('check-out end is now to the minute, never before start nor after the booked end', () => {
    fc.assert(
      fc.property(fc.integer({ min: -120, max: 180 }), fc.integer({ min: 0, max: 59_999 }), (minutes, ms) => {
        const e = checkOutEnd({ start, end }, start + minutes * MIN + ms);
        expect(e).toBeGreaterThanOrEqual(start);
        expect(e).toBeLessThanOrEqual(end);
        expect(e % MIN).toBe(0);
        if (minutes >= 0 && minutes <= 60) expect(e).toBe(start + minutes * MIN);
      }),
    );
  });

  it('update: cancelled KS072, unpaid 422, checked-in start 409, blocked organizer 049 only for time changes', () => {
    const none = { movesStart: false, changesTimes: false, organizerBlocked: false };
    expect(updateRefusal(meeting({ status: 'cancelled' }), organizer, none)).toMatchObject({ code: 'KS072' });
    expect(updateRefusal(meeting({ status: 'unpaid' }), organizer, none)).toMatchObject({ status: 422 });
    expect(updateRefusal(meeting({ status: 'checked-in' }), organizer, { ...none, movesStart: true, changesTimes: true })).toMatchObject({
      status: 409,
    });
    expect(updateRefusal(meeting({ status: 'checked-in' }), organizer, { ...none, changesTimes: true })).toBeNull();
    expect(updateRefusal(meeting(), organizer, { ...none, organizerBlocked: true })).toBeNull();
    expect(updateRefusal(meeting(), organizer, { ...none, changesTimes: true, organizerBlocked: true })).toMatchObject({
      status: 403,
      code: 'MEETING_049',
    });
    expect(code(updateRefusal(meeting(), stranger, none))).toBe('MEETING_003');
    expect(code(updateRefusal(meeting(), { ...stranger, pinMatches: false }, none))).toBe('MEETING_042');
  });
});

describe('closed asset statuses', () => {
  it('rooms close when inactive; desks when inactive or suspended', async () => {
    const { isClosedStatus } = await import('../../src/modules/booking/rules/asset-config.js');
    expect(['active', 'inactive'].filter((s) => isClosedStatus('room', s))).toEqual(['inactive']);
    expect(['active', 'inactive', 'in-used', 'reserved', 'suspended'].filter((s) => isClosedStatus('desk', s))).toEqual([
      'inactive',
      'suspended',
    ]);
  });
});

describe('MEETING_003 says why the caller needs a PIN', () => {
  const attendee: Caller = { isOrganizer: false, isAttendee: true, isProjectAdmin: false };
  const msg = (e: { message: unknown } | null) => String(e?.message);
  it('a stranger checking in is neither organizer nor attendee', () => {
    const r = checkInRefusal(meeting(), stranger, { now: start, preStartMinutes: 15, timeZone: tz });
    expect(r).toMatchObject({ status: 404, code: 'MEETING_003' });
    expect(msg(r)).toBe('You are neither the organizer nor an attendee of this booking; send its pinCode to check in');
  });
  it('an attendee is not told they are no attendee when cancelling, checking out or editing', () => {
    const refusals = [
      cancelRefusal(meeting(), attendee, start),
      checkOutRefusal(meeting({ status: 'checked-in' }), attendee),
      updateRefusal(meeting(), attendee, { movesStart: false, changesTimes: false, organizerBlocked: false }),
    ];
    expect(refusals.map(code)).toEqual(['MEETING_003', 'MEETING_003', 'MEETING_003']);
    expect(refusals.map(msg)).toEqual([
      'As an attendee you may not cancel this booking: only its organizer or a project admin may, or a caller who sends its pinCode',
      'As an attendee you may not check out this booking: only its organizer or a project admin may, or a caller who sends its pinCode',
      'As an attendee you may not edit this booking: only its organizer or a project admin may, or a caller who sends its pinCode',
    ]);
    for (const r of refusals) expect(msg(r)).not.toContain('nor an attendee');
  });
  it('a stranger cancelling is told who may', () => {
    expect(msg(cancelRefusal(meeting(), stranger, start))).toBe(
      'You are neither the organizer of this booking nor a project admin: send its pinCode to cancel it',
    );
  });
  it('a locked PIN answers 429 MEETING_039 for a wrong PIN as for the right one', () => {
    const locked = meeting({ pinFailures: PIN_LOCK_THRESHOLD });
    for (const pinMatches of [true, false]) {
      expect(code(cancelRefusal(locked, { ...stranger, pinMatches }, start))).toBe('MEETING_039');
    }
  });
});
