/**
 * POST /meetings/{id}/cancel, /check-in and /check-out over HTTP (api-spec
 * "Meeting status", "Calls that are refused in the wrong state", the three action
 * endpoints, Authentication item 9, "Booking business codes"). The sandbox clock
 * starts at 07:00 local on day D and is moved forward to stand inside or outside
 * check-in windows; each block runs its own service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, UNKNOWN_ID } from '../support/fixtures.js';
import { ISO_DATE_TIME, okData } from '../support/catalogue.js';
import { accepted, actions, inMinute, roomConfig, sameInstant, startMeetingService, type MeetingCtx } from '../support/meetings.js';

/** Rooms whose bookings are never auto-cancelled as no-shows (so only the clock's "end" can close them). */
const NO_AUTO_CANCEL = roomConfig({ meetingConfig: { postStartExpireMinutes: -1 } });
const rooms = (keys: string[], config = NO_AUTO_CANCEL) => keys.map((key) => ({ key, name: key, config }));
const wrongPin = (pin: string) => (pin === '000000' ? '111111' : '000000');

// ---------------------------------------------------------------------------
describe('POST /meetings/{id}/cancel', () => {
  let c: MeetingCtx;
  beforeAll(async () => {
    c = await startMeetingService({ rooms: rooms(['r1', 'r2', 'r3']) });
  });
  afterAll(async () => {
    await c?.close();
  });

  it('by the organizer: 202 with the cancelled Meeting and a cancel history entry', async () => {
    const m = await c.bookRoom('alice', 'r1', '09:00', '10:00', {}, 1);
    const res = accepted(await c.action('alice', m._id, 'cancel'));
    expect(res._id).toBe(m._id);
    expect(res.status).toBe('cancelled');
    expect(actions(res)).toEqual(['create', 'cancel']);
    expect(res.histories[1]).toMatchObject({ action: 'cancel', source: 'user', by: c.id('alice'), statusBeforeUpdate: 'active' });
    expect(res.histories[1].at).toMatch(ISO_DATE_TIME);
    expect(okData(await c.get('alice', m._id)).status).toBe('cancelled');
  });

  it('the cancelled slot is free again', async () => {
    const again = await c.bookRoom('bob', 'r1', '09:00', '10:00', {}, 1);
    expect(again.status).toBe('active');
  });

  it('an empty request body is accepted', async () => {
    const m = await c.bookRoom('alice', 'r1', '15:00', '16:00', {}, 1);
    const res = await c.request('POST', `/meetings/${m._id}/cancel`, c.tok.alice);
    expect(accepted(res).status).toBe('cancelled');
  });

  it('by a PIN holder: no PIN → 404 MEETING_003, wrong PIN → 404 MEETING_042, right PIN → 202', async () => {
    const m = await c.bookRoom('alice', 'r2', '09:00', '10:00', {}, 1);
    expectError(await c.action('viewer', m._id, 'cancel'), 404, 'MEETING_003');
    expectError(await c.action('viewer', m._id, 'cancel', { pinCode: wrongPin(m.pinCode) }), 404, 'MEETING_042');
    expect(okData(await c.get('alice', m._id)).status).toBe('active');
    const res = accepted(await c.action('viewer', m._id, 'cancel', { pinCode: m.pinCode }));
    expect(res.status).toBe('cancelled');
    expect(res.pinCode).toBeUndefined();
    expect(res.histories[1]).toMatchObject({ action: 'cancel', source: 'partner' });
  });

  it('by a member who is a stranger to the booking but holds the PIN', async () => {
    const m = await c.bookRoom('alice', 'r2', '11:00', '11:45', {}, 1);
    expectError(await c.action('eve', m._id, 'cancel'), 404, 'MEETING_003');
    expect(accepted(await c.action('eve', m._id, 'cancel', { pinCode: m.pinCode })).status).toBe('cancelled');
  });

  it('by a project admin without the PIN; an attendee without the PIN may not', async () => {
    const m = await c.bookRoom('alice', 'r3', '09:00', '10:00', { attendees: [{ email: 'carol@example.com' }] }, 1);
    const byAttendee = await c.action('carol', m._id, 'cancel');
    expectError(byAttendee, 404, 'MEETING_003');
    expect(byAttendee.body.message).toBe(
      'As an attendee you may not cancel this booking: only its organizer or a project admin may, or a caller who sends its pinCode',
    );
    const res = accepted(await c.action('bob', m._id, 'cancel'));
    expect(res.status).toBe('cancelled');
    expect(res.histories[1]).toMatchObject({ action: 'cancel', by: c.id('bob') });
  });

  it('cancelling a cancelled booking → 409 MEETING_011', async () => {
    const m = await c.bookRoom('alice', 'r3', '13:00', '14:00', {}, 1);
    accepted(await c.action('alice', m._id, 'cancel'));
    expectError(await c.action('alice', m._id, 'cancel'), 409, 'MEETING_011');
    expectError(await c.action('bob', m._id, 'cancel'), 409, 'MEETING_011');
  });

  it('404 for an unknown booking, 400 for a non-hex id', async () => {
    expectError(await c.action('alice', UNKNOWN_ID, 'cancel'), 404, 'KS005');
    expectError(await c.action('alice', 'not-an-id', 'cancel'), 400, 'KS001');
  });

  it('cancelling a checked-in or a done booking → 409 MEETING_011', async () => {
    const a = await c.bookRoom('alice', 'r1', '09:00', '10:00');
    const b = await c.bookRoom('alice', 'r2', '09:00', '10:00');
    await c.clockTo('08:50');
    accepted(await c.action('alice', a._id, 'check-in'));
    accepted(await c.action('alice', b._id, 'check-in'));
    expectError(await c.action('alice', a._id, 'cancel'), 409, 'MEETING_011');
    expectError(await c.action('bob', a._id, 'cancel'), 409, 'MEETING_011');
    expect(accepted(await c.action('alice', b._id, 'check-out')).status).toBe('done');
    expectError(await c.action('alice', b._id, 'cancel'), 409, 'MEETING_011');
    expect(okData(await c.get('alice', a._id)).status).toBe('checked-in');
  });
});

// ---------------------------------------------------------------------------
describe('POST /meetings/{id}/check-in', () => {
  let c: MeetingCtx;
  let org: any, att: any, pin: any, lock: any, ended: any, gone: any, anyDay: any;
  beforeAll(async () => {
    c = await startMeetingService({
      rooms: [
        ...rooms(['c1', 'c2', 'c3', 'c4', 'c5', 'c6']),
        { key: 'anyday', name: 'Any Day', config: roomConfig({ meetingConfig: { preStartMinutes: -1, postStartExpireMinutes: -1 } }) },
      ],
    });
    org = await c.bookRoom('alice', 'c1', '09:00', '10:00');
    att = await c.bookRoom('alice', 'c2', '09:00', '10:00', { attendees: [{ email: 'carol@example.com' }] });
    pin = await c.bookRoom('alice', 'c3', '09:00', '10:00');
    lock = await c.bookRoom('alice', 'c4', '09:00', '10:00');
    ended = await c.bookRoom('alice', 'c5', '09:00', '09:30');
    gone = await c.bookRoom('alice', 'c6', '09:00', '09:30');
    accepted(await c.action('alice', gone._id, 'cancel'));
    anyDay = await c.bookRoom('alice', 'anyday', '10:00', '11:00', {}, 1);
  });
  afterAll(async () => {
    await c?.close();
  });

  describe('at 07:00, before the windows open', () => {
    it('too early → 409 MEETING_040, the message gives the minutes until the window opens', async () => {
      const res = await c.action('alice', org._id, 'check-in');
      expectError(res, 409, 'MEETING_040');
      // The window opens at 08:45: 105 minutes from now.
      expect(res.body.message).toMatch(/\b105\b/);
    });

    it('too early is answered before any PIN question', async () => {
      expectError(await c.action('viewer', pin._id, 'check-in'), 409, 'MEETING_040');
      expectError(await c.action('viewer', pin._id, 'check-in', { pinCode: wrongPin(pin.pinCode) }), 409, 'MEETING_040');
      expectError(await c.action('eve', pin._id, 'check-in'), 409, 'MEETING_040');
    });

    it('a cancelled booking → 404 MEETING_043, before anything else', async () => {
      expectError(await c.action('alice', gone._id, 'check-in'), 404, 'MEETING_043');
      expectError(await c.action('viewer', gone._id, 'check-in', { pinCode: wrongPin(gone.pinCode) }), 404, 'MEETING_043');
      expectError(await c.action('eve', gone._id, 'check-in'), 404, 'MEETING_043');
    });

    it('preStartMinutes -1 on another day → 409 MEETING_041', async () => {
      const res = await c.action('alice', anyDay._id, 'check-in');
      expectError(res, 409, 'MEETING_041');
      expect(res.body.message).toContain(c.D.plus({ days: 1 }).toISODate());
      expectError(await c.action('viewer', anyDay._id, 'check-in', { pinCode: wrongPin(anyDay.pinCode) }), 409, 'MEETING_041');
    });

    it('a few minutes before the window: the message counts them', async () => {
      await c.clockTo('08:40');
      const res = await c.action('alice', org._id, 'check-in');
      expectError(res, 409, 'MEETING_040');
      expect(res.body.message).toMatch(/\b5 minutes\b/);
    });
  });

  describe('at 08:50, inside the windows', () => {
    beforeAll(async () => {
      await c.clockTo('08:50');
    });

    it('a caller who is neither organizer nor attendee and sent no PIN → 404 MEETING_003', async () => {
      expectError(await c.action('viewer', pin._id, 'check-in'), 404, 'MEETING_003');
      expectError(await c.action('eve', pin._id, 'check-in'), 404, 'MEETING_003');
    });

    it('a wrong PIN → 404 MEETING_042', async () => {
      expectError(await c.action('viewer', pin._id, 'check-in', { pinCode: wrongPin(pin.pinCode) }), 404, 'MEETING_042');
      expect(okData(await c.get('alice', pin._id)).status).toBe('active');
    });

    it('the organizer: 202 checked-in, organizer.checkInDateTime and a check-in history entry', async () => {
      const res = accepted(await c.action('alice', org._id, 'check-in'));
      expect(res.status).toBe('checked-in');
      expect(res.organizer.checkInDateTime).toMatch(ISO_DATE_TIME);
      expect(inMinute(res.organizer.checkInDateTime, c.t('08:50')), res.organizer.checkInDateTime).toBe(true);
      expect(actions(res)).toEqual(['create', 'check-in']);
      expect(res.histories[1]).toMatchObject({ action: 'check-in', source: 'user', by: c.id('alice'), statusBeforeUpdate: 'active' });
      expect(okData(await c.get('alice', org._id)).status).toBe('checked-in');
    });

    it('checking in twice → 409', async () => {
      const res = await c.action('alice', org._id, 'check-in');
      expect(res.status, res.text).toBe(409);
      expect(res.body.success).toBe(false);
    });

    it('a listed attendee through act_as, without a PIN', async () => {
      const res = accepted(await c.action('carol', att._id, 'check-in'));
      expect(res.status).toBe('checked-in');
      expect(res.attendees[0]).toMatchObject({ userId: c.id('carol') });
      expect(res.attendees[0].checkInDateTime).toMatch(ISO_DATE_TIME);
      expect(res.histories[1]).toMatchObject({ action: 'check-in', by: c.id('carol') });
    });

    it('a PIN holder', async () => {
      const res = accepted(await c.action('viewer', pin._id, 'check-in', { pinCode: pin.pinCode }));
      expect(res.status).toBe('checked-in');
      expect(res.pinCode).toBeUndefined();
      expect(res.histories[1]).toMatchObject({ action: 'check-in', source: 'partner' });
    });

    it('after 5 wrong PINs → 429 MEETING_039, even with the right PIN, until the organizer sets a new PIN', async () => {
      for (let i = 0; i < 5; i++) {
        expectError(await c.action('viewer', lock._id, 'check-in', { pinCode: `55${i}55` }), 404, 'MEETING_042');
      }
      expectError(await c.action('viewer', lock._id, 'check-in', { pinCode: lock.pinCode }), 429, 'MEETING_039');
      expectError(await c.action('eve', lock._id, 'check-in', { pinCode: lock.pinCode }), 429, 'MEETING_039');
      // A wrong PIN gets the same answer: a locked PIN tells nothing about the guess.
      expectError(await c.action('eve', lock._id, 'check-in', { pinCode: wrongPin(lock.pinCode) }), 429, 'MEETING_039');
      expect(okData(await c.get('alice', lock._id)).status).toBe('active');
      const patched = await c.patch('alice', lock._id, { pinCode: '7777' });
      expect(patched.status, patched.text).toBe(200);
      expectError(await c.action('viewer', lock._id, 'check-in', { pinCode: lock.pinCode }), 404, 'MEETING_042');
      expect(accepted(await c.action('viewer', lock._id, 'check-in', { pinCode: '7777' })).status).toBe('checked-in');
    });
  });

  describe('after the end', () => {
    it('an ended booking → 409 MEETING_004 (before any PIN question); a cancelled one stays 404 MEETING_043', async () => {
      await c.clockTo('09:31');
      expectError(await c.action('alice', ended._id, 'check-in'), 409, 'MEETING_004');
      expectError(await c.action('viewer', ended._id, 'check-in', { pinCode: wrongPin(ended.pinCode) }), 409, 'MEETING_004');
      expectError(await c.action('eve', ended._id, 'check-in'), 409, 'MEETING_004');
      expectError(await c.action('alice', gone._id, 'check-in'), 404, 'MEETING_043');
    });
  });

  describe('preStartMinutes -1', () => {
    it("check-in is allowed any time on the booking's day", async () => {
      await c.clockTo('00:30', 1);
      const res = accepted(await c.action('alice', anyDay._id, 'check-in'));
      expect(res.status).toBe('checked-in');
      expect(inMinute(res.organizer.checkInDateTime, c.t('00:30', 1)), res.organizer.checkInDateTime).toBe(true);
    });
  });
});

// ---------------------------------------------------------------------------
describe('POST /meetings/{id}/check-out', () => {
  let c: MeetingCtx;
  let long: any, early: any, byPin: any, short: any;
  beforeAll(async () => {
    c = await startMeetingService({ rooms: rooms(['o1', 'o2', 'o3', 'o4']) });
    long = await c.bookRoom('alice', 'o1', '09:00', '11:00');
    early = await c.bookRoom('alice', 'o2', '09:00', '10:00');
    byPin = await c.bookRoom('alice', 'o3', '09:00', '10:00');
    short = await c.bookRoom('alice', 'o4', '09:00', '09:40');
  });
  afterAll(async () => {
    await c?.close();
  });

  it('an active booking cannot be checked out → 409', async () => {
    const res = await c.action('alice', long._id, 'check-out');
    expect(res.status, res.text).toBe(409);
    expect(res.body.success).toBe(false);
    expect(okData(await c.get('alice', long._id)).status).toBe('active');
  });

  it('a cancelled booking cannot be checked out → 409', async () => {
    const m = await c.bookRoom('alice', 'o4', '15:00', '16:00');
    accepted(await c.action('alice', m._id, 'cancel'));
    const res = await c.action('alice', m._id, 'check-out');
    expect(res.status, res.text).toBe(409);
    expect(okData(await c.get('alice', m._id)).status).toBe('cancelled');
  });

  it('checked out before the start: the end becomes the start (never before it)', async () => {
    await c.clockTo('08:50');
    for (const m of [long, early, byPin, short]) accepted(await c.action('alice', m._id, 'check-in'));
    await c.clockTo('08:52');
    const res = accepted(await c.action('alice', early._id, 'check-out'));
    expect(res.status).toBe('done');
    expect(sameInstant(res.startDateTime, c.t('09:00'))).toBe(true);
    expect(sameInstant(res.endDateTime, c.t('09:00'))).toBe(true);
  });

  it('a PIN holder may check out; without a PIN → 404 MEETING_003, wrong PIN → 404 MEETING_042', async () => {
    expectError(await c.action('viewer', byPin._id, 'check-out'), 404, 'MEETING_003');
    expectError(await c.action('viewer', byPin._id, 'check-out', { pinCode: wrongPin(byPin.pinCode) }), 404, 'MEETING_042');
    expect(accepted(await c.action('viewer', byPin._id, 'check-out', { pinCode: byPin.pinCode })).status).toBe('done');
  });

  it('rewrites endDateTime to now truncated to the minute, status done, every change in histories', async () => {
    await c.clockTo('09:37:45');
    const res = accepted(await c.action('alice', long._id, 'check-out'));
    expect(res.status).toBe('done');
    expect(sameInstant(res.startDateTime, c.t('09:00'))).toBe(true);
    expect(sameInstant(res.endDateTime, c.t('09:37'))).toBe(true);
    expect(res.organizer.checkOutDateTime).toMatch(ISO_DATE_TIME);
    expect(actions(res)).toEqual(['create', 'check-in', 'check-out']);
    const out = res.histories[2];
    expect(out).toMatchObject({ action: 'check-out', source: 'user', by: c.id('alice'), statusBeforeUpdate: 'checked-in' });
    expect(sameInstant(out.oldEndDateTime, c.t('11:00'))).toBe(true);
    expect(sameInstant(out.newEndDateTime, c.t('09:37'))).toBe(true);
    const read = okData(await c.get('alice', long._id));
    expect(read.status).toBe('done');
    expect(sameInstant(read.endDateTime, c.t('09:37'))).toBe(true);
  });

  it('releases the slot: a new booking may start at the new end plus cleaning', async () => {
    const inside = await c.book('bob', { meetingRoomId: c.id('o1'), startDateTime: c.t('09:51'), endDateTime: c.t('10:30') });
    expectError(inside, 409, 'KS012');
    expect(inside.body.message).toContain('09:52');
    const next = await c.bookRoom('bob', 'o1', '09:52', '10:30');
    expect(next.status).toBe('active');
  });

  it('a done booking cannot be checked out again → 409', async () => {
    const res = await c.action('alice', long._id, 'check-out');
    expect(res.status, res.text).toBe(409);
    expect(sameInstant(okData(await c.get('alice', long._id)).endDateTime, c.t('09:37'))).toBe(true);
  });

  it('never after the booked end', async () => {
    await c.clockTo('09:45');
    const res = await c.action('alice', short._id, 'check-out');
    // The clock may already have closed the booking at its end; either way it ended at 09:40.
    if (res.status === 202) expect(res.body.data.status).toBe('done');
    else expect(res.status, res.text).toBe(409);
    const read = okData(await c.get('alice', short._id));
    expect(read.status).toBe('done');
    expect(sameInstant(read.endDateTime, c.t('09:40'))).toBe(true);
  });
});

// ---------------------------------------------------------------------------
describe('an asset that needs no check-in (postStartExpireMinutes 0)', () => {
  let c: MeetingCtx;
  beforeAll(async () => {
    c = await startMeetingService({
      rooms: [{ key: 'auto', name: 'Auto', config: roomConfig({ meetingConfig: { postStartExpireMinutes: 0 } }) }],
    });
  });
  afterAll(async () => {
    await c?.close();
  });

  it('an active booking becomes checked-in at its start, with a system history entry; check-out then ends it', async () => {
    const m = await c.bookRoom('alice', 'auto', '09:00', '10:00');
    expect(m.status).toBe('active');
    await c.clockTo('09:00');
    const read = okData(await c.get('alice', m._id));
    expect(read.status).toBe('checked-in');
    expect(actions(read)).toEqual(['create', 'check-in']);
    expect(read.histories[1]).toMatchObject({ action: 'check-in', source: 'system' });
    await c.clockTo('09:20');
    const out = accepted(await c.action('alice', m._id, 'check-out'));
    expect(out.status).toBe('done');
    expect(sameInstant(out.endDateTime, c.t('09:20'))).toBe(true);
    expect(actions(out)).toEqual(['create', 'check-in', 'check-out']);
  });
});
