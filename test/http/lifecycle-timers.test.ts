/**
 * The clock-driven booking lifecycle under the sandbox clock (api-spec.md
 * "Meeting status" and "Timers"; operator-api.md "Sandbox clock"): reminders,
 * no-show warning and auto-cancel, automatic check-in, ending-soon notices, the
 * end of a booking and the roll of a recurring series — each observed over HTTP
 * (GET /meetings/{id}) and through the events a loopback receiver gets.
 * `POST /ops/v1/clock` has applied every due step when it answers, so states are
 * asserted right after each move.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { qs } from '../support/catalogue.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import {
  ALL_BOOKING_EVENTS,
  localHm,
  NO_SHOW_REASON,
  startWebhookService,
  TZ,
  type WebhookCtx,
  dayCounter,
} from '../support/webhook-site.js';

const sameInstant = (a: string | null | undefined, b: string) => !!a && Date.parse(a) === Date.parse(b);

describe('booking lifecycle timers (sandbox clock)', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  /** Each test works on its own local day (the clock only moves forward). */
  const newDay = dayCounter();

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    c = await startWebhookService({
      rooms: [
        { key: 'r-noshow', name: 'NoShow Room' },
        { key: 'r-checkin', name: 'Checkin Room' },
        { key: 'r-off', name: 'NoCancel Room', meetingConfig: { postStartExpireMinutes: -1 } },
        { key: 'r-auto', name: 'Auto Room', meetingConfig: { postStartExpireMinutes: 0 } },
        { key: 'r-move', name: 'Move Room' },
        { key: 'r-cancel', name: 'Cancel Room' },
        {
          key: 'r-custom',
          name: 'Custom Room',
          meetingConfig: { preStartMinutes: 20, postStartWarnMinutes: 5, postStartExpireMinutes: 12, preEndMinutes: 10 },
        },
        { key: 'r-series', name: 'Series Room', meetingConfig: { postStartExpireMinutes: -1 } },
        { key: 'r-order', name: 'Order Room' },
        { key: 'r-series-noshow', name: 'Series NoShow Room' },
      ],
      desks: [
        { key: 'd-allday', name: 'AllDay Desk' },
        { key: 'd-morning', name: 'Morning Desk' },
      ],
      hooks: [{ key: 'hk', url: rx.url('/events'), events: ALL_BOOKING_EVENTS }],
      clockAt: '05:00',
    });
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  /** Delivered events about the asset called `name` whose occurredAt falls on local day D + day, in time order. */
  async function eventsOf(name: string, day: number): Promise<any[]> {
    await c.drain();
    const from = c.D.plus({ days: day }).toMillis();
    const to = c.D.plus({ days: day + 1 }).toMillis();
    return rx
      .on('/events')
      .map((r) => r.body)
      .filter((b) => (b.data.roomName ?? b.data.deskName) === name)
      .filter((b) => Date.parse(b.occurredAt) >= from && Date.parse(b.occurredAt) < to)
      .sort((a, b) => Date.parse(a.occurredAt) - Date.parse(b.occurredAt));
  }
  const kinds = (events: any[]) => events.map((e) => e.type.replace(/^(ROOM|DESK)_/, ''));
  const lastHistory = (m: any) => m.histories[m.histories.length - 1];

  it('no-show: warning at start + 10, auto-cancel at start + 15 with cancelReason and a system history entry; the room is free again', async () => {
    const day = newDay();
    await c.clockTo('09:00', day);
    const m = await c.bookRoom('r-noshow', '10:00', '11:00', day);
    expect(m.status).toBe('active');

    await c.clockTo('10:14', day);
    expect((await c.get(m._id)).status).toBe('active');
    expect(kinds(await eventsOf('NoShow Room', day))).toEqual(['BOOK', 'REMINDER', 'NO_SHOW_WARNING']);

    await c.clockTo('10:15', day);
    const after = await c.get(m._id);
    expect(after.status).toBe('cancelled');
    expect(after.cancelReason).toBe(NO_SHOW_REASON);
    const h = lastHistory(after);
    expect(h).toMatchObject({ action: 'cancel', source: 'system', by: 'system', reason: NO_SHOW_REASON });
    expect(sameInstant(h.at, c.t('10:15', day))).toBe(true);
    expect(after.histories.map((x: any) => x.action)).toEqual(['create', 'cancel']);

    // The room (held until 11:15 with its cleaning) is free again: found by a search and bookable.
    const search = await c.svc.request(
      'GET',
      `/meeting-rooms${qs({ projectId: c.projectId, startDateTime: c.t('10:30', day), endDateTime: c.t('11:00', day) })}`,
      { token: c.alice },
    );
    expect(search.status, search.text).toBe(200);
    expect(search.body.data.map((r: any) => r._id)).toContain(c.id('r-noshow'));
    const again = await c.bookRoom('r-noshow', '10:30', '11:00', day);
    expect((await c.action(again._id, 'cancel')).status).toBe(202);

    await c.clockTo('11:30', day);
    const events = await eventsOf('NoShow Room', day);
    expect(kinds(events)).toEqual(['BOOK', 'REMINDER', 'NO_SHOW_WARNING', 'CANCEL', 'BOOK', 'CANCEL']);
    const [, reminder, warning, noShow, , userCancel] = events;
    expect(sameInstant(reminder.occurredAt, c.t('09:45', day))).toBe(true);
    expect(reminder.data).toMatchObject({ startTime: '10:00', endTime: '11:00', minutesUntilStart: 15 });
    expect(sameInstant(warning.occurredAt, c.t('10:10', day))).toBe(true);
    expect(warning.data).toMatchObject({ startTime: '10:00', endTime: '11:00', minutesUntilAutoCancel: 5 });
    expect(sameInstant(noShow.occurredAt, c.t('10:15', day))).toBe(true);
    expect(noShow.data.cancelReason).toBe(NO_SHOW_REASON);
    expect(sameInstant(noShow.data.bookingDate, m.startDateTime)).toBe(true);
    expect(userCancel.data).not.toHaveProperty('cancelReason');
    // Still cancelled, nothing more.
    expect((await c.get(m._id)).status).toBe('cancelled');
  });

  it('all-day desk bookings are never auto-cancelled (a morning desk booking is)', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const allDay = await c.bookDesk('d-allday', '06:00', 'allDay', day);
    expect(allDay.allDay).toBe(true);
    expect(localHm(allDay.startDateTime)).toBe('07:00');
    expect(localHm(allDay.endDateTime)).toBe('22:00');
    const morning = await c.bookDesk('d-morning', '06:00', 'morning', day);

    await c.clockTo('07:30', day);
    expect((await c.get(allDay._id)).status).toBe('active');
    const m2 = await c.get(morning._id);
    expect(m2.status).toBe('cancelled');
    expect(m2.cancelReason).toBe(NO_SHOW_REASON);

    await c.clockTo('21:44', day);
    expect((await c.get(allDay._id)).status).toBe('active');
    await c.clockTo('22:00', day);
    const done = await c.get(allDay._id);
    expect(done.status).toBe('done');
    expect(done).not.toHaveProperty('cancelReason');
    expect(done.histories.map((x: any) => x.action)).toEqual(['create']);

    const allDayEvents = await eventsOf('AllDay Desk', day);
    expect(kinds(allDayEvents)).toEqual(['BOOK', 'REMINDER', 'ENDING_SOON']);
    expect(allDayEvents.every((e) => e.type.startsWith('DESK_'))).toBe(true);
    expect(sameInstant(allDayEvents[1].occurredAt, c.t('06:45', day))).toBe(true);
    expect(sameInstant(allDayEvents[2].occurredAt, c.t('21:45', day))).toBe(true);
    expect(allDayEvents[2].data).toMatchObject({ endTime: '22:00', minutesUntilEnd: 15 });
    expect(kinds(await eventsOf('Morning Desk', day))).toEqual(['BOOK', 'REMINDER', 'NO_SHOW_WARNING', 'CANCEL']);
  });

  it('check-in before the no-show time prevents the warning and the cancel; checked-in becomes done at the end', async () => {
    const day = newDay();
    await c.clockTo('09:00', day);
    const m = await c.bookRoom('r-checkin', '10:00', '11:00', day);
    await c.clockTo('10:05', day);
    const checkedIn = await c.action(m._id, 'check-in');
    expect(checkedIn.status, checkedIn.text).toBe(202);
    expect(checkedIn.body.data.status).toBe('checked-in');

    await c.clockTo('10:30', day);
    expect((await c.get(m._id)).status).toBe('checked-in');
    await c.clockTo('10:59', day);
    expect((await c.get(m._id)).status).toBe('checked-in');
    await c.clockTo('11:00', day);
    const done = await c.get(m._id);
    expect(done.status).toBe('done');
    expect(done).not.toHaveProperty('cancelReason');
    expect(done.histories.map((x: any) => x.action)).toEqual(['create', 'check-in']);
    expect(done.histories[1].source).not.toBe('system');
    expect(sameInstant(done.endDateTime, c.t('11:00', day))).toBe(true);

    const events = await eventsOf('Checkin Room', day);
    expect(kinds(events)).toEqual(['BOOK', 'REMINDER', 'ENDING_SOON']);
    expect(sameInstant(events[2].occurredAt, c.t('10:45', day))).toBe(true);
  });

  it('postStartExpireMinutes -1 disables the warning and the cancel; active becomes done at the end', async () => {
    const day = newDay();
    await c.clockTo('09:00', day);
    const m = await c.bookRoom('r-off', '10:00', '11:00', day);
    await c.clockTo('10:30', day);
    expect((await c.get(m._id)).status).toBe('active');
    await c.clockTo('11:00', day);
    const done = await c.get(m._id);
    expect(done.status).toBe('done');
    expect(done.histories.map((x: any) => x.action)).toEqual(['create']);
    expect(kinds(await eventsOf('NoCancel Room', day))).toEqual(['BOOK', 'REMINDER', 'ENDING_SOON']);
  });

  it('postStartExpireMinutes 0: active becomes checked-in at the start (system history), then done; created inside the window it starts checked-in', async () => {
    const day = newDay();
    await c.clockTo('08:00', day);
    const m = await c.bookRoom('r-auto', '10:00', '11:00', day);
    expect(m.status).toBe('active');
    await c.clockTo('09:59', day);
    expect((await c.get(m._id)).status).toBe('active');

    await c.clockTo('10:00', day);
    const started = await c.get(m._id);
    expect(started.status).toBe('checked-in');
    const h = lastHistory(started);
    expect(h).toMatchObject({ action: 'check-in', source: 'system', by: 'system' });
    expect(sameInstant(h.at, c.t('10:00', day))).toBe(true);
    expect(sameInstant(started.organizer.checkInDateTime, c.t('10:00', day))).toBe(true);

    await c.clockTo('10:30', day);
    expect((await c.get(m._id)).status).toBe('checked-in');
    await c.clockTo('11:00', day);
    expect((await c.get(m._id)).status).toBe('done');

    // Booked inside the check-in window (opens 15 minutes before the start): checked-in at once.
    await c.clockTo('11:20', day);
    const inside = await c.bookRoom('r-auto', '11:30', '12:00', day);
    expect(inside.status).toBe('checked-in');
    expect(inside.histories.map((x: any) => [x.action, x.source])).toEqual([
      ['create', 'user'],
      ['check-in', 'system'],
    ]);
    await c.clockTo('12:00', day);
    expect((await c.get(inside._id)).status).toBe('done');

    const events = await eventsOf('Auto Room', day);
    expect(kinds(events)).toEqual(['BOOK', 'REMINDER', 'ENDING_SOON', 'BOOK', 'ENDING_SOON']);
  });

  it('a PATCH move before the timers fire re-plans them (the old times fire nothing); extending a checked-in booking moves the ending-soon notice', async () => {
    const day = newDay();
    await c.clockTo('08:00', day);
    const m = await c.bookRoom('r-move', '10:00', '11:00', day);
    const moved = await c.patch(m._id, { startDateTime: c.t('13:00', day), endDateTime: c.t('14:00', day) });
    expect(moved.status, moved.text).toBe(200);

    // 09:45 reminder, 10:10 warning, 10:15 cancel and 11:00 end of the old window: nothing.
    await c.clockTo('12:44', day);
    const waiting = await c.get(m._id);
    expect(waiting.status).toBe('active');
    expect(kinds(await eventsOf('Move Room', day))).toEqual(['BOOK', 'MODIFY']);

    await c.clockTo('13:15', day);
    const cancelled = await c.get(m._id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.cancelReason).toBe(NO_SHOW_REASON);
    const events = await eventsOf('Move Room', day);
    expect(kinds(events)).toEqual(['BOOK', 'MODIFY', 'REMINDER', 'NO_SHOW_WARNING', 'CANCEL']);
    expect(sameInstant(events[2].occurredAt, c.t('12:45', day))).toBe(true);
    expect(events[2].data).toMatchObject({ startTime: '13:00', endTime: '14:00' });
    expect(sameInstant(events[3].occurredAt, c.t('13:10', day))).toBe(true);
    expect(sameInstant(events[4].occurredAt, c.t('13:15', day))).toBe(true);

    // A checked-in booking extended from 16:00 to 16:30: ending soon at 16:15, not 15:45; done at 16:30.
    const ext = await c.bookRoom('r-move', '15:00', '16:00', day);
    await c.clockTo('14:50', day);
    expect((await c.action(ext._id, 'check-in')).status).toBe(202);
    const extended = await c.patch(ext._id, { endDateTime: c.t('16:30', day) });
    expect(extended.status, extended.text).toBe(200);
    await c.clockTo('16:00', day);
    expect((await c.get(ext._id)).status).toBe('checked-in');
    await c.clockTo('16:30', day);
    expect((await c.get(ext._id)).status).toBe('done');
    const later = (await eventsOf('Move Room', day)).slice(5);
    expect(kinds(later)).toEqual(['BOOK', 'REMINDER', 'MODIFY', 'ENDING_SOON']);
    expect(later[2].data).toMatchObject({ oldStartTime: '15:00', oldEndTime: '16:00', newStartTime: '15:00', newEndTime: '16:30' });
    expect(sameInstant(later[3].occurredAt, c.t('16:15', day))).toBe(true);
    expect(later[3].data).toMatchObject({ endTime: '16:30', minutesUntilEnd: 15 });
  });

  it('a cancel before the start fires nothing later', async () => {
    const day = newDay();
    await c.clockTo('08:00', day);
    const m = await c.bookRoom('r-cancel', '10:00', '11:00', day);
    await c.clockTo('08:30', day);
    expect((await c.action(m._id, 'cancel')).status).toBe(202);
    await c.clockTo('12:00', day);
    const after = await c.get(m._id);
    expect(after.status).toBe('cancelled');
    expect(after).not.toHaveProperty('cancelReason');
    expect(after.histories.map((x: any) => [x.action, x.source])).toEqual([
      ['create', 'user'],
      ['cancel', 'user'],
    ]);
    const events = await eventsOf('Cancel Room', day);
    expect(kinds(events)).toEqual(['BOOK', 'CANCEL']);
    expect(events[1].data).not.toHaveProperty('cancelReason');
  });

  it("the asset's meetingConfig sets the timings (reminder 20, warning 5, cancel 12, ending soon 10 minutes)", async () => {
    const day = newDay();
    await c.clockTo('08:00', day);
    const m = await c.bookRoom('r-custom', '10:00', '11:00', day);
    const kept = await c.bookRoom('r-custom', '12:00', '13:00', day);
    await c.clockTo('10:11', day);
    expect((await c.get(m._id)).status).toBe('active');
    await c.clockTo('10:12', day);
    expect((await c.get(m._id)).cancelReason).toBe(NO_SHOW_REASON);
    await c.clockTo('11:40', day);
    expect((await c.action(kept._id, 'check-in')).status).toBe(202);
    await c.clockTo('13:00', day);
    expect((await c.get(kept._id)).status).toBe('done');

    const events = await eventsOf('Custom Room', day);
    expect(kinds(events)).toEqual(['BOOK', 'BOOK', 'REMINDER', 'NO_SHOW_WARNING', 'CANCEL', 'REMINDER', 'ENDING_SOON']);
    const [, , r1, w1, x1, r2, e2] = events;
    expect(sameInstant(r1.occurredAt, c.t('09:40', day))).toBe(true);
    expect(r1.data.minutesUntilStart).toBe(20);
    expect(sameInstant(w1.occurredAt, c.t('10:05', day))).toBe(true);
    expect(w1.data.minutesUntilAutoCancel).toBe(7);
    expect(sameInstant(x1.occurredAt, c.t('10:12', day))).toBe(true);
    expect(sameInstant(r2.occurredAt, c.t('11:40', day))).toBe(true);
    expect(sameInstant(e2.occurredAt, c.t('12:50', day))).toBe(true);
    expect(e2.data.minutesUntilEnd).toBe(10);
  });

  it('POST /ops/v1/clock applies everything due before it answers, in time order', async () => {
    const day = newDay();
    await c.clockTo('08:00', day);
    const order = await c.bookRoom('r-order', '10:00', '11:00', day);
    const auto = await c.bookRoom('r-auto', '10:00', '11:00', day);
    const bookedAt = Date.now();

    // One move over every step of both bookings.
    const res = await c.svc.ops('POST', '/ops/v1/clock', { set: c.t('12:00', day) });
    expect(res.status, res.text).toBe(200);

    // Right after the answer: the state transitions are applied ...
    const o = await c.get(order._id);
    expect(o.status).toBe('cancelled');
    expect(o.cancelReason).toBe(NO_SHOW_REASON);
    expect(sameInstant(lastHistory(o).at, c.t('10:15', day))).toBe(true);
    const a = await c.get(auto._id);
    expect(a.status).toBe('done');
    expect(a.histories.map((x: any) => [x.action, x.source])).toEqual([
      ['create', 'user'],
      ['check-in', 'system'],
    ]);
    expect(sameInstant(a.histories[1].at, c.t('10:00', day))).toBe(true);

    // ... and the events are queued, stamped with the time each step fell due.
    const log = (await c.deliveries('hk'))
      .filter((d) => Date.parse(d.createdAt) > Date.parse(c.t('08:30', day)) && Date.parse(d.createdAt) <= Date.parse(c.t('12:00', day)))
      .sort((x, y) => Date.parse(x.createdAt) - Date.parse(y.createdAt));
    expect(log.map((d) => [d.type, DateTime.fromISO(d.createdAt).setZone(TZ).toFormat('HH:mm')])).toEqual([
      ['ROOM_REMINDER', '09:45'],
      ['ROOM_REMINDER', '09:45'],
      ['ROOM_NO_SHOW_WARNING', '10:10'],
      ['ROOM_CANCEL', '10:15'],
      ['ROOM_ENDING_SOON', '10:45'],
    ]);

    // Delivered: the occurredAt of each event is its due time, in order, whatever the arrival order.
    const orderEvents = await eventsOf('Order Room', day);
    expect(kinds(orderEvents)).toEqual(['BOOK', 'REMINDER', 'NO_SHOW_WARNING', 'CANCEL']);
    const [, reminder, warning, cancel] = orderEvents;
    expect(Date.parse(reminder.occurredAt)).toBeLessThan(Date.parse(warning.occurredAt));
    expect(Date.parse(warning.occurredAt)).toBeLessThan(Date.parse(cancel.occurredAt));
    expect(sameInstant(reminder.occurredAt, c.t('09:45', day))).toBe(true);
    // Figures are computed as of the due time, not the time of the clock move.
    expect(reminder.data.minutesUntilStart).toBe(15);
    expect(warning.data.minutesUntilAutoCancel).toBe(5);
    expect(cancel.data.cancelReason).toBe(NO_SHOW_REASON);
    for (const e of orderEvents) expect(e.data.timestamp).toBe(e.occurredAt);
    const autoEvents = await eventsOf('Auto Room', day);
    expect(kinds(autoEvents)).toEqual(['BOOK', 'REMINDER', 'ENDING_SOON']);
    expect(sameInstant(autoEvents[2].occurredAt, c.t('10:45', day))).toBe(true);
    // The whole replay took real seconds, not minutes.
    expect(Date.now() - bookedAt).toBeLessThan(30_000);
  });

  it('a recurring series rolls to the next occurrence after the end of one (checked-in or not), and is done after the last', async () => {
    const day = newDay(3);
    await c.clockTo('08:00', day);
    const created = await c.bookRoom('r-series', '10:00', '11:00', day, { recurrence: 'FREQ=DAILY;COUNT=3' });
    expect(created.status).toBe('active');
    expect(sameInstant(created.startDateTime, c.t('10:00', day))).toBe(true);

    // End of the first occurrence (not checked in): active, showing the second one.
    await c.clockTo('11:00', day);
    const second = await c.get(created._id);
    expect(second.status).toBe('active');
    expect(sameInstant(second.startDateTime, c.t('10:00', day + 1))).toBe(true);
    expect(sameInstant(second.endDateTime, c.t('11:00', day + 1))).toBe(true);

    // Second occurrence checked in; its end rolls to the third, active again.
    await c.clockTo('09:50', day + 1);
    const ci = await c.action(created._id, 'check-in');
    expect(ci.status, ci.text).toBe(202);
    expect(ci.body.data.status).toBe('checked-in');
    await c.clockTo('11:00', day + 1);
    const third = await c.get(created._id);
    expect(third.status).toBe('active');
    expect(sameInstant(third.startDateTime, c.t('10:00', day + 2))).toBe(true);
    expect(third.organizer.checkInDateTime).toBeNull();

    // End of the last occurrence: done, still showing it.
    await c.clockTo('10:59', day + 2);
    expect((await c.get(created._id)).status).toBe('active');
    await c.clockTo('11:00', day + 2);
    const done = await c.get(created._id);
    expect(done.status).toBe('done');
    expect(sameInstant(done.startDateTime, c.t('10:00', day + 2))).toBe(true);

    // Each occurrence had its reminder and ending-soon notice, and nothing was cancelled.
    const perDay = await Promise.all([0, 1, 2].map((i) => eventsOf('Series Room', day + i)));
    expect(kinds(perDay[0])).toEqual(['BOOK', 'REMINDER', 'ENDING_SOON']);
    expect(kinds(perDay[1])).toEqual(['REMINDER', 'ENDING_SOON']);
    expect(kinds(perDay[2])).toEqual(['REMINDER', 'ENDING_SOON']);
    for (const [i, events] of perDay.entries()) {
      const reminder = events.find((e) => e.type === 'ROOM_REMINDER');
      expect(sameInstant(reminder.occurredAt, c.t('09:45', day + i))).toBe(true);
      expect(reminder.data).toMatchObject({ startTime: '10:00', endTime: '11:00', minutesUntilStart: 15 });
    }
  });

  it('a no-show cancels only that occurrence of a series: it rolls on to the next one, which can be checked in', async () => {
    const day = newDay(2);
    await c.clockTo('08:00', day);
    const created = await c.bookRoom('r-series-noshow', '10:00', '11:00', day, { recurrence: 'FREQ=DAILY;COUNT=2' });
    await c.clockTo('10:15', day);
    const rolled = await c.get(created._id);
    expect(rolled.status).toBe('active');
    // The cancelled occurrence is gone: the booking shows the next one, and cannot be checked in today.
    expect(sameInstant(rolled.startDateTime, c.t('10:00', day + 1))).toBe(true);
    expect(lastHistory(rolled)).toMatchObject({ action: 'cancel', source: 'system', reason: NO_SHOW_REASON });
    const early = await c.action(created._id, 'check-in');
    expect(early.status, early.text).toBe(409);
    expect(early.body.code).toBe('MEETING_040');
    // The room is free for the rest of the cancelled occurrence.
    const other = await c.bookRoom('r-series-noshow', '10:30', '11:00', day);
    expect((await c.action(other._id, 'cancel')).status).toBe(202);
    const listed = await c.svc.request(
      'GET',
      `/meetings${qs({ from: c.t('00:00', day), to: c.t('00:00', day + 2), meetingRoomId: c.id('r-series-noshow'), statuses: ['active'] })}`,
      { token: c.alice },
    );
    expect(listed.status, listed.text).toBe(200);
    expect(
      listed.body.data.map((x: any) => localHm(x.startDateTime) + '@' + DateTime.fromISO(x.startDateTime).setZone(TZ).toISODate()),
    ).toEqual([`10:00@${c.D.plus({ days: day + 1 }).toISODate()}`]);

    await c.clockTo('09:50', day + 1);
    expect((await c.action(created._id, 'check-in')).status).toBe(202);
    await c.clockTo('10:30', day + 1);
    expect((await c.get(created._id)).status).toBe('checked-in');
    await c.clockTo('11:00', day + 1);
    const done = await c.get(created._id);
    expect(done.status).toBe('done');
    expect(done).not.toHaveProperty('cancelReason');

    const first = await eventsOf('Series NoShow Room', day);
    expect(kinds(first)).toEqual(['BOOK', 'REMINDER', 'NO_SHOW_WARNING', 'CANCEL', 'BOOK', 'CANCEL']);
    expect(first[3].data.cancelReason).toBe(NO_SHOW_REASON);
    expect(sameInstant(first[3].data.bookingDate, c.t('10:00', day))).toBe(true);
    expect(kinds(await eventsOf('Series NoShow Room', day + 1))).toEqual(['REMINDER', 'ENDING_SOON']);
  });
});
