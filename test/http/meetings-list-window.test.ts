/**
 * GET /meetings finds every booking overlapping its window, however long before the window it
 * started (api-spec "GET /meetings"). The list reads single bookings by a start-time range bounded
 * by the project's longest hold and series by the end of their span (meeting-repository `list`,
 * migration 022), so these cases pin the edges of both parts:
 *   mLong    Long   D 13:00-21:00 (8 h, the project's longest hold)
 *   mShort   Short  D 13:00-13:30
 *   mWeekly  Weekly D 09:00-10:00, FREQ=WEEKLY;COUNT=3 (D, D+7, D+14), organizer alice
 *   mLater   Weekly D+8 11:00-12:00, FREQ=DAILY;COUNT=2 (D+8, D+9)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { okData } from '../support/catalogue.js';
import { roomConfig, startMeetingService, type MeetingCtx } from '../support/meetings.js';

describe('GET /meetings: bookings that started before the window', () => {
  let c: MeetingCtx;
  let mLong: any, mShort: any, mWeekly: any, mLater: any;
  const ids = async (caller: string, from: string, to: string, extra: Record<string, string> = {}) =>
    (okData(await c.list(caller, { from, to, ...extra })) as any[]).map((m) => m._id as string);

  beforeAll(async () => {
    c = await startMeetingService({
      rooms: [
        { key: 'long', name: 'Long', config: roomConfig({ maxDurationMinutes: 600 }) },
        { key: 'short', name: 'Short' },
        { key: 'weekly', name: 'Weekly' },
      ],
    });
    mLong = await c.bookRoom('portal', 'long', '13:00', '21:00');
    mShort = await c.bookRoom('portal', 'short', '13:00', '13:30');
    mWeekly = await c.bookRoom('alice', 'weekly', '09:00', '10:00', { recurrence: 'FREQ=WEEKLY;COUNT=3' });
    mLater = await c.bookRoom('portal', 'weekly', '11:00', '12:00', { recurrence: 'FREQ=DAILY;COUNT=2' }, 8);
  });
  afterAll(async () => {
    await c?.close();
  });

  it('a single booking that started hours before the window (up to the longest hold) is listed', async () => {
    expect(await ids('portal', c.t('20:00'), c.t('20:30'))).toEqual([mLong._id]);
    expect(await ids('portal', c.t('20:59'), c.t('23:00'))).toEqual([mLong._id]);
    // Its end touching the window's start is no overlap.
    expect(await ids('portal', c.t('21:00'), c.t('23:00'))).toEqual([]);
    expect(await ids('portal', c.t('13:29'), c.t('13:31'))).toEqual([mLong._id, mShort._id]);
  });

  it("a series' later occurrence is listed from its row that started weeks before", async () => {
    const second = okData(await c.list('portal', { from: c.t('09:30', 7), to: c.t('09:45', 7) })) as any[];
    expect(second.map((m) => m._id)).toEqual([mWeekly._id]);
    expect(Date.parse(second[0].startDateTime)).toBe(Date.parse(c.t('09:00', 7)));
    expect(await ids('portal', c.t('09:59', 14), c.t('10:30', 14))).toEqual([mWeekly._id]);
    // After its last occurrence, and between occurrences, nothing.
    expect(await ids('portal', c.t('00:00', 21), c.t('00:00', 22))).toEqual([]);
    expect(await ids('portal', c.t('10:00', 7), c.t('23:00', 7))).toEqual([]);
  });

  it('a series that starts after the window is not listed, though its span covers later days', async () => {
    expect(await ids('portal', c.t('00:00', 7), c.t('00:00', 8))).toEqual([mWeekly._id]);
    expect(await ids('portal', c.t('00:00', 8), c.t('00:00', 10))).toEqual([mLater._id, mLater._id]);
    expect(await ids('portal', c.t('11:00', 7), c.t('11:00', 8))).toEqual([]);
  });

  it('the filters apply to series rows too: statuses, asset and who may see them', async () => {
    const window = { from: c.t('00:00', 7), to: c.t('00:00', 15) };
    expect(await ids('portal', window.from, window.to, { statuses: 'active' })).toEqual([mWeekly._id, mLater._id, mLater._id, mWeekly._id]);
    expect(await ids('portal', window.from, window.to, { statuses: 'cancelled' })).toEqual([]);
    expect(await ids('portal', window.from, window.to, { meetingRoomId: c.id('long') })).toEqual([]);
    expect(await ids('alice', window.from, window.to)).toEqual([mWeekly._id, mWeekly._id]);
    expect(await ids('eve', window.from, window.to)).toEqual([]);
  });
});
