import { describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { conflictMessage } from '../../src/modules/booking/rules/window-refusals.js';
import { findConflict } from '../../src/modules/booking/rules/availability.js';

const TZ = 'Asia/Bangkok';
const at = (hm: string) => DateTime.fromISO(`2030-03-04T${hm}:00`, { zone: TZ }).toMillis();

describe('conflictMessage names what actually conflicts (KS012)', () => {
  const existing = { id: 'b', start: at('11:15'), end: at('12:00') };
  const clash = (from: string, to: string) => {
    const window = { start: at(from), end: at(to) };
    const c = findConflict({ ...window, cleanupMinutes: 15, bookings: [existing] });
    expect(c).not.toBeNull();
    return conflictMessage(c!, TZ, 'room', window);
  };

  it("the request's own cleaning time running into the next booking", () => {
    expect(clash('10:00', '11:05')).toBe(
      "This booking's own cleaning time (15 minutes, until 11:20) runs into the room's booking 2030-03-04 11:15–12:00 (Asia/Bangkok)",
    );
  });

  it("the existing booking's cleaning time", () => {
    expect(clash('12:05', '13:00')).toBe('The room is booked 2030-03-04 11:15–12:00 and held for cleaning until 12:15 (Asia/Bangkok)');
  });

  it('a plain overlap', () => {
    expect(clash('11:30', '12:30')).toBe('The room is booked 2030-03-04 11:15–12:00 (Asia/Bangkok)');
    expect(clash('10:00', '11:30')).toBe('The room is booked 2030-03-04 11:15–12:00 (Asia/Bangkok)');
  });

  it('without the requested window, describes the hold as before', () => {
    const c = findConflict({ start: at('10:00'), end: at('11:05'), cleanupMinutes: 15, bookings: [existing] })!;
    expect(conflictMessage(c, TZ, 'room')).toBe(
      'The room is booked 2030-03-04 11:15–12:00 and held for cleaning until 12:15 (Asia/Bangkok)',
    );
  });
});
