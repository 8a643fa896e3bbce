/** The pure parts of presence from the door: the entry's asset, outcome and time; the booking decision; the MQTT event parser. */
import { describe, expect, it } from 'vitest';
import { effectiveAt, entryAsset, initialOutcome } from '../../src/modules/devices/rules/door-entry.js';
import { doorDecision, inCheckInWindow, type DoorBooking } from '../../src/modules/booking/rules/door-presence.js';
import { mqttTopics, parseAccessEvent } from '../../src/modules/devices/mqtt-topics.js';

const MIN = 60_000;
const T0 = Date.parse('2026-12-01T02:00:00Z'); // 09:00 in Bangkok
const rules = { preStartMinutes: 15, timeZone: 'Asia/Bangkok' };
const booking = (over: Partial<DoorBooking> = {}): DoorBooking => ({
  id: 'm1',
  status: 'active',
  start: T0,
  end: T0 + 60 * MIN,
  organizerUserId: 'alice',
  attendeeUserIds: ['bob'],
  ...over,
});

describe('entry log rules', () => {
  it('names rooms before desks, the smallest id first, or nothing', () => {
    expect(entryAsset(['r2', 'r1'], ['k1'])).toEqual({ kind: 'room', id: 'r1' });
    expect(entryAsset([], ['k2', 'k1'])).toEqual({ kind: 'desk', id: 'k1' });
    expect(entryAsset([], [])).toBeNull();
  });

  it('stores refused, pending only for a granted member at an asset, recorded otherwise', () => {
    const asset = { kind: 'room' as const, id: 'r1' };
    expect(initialOutcome({ granted: false, subjectKind: 'member', asset })).toBe('refused');
    expect(initialOutcome({ granted: true, subjectKind: 'member', asset })).toBe('pending');
    expect(initialOutcome({ granted: true, subjectKind: 'member', asset: null })).toBe('recorded');
    expect(initialOutcome({ granted: true, subjectKind: 'visitor', asset })).toBe('recorded');
    expect(initialOutcome({ granted: true, subjectKind: 'unknown', asset })).toBe('recorded');
  });

  it("shifts the device's time into service time, never later than the receipt", () => {
    expect(effectiveAt(1_000, 2_000, 500)).toBe(1_500);
    expect(effectiveAt(3_000, 2_000, 500)).toBe(2_500);
    expect(effectiveAt(1_000, 2_000, -200)).toBe(800);
  });
});

describe('door decision', () => {
  it('checks in the organizer or an attendee inside the window, from start − preStartMinutes to the end', () => {
    expect(doorDecision([booking()], 'alice', T0 - 15 * MIN, rules)).toEqual({ outcome: 'check-in', meetingId: 'm1', asOrganizer: true });
    expect(doorDecision([booking()], 'bob', T0 + 59 * MIN, rules)).toEqual({ outcome: 'check-in', meetingId: 'm1', asOrganizer: false });
  });

  it('records a participant outside the window, or already checked in, as booked', () => {
    expect(doorDecision([booking()], 'alice', T0 - 16 * MIN, rules)).toEqual({ outcome: 'booked', meetingId: 'm1' });
    expect(doorDecision([booking({ status: 'checked-in' })], 'bob', T0, rules)).toEqual({ outcome: 'booked', meetingId: 'm1' });
    expect(doorDecision([booking({ status: 'unpaid' })], 'alice', T0, rules)).toEqual({ outcome: 'booked', meetingId: 'm1' });
  });

  it("someone else's booking is recorded; nothing there (or only ended or cancelled bookings) is a walk-in", () => {
    expect(doorDecision([booking()], 'carol', T0 + 10 * MIN, rules)).toEqual({ outcome: 'recorded', meetingId: 'm1' });
    expect(doorDecision([booking()], 'carol', T0 - 30 * MIN, rules)).toEqual({ outcome: 'walk-in', meetingId: null });
    expect(doorDecision([booking()], 'alice', T0 + 60 * MIN, rules)).toEqual({ outcome: 'walk-in', meetingId: null });
    expect(doorDecision([booking({ status: 'cancelled' })], 'alice', T0, rules)).toEqual({ outcome: 'walk-in', meetingId: null });
    expect(doorDecision([], 'alice', T0, rules)).toEqual({ outcome: 'walk-in', meetingId: null });
  });

  it('a negative preStartMinutes opens the window on the local day of the start', () => {
    const day = { preStartMinutes: -1, timeZone: 'Asia/Bangkok' };
    expect(inCheckInWindow(booking(), T0 - 8 * 60 * MIN, day)).toBe(true); // 01:00 local
    expect(inCheckInWindow(booking(), T0 - 10 * 60 * MIN, day)).toBe(false); // 23:00 the day before
  });
});

describe('mqtt access events', () => {
  const topics = mqttTopics('booking');
  const payload = (over: Record<string, unknown> = {}) =>
    JSON.stringify({
      v: 1,
      deviceId: 'd1',
      eventId: 'e1',
      at: '2026-12-01T02:00:00Z',
      granted: true,
      credentialKind: 'card',
      cardNo: '1',
      ...over,
    });

  it('has a topic per device and parses it back', () => {
    expect(topics.events('d1')).toBe('booking/devices/d1/events');
    expect(topics.wildcard.events).toBe('booking/devices/+/events');
    expect(topics.parse('booking/devices/d1/events')).toEqual({ kind: 'events', deviceId: 'd1' });
  });

  it('reads an event as a DoorEvent, and refuses malformed ones without echoing them', () => {
    expect(parseAccessEvent(payload())).toEqual({
      ok: true,
      value: { deviceId: 'd1', eventKey: 'e1', at: T0, granted: true, credentialKind: 'card', subject: null, cardNo: '1' },
    });
    const withSubject = parseAccessEvent(payload({ subject: { kind: 'member', id: 'u1' }, cardNo: undefined }));
    expect(withSubject.ok && withSubject.value.subject).toEqual({ kind: 'member', id: 'u1' });
    for (const bad of [
      { eventId: '' },
      { at: 'yesterday' },
      { credentialKind: 'x' },
      { granted: 'yes' },
      { subject: { kind: 'ghost', id: 'x' } },
      { v: 2 },
    ]) {
      const r = parseAccessEvent(payload(bad));
      expect(r.ok, JSON.stringify(bad)).toBe(false);
      if (!r.ok) expect(r.reason).not.toContain('"cardNo"');
    }
  });
});
