/** The console's asset state rule and day schedule (modules/booking/rules/asset-now.ts), with injected instants. */
import { describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { assetNow, daySchedule, isOpenAt } from '../../src/modules/booking/rules/asset-now.js';

const TZ = 'Asia/Bangkok';
const day = { availableTime: { start: '08:00:00', end: '18:00:00' }, breakTimes: [{ start: '12:00:00', end: '13:00:00' }] };
const config = { dayConfig: { Mon: day, Tue: day, Wed: day, Thu: day, Fri: day } };
// 2025-01-06 is a Monday.
const at = (hhmm: string, date = '2025-01-06') => DateTime.fromISO(`${date}T${hhmm}`, { zone: TZ }).toMillis();
const booking = (id: string, status: string, from: string, to: string) => ({ id, status, start: at(from), end: at(to) });

const state = (now: number, bookings: ReturnType<typeof booking>[], extra: Partial<Parameters<typeof assetNow>[0]> = {}) =>
  assetNow({ now, kind: 'room', status: 'active', config, timeZone: TZ, cleanupMinutes: 15, bookings, ...extra });

describe('assetNow', () => {
  const b = booking('b1', 'active', '09:00', '10:00');

  it('free inside the hours with the next booking; booked while a booking holds it', () => {
    expect(state(at('08:30'), [b])).toEqual({ state: 'free', current: null, next: b });
    expect(state(at('09:00'), [b])).toEqual({ state: 'booked', current: b, next: null });
    expect(state(at('09:59'), [{ ...b, status: 'unpaid' }]).state).toBe('booked');
  });

  it('checked-in when the holding booking is checked in', () => {
    expect(state(at('09:30'), [{ ...b, status: 'checked-in' }]).state).toBe('checked-in');
  });

  it('cleaning for the cleaning time after a booking (also one checked out early), then free', () => {
    expect(state(at('10:00'), [b]).state).toBe('cleaning');
    expect(state(at('10:14'), [b]).state).toBe('cleaning');
    expect(state(at('10:15'), [b]).state).toBe('free');
    expect(state(at('10:05'), [{ ...b, status: 'done' }]).state).toBe('cleaning');
    expect(state(at('10:05'), [b], { cleanupMinutes: 0 }).state).toBe('free');
  });

  it('cancelled bookings neither hold nor clean', () => {
    const c = { ...b, status: 'cancelled' };
    expect(state(at('09:30'), [c])).toEqual({ state: 'free', current: null, next: null });
    expect(state(at('10:05'), [c]).state).toBe('free');
  });

  it('closed outside the hours, in a break, on a closed day, or when inactive', () => {
    expect(state(at('07:59'), []).state).toBe('closed');
    expect(state(at('18:00'), []).state).toBe('closed');
    expect(state(at('12:30'), []).state).toBe('closed');
    expect(state(at('10:00', '2025-01-11'), []).state).toBe('closed'); // Saturday
    expect(state(at('10:30'), [], { status: 'inactive' }).state).toBe('closed');
    expect(state(at('10:30'), [], { kind: 'desk', status: 'suspended' }).state).toBe('closed');
  });

  it('a booking holding an inactive asset still shows as booked', () => {
    expect(state(at('09:30'), [b], { status: 'inactive' }).state).toBe('booked');
  });

  it('no config means open all day', () => {
    expect(isOpenAt(undefined, TZ, at('03:00'))).toBe(true);
  });
});

describe('daySchedule', () => {
  it('the hours and breaks of a property-local date as instants', () => {
    expect(daySchedule(config, TZ, '2025-01-06')).toEqual({
      open: [{ start: at('08:00'), end: at('18:00') }],
      breaks: [{ start: at('12:00'), end: at('13:00') }],
    });
  });

  it('nothing on a closed day; until midnight for a 24:00 end', () => {
    expect(daySchedule(config, TZ, '2025-01-12')).toEqual({ open: [], breaks: [] });
    const late = { dayConfig: { Mon: { availableTime: { start: '20:00:00', end: '24:00:00' } } } };
    expect(daySchedule(late, TZ, '2025-01-06').open).toEqual([{ start: at('20:00'), end: at('00:00', '2025-01-07') }]);
  });

  it('a date that does not exist is refused', () => {
    expect(() => daySchedule(config, TZ, '2025-02-30')).toThrow(RangeError);
  });
});
