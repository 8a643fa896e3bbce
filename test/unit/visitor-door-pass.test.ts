/**
 * Visitors' passes on doors (visitors/rules/door-pass.ts): a room's or desk's door holds a visitor only in the
 * window of the booking the invite names, when the booking's door window covers it; other devices hold the invite's
 * window. And which bookings an invite may name.
 */
import { describe, expect, it } from 'vitest';
import { doorScanRefusal, invitedBookingProblem, passWindow } from '../../src/modules/visitors/rules/door-pass.js';

const invite = { from: 1_000, until: 9_000 };
const doors = new Set(['door-a', 'door-b']);
const booking = { deviceIds: ['door-a'], from: 2_000, until: 3_000 };

describe('passWindow', () => {
  it("a device that is no door holds the invite's window, booking or not", () => {
    expect(passWindow('lobby', doors, booking, invite)).toEqual(invite);
    expect(passWindow('lobby', doors, null, invite)).toEqual(invite);
    expect(passWindow('lobby', new Set(), null, invite)).toEqual(invite);
  });

  it("a door of the named booking holds the booking's window", () => {
    expect(passWindow('door-a', doors, booking, invite)).toEqual({ from: 2_000, until: 3_000 });
  });

  it('a door holds nothing without a booking, for another asset, or for an empty window', () => {
    expect(passWindow('door-a', doors, null, invite)).toBeNull();
    expect(passWindow('door-b', doors, booking, invite)).toBeNull();
    expect(passWindow('door-a', doors, { ...booking, until: 2_000 }, invite)).toBeNull();
  });
});

describe('invitedBookingProblem', () => {
  const b = { projectId: 'p1', status: 'active', organizerUserId: 'u1', attendeeUserIds: ['u2'] };

  it('the organizer or an attendee may name an active, checked-in or unpaid booking of the project', () => {
    expect(invitedBookingProblem(b, 'p1', 'u1')).toBeNull();
    expect(invitedBookingProblem(b, 'p1', 'u2')).toBeNull();
    expect(invitedBookingProblem({ ...b, status: 'checked-in' }, 'p1', 'u1')).toBeNull();
    expect(invitedBookingProblem({ ...b, status: 'unpaid' }, 'p1', 'u1')).toBeNull();
  });

  it('unknown, another project, a stranger host, a booking that is over: a problem each', () => {
    expect(invitedBookingProblem(undefined, 'p1', 'u1')).toMatch(/booking of the project/);
    expect(invitedBookingProblem(b, 'p2', 'u1')).toMatch(/booking of the project/);
    expect(invitedBookingProblem(b, 'p1', 'u3')).toMatch(/organizes or attends/);
    for (const status of ['cancelled', 'done', 'rejected']) expect(invitedBookingProblem({ ...b, status }, 'p1', 'u1')).toMatch(status);
  });
});

describe('doorScanRefusal: a scan now against the pass window at that device', () => {
  const w = { from: 1_000, until: 2_000 };
  it('admits inside the window only', () => {
    expect(doorScanRefusal(w, 1_000)).toBeNull();
    expect(doorScanRefusal(w, 1_999)).toBeNull();
    expect(doorScanRefusal(w, 999)).toBe('not-yet-valid');
    expect(doorScanRefusal(w, 2_000)).toBe('expired');
  });
  it('a device holding no pass for the invite does not know the visitor', () => {
    expect(doorScanRefusal(null, 1_500)).toBe('unknown');
  });
});
