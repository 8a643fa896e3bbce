/**
 * PATCH /meetings/{id} over HTTP (api-spec "PATCH /meetings/{id}", "Meeting status"
 * → "Calls that are refused in the wrong state", "Cleaning time", "Errors"):
 * moves, extensions and edits with their history, checked-in bookings, edits that
 * keep the times, cancelled bookings, blocked organizers, and the PIN rules for
 * callers who are not the organizer. Each block runs its own service (the clock
 * only moves forward and some blocks re-apply the site).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, UNKNOWN_ID } from '../support/fixtures.js';
import { okData } from '../support/catalogue.js';
import { accepted, actions, roomConfig, sameInstant, startMeetingService, type MeetingCtx } from '../support/meetings.js';

const ROOMS = [
  { key: 'u1', name: 'Update Room' },
  { key: 'u2', name: 'Second Room' },
];

/** Asserts 200 KS000 and returns the Meeting. */
function updated(res: { status: number; text: string; body: any }): any {
  expect(res.status, res.text).toBe(200);
  expect(res.body.code).toBe('KS000');
  return res.body.data;
}

const last = (m: any) => m.histories[m.histories.length - 1];

// ---------------------------------------------------------------------------
describe('PATCH: moves, extensions and edits', () => {
  let c: MeetingCtx;
  let m: any;
  beforeAll(async () => {
    c = await startMeetingService({ rooms: ROOMS });
    m = await c.bookRoom('alice', 'u1', '09:00', '10:00', { body: 'first' }, 1);
  });
  afterAll(async () => {
    await c?.close();
  });

  it('a move: 200, new times, and an update history entry with the old and new times', async () => {
    const res = updated(await c.patch('alice', m._id, { startDateTime: c.t('10:00', 1), endDateTime: c.t('11:00', 1) }));
    expect(res._id).toBe(m._id);
    expect(res.status).toBe('active');
    expect(sameInstant(res.startDateTime, c.t('10:00', 1))).toBe(true);
    expect(sameInstant(res.endDateTime, c.t('11:00', 1))).toBe(true);
    expect(actions(res)).toEqual(['create', 'update']);
    const h = last(res);
    expect(h).toMatchObject({ action: 'update', source: 'user', by: c.id('alice') });
    expect(sameInstant(h.oldStartDateTime, c.t('09:00', 1))).toBe(true);
    expect(sameInstant(h.oldEndDateTime, c.t('10:00', 1))).toBe(true);
    expect(sameInstant(h.newStartDateTime, c.t('10:00', 1))).toBe(true);
    expect(sameInstant(h.newEndDateTime, c.t('11:00', 1))).toBe(true);
    // The PIN does not change with a move.
    expect(res.pinCode).toBe(m.pinCode);
    // Stored as answered.
    const read = okData(await c.get('alice', m._id));
    expect(read.startDateTime).toBe(res.startDateTime);
    expect(read.histories).toEqual(res.histories);
  });

  it('the slot it left is free again', async () => {
    // 09:00-09:45 plus 15 minutes of cleaning ends exactly at the moved start.
    await c.bookRoom('bob', 'u1', '09:00', '09:45', {}, 1);
  });

  it('an extension: only the end moves, recorded in history', async () => {
    const res = updated(await c.patch('alice', m._id, { endDateTime: c.t('11:30', 1) }));
    expect(sameInstant(res.startDateTime, c.t('10:00', 1))).toBe(true);
    expect(sameInstant(res.endDateTime, c.t('11:30', 1))).toBe(true);
    const h = last(res);
    expect(h.action).toBe('update');
    expect(sameInstant(h.oldEndDateTime, c.t('11:00', 1))).toBe(true);
    expect(sameInstant(h.newEndDateTime, c.t('11:30', 1))).toBe(true);
    expect(sameInstant(h.oldStartDateTime, c.t('10:00', 1))).toBe(true);
    expect(sameInstant(h.newStartDateTime, c.t('10:00', 1))).toBe(true);
  });

  it('title, body and attendees edits keep the times; attendees are resolved', async () => {
    const before = actions(okData(await c.get('alice', m._id))).length;
    const res = updated(
      await c.patch('alice', m._id, {
        title: 'Renamed',
        body: 'second',
        attendees: [{ email: 'carol@example.com' }, { email: 'someone@outside.example', type: 'optional' }],
      }),
    );
    expect(res.title).toBe('Renamed');
    expect(res.body).toBe('second');
    expect(res.attendees).toHaveLength(2);
    expect(res.attendees[0]).toMatchObject({ userId: c.id('carol'), email: 'carol@example.com' });
    expect(res.attendees[1]).toMatchObject({ userId: null, email: 'someone@outside.example', type: 'optional' });
    expect(sameInstant(res.startDateTime, c.t('10:00', 1))).toBe(true);
    expect(sameInstant(res.endDateTime, c.t('11:30', 1))).toBe(true);
    expect(res.histories).toHaveLength(before + 1);
    expect(last(res).action).toBe('update');
    expect(last(res).oldStartDateTime).toBeUndefined();
    // The new attendee now sees the booking; a removed one no longer does.
    const carol = okData(await c.list('carol', { from: c.t('00:00', 1), to: c.t('00:00', 2) })) as any[];
    expect(carol.map((x) => x._id)).toEqual([m._id]);
    updated(await c.patch('alice', m._id, { attendees: [] }));
    expectError(await c.get('carol', m._id), 404, 'KS005');
  });

  it('refused times: end before start → 400, rules → 400, a conflict or cleaning clash → 409 KS012', async () => {
    expectError(await c.patch('alice', m._id, { startDateTime: c.t('11:00', 1), endDateTime: c.t('10:30', 1) }), 400, 'KS001');
    expectError(await c.patch('alice', m._id, { endDateTime: c.t('09:30', 1) }), 400, 'KS001');
    expectError(await c.patch('alice', m._id, { endDateTime: 'later' }), 400, 'KS001');
    const hours = await c.patch('alice', m._id, { startDateTime: c.t('21:00', 1), endDateTime: c.t('22:30', 1) });
    expectError(hours, 400, 'KS001');
    expect(hours.body.message.join('\n')).toMatch(/operating hours/);
    const brk = await c.patch('alice', m._id, { endDateTime: c.t('12:30', 1) });
    expectError(brk, 400, 'KS001');
    expect(brk.body.message.join('\n')).toMatch(/break/);
    // bob holds 09:00-09:45 (+15 cleaning): starting at 09:50 is inside its cleaning.
    const clash = await c.patch('alice', m._id, { startDateTime: c.t('09:50', 1) });
    expectError(clash, 409, 'KS012');
    expect(clash.body.message).toContain('10:00');
    // Nothing changed.
    const read = okData(await c.get('alice', m._id));
    expect(sameInstant(read.startDateTime, c.t('10:00', 1))).toBe(true);
    expect(sameInstant(read.endDateTime, c.t('11:30', 1))).toBe(true);
  });

  it('404 KS005 for an unknown id, 400 KS001 for a non-hex id', async () => {
    expectError(await c.patch('alice', UNKNOWN_ID, { title: 'x' }), 404, 'KS005');
    expectError(await c.patch('alice', 'nope', { title: 'x' }), 400, 'KS001');
  });
});

// ---------------------------------------------------------------------------
describe('PATCH: a checked-in booking', () => {
  let c: MeetingCtx;
  let m: any;
  beforeAll(async () => {
    c = await startMeetingService({ rooms: ROOMS });
    m = await c.bookRoom('alice', 'u2', '09:00', '10:00');
    await c.bookRoom('bob', 'u2', '11:00', '12:00');
    await c.clockTo('08:50');
    expect(accepted(await c.action('alice', m._id, 'check-in')).status).toBe('checked-in');
  });
  afterAll(async () => {
    await c?.close();
  });

  it('changing the start → 409, whichever way', async () => {
    const later = await c.patch('alice', m._id, { startDateTime: c.t('09:30') });
    expect(later.status, later.text).toBe(409);
    expect(later.body.success).toBe(false);
    expect(String(later.body.message)).toMatch(/start/i);
    expect((await c.patch('alice', m._id, { startDateTime: c.t('08:55'), endDateTime: c.t('10:30') })).status).toBe(409);
  });

  it('an end running into the next booking → 409 KS012', async () => {
    expectError(await c.patch('alice', m._id, { endDateTime: c.t('11:30') }), 409, 'KS012');
  });

  it('an end whose cleaning runs into the next booking → 409 KS012', async () => {
    expectError(await c.patch('alice', m._id, { endDateTime: c.t('10:50') }), 409, 'KS012');
  });

  it('an extension into free time → 200, still checked-in', async () => {
    const res = updated(await c.patch('alice', m._id, { endDateTime: c.t('10:45') }));
    expect(res.status).toBe('checked-in');
    expect(sameInstant(res.startDateTime, c.t('09:00'))).toBe(true);
    expect(sameInstant(res.endDateTime, c.t('10:45'))).toBe(true);
    expect(last(res)).toMatchObject({ action: 'update', statusBeforeUpdate: 'checked-in' });
    // Sending the unchanged start along with the end is not a start change.
    const again = updated(await c.patch('alice', m._id, { startDateTime: c.t('09:00'), endDateTime: c.t('10:30') }));
    expect(sameInstant(again.endDateTime, c.t('10:30'))).toBe(true);
  });
});

// ---------------------------------------------------------------------------
describe('PATCH: edits that keep the times, and cancelled bookings', () => {
  let c: MeetingCtx;
  let a: any;
  let b: any;
  beforeAll(async () => {
    // No cleaning at first, so a back-to-back pair can be booked…
    c = await startMeetingService({ rooms: ROOMS, cleanup: { u1: 0 } });
    a = await c.bookRoom('alice', 'u1', '14:00', '15:00', {}, 1);
    b = await c.bookRoom('bob', 'u1', '15:00', '16:00', {}, 1);
    // …then the room gets 15 minutes of cleaning: the neighbours now sit inside each other's cleaning.
    await c.reapply({ cleanup: { u1: 15 } });
  });
  afterAll(async () => {
    await c?.close();
  });

  it('the cleaning is in force: moving the end of the earlier booking is refused', async () => {
    expectError(await c.patch('alice', a._id, { endDateTime: c.t('14:59', 1) }), 409, 'KS012');
  });

  it('title, body and attendee edits are never refused for cleaning', async () => {
    expect(updated(await c.patch('alice', a._id, { title: 'Kept' })).title).toBe('Kept');
    expect(updated(await c.patch('alice', a._id, { body: 'notes', attendees: [{ email: 'carol@example.com' }] })).body).toBe('notes');
    expect(updated(await c.patch('bob', b._id, { title: 'Also kept' })).title).toBe('Also kept');
  });

  it('sending the unchanged times is not a time change', async () => {
    const res = updated(await c.patch('alice', a._id, { startDateTime: a.startDateTime, endDateTime: a.endDateTime, title: 'Same times' }));
    expect(res.title).toBe('Same times');
    expect(sameInstant(res.endDateTime, c.t('15:00', 1))).toBe(true);
    const sameAsOffset = updated(await c.patch('bob', b._id, { startDateTime: c.t('15:00', 1), endDateTime: c.t('16:00', 1) }));
    expect(sameInstant(sameAsOffset.startDateTime, c.t('15:00', 1))).toBe(true);
  });

  it('KS072 on a cancelled booking', async () => {
    accepted(await c.action('alice', a._id, 'cancel'));
    const res = await c.patch('alice', a._id, { title: 'Too late' });
    expect(res.body.code, res.text).toBe('KS072');
    expect(res.body.success).toBe(false);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect((await c.patch('alice', a._id, { endDateTime: c.t('14:30', 1) })).body.code).toBe('KS072');
    expect(okData(await c.get('alice', a._id)).title).toBe('Same times');
  });
});

// ---------------------------------------------------------------------------
describe('PATCH: an organizer blocked after booking', () => {
  let c: MeetingCtx;
  let mine: any;
  let office: any;
  beforeAll(async () => {
    c = await startMeetingService({ rooms: ROOMS });
    mine = await c.bookRoom('alice', 'u1', '09:00', '10:00', {}, 1);
    office = await c.bookRoom('portal', 'u2', '09:00', '10:00', { organizerId: c.id('alice') }, 1);
    await c.reapply({ blocked: ['alice'] });
  });
  afterAll(async () => {
    await c?.close();
  });

  it('changing the times → 403 MEETING_049', async () => {
    expectError(await c.patch('alice', mine._id, { startDateTime: c.t('10:00', 1), endDateTime: c.t('11:00', 1) }), 403, 'MEETING_049');
    expectError(await c.patch('alice', mine._id, { endDateTime: c.t('10:30', 1) }), 403, 'MEETING_049');
    // Also when staff move the blocked member's booking.
    expectError(await c.patch('portal', office._id, { endDateTime: c.t('10:30', 1) }), 403, 'MEETING_049');
    const read = okData(await c.get('alice', mine._id));
    expect(sameInstant(read.endDateTime, c.t('10:00', 1))).toBe(true);
  });

  it('an edit that keeps the times is allowed', async () => {
    expect(updated(await c.patch('alice', mine._id, { title: 'Still mine' })).title).toBe('Still mine');
    expect(
      updated(await c.patch('alice', mine._id, { startDateTime: mine.startDateTime, endDateTime: mine.endDateTime, body: 'b' })).body,
    ).toBe('b');
  });

  it('after unblocking, the times can change again', async () => {
    await c.reapply({ blocked: [] });
    const res = updated(await c.patch('alice', mine._id, { endDateTime: c.t('10:30', 1) }));
    expect(sameInstant(res.endDateTime, c.t('10:30', 1))).toBe(true);
  });
});

// ---------------------------------------------------------------------------
describe('PATCH: callers who are not the organizer need the PIN', () => {
  let c: MeetingCtx;
  let m: any;
  beforeAll(async () => {
    c = await startMeetingService({ rooms: [{ key: 'u1', config: roomConfig() }] });
    m = await c.bookRoom('alice', 'u1', '09:00', '10:00', { attendees: [{ email: 'carol@example.com' }] }, 1);
  });
  afterAll(async () => {
    await c?.close();
  });

  it('no PIN → 404 MEETING_003 (an app without a role, an attendee, a stranger)', async () => {
    expectError(await c.patch('viewer', m._id, { title: 'x' }), 404, 'MEETING_003');
    expectError(await c.patch('carol', m._id, { title: 'x' }), 404, 'MEETING_003');
    expectError(await c.patch('eve', m._id, { title: 'x' }), 404, 'MEETING_003');
  });

  it('a wrong PIN → 404 MEETING_042', async () => {
    const wrong = m.pinCode === '000000' ? '111111' : '000000';
    expectError(await c.patch('viewer', m._id, { title: 'x', pinCode: wrong }), 404, 'MEETING_042');
    expectError(await c.patch('eve', m._id, { title: 'x', pinCode: wrong }), 404, 'MEETING_042');
    expect(okData(await c.get('alice', m._id)).title).toBe(m.title);
  });

  it('the right PIN authorizes the change (and does not reveal the PIN)', async () => {
    const res = updated(await c.patch('viewer', m._id, { title: 'By PIN', pinCode: m.pinCode }));
    expect(res.title).toBe('By PIN');
    expect(res.pinCode).toBeUndefined();
    const moved = updated(await c.patch('eve', m._id, { endDateTime: c.t('10:30', 1), pinCode: m.pinCode }));
    expect(sameInstant(moved.endDateTime, c.t('10:30', 1))).toBe(true);
    expect(last(moved)).toMatchObject({ action: 'update', by: c.id('eve') });
  });

  it('the organizer sending pinCode sets a new PIN; the old one stops working', async () => {
    const res = updated(await c.patch('alice', m._id, { pinCode: '24680' }));
    expect(res.pinCode).toBe('24680');
    expect(okData(await c.get('alice', m._id)).pinCode).toBe('24680');
    expectError(await c.patch('viewer', m._id, { title: 'old pin', pinCode: m.pinCode }), 404, 'MEETING_042');
    expect(updated(await c.patch('viewer', m._id, { title: 'new pin', pinCode: '24680' })).title).toBe('new pin');
  });

  it('a new PIN must be 4-8 digits', async () => {
    expectError(await c.patch('alice', m._id, { pinCode: '12' }), 400, 'KS001');
    expectError(await c.patch('alice', m._id, { pinCode: 'abcd' }), 400, 'KS001');
  });

  it('after 5 wrong PINs the PIN is locked (429 MEETING_039, even the right one) until the organizer sets a new one', async () => {
    updated(await c.patch('alice', m._id, { pinCode: '1357' })); // a fresh PIN: no failures counted
    for (let i = 0; i < 5; i++) expectError(await c.patch('viewer', m._id, { title: 'guess', pinCode: `999${i}` }), 404, 'MEETING_042');
    expectError(await c.patch('viewer', m._id, { title: 'right', pinCode: '1357' }), 429, 'MEETING_039');
    expectError(await c.action('viewer', m._id, 'cancel', { pinCode: '1357' }), 429, 'MEETING_039');
    // A wrong PIN gets the same 429: evaluating the PIN before the lock would tell which guess is right.
    expectError(await c.patch('viewer', m._id, { title: 'wrong', pinCode: '2468' }), 429, 'MEETING_039');
    expectError(await c.action('viewer', m._id, 'cancel', { pinCode: '2468' }), 429, 'MEETING_039');
    // The organizer is not affected by the lock and clears it with a new PIN.
    updated(await c.patch('alice', m._id, { pinCode: '8642' }));
    expect(updated(await c.patch('viewer', m._id, { title: 'unlocked', pinCode: '8642' })).title).toBe('unlocked');
  });
});
