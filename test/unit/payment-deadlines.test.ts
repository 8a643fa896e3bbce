/** Payment deadlines: the five-minute checkout, and the back-office hold with its clamps and reminder. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CHECKOUT_WINDOW_MS, checkoutDeadline, holdDeadline, holdReminderAt } from '../../src/modules/payments/rules/deadlines.js';

const MIN = 60_000;
const now = Date.parse('2026-11-25T03:00:00Z');

describe('payment deadlines', () => {
  it('a checkout is due five minutes after the booking', () => {
    expect(CHECKOUT_WINDOW_MS).toBe(5 * MIN);
    expect(checkoutDeadline(now)).toBe(now + 5 * MIN);
  });

  it('a hold uses the request, else the project, else 1440 minutes', () => {
    const start = now + 30 * 24 * 60 * MIN;
    expect(holdDeadline({ now, start, requestedMinutes: 90, projectMinutes: 600 })).toBe(now + 90 * MIN);
    expect(holdDeadline({ now, start, projectMinutes: 600 })).toBe(now + 600 * MIN);
    expect(holdDeadline({ now, start, requestedMinutes: null, projectMinutes: null })).toBe(now + 1440 * MIN);
  });

  it('a hold is clamped to 7 days and to the meeting start, never refused', () => {
    const farStart = now + 30 * 24 * 60 * MIN;
    expect(holdDeadline({ now, start: farStart, requestedMinutes: 20_000 })).toBe(now + 10_080 * MIN);
    expect(holdDeadline({ now, start: now + 45 * MIN, requestedMinutes: 1440 })).toBe(now + 45 * MIN);
    // A meeting already started (or starting now) is due at once rather than refused.
    expect(holdDeadline({ now, start: now - MIN, requestedMinutes: 60 })).toBe(now);
  });

  it('the reminder comes at 75 % of the hold, none for holds under two minutes', () => {
    expect(holdReminderAt(now, now + 100 * MIN)).toBe(now + 75 * MIN);
    expect(holdReminderAt(now, now + MIN)).toBeNull();
  });

  it('property: the deadline lies in [now, min(start, now + 7 days)] and the reminder before it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -10_000, max: 100_000 }),
        fc.option(fc.integer({ min: 0, max: 50_000 })),
        fc.option(fc.integer({ min: 0, max: 50_000 })),
        (startMin, req, proj) => {
          const start = now + startMin * MIN;
          const d = holdDeadline({ now, start, requestedMinutes: req, projectMinutes: proj });
          expect(d).toBeGreaterThanOrEqual(now);
          expect(d).toBeLessThanOrEqual(Math.max(now, Math.min(start, now + 10_080 * MIN)));
          const r = holdReminderAt(now, d);
          if (r !== null) {
            expect(r).toBeGreaterThan(now);
            expect(r).toBeLessThan(d);
          }
        },
      ),
    );
  });
});
