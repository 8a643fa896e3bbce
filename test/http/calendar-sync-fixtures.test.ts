/**
 * Calendar sync with real-world-shaped invitations (test/fixtures/itip): an Outlook
 * request, update and cancel (Windows time zone in a VTIMEZONE, folded lines,
 * Exchange properties), a Google request, a Google weekly series with a moved and a
 * cancelled occurrence, a room-declined REPLY, and a floating-time request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORCHID, ROSE, startCalendarService, type CalendarCtx } from '../support/calendar.js';
import { icsLocal, loadItip } from '../support/itip.js';

let c: CalendarCtx;
const TZ = 'Asia/Bangkok';
/** Wall-clock time `hhmm` on D + days in Bangkok, as a fixture placeholder. */
const local = (hhmm: string, days = 0) => icsLocal(Date.parse(c.t(hhmm, days)), TZ);
const iso = (hhmm: string, days = 0) => new Date(c.t(hhmm, days)).toISOString();

beforeAll(async () => {
  c = await startCalendarService();
});
afterAll(async () => {
  await c?.close();
});

describe('Outlook', () => {
  it('request → booked; update (SEQUENCE 1) → moved; cancel → cancelled; each answered with a REPLY', async () => {
    const vars = { ORGANIZER: 'alice@example.com', ROOM: ORCHID };
    const booked = await c.sendOk(loadItip('outlook-request.ics', { ...vars, START: local('10:00'), END: local('11:00') }), 'microsoft');
    expect(booked).toMatchObject({ status: 'active', partstat: 'ACCEPTED' });
    const m = await c.meeting(booked.meetingId);
    expect(m).toMatchObject({ title: 'Vendor review', startDateTime: iso('10:00'), endDateTime: iso('11:00') });
    expect(m.histories[0]).toMatchObject({ source: 'microsoft', sourceDetail: booked.uid });
    // Exchange's guests (mixed-case emails) are kept, lower-cased.
    expect(m.attendees.map((a: any) => a.email).sort()).toEqual(['anong.c@corp.example', 'kenji.w@corp.example']);

    const moved = await c.sendOk(loadItip('outlook-update.ics', { ...vars, START: local('14:00'), END: local('15:30') }), 'microsoft');
    expect(moved).toMatchObject({ meetingId: booked.meetingId, status: 'active', outcome: 'moved' });
    expect(await c.meeting(booked.meetingId)).toMatchObject({ startDateTime: iso('14:00'), endDateTime: iso('15:30') });

    const cancelled = await c.sendOk(loadItip('outlook-cancel.ics', { ...vars, START: local('14:00'), END: local('15:30') }), 'microsoft');
    expect(cancelled).toMatchObject({ meetingId: booked.meetingId, status: 'cancelled' });
    expect((await c.events(booked.meetingId)).map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_MODIFY', 'ROOM_CANCEL']);
  });
});

describe('Google', () => {
  it('a request with an IANA TZID and its VTIMEZONE books the room', async () => {
    const data = await c.sendOk(
      loadItip('google-request.ics', { ORGANIZER: 'alice@example.com', ROOM: ROSE, START: local('09:00'), END: local('09:45') }),
    );
    expect(data).toMatchObject({ status: 'active', partstat: 'ACCEPTED' });
    expect(await c.meeting(data.meetingId)).toMatchObject({ startDateTime: iso('09:00'), endDateTime: iso('09:45') });
  });

  it('a weekly series, one occurrence moved and another cancelled, each touching only that occurrence', async () => {
    const vars = { ORGANIZER: 'alice@example.com', ROOM: ORCHID };
    // The fixture's rule is BYDAY=MO: the series starts on the first Monday after D.
    const k = ((8 - c.D.plus({ days: 1 }).weekday) % 7) + 1;
    const series = await c.sendOk(loadItip('google-recurring.ics', { ...vars, START: local('07:00', k), END: local('08:00', k) }));
    expect(series.status, series.reason).toBe('active');
    const rows = async () => {
      const res = await c.svc.request(
        'GET',
        `/meetings?limit=1000&from=${encodeURIComponent(c.t('00:00', 1))}&to=${encodeURIComponent(c.t('00:00', 40))}`,
        { token: c.portal },
      );
      expect(res.status, res.text).toBe(200);
      return res.body.data.filter((r: any) => r._id === series.meetingId && r.status !== 'cancelled').map((r: any) => r.startDateTime);
    };
    expect(await rows()).toEqual([iso('07:00', k), iso('07:00', k + 7), iso('07:00', k + 14), iso('07:00', k + 21)]);
    const moved = await c.sendOk(
      loadItip('google-instance-move.ics', {
        ...vars,
        RECURRENCE_ID: local('07:00', k + 7),
        START: local('09:00', k + 8),
        END: local('10:00', k + 8),
      }),
    );
    expect(moved).toMatchObject({ outcome: 'moved', partstat: 'ACCEPTED' });
    const gone = await c.sendOk(
      loadItip('google-instance-cancel.ics', {
        ...vars,
        SEQ: '2',
        RECURRENCE_ID: local('07:00', k + 14),
        START: local('07:00', k + 14),
        END: local('08:00', k + 14),
      }),
    );
    expect(gone).toMatchObject({ outcome: 'cancelled', status: 'active' });
    expect(await rows()).toEqual([iso('07:00', k), iso('09:00', k + 8), iso('07:00', k + 21)]);
    // The deleted occurrence is still listed, as cancelled.
    const all = await c.svc.request(
      'GET',
      `/meetings?limit=1000&statuses=cancelled&from=${encodeURIComponent(c.t('00:00', 1))}&to=${encodeURIComponent(c.t('00:00', 40))}`,
      { token: c.portal },
    );
    expect(all.body.data.filter((r: any) => r._id === series.meetingId).map((r: any) => [r.startDateTime, r.status])).toEqual([
      [iso('07:00', k + 14), 'cancelled'],
    ]);
  });
});

describe('other shapes', () => {
  it('the room declining in a REPLY cancels the booking with an explicit reason', async () => {
    const vars = { ORGANIZER: 'alice@example.com', ROOM: ROSE, UID: 'decline-fixture@example.test' };
    const booked = await c.sendOk(loadItip('outlook-request.ics', { ...vars, START: local('18:00'), END: local('19:00') }), 'microsoft');
    expect(booked.status).toBe('active');
    const declined = await c.sendOk(
      loadItip('room-declined-reply.ics', { ...vars, SEQ: '0', DTSTAMP: '20991231T000000Z', START: local('18:00'), END: local('19:00') }),
      'microsoft',
    );
    expect(declined).toMatchObject({ meetingId: booked.meetingId, status: 'cancelled' });
    expect((await c.meeting(booked.meetingId)).cancelReason).toBe("The invitation was declined in the room's calendar");
  });

  it("floating times are read in the property's zone", async () => {
    const data = await c.sendOk(
      loadItip('floating.ics', { ORGANIZER: 'alice@example.com', ROOM: ROSE, START: local('20:00'), END: local('21:00') }),
    );
    expect(data.status, data.reason).toBe('active');
    expect(await c.meeting(data.meetingId)).toMatchObject({ startDateTime: iso('20:00'), endDateTime: iso('21:00') });
  });
});
