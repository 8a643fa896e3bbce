/**
 * Calendar sync over HTTP (operator-api.md "Calendar sync"; api-spec Meeting status
 * rows for calendar moves, deletes, the room's copy removed or declined, and
 * invitations declined by the service; history sources; MODIFY/CANCEL ties).
 */
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORCHID, IRIS, LILY, LOTUS, ROSE, newUid, startCalendarService, type CalendarCtx } from '../support/calendar.js';
import { OPS_TOKEN } from '../support/test-service.js';

let c: CalendarCtx;

beforeAll(async () => {
  c = await startCalendarService();
});
afterAll(async () => {
  await c?.close();
});

/** The REPLY parsed back with ical.js: method, the room's PARTSTAT and COMMENT. */
function replyOf(text: string) {
  const cal = new ICAL.Component(ICAL.parse(text));
  const ev = cal.getFirstSubcomponent('vevent')!;
  const att = ev.getFirstProperty('attendee')!;
  return {
    method: cal.getFirstPropertyValue('method'),
    uid: ev.getFirstPropertyValue('uid'),
    partstat: att.getParameter('partstat'),
    attendee: String(att.getFirstValue()).toLowerCase(),
    comment: String(ev.getFirstPropertyValue('comment') ?? ''),
    sequence: ev.getFirstPropertyValue('sequence'),
  };
}

describe('REQUEST with a new UID', () => {
  it('books the room for the organizer under every rule and accepts', async () => {
    const uid = newUid('book');
    const data = await c.sendOk({
      uid,
      start: c.t('10:00'),
      end: c.t('11:00'),
      summary: 'Quarterly planning',
      guests: ['guest@partner.example', 'carol@example.com'],
    });
    expect(data).toMatchObject({ uid, status: 'active', partstat: 'ACCEPTED', outcome: 'booked' });
    const reply = replyOf(data.reply);
    expect(reply).toMatchObject({ method: 'REPLY', uid, partstat: 'ACCEPTED', attendee: `mailto:${ORCHID}` });
    const m = await c.meeting(data.meetingId);
    expect(m).toMatchObject({
      status: 'active',
      meetingRoomId: c.id('orchid'),
      title: 'Quarterly planning',
      startDateTime: new Date(c.t('10:00')).toISOString(),
      endDateTime: new Date(c.t('11:00')).toISOString(),
    });
    expect(m.organizer).toMatchObject({ userId: c.id('alice'), email: 'alice@example.com' });
    expect(m.attendees.map((a: any) => a.email).sort()).toEqual(['carol@example.com', 'guest@partner.example']);
    // A guest with an account is linked to it; an external guest is kept by email.
    expect(m.attendees.find((a: any) => a.email === 'carol@example.com').userId).toBe(c.id('carol'));
    expect(m.attendees.find((a: any) => a.email === 'guest@partner.example').userId).toBeNull();
    expect(m.histories[0]).toMatchObject({ action: 'create', source: 'google', sourceDetail: uid });
    expect(m.pinCode).toMatch(/^\d{6}$/);
    const events = await c.events(data.meetingId);
    expect(events.map((e) => e.type)).toEqual(['ROOM_BOOK']);
  });

  it('microsoft is its own source', async () => {
    const uid = newUid('ms');
    const data = await c.sendOk({ uid, start: c.t('13:00'), end: c.t('13:30'), prodId: 'Microsoft Exchange Server 2010' }, 'microsoft');
    const m = await c.meeting(data.meetingId);
    expect(m.histories[0]).toMatchObject({ source: 'microsoft', sourceDetail: uid });
  });

  it('a clash is stored as a rejected meeting and declined with the reason; the booking in the way is untouched', async () => {
    const first = await c.sendOk({ uid: newUid('a'), start: c.t('14:00'), end: c.t('15:00') });
    const uid = newUid('clash');
    const data = await c.sendOk({ uid, start: c.t('14:30'), end: c.t('15:30') });
    expect(data).toMatchObject({ uid, status: 'rejected', partstat: 'DECLINED', outcome: 'rejected' });
    expect(data.meetingId).toMatch(/^[0-9a-f]{24}$/);
    expect(data.meetingId).not.toBe(first.meetingId);
    const reply = replyOf(data.reply);
    expect(reply.partstat).toBe('DECLINED');
    expect(reply.comment).toMatch(/book/i);
    expect(data.reason).toBe(reply.comment);
    const m = await c.meeting(data.meetingId);
    expect(m.status).toBe('rejected');
    expect(m.histories.map((h: any) => h.action)).toEqual(['rejected']);
    expect(m.histories[0]).toMatchObject({ source: 'google', sourceDetail: uid });
    expect(await c.events(data.meetingId)).toEqual([]);
    expect((await c.meeting(first.meetingId)).status).toBe('active');
    // A rejected invitation holds nothing: its window is still free for others... except the clash itself.
    const later = await c.sendOk({ uid: newUid('after'), start: c.t('15:15'), end: c.t('16:00') });
    expect(later.status).toBe('active');
  });

  it('refuses outside opening hours, on a paid room, a private room for a non-member, for a blocked organizer and an unknown one', async () => {
    const early = await c.sendOk({ uid: newUid('early'), start: c.t('05:00'), end: c.t('06:30') });
    expect(early).toMatchObject({ status: 'rejected', partstat: 'DECLINED' });
    const paid = await c.sendOk({ uid: newUid('paid'), start: c.t('10:00'), end: c.t('11:00'), rooms: [LOTUS] });
    expect(paid).toMatchObject({ status: 'rejected', partstat: 'DECLINED' });
    expect(paid.reason).toMatch(/paid/);
    const blocked = await c.sendOk({
      uid: newUid('blocked'),
      start: c.t('10:00'),
      end: c.t('11:00'),
      rooms: [ROSE],
      organizer: 'ben@example.com',
    });
    expect(blocked).toMatchObject({ status: 'rejected', partstat: 'DECLINED' });
    expect(blocked.reason).toMatch(/blocked/);
    const stranger = await c.sendOk({
      uid: newUid('stranger'),
      start: c.t('10:00'),
      end: c.t('11:00'),
      rooms: [ROSE],
      organizer: 'nobody@elsewhere.example',
    });
    expect(stranger).toMatchObject({ meetingId: null, status: 'rejected', partstat: 'DECLINED' });
    expect(stranger.reason).toMatch(/not a user/);
    // iris is private: a member of the project may book it.
    const member = await c.sendOk({ uid: newUid('iris'), start: c.t('10:00'), end: c.t('11:00'), rooms: [IRIS] });
    expect(member.status).toBe('active');
  });

  it('an all-day event is refused with a clear reason when the room is not open all day', async () => {
    const data = await c.sendOk({ uid: newUid('allday'), start: c.t('00:00', 3), end: c.t('00:00', 4), allDay: true, rooms: [ROSE] });
    expect(data).toMatchObject({ status: 'rejected', partstat: 'DECLINED' });
    expect(data.reason).toMatch(/^All-day events/);
  });

  it('an all-day event books the property-local day on a room open around the clock', async () => {
    const data = await c.sendOk({ uid: newUid('allday-ok'), start: c.t('00:00', 3), end: c.t('00:00', 4), allDay: true, rooms: [LILY] });
    expect(data.status, data.reason).toBe('active');
    const m = await c.meeting(data.meetingId);
    expect(m).toMatchObject({
      startDateTime: new Date(c.t('00:00', 3)).toISOString(),
      endDateTime: new Date(c.t('00:00', 4)).toISOString(),
    });
  });

  it("a message that invites none of the service's rooms is 404; a body that is not iCalendar is 400 KS001", async () => {
    const res = await c.send({ uid: newUid('none'), start: c.t('10:00'), end: c.t('11:00'), rooms: ['unknown@rooms.example'] });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('KS005');
    const bad = await c.send('this is not a calendar');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('KS001');
    expect(Array.isArray(bad.body.message)).toBe(true);
    const badProvider = await c.send({ uid: newUid('x'), start: c.t('10:00'), end: c.t('11:00') }, 'yahoo');
    expect(badProvider.status).toBe(400);
  });
});

describe('REQUEST with a known UID (a calendar move)', () => {
  it('before check-in, a valid move moves the booking, keeps the PIN and sends MODIFY', async () => {
    const uid = newUid('move');
    const booked = await c.sendOk({ uid, start: c.t('16:00'), end: c.t('17:00'), rooms: [ROSE] });
    const pin = (await c.meeting(booked.meetingId)).pinCode;
    const moved = await c.sendOk({ uid, seq: 1, start: c.t('17:00'), end: c.t('18:30'), rooms: [ROSE] });
    expect(moved).toMatchObject({ meetingId: booked.meetingId, status: 'active', partstat: 'ACCEPTED', outcome: 'moved' });
    const m = await c.meeting(booked.meetingId);
    expect(m).toMatchObject({
      startDateTime: new Date(c.t('17:00')).toISOString(),
      endDateTime: new Date(c.t('18:30')).toISOString(),
      pinCode: pin,
    });
    expect(m.histories.at(-1)).toMatchObject({ action: 'update', source: 'google', sourceDetail: uid });
    const events = await c.events(booked.meetingId);
    expect(events.map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_MODIFY']);
    expect(events[1].data).toMatchObject({ oldStartTime: '16:00', oldEndTime: '17:00', newStartTime: '17:00', newEndTime: '18:30' });
  });

  it('before check-in, a move that breaks a rule cancels with the rule as reason, declines, sends CANCEL, and the old PIN stops working', async () => {
    const uid = newUid('badmove');
    const booked = await c.sendOk({ uid, start: c.t('19:00'), end: c.t('20:00'), rooms: [ROSE] });
    const pin = (await c.meeting(booked.meetingId)).pinCode;
    const moved = await c.sendOk({ uid, seq: 1, start: c.t('22:00'), end: c.t('23:30'), rooms: [ROSE] });
    expect(moved).toMatchObject({ meetingId: booked.meetingId, status: 'cancelled', partstat: 'DECLINED', outcome: 'cancelled' });
    const m = await c.meeting(booked.meetingId);
    expect(m.status).toBe('cancelled');
    expect(m.cancelReason).toBe(moved.reason);
    expect(m.cancelReason).toMatch(/23:00|open|hour/i);
    expect(m.pinCode).not.toBe(pin);
    const events = await c.events(booked.meetingId);
    expect(events.map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_CANCEL']);
    expect(events[1].data.cancelReason).toBe(m.cancelReason);
    // The old PIN no longer authorizes anything on it.
    const res = await c.svc.request('POST', `/meetings/${booked.meetingId}/check-in`, { token: c.portal, body: { pinCode: pin } });
    expect(res.status).toBeGreaterThanOrEqual(400);
  });

  it('the room removed from the attendees cancels with an explicit reason', async () => {
    const uid = newUid('removed');
    const booked = await c.sendOk({ uid, start: c.t('08:00', 1), end: c.t('09:00', 1), rooms: [ROSE] });
    const res = await c.sendOk(
      { uid, seq: 1, start: c.t('08:00', 1), end: c.t('09:00', 1), rooms: [] },
      'google',
      `?room=${encodeURIComponent(ROSE)}`,
    );
    expect(res).toMatchObject({ meetingId: booked.meetingId, status: 'cancelled', partstat: 'DECLINED' });
    const m = await c.meeting(booked.meetingId);
    expect(m.cancelReason).toBe('The room was removed from the invitation');
    expect((await c.events(booked.meetingId)).map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_CANCEL']);
  });

  it('checked-in: the start change is ignored; the end is extended when the room is free, otherwise refused and unchanged', async () => {
    const uid = newUid('checkedin');
    const booked = await c.sendOk({ uid, start: c.t('09:00', 1), end: c.t('10:00', 1), rooms: [ORCHID] });
    await c.sendOk({ uid: newUid('blocker'), start: c.t('11:30', 1), end: c.t('12:00', 1), rooms: [ORCHID] });
    await c.clockTo('09:05', 1);
    const checkIn = await c.svc.request('POST', `/meetings/${booked.meetingId}/check-in`, {
      token: c.portal,
      body: { pinCode: (await c.meeting(booked.meetingId)).pinCode },
    });
    expect(checkIn.status, checkIn.text).toBeLessThan(300);

    const ext = await c.sendOk({ uid, seq: 1, start: c.t('09:30', 1), end: c.t('11:00', 1), rooms: [ORCHID] });
    expect(ext).toMatchObject({ status: 'checked-in', partstat: 'ACCEPTED', outcome: 'moved' });
    let m = await c.meeting(booked.meetingId);
    expect(m).toMatchObject({
      startDateTime: new Date(c.t('09:00', 1)).toISOString(),
      endDateTime: new Date(c.t('11:00', 1)).toISOString(),
    });

    const clash = await c.sendOk({ uid, seq: 2, start: c.t('09:00', 1), end: c.t('12:00', 1), rooms: [ORCHID] });
    expect(clash).toMatchObject({ status: 'checked-in', partstat: 'DECLINED', outcome: 'refused' });
    m = await c.meeting(booked.meetingId);
    expect(m.status).toBe('checked-in');
    expect(m.endDateTime).toBe(new Date(c.t('11:00', 1)).toISOString());
    // The clock passed the reminder; of the calendar's changes only the extension sent an event.
    expect((await c.events(booked.meetingId)).map((e) => e.type).filter((t) => t !== 'ROOM_REMINDER')).toEqual([
      'ROOM_BOOK',
      'ROOM_MODIFY',
    ]);
  });
});

describe('CANCEL and the room declining', () => {
  it('a calendar delete cancels an active booking (CANCEL event) and frees the room', async () => {
    const uid = newUid('delete');
    const booked = await c.sendOk({ uid, start: c.t('13:00', 2), end: c.t('14:00', 2), rooms: [ROSE] });
    const res = await c.sendOk({ method: 'CANCEL', uid, seq: 1, start: c.t('13:00', 2), end: c.t('14:00', 2), rooms: [ROSE] });
    expect(res).toMatchObject({ meetingId: booked.meetingId, status: 'cancelled', outcome: 'cancelled' });
    expect((await c.events(booked.meetingId)).map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_CANCEL']);
    const again = await c.sendOk({ uid: newUid('free'), start: c.t('13:00', 2), end: c.t('14:00', 2), rooms: [ROSE] });
    expect(again.status).toBe('active');
  });

  it('a calendar delete of a checked-in booking ends it now (done, actual end)', async () => {
    const uid = newUid('deletein');
    const booked = await c.sendOk({ uid, start: c.t('09:00', 3), end: c.t('10:00', 3), rooms: [IRIS] });
    await c.clockTo('09:05', 3);
    const pin = (await c.meeting(booked.meetingId)).pinCode;
    expect(
      (await c.svc.request('POST', `/meetings/${booked.meetingId}/check-in`, { token: c.portal, body: { pinCode: pin } })).status,
    ).toBeLessThan(300);
    await c.clockTo('09:20', 3);
    const res = await c.sendOk({ method: 'CANCEL', uid, seq: 1, start: c.t('09:00', 3), end: c.t('10:00', 3), rooms: [IRIS] });
    expect(res).toMatchObject({ status: 'done', outcome: 'ended' });
    const m = await c.meeting(booked.meetingId);
    expect(m.status).toBe('done');
    expect(m.endDateTime).toBe(new Date(c.t('09:20', 3)).toISOString());

    // Done is final: a later update that cancels the event changes nothing (no CANCEL after the end).
    const eventsBefore = await c.events(booked.meetingId);
    const late = await c.sendOk({ uid, seq: 2, status: 'CANCELLED', start: c.t('09:00', 3), end: c.t('10:00', 3), rooms: [IRIS] });
    expect(late).toMatchObject({ meetingId: booked.meetingId, status: 'done', outcome: 'unchanged', partstat: 'DECLINED' });
    expect(await c.meeting(booked.meetingId)).toEqual(m);
    expect(await c.events(booked.meetingId)).toEqual(eventsBefore);
  });

  it("the room declining in its calendar while the organizer's copy stands cancels with an explicit reason", async () => {
    const uid = newUid('roomdecline');
    const booked = await c.sendOk({ uid, start: c.t('15:00', 4), end: c.t('16:00', 4), rooms: [ROSE] });
    const res = await c.sendOk({
      method: 'REPLY',
      uid,
      seq: 0,
      start: c.t('15:00', 4),
      end: c.t('16:00', 4),
      rooms: [ROSE],
      dtstamp: new Date(Date.now() + 1000).toISOString(),
    });
    expect(res).toMatchObject({ meetingId: booked.meetingId, status: 'cancelled', partstat: 'DECLINED' });
    expect((await c.meeting(booked.meetingId)).cancelReason).toBe("The invitation was declined in the room's calendar");
  });
});

describe('ordering and replays', () => {
  it('an older SEQUENCE changes nothing; the same message twice changes nothing and answers the same', async () => {
    const uid = newUid('order');
    const booked = await c.sendOk({ uid, start: c.t('10:00', 5), end: c.t('11:00', 5), rooms: [ROSE] });
    const v2 = { uid, seq: 2, start: c.t('12:00', 5), end: c.t('13:00', 5), rooms: [ROSE] };
    const text = (await import('../support/calendar.js')).ical(v2);
    const moved = await c.sendOk(text);
    expect(moved.outcome).toBe('moved');
    const again = await c.sendOk(text);
    expect(again).toMatchObject({ meetingId: booked.meetingId, status: 'active', outcome: 'duplicate', reply: moved.reply });
    const stale = await c.sendOk({ uid, seq: 1, start: c.t('16:00', 5), end: c.t('17:00', 5), rooms: [ROSE] });
    expect(stale).toMatchObject({ meetingId: booked.meetingId, outcome: 'stale' });
    const m = await c.meeting(booked.meetingId);
    expect(m.startDateTime).toBe(new Date(c.t('12:00', 5)).toISOString());
    expect(m.histories.filter((h: any) => h.action === 'update')).toHaveLength(1);
    expect((await c.events(booked.meetingId)).map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_MODIFY']);
  });
});

describe('SEQUENCE out of the RFC 5545 range', () => {
  it('0 to 2147483647 is taken; a larger or negative SEQUENCE is 400 KS001 naming it, and changes nothing', async () => {
    const uid = newUid('seqrange');
    const booked = await c.sendOk({ uid, start: c.t('08:00', 6), end: c.t('09:00', 6), rooms: [LILY] });
    expect(booked.status).toBe('active');
    const top = await c.sendOk({ uid, seq: 2_147_483_647, start: c.t('09:00', 6), end: c.t('10:00', 6), rooms: [LILY] });
    expect(top).toMatchObject({ meetingId: booked.meetingId, outcome: 'moved' });
    const before = await c.meeting(booked.meetingId);
    const events = await c.events(booked.meetingId);

    for (const seq of [2_147_483_648, 4_294_967_296, 99_999_999_999_999_999_999, -1]) {
      // An update of the booked UID, and an invitation with a new UID.
      for (const spec of [
        { uid, seq, start: c.t('11:00', 6), end: c.t('12:00', 6), rooms: [LILY] },
        { uid: newUid('seqnew'), seq, start: c.t('13:00', 6), end: c.t('14:00', 6), rooms: [LILY] },
      ]) {
        const res = await c.send(spec);
        expect(res.status, res.text).toBe(400);
        expect(res.body).toMatchObject({ code: 'KS001', success: false });
        expect(res.body.message.join(' ')).toMatch(/SEQUENCE -?\d+ is out of range: RFC 5545 allows a whole number from 0 to 2147483647/);
      }
    }
    expect(await c.meeting(booked.meetingId)).toEqual(before);
    expect(await c.events(booked.meetingId)).toEqual(events);
    // Nothing was booked for the new UIDs.
    const listed = await c.svc.request(
      'GET',
      `/meetings?from=${encodeURIComponent(c.t('10:30', 6))}&to=${encodeURIComponent(c.t('15:00', 6))}&meetingRoomId=${c.id('lily')}`,
      { token: c.portal },
    );
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toEqual([]);
  });
});

describe('time zones', () => {
  it('TZID with a VTIMEZONE: 09:00 in New York is 14:00Z before the March change and 13:00Z after it', async () => {
    // The next second Sunday of March (US daylight saving time starts at 02:00 local).
    const year = c.D.month >= 3 ? c.D.year + 1 : c.D.year;
    const march = DateTime.fromObject({ year, month: 3, day: 1 }, { zone: 'America/New_York' });
    const change = march.plus({ days: ((7 - march.weekday) % 7) + 7 });
    const before = change.minus({ days: 2 }).set({ hour: 9 });
    const after = change.plus({ days: 2 }).set({ hour: 9 });
    for (const [local, utcHour] of [
      [before, 14],
      [after, 13],
    ] as const) {
      const data = await c.sendOk({
        uid: newUid('tz'),
        start: local.toISO()!,
        end: local.plus({ hours: 1 }).toISO()!,
        rooms: [ROSE],
        tz: 'America/New_York',
      });
      expect(data.status, data.reason).toBe('active');
      const m = await c.meeting(data.meetingId);
      expect(new Date(m.startDateTime).getUTCHours()).toBe(utcHour);
      expect(m.startDateTime).toBe(local.toUTC().toISO({ suppressMilliseconds: false }));
    }
  });
});

describe('recurring invitations', () => {
  it('a weekly RRULE books a series; an occurrence cancelled with RECURRENCE-ID goes alone; a moved occurrence moves alone', async () => {
    const uid = newUid('series');
    const first = c.t('07:00', 7);
    const data = await c.sendOk({ uid, start: first, end: c.t('08:00', 7), rooms: [ORCHID], rrule: 'FREQ=DAILY;COUNT=3' });
    expect(data.status, data.reason).toBe('active');
    const list = async () => {
      const from = encodeURIComponent(c.t('00:00', 7));
      const to = encodeURIComponent(c.t('00:00', 11));
      const res = await c.svc.request('GET', `/meetings?limit=1000&from=${from}&to=${to}`, { token: c.portal });
      expect(res.status, res.text).toBe(200);
      return res.body.data.filter((r: any) => r._id === data.meetingId);
    };
    expect(await list()).toHaveLength(3);
    const cancel = await c.sendOk({
      method: 'CANCEL',
      uid,
      seq: 1,
      start: c.t('07:00', 8),
      end: c.t('08:00', 8),
      rooms: [ORCHID],
      recurrenceId: c.t('07:00', 8),
    });
    expect(cancel.status).toBe('active');
    // The deleted occurrence stays listed, under its own status.
    expect((await list()).map((r: any) => [r.startDateTime, r.status])).toEqual([
      [new Date(c.t('07:00', 7)).toISOString(), 'active'],
      [new Date(c.t('07:00', 8)).toISOString(), 'cancelled'],
      [new Date(c.t('07:00', 9)).toISOString(), 'active'],
    ]);
    const move = await c.sendOk({
      uid,
      seq: 2,
      start: c.t('09:00', 9),
      end: c.t('10:00', 9),
      rooms: [ORCHID],
      recurrenceId: c.t('07:00', 9),
    });
    expect(move).toMatchObject({ status: 'active', partstat: 'ACCEPTED', outcome: 'moved' });
    expect((await list()).filter((r: any) => r.status === 'active').map((r: any) => r.startDateTime)).toEqual([
      new Date(c.t('07:00', 7)).toISOString(),
      new Date(c.t('09:00', 9)).toISOString(),
    ]);
  });

  it('a rule outside the supported subset is declined with the reason', async () => {
    const data = await c.sendOk({
      uid: newUid('rrule'),
      start: c.t('07:00', 10),
      end: c.t('08:00', 10),
      rooms: [ROSE],
      rrule: 'FREQ=HOURLY;COUNT=3',
    });
    expect(data).toMatchObject({ status: 'rejected', partstat: 'DECLINED' });
    expect(data.reason).toMatch(/repeat rule/);
  });
});

describe('the iTIP body parser belongs to the calendar routes', () => {
  it('another ops route refuses a text/calendar body with 415 (the parser is scoped to calendar sync)', async () => {
    const res = await c.svc.request('POST', '/ops/v1/visitors/invites', {
      token: OPS_TOKEN,
      raw: 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n',
      headers: { 'content-type': 'text/calendar' },
    });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ success: false });
  });
});
