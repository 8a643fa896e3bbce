/** The pure parts of connected room calendars: timing rules and the mapping between provider events, iTIP messages and bookings. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { answerKey, lastAnswerOf, renewAt, retryDelayMs, syncWindow } from '../../src/modules/calendar-sync/rules/connected-timing.js';
import {
  declinedByPerson,
  desiredEvents,
  messageOf,
  remoteHash,
  showsOwnDecline,
} from '../../src/modules/calendar-sync/connected-mapping.js';
import type { RemoteEvent } from '../../src/modules/calendar-sync/connector.js';

const DAY = 86_400_000;
const ROOM = 'room@rooms.example.com';
const T0 = Date.parse('2026-12-01T03:00:00Z');

function remote(over: Partial<RemoteEvent> = {}, roomResponse: RemoteEvent['attendees'][number]['response'] = 'none'): RemoteEvent {
  return {
    id: 'ev1',
    uid: 'uid1',
    etag: 'e1',
    removed: false,
    start: T0,
    end: T0 + 3_600_000,
    allDay: false,
    timeZone: 'Asia/Bangkok',
    title: 'Review',
    description: '',
    organizer: { email: 'alice@example.com', name: 'Alice' },
    attendees: [
      { email: ROOM, name: 'Room', resource: true, response: roomResponse },
      { email: 'bob@example.com', name: 'Bob', resource: false, response: 'accepted' },
    ],
    sequence: 0,
    updatedAt: T0 - DAY,
    bookingId: null,
    ...over,
  };
}

describe('timing', () => {
  it('renews within the last quarter of a subscription, at most a day before it expires', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 0, max: 30 * DAY }), (madeAt, life) => {
        const at = renewAt(madeAt, madeAt + life);
        expect(at).toBeGreaterThanOrEqual(madeAt);
        expect(at).toBeLessThanOrEqual(madeAt + life);
        expect(madeAt + life - at).toBeLessThanOrEqual(DAY);
        expect(madeAt + life - at).toBeLessThanOrEqual(life / 4 + 1);
      }),
    );
    expect(renewAt(0, 3 * DAY)).toBe(3 * DAY - 0.75 * DAY);
    expect(renewAt(0, 8 * DAY)).toBe(7 * DAY);
    expect(renewAt(0, 8 * 3_600_000)).toBe(6 * 3_600_000);
  });

  it('backs off from 5 s, doubling, to 15 minutes, never shorter than what the provider asked', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n))).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(retryDelayMs(50)).toBe(15 * 60_000);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.option(fc.integer({ min: 0, max: 3_600_000 }), { nil: null }), (n, after) => {
        const d = retryDelayMs(n, after);
        expect(d).toBeGreaterThanOrEqual(after ?? 0);
        expect(d).toBeGreaterThanOrEqual(retryDelayMs(Math.max(1, n - 1)));
        expect(d).toBeLessThanOrEqual(Math.max(15 * 60_000, after ?? 0));
      }),
    );
  });

  it('reads back the answer it remembered', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.string(), (accepted, comment) => {
        expect(lastAnswerOf(answerKey({ accepted, comment }))).toBe(accepted);
      }),
    );
    expect(lastAnswerOf(null)).toBeNull();
    expect(lastAnswerOf('something else')).toBeNull();
  });

  it('a full read covers a day back and 400 days ahead', () => {
    expect(syncWindow(T0)).toEqual({ start: T0 - DAY, end: T0 + 400 * DAY });
  });
});

describe('a provider event as the actor reads it', () => {
  it('is a REQUEST with the guests, the room as ROOM, the organizer, and its times', () => {
    const m = messageOf(remote(), { uid: 'uid1', roomEmail: ROOM, lastAnswer: null, serviceEvent: false });
    expect(m.method).toBe('REQUEST');
    const e = m.events[0]!;
    expect(e).toMatchObject({ uid: 'uid1', start: T0, end: T0 + 3_600_000, summary: 'Review', status: 'CONFIRMED', dtstamp: T0 - DAY });
    expect(e.organizer).toEqual({ email: 'alice@example.com', name: 'Alice' });
    expect(e.attendees.map((a) => [a.email, a.cutype, a.partstat])).toEqual([
      [ROOM, 'ROOM', 'NEEDS-ACTION'],
      ['bob@example.com', 'INDIVIDUAL', 'ACCEPTED'],
    ]);
  });

  it('a removed event is a CANCEL; a decline on the room copy by someone else is a REPLY; its own decline is not', () => {
    expect(messageOf(remote({ removed: true }), { uid: 'u', roomEmail: ROOM, lastAnswer: true, serviceEvent: false }).method).toBe(
      'CANCEL',
    );
    const declined = remote({}, 'declined');
    expect(messageOf(declined, { uid: 'u', roomEmail: ROOM, lastAnswer: true, serviceEvent: false }).method).toBe('REPLY');
    expect(messageOf(declined, { uid: 'u', roomEmail: ROOM, lastAnswer: false, serviceEvent: false }).method).toBe('REQUEST');
    expect(declinedByPerson(declined, { email: ROOM, lastAnswer: null })).toBe(true);
    expect(showsOwnDecline(declined, { email: ROOM, lastAnswer: false })).toBe(true);
    expect(showsOwnDecline(declined, { email: ROOM, lastAnswer: true })).toBe(false);
    expect(showsOwnDecline(remote({ removed: true }, 'declined'), { email: ROOM, lastAnswer: false })).toBe(false);
  });

  it("an event the service wrote carries only the room (its guests and title stay the booking's)", () => {
    const m = messageOf(remote({ bookingId: 'b1' }), { uid: 'u', roomEmail: ROOM, lastAnswer: null, serviceEvent: true });
    expect(m.events[0]!.organizer).toBeNull();
    expect(m.events[0]!.attendees.map((a) => a.email)).toEqual([ROOM]);
  });

  it('an all-day event is read by its local dates', () => {
    const start = Date.parse('2026-12-01T00:00:00+07:00');
    const e = messageOf(remote({ allDay: true, start, end: start + DAY }), {
      uid: 'u',
      roomEmail: ROOM,
      lastAnswer: null,
      serviceEvent: false,
    }).events[0]!;
    expect(e).toMatchObject({ allDay: true, startDate: '2026-12-01', endDate: '2026-12-02' });
  });

  it("the hash ignores the room's own answer coming back, and sees times, guests and a person's decline", () => {
    const room = (lastAnswer: boolean | null) => ({ email: ROOM, lastAnswer });
    const base = remoteHash(remote(), room(null));
    expect(remoteHash(remote({}, 'accepted'), room(true))).toBe(base);
    expect(remoteHash(remote({}, 'declined'), room(false))).toBe(base);
    expect(remoteHash(remote({}, 'declined'), room(true))).not.toBe(base);
    expect(remoteHash(remote({ end: T0 + 7_200_000 }), room(null))).not.toBe(base);
    expect(remoteHash(remote({ removed: true }), room(null))).not.toBe(base);
    expect(remoteHash(remote({ etag: 'other', updatedAt: T0 }), room(null))).toBe(base);
  });
});

describe("a booking on its room's calendar", () => {
  const booking = (over: Record<string, unknown> = {}) => ({
    id: 'm1',
    status: 'active',
    title: 'Board',
    startAt: T0,
    endAt: T0 + 3_600_000,
    bookedEndAt: T0 + 3_600_000,
    organizer: { email: 'alice@example.com', name: 'Alice' },
    occurrences: null,
    ...over,
  });

  it('one event with the title, times and organizer; none once cancelled or rejected; tentative while unpaid', () => {
    const [d] = desiredEvents(booking(), 'Asia/Bangkok');
    expect(d!.occurrenceId).toBe('');
    expect(d!.event).toMatchObject({
      key: 'm1',
      bookingId: 'm1',
      title: 'Board',
      start: T0,
      end: T0 + 3_600_000,
      tentative: false,
      timeZone: 'Asia/Bangkok',
    });
    expect(d!.event.description).toContain('alice@example.com');
    expect(desiredEvents(booking({ status: 'cancelled' }), 'UTC')).toEqual([]);
    expect(desiredEvents(booking({ status: 'rejected' }), 'UTC')).toEqual([]);
    expect(desiredEvents(booking({ status: 'unpaid' }), 'UTC')[0]!.event.tentative).toBe(true);
    expect(desiredEvents(booking({ title: '  ' }), 'UTC')[0]!.event.title).toBe('Booked');
    // Ended at its booked end: it stays; checked out early: its room is free again, the event goes.
    expect(desiredEvents(booking({ status: 'done' }), 'UTC')).toHaveLength(1);
    expect(desiredEvents(booking({ status: 'done', endAt: T0 + 1_800_000 }), 'UTC')).toEqual([]);
  });

  it('a series: one event per held occurrence, each with its own key', () => {
    const occurrences = [0, 1, 2].map((i) => ({ id: `o${i}`, start: T0 + i * 7 * DAY, end: T0 + i * 7 * DAY + 3_600_000 }));
    const ds = desiredEvents(booking({ occurrences }), 'UTC');
    expect(ds.map((d) => [d.occurrenceId, d.event.key, d.event.start])).toEqual(occurrences.map((o) => [o.id, `m1:${o.id}`, o.start]));
  });

  it('the write hash changes with what is written, and only with it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 600 }), (minutes) => {
        const a = desiredEvents(booking(), 'UTC')[0]!.hash;
        const b = desiredEvents(booking({ endAt: T0 + minutes * 60_000 + 3_600_000 }), 'UTC')[0]!.hash;
        expect(a === b).toBe(false);
        expect(desiredEvents(booking(), 'UTC')[0]!.hash).toBe(a);
      }),
    );
  });
});
