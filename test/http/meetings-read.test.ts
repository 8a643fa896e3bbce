/**
 * GET /meetings and GET /meetings/{id} over HTTP (api-spec "Meeting", "GET /meetings",
 * "GET /meetings/{id}", "POST /meetings" rule 5, "Limits"): required window,
 * filters, pagination, who sees which bookings, reconciling after a timeout, and
 * who sees the pinCode.
 *
 * Bookings on day D (clock parked at D 07:00 local):
 *   mAlice  Rose   09:00-10:00  organizer alice (act_as), attendee carol
 *   mApp    Lily   10:00-11:00  organizer the portal app, attendee alice
 *   mDesk   Desk 1 09:00-10:00  organizer the portal app
 *   mBob    Rose   14:00-15:00  organizer bob (act_as)
 *   mGone   Lily   15:00-16:00  organizer the portal app, then cancelled
 *   mAnnex  Annex  09:00-10:00  organizer the hub app (project annex)
 *   mLater  Rose   D+1 09:00-10:00, organizer the portal app (outside day D)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, UNKNOWN_ID } from '../support/fixtures.js';
import { okData, type QueryValue } from '../support/catalogue.js';
import { accepted, created, startMeetingService, type MeetingCtx } from '../support/meetings.js';

describe('reading bookings', () => {
  let c: MeetingCtx;
  let mAlice: any, mApp: any, mDesk: any, mBob: any, mGone: any, mAnnex: any, mLater: any;
  const day = () => ({ from: c.t('00:00'), to: c.t('00:00', 1) });
  const idsOf = (res: any): string[] => (okData(res) as any[]).map((m) => m._id);
  const listIds = async (caller: string, params: Record<string, QueryValue> = {}) => idsOf(await c.list(caller, { ...day(), ...params }));

  beforeAll(async () => {
    c = await startMeetingService({
      rooms: [
        { key: 'rose', name: 'Rose' },
        { key: 'lily', name: 'Lily' },
        { key: 'annexroom', name: 'Annex', floor: 'fX' },
      ],
      desks: [{ key: 'd1', name: 'Desk 1' }],
    });
    mAlice = await c.bookRoom('alice', 'rose', '09:00', '10:00', { attendees: [{ email: 'carol@example.com' }] });
    mApp = await c.bookRoom('portal', 'lily', '10:00', '11:00', { attendees: [{ email: 'alice@example.com' }] });
    mDesk = created(await c.book('portal', { deskId: c.id('d1'), startDateTime: c.t('09:00'), endDateTime: c.t('10:00') }));
    mBob = await c.bookRoom('bob', 'rose', '14:00', '15:00');
    mGone = await c.bookRoom('portal', 'lily', '15:00', '16:00');
    accepted(await c.action('portal', mGone._id, 'cancel'));
    mAnnex = await c.bookRoom('hub', 'annexroom', '09:00', '10:00');
    mLater = await c.bookRoom('portal', 'rose', '09:00', '10:00', {}, 1);
  });
  afterAll(async () => {
    await c?.close();
  });

  // -------------------------------------------------------------------------
  describe('GET /meetings: window and validation', () => {
    it('from and to are required: 400 KS001', async () => {
      expectError(await c.list('portal', {}), 400, 'KS001');
      expectError(await c.list('portal', { from: c.t('00:00') }), 400, 'KS001');
      expectError(await c.list('portal', { to: c.t('00:00', 1) }), 400, 'KS001');
    });

    it('to before (or equal to) from: 400 KS001', async () => {
      expectError(await c.list('portal', { from: c.t('00:00', 1), to: c.t('00:00') }), 400, 'KS001');
      expectError(await c.list('portal', { from: c.t('00:00'), to: c.t('00:00') }), 400, 'KS001');
    });

    it('bad date-times, ids and statuses: 400 KS001', async () => {
      expectError(await c.list('portal', { from: 'yesterday', to: c.t('00:00', 1) }), 400, 'KS001');
      expectError(await c.list('portal', { ...day(), meetingRoomId: 'rose' }), 400, 'KS001');
      expectError(await c.list('portal', { ...day(), statuses: ['active', 'sleeping'] }), 400, 'KS001');
    });

    it('401 KS002 without a token', async () => {
      expectError(
        await c.request('GET', `/meetings?from=${encodeURIComponent(c.t('00:00'))}&to=${encodeURIComponent(c.t('00:00', 1))}`, null),
        401,
        'KS002',
      );
    });

    it('only bookings overlapping the window, ordered by start, with meta', async () => {
      const res = await c.list('portal', day());
      const data = okData(res) as any[];
      expect(data.map((m) => m._id)).toEqual(expect.arrayContaining([mAlice._id, mApp._id, mDesk._id, mBob._id, mGone._id]));
      expect(data.map((m) => m._id)).not.toContain(mLater._id);
      expect(data).toHaveLength(5);
      const starts = data.map((m) => Date.parse(m.startDateTime));
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      expect(res.body.meta).toEqual({ limit: expect.any(Number), offset: 0, total: 5 });
      // A window that only touches a booking's edge does not overlap it.
      expect(await listIds('portal', { from: c.t('11:00'), to: c.t('14:00') })).toEqual([]);
      expect(await listIds('portal', { from: c.t('10:59'), to: c.t('14:01') })).toEqual([mApp._id, mBob._id]);
    });

    it('list rows carry the full Meeting with histories', async () => {
      const data = okData(await c.list('portal', { ...day(), meetingRoomId: c.id('lily'), statuses: 'cancelled' })) as any[];
      expect(data).toHaveLength(1);
      expect(data[0]).toMatchObject({ _id: mGone._id, status: 'cancelled', meetingRoomId: c.id('lily'), meetingRoomName: 'Lily' });
      expect(data[0].histories.map((h: any) => h.action)).toEqual(['create', 'cancel']);
    });
  });

  // -------------------------------------------------------------------------
  describe('GET /meetings: filters', () => {
    it('projectId', async () => {
      expect(await listIds('hub', { projectId: c.id('annex') })).toEqual([mAnnex._id]);
      const tower = await listIds('hub', { projectId: c.id('tower') });
      expect(tower).toHaveLength(5);
      expect(tower).not.toContain(mAnnex._id);
      expect(await listIds('hub')).toHaveLength(6);
    });

    it('meetingRoomId, deskId and organizerId', async () => {
      expect(await listIds('portal', { meetingRoomId: c.id('rose') })).toEqual([mAlice._id, mBob._id]);
      expect(await listIds('portal', { deskId: c.id('d1') })).toEqual([mDesk._id]);
      expect(await listIds('portal', { organizerId: c.id('alice') })).toEqual([mAlice._id]);
      expect(await listIds('portal', { organizerId: c.id('bob'), meetingRoomId: c.id('rose') })).toEqual([mBob._id]);
      expect(await listIds('portal', { organizerId: c.id('carol') })).toEqual([]);
    });

    it('meetingRoomIds and deskIds: repeated keys and comma-separated lists', async () => {
      const both = [mAlice._id, mApp._id, mBob._id, mGone._id];
      expect(await listIds('portal', { meetingRoomIds: [c.id('rose'), c.id('lily')] })).toEqual(both);
      expect(await listIds('portal', { meetingRoomIds: `${c.id('rose')},${c.id('lily')}` })).toEqual(both);
      expect(await listIds('portal', { meetingRoomIds: c.id('lily') })).toEqual([mApp._id, mGone._id]);
      expect(await listIds('portal', { deskIds: [c.id('d1')] })).toEqual([mDesk._id]);
      expect(await listIds('portal', { deskIds: `${c.id('d1')},${UNKNOWN_ID}` })).toEqual([mDesk._id]);
      expect(await listIds('portal', { deskIds: UNKNOWN_ID })).toEqual([]);
      expectError(await c.list('portal', { ...day(), meetingRoomIds: `${c.id('rose')},nope` }), 400, 'KS001');
    });

    it('organizerEmails and attendeeEmails (case-insensitive, lists)', async () => {
      expect(await listIds('portal', { organizerEmails: 'alice@example.com' })).toEqual([mAlice._id]);
      expect(await listIds('portal', { organizerEmails: ['ALICE@example.com', 'bob@example.com'] })).toEqual([mAlice._id, mBob._id]);
      expect(await listIds('portal', { organizerEmails: 'alice@example.com,bob@example.com' })).toEqual([mAlice._id, mBob._id]);
      expect(await listIds('portal', { attendeeEmails: 'carol@example.com' })).toEqual([mAlice._id]);
      expect(await listIds('portal', { attendeeEmails: 'alice@example.com' })).toEqual([mApp._id]);
      expect(await listIds('portal', { attendeeEmails: ['alice@example.com', 'Carol@Example.com'] })).toEqual([mAlice._id, mApp._id]);
      expect(await listIds('portal', { attendeeEmails: 'nobody@example.com' })).toEqual([]);
    });

    it('statuses', async () => {
      expect(await listIds('portal', { statuses: 'cancelled' })).toEqual([mGone._id]);
      const active = await listIds('portal', { statuses: ['active'] });
      expect(active).toHaveLength(4);
      expect(active).not.toContain(mGone._id);
      expect(await listIds('portal', { statuses: 'active,cancelled' })).toHaveLength(5);
      expect(await listIds('portal', { statuses: ['done', 'checked-in'] })).toEqual([]);
    });
  });

  // -------------------------------------------------------------------------
  describe('GET /meetings: pagination', () => {
    it('limit and offset page through the window; meta.total counts all', async () => {
      const all = await listIds('portal');
      const page = await c.list('portal', { ...day(), limit: 2, offset: 1 });
      expect(idsOf(page)).toEqual(all.slice(1, 3));
      expect(page.body.meta).toEqual({ limit: 2, offset: 1, total: 5 });
      const tail = await c.list('portal', { ...day(), limit: 2, offset: 4 });
      expect(idsOf(tail)).toEqual(all.slice(4));
      const beyond = await c.list('portal', { ...day(), offset: 10 });
      expect(idsOf(beyond)).toEqual([]);
      expect(beyond.body.meta.total).toBe(5);
    });

    it('limit 0 gives no rows and the total; limit 3000 is allowed', async () => {
      const zero = await c.list('portal', { ...day(), limit: 0 });
      expect(idsOf(zero)).toEqual([]);
      expect(zero.body.meta).toEqual({ limit: 0, offset: 0, total: 5 });
      const max = await c.list('portal', { ...day(), limit: 3000 });
      expect(idsOf(max)).toHaveLength(5);
      expect(max.body.meta.limit).toBe(3000);
    });

    it('limit 3001, a negative limit or offset, or a non-integer → 400 KS001', async () => {
      expectError(await c.list('portal', { ...day(), limit: 3001 }), 400, 'KS001');
      expectError(await c.list('portal', { ...day(), limit: -1 }), 400, 'KS001');
      expectError(await c.list('portal', { ...day(), offset: -1 }), 400, 'KS001');
      expectError(await c.list('portal', { ...day(), limit: 'ten' }), 400, 'KS001');
    });
  });

  // -------------------------------------------------------------------------
  describe('GET /meetings: visibility', () => {
    it('a member (act_as) sees only the bookings they organize or attend', async () => {
      expect(await listIds('alice')).toEqual([mAlice._id, mApp._id]);
      expect(await listIds('carol')).toEqual([mAlice._id]);
      expect(await listIds('eve')).toEqual([]);
      // Filters cannot widen it.
      expect(await listIds('alice', { meetingRoomId: c.id('rose') })).toEqual([mAlice._id]);
      expect(await listIds('alice', { organizerId: c.id('bob') })).toEqual([]);
    });

    it('a project admin (act_as through an app holding MEETING_UPDATE) sees every booking of the project', async () => {
      expect(await listIds('bob')).toEqual(expect.arrayContaining([mAlice._id, mApp._id, mDesk._id, mBob._id, mGone._id]));
      expect(await listIds('bob')).not.toContain(mAnnex._id);
    });

    it('an app token sees every booking of its projects, whoever booked it', async () => {
      expect(await listIds('portal')).toEqual(expect.arrayContaining([mAlice._id, mApp._id, mDesk._id, mBob._id, mGone._id]));
      expect(await listIds('viewer')).toHaveLength(5);
    });

    it("another project's bookings are invisible; an out-of-scope projectId filter is 403 KS003", async () => {
      expect(await listIds('portal')).not.toContain(mAnnex._id);
      expectError(await c.list('portal', { ...day(), projectId: c.id('annex') }), 403, 'KS003');
      expectError(await c.list('alice', { ...day(), projectId: c.id('annex') }), 403, 'KS003');
      expect(await listIds('portal', { meetingRoomId: c.id('annexroom') })).toEqual([]);
    });

    it('a client that timed out finds its booking by organizer, asset and window', async () => {
      const window = { from: c.t('14:00'), to: c.t('15:00') };
      expect(idsOf(await c.list('bob', { ...window, meetingRoomId: c.id('rose'), organizerId: c.id('bob') }))).toEqual([mBob._id]);
      expect(idsOf(await c.list('portal', { ...window, meetingRoomIds: c.id('rose'), organizerEmails: 'bob@example.com' }))).toEqual([
        mBob._id,
      ]);
      // The same slot on the next day is somebody else's booking.
      expect(
        idsOf(
          await c.list('portal', { from: c.t('09:00', 1), to: c.t('10:00', 1), meetingRoomId: c.id('rose'), organizerId: c.id('alice') }),
        ),
      ).toEqual([]);
    });

    it('pinCode in list rows follows the same rules as the single read', async () => {
      const rows = okData(await c.list('alice', day())) as any[];
      expect(rows.find((m) => m._id === mAlice._id).pinCode).toBe(mAlice.pinCode);
      expect(rows.find((m) => m._id === mApp._id).pinCode).toBeUndefined();
    });
  });

  // -------------------------------------------------------------------------
  describe('GET /meetings/{id}', () => {
    it('the full Meeting with its histories', async () => {
      const m = okData(await c.get('portal', mAlice._id));
      expect(m).toMatchObject({
        _id: mAlice._id,
        status: 'active',
        meetingRoomId: c.id('rose'),
        meetingRoomName: 'Rose',
        title: mAlice.title,
        startDateTime: mAlice.startDateTime,
        endDateTime: mAlice.endDateTime,
      });
      expect(m.organizer.userId).toBe(c.id('alice'));
      expect(m.attendees.map((a: any) => a.userId)).toEqual([c.id('carol')]);
      expect(m.histories).toHaveLength(1);
      expect(m.histories[0]).toMatchObject({ action: 'create', source: 'user', by: c.id('alice') });
    });

    it('pinCode is shown to the organizer', async () => {
      expect(okData(await c.get('alice', mAlice._id)).pinCode).toBe(mAlice.pinCode);
      expect(okData(await c.get('bob', mBob._id)).pinCode).toBe(mBob.pinCode);
    });

    it('pinCode is shown to the app that made the booking', async () => {
      expect(okData(await c.get('portal', mApp._id)).pinCode).toBe(mApp.pinCode);
    });

    it('pinCode is shown to a project admin', async () => {
      expect(okData(await c.get('bob', mAlice._id)).pinCode).toBe(mAlice.pinCode);
    });

    it('pinCode is hidden from an attendee and from an app without a role that did not book it', async () => {
      const asAttendee = okData(await c.get('alice', mApp._id));
      expect(asAttendee._id).toBe(mApp._id);
      expect(asAttendee.pinCode).toBeUndefined();
      const asCarol = okData(await c.get('carol', mAlice._id));
      expect(asCarol.pinCode).toBeUndefined();
      const asViewer = okData(await c.get('viewer', mAlice._id));
      expect(asViewer.pinCode).toBeUndefined();
    });

    it('404 KS005 for a booking the caller may not see', async () => {
      expectError(await c.get('alice', mBob._id), 404, 'KS005');
      expectError(await c.get('eve', mAlice._id), 404, 'KS005');
      expectError(await c.get('portal', mAnnex._id), 404, 'KS005');
    });

    it('404 KS005 for an unknown id, 400 KS001 for an id that is not hex', async () => {
      expectError(await c.get('portal', UNKNOWN_ID), 404, 'KS005');
      expectError(await c.get('portal', 'not-a-meeting-id'), 400, 'KS001');
      expectError(await c.get('portal', `${mAlice._id}0`), 400, 'KS001');
    });
  });
});
