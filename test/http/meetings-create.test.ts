/**
 * POST /meetings over HTTP (api-spec "Meeting", "Meeting status", "POST /meetings",
 * "Cleaning time", Authentication item 9, "Errors"): the created Meeting, desk
 * bookings, validation, configuration rules, slot and cleaning conflicts, private
 * assets, blocked organizers, back-office bookings, closed assets, drafts,
 * recurring series, and bookings that start checked in.
 *
 * The sandbox clock is parked at 07:00 local on day D (two days after today), so
 * every time below is relative to a known "now".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, UNKNOWN_ID } from '../support/fixtures.js';
import { ISO_DATE_TIME } from '../support/catalogue.js';
import { actions, byDayCode, created, roomConfig, sameInstant, startMeetingService, type MeetingCtx } from '../support/meetings.js';

const HEX24 = /^[0-9a-f]{24}$/;

const ROOMS = [
  { key: 'main', name: 'Main Room' },
  { key: 'clean', name: 'Clean Room', cleanupMinutes: 15 },
  { key: 'lead', name: 'Lead Room', config: roomConfig({ minimumLeadTime: { minutes: 0, hours: 2, days: 0 } }) },
  { key: 'vault', name: 'Vault', isPublic: false },
  { key: 'closed', name: 'Closed Room', status: 'inactive' as const },
  { key: 'auto', name: 'Auto Room', config: roomConfig({ meetingConfig: { postStartExpireMinutes: 0 } }) },
  { key: 'series', name: 'Series Room' },
  { key: 'draftroom', name: 'Draft Room' },
  { key: 'office', name: 'Back Office Room' },
  { key: 'annexroom', name: 'Annex Room', floor: 'fX' },
];
const DESKS = [
  { key: 'd1', name: 'Desk 1' },
  { key: 'd2', name: 'Desk 2' },
];

describe('POST /meetings', () => {
  let c: MeetingCtx;
  const listAll = async (params: Record<string, string>) => {
    const res = await c.list('portal', params);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    c = await startMeetingService({ rooms: ROOMS, desks: DESKS, blocked: ['eve'] });
  });
  afterAll(async () => {
    await c?.close();
  });

  // -------------------------------------------------------------------------
  describe('the created Meeting', () => {
    it('201 with the full Meeting: active, PIN, organizer, attendees resolved, create history (app token → source partner)', async () => {
      const res = await c.book('portal', {
        meetingRoomId: c.id('main'),
        title: 'Planning',
        body: 'Agenda',
        startDateTime: c.t('09:00:42'),
        endDateTime: c.t('10:00:59'),
        attendees: [{ email: 'Carol@Example.com', type: 'required' }, { email: 'guest@outside.example' }],
      });
      const m = created(res);
      expect(m._id).toMatch(HEX24);
      expect(m.status).toBe('active');
      expect(m.meetingRoomId).toBe(c.id('main'));
      expect(m.meetingRoomName).toBe('Main Room');
      expect(m.deskId).toBeUndefined();
      expect(m.title).toBe('Planning');
      expect(m.body).toBe('Agenda');
      // Seconds are truncated to the start of the minute.
      expect(sameInstant(m.startDateTime, c.t('09:00'))).toBe(true);
      expect(sameInstant(m.endDateTime, c.t('10:00'))).toBe(true);
      expect(m.startDateTime).toMatch(ISO_DATE_TIME);
      expect(m.pinCode).toEqual(expect.any(String));
      expect(m.pinCode.length).toBeGreaterThan(0);
      expect(m.organizer).toMatchObject({ userId: expect.stringMatching(HEX24), checkInDateTime: null, checkOutDateTime: null });
      expect(m.organizer.name).toEqual(expect.any(String));
      expect(m.attendees).toHaveLength(2);
      expect(m.attendees[0]).toMatchObject({
        userId: c.id('carol'),
        email: 'Carol@Example.com',
        type: 'required',
        responseStatus: 'accepted',
        checkInDateTime: null,
      });
      expect(m.attendees[0].name).toBe('Carol Unlinked');
      expect(m.attendees[1]).toMatchObject({ userId: null, email: 'guest@outside.example', type: 'required' });
      expect(m.histories).toHaveLength(1);
      expect(m.histories[0]).toMatchObject({ action: 'create', source: 'partner' });
      expect(m.histories[0].at).toMatch(ISO_DATE_TIME);
      expect(m.histories[0].by).toEqual(expect.any(String));
      expect(m.billingSummaries).toEqual([]);
      expect(m.createdAt).toMatch(ISO_DATE_TIME);
      expect(m.updatedAt).toMatch(ISO_DATE_TIME);

      // What was answered is what is stored.
      const again = await c.get('portal', m._id);
      expect(again.status, again.text).toBe(200);
      expect(again.body.data).toMatchObject({ _id: m._id, status: 'active', pinCode: m.pinCode, title: 'Planning' });
    });

    it('act_as token → the member is the organizer and the history source is user', async () => {
      const m = await c.bookRoom('alice', 'main', '14:00', '15:00');
      expect(m.organizer).toMatchObject({ userId: c.id('alice'), email: 'alice@example.com', name: 'Alice Example' });
      expect(m.histories[0]).toMatchObject({ action: 'create', source: 'user', by: c.id('alice') });
      expect(m.pinCode).toEqual(expect.any(String));
      expect(m.bookedVia).toBeUndefined();
    });
  });

  // -------------------------------------------------------------------------
  describe('desk bookings', () => {
    it('with endDateTime', async () => {
      const m = created(await c.book('alice', { deskId: c.id('d1'), startDateTime: c.t('09:00', 4), endDateTime: c.t('10:30', 4) }));
      expect(m.deskId).toBe(c.id('d1'));
      expect(m.deskName).toBe('Desk 1');
      expect(m.meetingRoomId).toBeUndefined();
      expect(m.allDay).toBe(false);
      expect(sameInstant(m.startDateTime, c.t('09:00', 4))).toBe(true);
      expect(sameInstant(m.endDateTime, c.t('10:30', 4))).toBe(true);
    });

    it('timePeriod morning: opening to 12:00', async () => {
      const m = created(await c.book('alice', { deskId: c.id('d1'), startDateTime: c.t('00:00', 1), timePeriod: 'morning' }));
      expect(sameInstant(m.startDateTime, c.t('07:00', 1))).toBe(true);
      expect(sameInstant(m.endDateTime, c.t('12:00', 1))).toBe(true);
      expect(m.allDay).toBe(false);
    });

    it('timePeriod afternoon: 12:00 to closing', async () => {
      const m = created(await c.book('alice', { deskId: c.id('d1'), startDateTime: c.t('00:00', 2), timePeriod: 'afternoon' }));
      expect(sameInstant(m.startDateTime, c.t('12:00', 2))).toBe(true);
      expect(sameInstant(m.endDateTime, c.t('22:00', 2))).toBe(true);
      expect(m.allDay).toBe(false);
    });

    it('timePeriod allDay: opening to closing, allDay true', async () => {
      const m = created(await c.book('alice', { deskId: c.id('d1'), startDateTime: c.t('00:00', 3), timePeriod: 'allDay' }));
      expect(sameInstant(m.startDateTime, c.t('07:00', 3))).toBe(true);
      expect(sameInstant(m.endDateTime, c.t('22:00', 3))).toBe(true);
      expect(m.allDay).toBe(true);
    });

    it('a desk follows the project default cleaning (10 minutes)', async () => {
      created(await c.book('alice', { deskId: c.id('d2'), startDateTime: c.t('10:00'), endDateTime: c.t('11:00') }));
      const refused = await c.book('alice', { deskId: c.id('d2'), startDateTime: c.t('11:05'), endDateTime: c.t('11:30') });
      expectError(refused, 409, 'KS012');
      expect(refused.body.message).toContain('11:10');
      created(await c.book('alice', { deskId: c.id('d2'), startDateTime: c.t('11:10'), endDateTime: c.t('11:30') }));
    });
  });

  // -------------------------------------------------------------------------
  describe('validation → 400 KS001', () => {
    const room = () => c.id('main');
    const desk = () => c.id('d1');
    const cases: [string, () => Record<string, unknown>][] = [
      [
        'both meetingRoomId and deskId',
        () => ({ meetingRoomId: room(), deskId: desk(), startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5) }),
      ],
      ['neither meetingRoomId nor deskId', () => ({ startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5) })],
      ['a room without endDateTime', () => ({ meetingRoomId: room(), startDateTime: c.t('16:00', 5) })],
      [
        'a room with timePeriod instead of endDateTime',
        () => ({ meetingRoomId: room(), startDateTime: c.t('00:00', 5), timePeriod: 'morning' }),
      ],
      [
        'a desk with both endDateTime and timePeriod',
        () => ({ deskId: desk(), startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5), timePeriod: 'afternoon' }),
      ],
      ['a desk with neither endDateTime nor timePeriod', () => ({ deskId: desk(), startDateTime: c.t('16:00', 5) })],
      ['end before start', () => ({ meetingRoomId: room(), startDateTime: c.t('17:00', 5), endDateTime: c.t('16:00', 5) })],
      [
        'end equal to start after truncating seconds',
        () => ({ meetingRoomId: room(), startDateTime: c.t('16:00:05', 5), endDateTime: c.t('16:00:55', 5) }),
      ],
      [
        'a start that is not a date-time',
        () => ({ meetingRoomId: room(), startDateTime: 'tomorrow at ten', endDateTime: c.t('17:00', 5) }),
      ],
      [
        'a date-time without an offset',
        () => ({
          meetingRoomId: room(),
          startDateTime: c.D.plus({ days: 5 }).set({ hour: 16 }).toFormat("yyyy-MM-dd'T'HH:mm:ss"),
          endDateTime: c.t('17:00', 5),
        }),
      ],
      ['no startDateTime', () => ({ meetingRoomId: room(), endDateTime: c.t('17:00', 5) })],
      ['a meetingRoomId that is not hex', () => ({ meetingRoomId: 'main', startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5) })],
      ['an unknown timePeriod', () => ({ deskId: desk(), startDateTime: c.t('00:00', 5), timePeriod: 'evening' })],
      [
        'paymentDueMinutes without organizerId',
        () => ({ meetingRoomId: room(), startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5), paymentDueMinutes: 60 }),
      ],
      [
        'draftEndDateTimes without draft',
        () => ({
          meetingRoomId: room(),
          startDateTime: c.t('16:00', 5),
          endDateTime: c.t('17:00', 5),
          draftEndDateTimes: [c.t('18:00', 5)],
        }),
      ],
      [
        'draftEndDateTimes with draft false',
        () => ({
          meetingRoomId: room(),
          startDateTime: c.t('16:00', 5),
          endDateTime: c.t('17:00', 5),
          draft: false,
          draftEndDateTimes: [c.t('18:00', 5)],
        }),
      ],
      [
        'an attendee email that is not an email',
        () => ({
          meetingRoomId: room(),
          startDateTime: c.t('16:00', 5),
          endDateTime: c.t('17:00', 5),
          attendees: [{ email: 'not-an-email' }],
        }),
      ],
      [
        'recurrence with an unsupported FREQ',
        () => ({ meetingRoomId: room(), startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5), recurrence: 'FREQ=MONTHLY;COUNT=2' }),
      ],
      [
        'recurrence without COUNT or UNTIL',
        () => ({ meetingRoomId: room(), startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5), recurrence: 'FREQ=DAILY' }),
      ],
      [
        'recurrence with too many occurrences',
        () => ({ meetingRoomId: room(), startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5), recurrence: 'FREQ=DAILY;COUNT=500' }),
      ],
      [
        'recurrence that is not a rule',
        () => ({ meetingRoomId: room(), startDateTime: c.t('16:00', 5), endDateTime: c.t('17:00', 5), recurrence: 'every day please' }),
      ],
    ];
    it.each(cases)('%s', async (_name, body) => {
      expectError(await c.book('portal', body()), 400, 'KS001');
    });

    it('the messages name the problem', async () => {
      const both = await c.book('portal', {
        meetingRoomId: room(),
        deskId: desk(),
        startDateTime: c.t('16:00', 5),
        endDateTime: c.t('17:00', 5),
      });
      expect(both.body.message.join('\n')).toMatch(/meetingRoomId/);
      const noEnd = await c.book('portal', { meetingRoomId: room(), startDateTime: c.t('16:00', 5) });
      expect(noEnd.body.message.join('\n')).toMatch(/endDateTime/);
      const desk2 = await c.book('portal', { deskId: desk(), startDateTime: c.t('16:00', 5) });
      expect(desk2.body.message.join('\n')).toMatch(/timePeriod/);
      const due = await c.book('portal', {
        meetingRoomId: room(),
        startDateTime: c.t('16:00', 5),
        endDateTime: c.t('17:00', 5),
        paymentDueMinutes: 60,
      });
      expect(due.body.message.join('\n')).toMatch(/paymentDueMinutes/);
      const drafts = await c.book('portal', {
        meetingRoomId: room(),
        startDateTime: c.t('16:00', 5),
        endDateTime: c.t('17:00', 5),
        draftEndDateTimes: [c.t('18:00', 5)],
      });
      expect(drafts.body.message.join('\n')).toMatch(/draftEndDateTimes/);
      const rule = await c.book('portal', {
        meetingRoomId: room(),
        startDateTime: c.t('16:00', 5),
        endDateTime: c.t('17:00', 5),
        recurrence: 'FREQ=MONTHLY;COUNT=2',
      });
      expect(rule.body.message.join('\n')).toMatch(/recurrence/);
    });

    it('nothing was booked on day D+5 by the refused requests', async () => {
      const body = await listAll({ from: c.t('00:00', 5), to: c.t('00:00', 6) });
      expect(body.meta.total).toBe(0);
      expect(body.data).toEqual([]);
    });
  });

  // -------------------------------------------------------------------------
  describe('configuration rules → 400 KS001 with a helpful message', () => {
    const refusal = async (room: string, from: string, to: string, fromDays = 0, toDays = fromDays) => {
      const res = await c.book('alice', { meetingRoomId: c.id(room), startDateTime: c.t(from, fromDays), endDateTime: c.t(to, toDays) });
      expectError(res, 400, 'KS001');
      return (res.body.message as string[]).join('\n');
    };

    it('outside operating hours', async () => {
      expect(await refusal('main', '06:00', '08:00', 1)).toMatch(/operating hours/);
      expect(await refusal('main', '21:00', '22:30', 1)).toMatch(/operating hours/);
    });

    it('overlapping the break', async () => {
      const msg = await refusal('main', '11:30', '12:30', 1);
      expect(msg).toMatch(/break/);
      expect(msg).toMatch(/12:00/);
    });

    it('lead time: names the earliest start', async () => {
      // now is D 07:00 and the room wants two hours' notice.
      const msg = await refusal('lead', '08:00', '09:00');
      expect(msg).toMatch(/advance/);
      expect(msg).toContain(`${c.D.toISODate()} 09:00`);
      created(await c.book('alice', { meetingRoomId: c.id('lead'), startDateTime: c.t('09:00'), endDateTime: c.t('10:00') }));
    });

    it('a start in the past', async () => {
      expect(await refusal('main', '06:30', '07:30')).toMatch(/operating hours|advance/);
      expect(await refusal('lead', '07:00', '08:00', -1)).toMatch(/advance/);
    });

    it('max advance days: names the last bookable date', async () => {
      const msg = await refusal('main', '09:00', '10:00', 35);
      // Today (service time) is D, so the last bookable date is D+30.
      const last = c.D.plus({ days: 30 }).toISODate()!;
      expect(msg).toContain(last);
    });

    it('max duration', async () => {
      expect(await refusal('main', '13:00', '18:00', 1)).toMatch(/at most 240 minutes/);
    });

    it('several days', async () => {
      expect(await refusal('main', '20:00', '08:00', 1, 2)).toMatch(/several days/);
    });
  });

  // -------------------------------------------------------------------------
  describe('slot and cleaning conflicts → 409 KS012', () => {
    beforeAll(async () => {
      await c.bookRoom('alice', 'clean', '10:00', '11:00');
    });

    it('an overlap', async () => {
      const res = await c.book('bob', { meetingRoomId: c.id('clean'), startDateTime: c.t('10:30'), endDateTime: c.t('11:30') });
      expectError(res, 409, 'KS012');
    });

    it("a start inside the previous booking's cleaning: the message names when cleaning ends", async () => {
      const res = await c.book('bob', { meetingRoomId: c.id('clean'), startDateTime: c.t('11:00'), endDateTime: c.t('11:45') });
      expectError(res, 409, 'KS012');
      expect(res.body.message).toContain('11:15');
    });

    it('an own cleaning that runs into the next booking', async () => {
      expectError(
        await c.book('bob', { meetingRoomId: c.id('clean'), startDateTime: c.t('09:00'), endDateTime: c.t('09:50') }),
        409,
        'KS012',
      );
    });

    it('11:15 (after the cleaning) and 09:00-09:45 (cleaning ends at 10:00) are accepted', async () => {
      await c.bookRoom('bob', 'clean', '11:15', '12:00');
      await c.bookRoom('bob', 'clean', '09:00', '09:45');
    });

    it('the refused requests booked nothing', async () => {
      const body = await listAll({ from: c.t('00:00'), to: c.t('00:00', 1), meetingRoomId: c.id('clean') });
      expect(body.meta.total).toBe(3);
    });
  });

  // -------------------------------------------------------------------------
  describe('unknown and closed assets', () => {
    it('404 KS005 for an unknown room or desk', async () => {
      expectError(
        await c.book('portal', { meetingRoomId: UNKNOWN_ID, startDateTime: c.t('09:00', 6), endDateTime: c.t('10:00', 6) }),
        404,
        'KS005',
      );
      expectError(
        await c.book('portal', { deskId: UNKNOWN_ID, startDateTime: c.t('09:00', 6), endDateTime: c.t('10:00', 6) }),
        404,
        'KS005',
      );
    });

    it("404 KS005 for a room of a project outside the caller's scope", async () => {
      expectError(
        await c.book('portal', { meetingRoomId: c.id('annexroom'), startDateTime: c.t('09:00', 6), endDateTime: c.t('10:00', 6) }),
        404,
        'KS005',
      );
      // The hub app, which has the annex, can book it.
      created(await c.book('hub', { meetingRoomId: c.id('annexroom'), startDateTime: c.t('09:00', 6), endDateTime: c.t('10:00', 6) }));
    });

    it('409 MEETING_006 for an inactive room', async () => {
      expectError(
        await c.book('alice', { meetingRoomId: c.id('closed'), startDateTime: c.t('09:00', 6), endDateTime: c.t('10:00', 6) }),
        409,
        'MEETING_006',
      );
    });
  });

  // -------------------------------------------------------------------------
  describe('private room (isPublic false)', () => {
    const vault = (caller: string, from: string, to: string) =>
      c.book(caller, { meetingRoomId: c.id('vault'), startDateTime: c.t(from, 1), endDateTime: c.t(to, 1) });

    it('403 KS003 for a federated visitor (act_as)', async () => {
      expectError(await vault('visitor', '09:00', '10:00'), 403, 'KS003');
      // …who can book a public room.
      created(await c.book('visitor', { meetingRoomId: c.id('main'), startDateTime: c.t('09:00', 7), endDateTime: c.t('10:00', 7) }));
    });

    it('403 KS003 for an app token without a role on the project', async () => {
      expectError(await vault('viewer', '09:00', '10:00'), 403, 'KS003');
    });

    it('allowed for a project member (act_as)', async () => {
      const m = created(await vault('alice', '09:00', '10:00'));
      expect(m.organizer.userId).toBe(c.id('alice'));
    });

    it('allowed for an app holding a role on the project', async () => {
      created(await vault('portal', '10:30', '11:30'));
    });

    it('allowed for brand staff who is not a member of the project', async () => {
      const m = created(await vault('dana', '13:00', '14:00'));
      expect(m.organizer.userId).toBe(c.id('dana'));
    });
  });

  // -------------------------------------------------------------------------
  describe('organizer blocked from booking → 403 MEETING_049', () => {
    it('a blocked member booking through act_as', async () => {
      const res = await c.book('eve', { meetingRoomId: c.id('main'), startDateTime: c.t('09:00', 8), endDateTime: c.t('10:00', 8) });
      expectError(res, 403, 'MEETING_049');
    });

    it('is checked before the window rules and the slot conflict', async () => {
      // Out of hours.
      expectError(
        await c.book('eve', { meetingRoomId: c.id('main'), startDateTime: c.t('05:00', 8), endDateTime: c.t('06:00', 8) }),
        403,
        'MEETING_049',
      );
      // Too long and across the break.
      expectError(
        await c.book('eve', { meetingRoomId: c.id('main'), startDateTime: c.t('08:00', 8), endDateTime: c.t('20:00', 8) }),
        403,
        'MEETING_049',
      );
      // A slot already taken (the 14:00-15:00 booking on D).
      expectError(
        await c.book('eve', { meetingRoomId: c.id('main'), startDateTime: c.t('14:00'), endDateTime: c.t('15:00') }),
        403,
        'MEETING_049',
      );
    });

    it('a back-office booking for a blocked member', async () => {
      const res = await c.book('portal', {
        meetingRoomId: c.id('main'),
        organizerId: c.id('eve'),
        startDateTime: c.t('09:00', 8),
        endDateTime: c.t('10:00', 8),
      });
      expectError(res, 403, 'MEETING_049');
    });

    it('nothing was booked for the blocked member', async () => {
      const body = await listAll({ from: c.t('00:00', -1), to: c.t('00:00', 20), organizerId: c.id('eve') });
      expect(body.meta.total).toBe(0);
    });
  });

  // -------------------------------------------------------------------------
  describe('back-office booking (organizerId)', () => {
    const office = (caller: string, organizerId: string, from: string, to: string, extra: Record<string, unknown> = {}) =>
      c.book(caller, { meetingRoomId: c.id('office'), organizerId, startDateTime: c.t(from, 1), endDateTime: c.t(to, 1), ...extra });

    it('403 KS003 for an app without MEETING_UPDATE', async () => {
      expectError(await office('viewer', c.id('alice'), '09:00', '10:00'), 403, 'KS003');
    });

    it('403 KS003 for a plain member (act_as) without MEETING_UPDATE', async () => {
      expectError(await office('alice', c.id('carol'), '09:00', '10:00'), 403, 'KS003');
    });

    it("400 KS001 when the organizer is not a member of the asset's project", async () => {
      expectError(await office('portal', c.id('dana'), '09:00', '10:00'), 400, 'KS001');
      expectError(await office('portal', UNKNOWN_ID, '09:00', '10:00'), 400, 'KS001');
    });

    it('201: the member is the organizer, bookedVia backoffice, bookedByUserId the caller', async () => {
      const m = created(await office('portal', c.id('alice'), '09:00', '10:00', { paymentDueMinutes: 30 }));
      expect(m.organizer).toMatchObject({ userId: c.id('alice'), email: 'alice@example.com' });
      expect(m.bookedVia).toBe('backoffice');
      expect(m.bookedByUserId).toEqual(expect.stringMatching(HEX24));
      expect(m.bookedByUserId).not.toBe(c.id('alice'));
      expect(m.histories[0]).toMatchObject({ action: 'create', source: 'partner' });
      // The member sees it as theirs.
      const mine = await c.list('alice', { from: c.t('00:00', 1), to: c.t('00:00', 2), meetingRoomId: c.id('office') });
      expect(mine.body.data.map((x: any) => x._id)).toEqual([m._id]);
    });

    it('an admin acting through act_as books for a member; bookedByUserId is the admin', async () => {
      const m = created(await office('bob', c.id('carol'), '10:30', '11:30'));
      expect(m.organizer.userId).toBe(c.id('carol'));
      expect(m.bookedVia).toBe('backoffice');
      expect(m.bookedByUserId).toBe(c.id('bob'));
    });
  });

  // -------------------------------------------------------------------------
  describe('draft', () => {
    it('answers 200 with draftInfo, one entry per end, and books nothing', async () => {
      const res = await c.book('alice', {
        meetingRoomId: c.id('draftroom'),
        draft: true,
        startDateTime: c.t('09:00', 1),
        endDateTime: c.t('10:00', 1),
        draftEndDateTimes: [c.t('11:00', 1), c.t('23:00', 1)],
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.code).toBe('KS000');
      const info = res.body.data.draftInfo;
      expect(info).toHaveLength(3);
      expect(info[0]).toMatchObject({ isAvailable: true });
      expect(sameInstant(info[0].startDateTime, c.t('09:00', 1))).toBe(true);
      expect(sameInstant(info[0].endDateTime, c.t('10:00', 1))).toBe(true);
      expect(info[1]).toMatchObject({ isAvailable: true });
      expect(sameInstant(info[1].endDateTime, c.t('11:00', 1))).toBe(true);
      expect(info[2]).toMatchObject({ isAvailable: false, reason: 'OPERATING_HOURS' });
      expect(info[2].message).toEqual(expect.any(String));
      expect(res.body.data._id).toBeUndefined();
      expect(res.body.data.pinCode).toBeUndefined();

      const body = await listAll({ from: c.t('00:00', 1), to: c.t('00:00', 2), meetingRoomId: c.id('draftroom') });
      expect(body.data).toEqual([]);
      expect(body.meta.total).toBe(0);
    });

    it('reports a conflict (cleaning included) per end', async () => {
      await c.bookRoom('alice', 'draftroom', '14:00', '15:00', {}, 1);
      const res = await c.book('alice', {
        meetingRoomId: c.id('draftroom'),
        draft: true,
        startDateTime: c.t('13:00', 1),
        endDateTime: c.t('14:00', 1),
        draftEndDateTimes: [c.t('13:45', 1)],
      });
      expect(res.status, res.text).toBe(200);
      const [first, second] = res.body.data.draftInfo;
      expect(first).toMatchObject({ isAvailable: false, reason: 'CONFLICT' });
      expect(second).toMatchObject({ isAvailable: true });
      const body = await listAll({ from: c.t('00:00', 1), to: c.t('00:00', 2), meetingRoomId: c.id('draftroom') });
      expect(body.meta.total).toBe(1);
    });
  });

  // -------------------------------------------------------------------------
  describe('recurring series', () => {
    const rows = async (fromDays: number, toDays: number) => {
      const body = await listAll({ from: c.t('00:00', fromDays), to: c.t('00:00', toDays), meetingRoomId: c.id('series') });
      return body.data as any[];
    };

    it('FREQ=DAILY;COUNT=3: 201, then GET /meetings lists three rows of one series', async () => {
      const m = created(
        await c.book('alice', {
          meetingRoomId: c.id('series'),
          title: 'Daily',
          startDateTime: c.t('14:00', 1),
          endDateTime: c.t('15:00', 1),
          recurrence: 'FREQ=DAILY;COUNT=3',
        }),
      );
      expect(m.seriesMasterId).toBe(m._id);
      const list = (await rows(1, 5)).filter((r) => r._id === m._id);
      expect(list).toHaveLength(3);
      expect(list.map((r) => r.seriesMasterId)).toEqual([m._id, m._id, m._id]);
      expect(new Set(list.map((r) => r.occurrenceEventId)).size).toBe(3);
      for (const r of list) expect(r.occurrenceEventId).toEqual(expect.any(String));
      list.forEach((r, i) => {
        expect(sameInstant(r.startDateTime, c.t('14:00', 1 + i)), r.startDateTime).toBe(true);
        expect(sameInstant(r.endDateTime, c.t('15:00', 1 + i)), r.endDateTime).toBe(true);
      });
    });

    it('FREQ=WEEKLY with BYDAY: occurrences on the named weekdays', async () => {
      const rule = `FREQ=WEEKLY;BYDAY=${byDayCode(c.D, 1)},${byDayCode(c.D, 3)};COUNT=3`;
      const m = created(
        await c.book('alice', {
          meetingRoomId: c.id('series'),
          title: 'Weekly',
          startDateTime: c.t('16:00', 1),
          endDateTime: c.t('17:00', 1),
          recurrence: rule,
        }),
      );
      const list = (await rows(1, 12)).filter((r) => r._id === m._id);
      expect(list).toHaveLength(3);
      expect(new Set(list.map((r) => r.occurrenceEventId)).size).toBe(3);
      expect(list.map((r) => Date.parse(r.startDateTime))).toEqual([1, 3, 8].map((d) => Date.parse(c.t('16:00', d))));
    });

    it('a conflict with any occurrence refuses the whole series (409 KS012 naming it) and books nothing', async () => {
      await c.bookRoom('bob', 'series', '18:00', '19:00', {}, 3);
      const before = (await rows(1, 6)).length;
      const res = await c.book('alice', {
        meetingRoomId: c.id('series'),
        title: 'Clash',
        startDateTime: c.t('18:00', 1),
        endDateTime: c.t('19:00', 1),
        recurrence: 'FREQ=DAILY;COUNT=3',
      });
      expectError(res, 409, 'KS012');
      expect(res.body.message).toMatch(/occurrence 3/);
      expect(res.body.message).toContain(new Date(Date.parse(c.t('18:00', 3))).toISOString());
      const after = await rows(1, 6);
      expect(after.length).toBe(before);
      expect(after.some((r) => r.title === 'Clash')).toBe(false);
    });

    it('a rule violation on a later occurrence refuses the series with 400 KS001', async () => {
      // Today is D and maxAdvanceBookingDays is 30: D+28..D+30 are bookable, D+31 is not.
      const res = await c.book('alice', {
        meetingRoomId: c.id('series'),
        title: 'Too far',
        startDateTime: c.t('20:00', 28),
        endDateTime: c.t('21:00', 28),
        recurrence: 'FREQ=DAILY;COUNT=4',
      });
      expectError(res, 400, 'KS001');
      expect(res.body.message.join('\n')).toMatch(/occurrence 4/);
    });
  });

  // -------------------------------------------------------------------------
  describe('asset with postStartExpireMinutes 0 (check-in not required)', () => {
    it('a booking created inside the check-in window starts checked-in, with a system history entry', async () => {
      // now = D 07:00; the window of a 07:10 start opened at 06:55.
      const m = await c.bookRoom('alice', 'auto', '07:10', '08:00');
      expect(m.status).toBe('checked-in');
      expect(actions(m)).toEqual(['create', 'check-in']);
      expect(m.histories[1]).toMatchObject({ action: 'check-in', source: 'system' });
      expect(m.organizer.checkInDateTime).toMatch(ISO_DATE_TIME);
    });

    it('a booking created before its check-in window starts active', async () => {
      const m = await c.bookRoom('alice', 'auto', '09:00', '10:00');
      expect(m.status).toBe('active');
      expect(actions(m)).toEqual(['create']);
    });

    it('an asset with the default meetingConfig starts active even inside the window', async () => {
      const m = await c.bookRoom('alice', 'main', '07:10', '08:00');
      expect(m.status).toBe('active');
    });
  });
});
