/**
 * Back-office bookings of paid assets over HTTP (api-spec.md POST /meetings rule
 * 4, "Meeting status" back-office row, Timers, Event catalog PAYMENT_DUE, Limits
 * "back-office hold"): staff book for a member with `organizerId`; a paid asset
 * comes back `unpaid` with a `quote` and no payment page, held until
 * `paymentDueAt`; *_PAYMENT_DUE at create and at about 75 % of the hold; at
 * paymentDueAt the booking is cancelled with the exact reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { eventKinds, lastHistory, paymentTestKit } from '../support/payments.js';
import { actAsToken, appToken, expectError, HUB_APP_ID, HUB_SECRET, UNKNOWN_ID } from '../support/fixtures.js';
import { ALL_BOOKING_EVENTS, MINUTE, startWebhookService, TZ, type WebhookCtx } from '../support/webhook-site.js';

const HOLD_REASON = 'Unpaid — back-office hold expired';
/** The project hold of tower in this site (the fixtures' 1440 is overridden so the fallback can be told apart). */
const TOWER_HOLD_MINUTES = 600;

const sameInstant = (a: string | null | undefined, b: string | number) =>
  !!a && Date.parse(a) === (typeof b === 'number' ? b : Date.parse(b));
const dueTime = (iso: string) => DateTime.fromISO(iso).setZone(TZ).setLocale('en-US').toFormat('dd MMM yyyy HH:mm');

describe('back-office bookings of paid assets', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  let bob: string;
  let hub: string;
  let nextDay = 0;
  const newDay = () => nextDay++;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    c = await startWebhookService({
      rooms: [
        { key: 'b-create', name: 'BO Create', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'b-default', name: 'BO Default', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'x-default', name: 'BO Annex', floor: 'x1', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'b-week', name: 'BO Week', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'b-start', name: 'BO Start', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'b-expire', name: 'BO Expire', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'b-settle', name: 'BO Settle', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'b-cancel', name: 'BO Cancel', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'b-promo', name: 'BO Promo', chargeRate: { perHour: 300, perDay: 0 } },
        { key: 'b-free', name: 'BO Free' },
      ],
      desks: [{ key: 'bd-desk', name: 'BO Desk', chargeRate: { perHour: 40, perDay: 250 } }],
      hooks: [{ key: 'hk', url: rx.url('/events'), events: ALL_BOOKING_EVENTS }],
      promoCodes: [{ key: 'half', code: 'HALF', name: 'Half price', percentOff: 50 }],
      projects: { tower: { backofficePaymentDueMinutes: TOWER_HOLD_MINUTES }, annex: { backofficePaymentDueMinutes: null } },
      clockAt: '05:00',
    });
    bob = (await actAsToken(c.svc, { subject: 'ext-bob' })).access_token;
    hub = (await appToken(c.svc, HUB_APP_ID, HUB_SECRET)).access_token;
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  const kit = () => paymentTestKit(c, rx);
  const eventsOf = (name: string, since = 0) => kit().eventsOf(name, since);
  const kinds = eventKinds;
  const settle = (paymentId: string) => kit().settle(paymentId);
  /** A back-office booking of room `key` for alice (by the portal app unless another token is given); asserts 201. */
  async function office(key: string, from: string, to: string, day: number, extra: Record<string, unknown> = {}, token = c.portal) {
    const res = await c.book(
      {
        meetingRoomId: c.id(key),
        organizerId: c.id('alice'),
        title: `${key} ${from}`,
        startDateTime: c.t(from, day),
        endDateTime: c.t(to, day),
        ...extra,
      },
      token,
    );
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  }
  const holdMinutes = (m: any) => (Date.parse(m.paymentDueAt) - Date.parse(m.createdAt)) / MINUTE;

  /** What every unpaid back-office booking of a paid asset shows. */
  function expectQuote(m: any, amount: number, subtotal = amount, discounts: unknown[] = []) {
    expect(m.status).toBe('unpaid');
    expect(m.bookedVia).toBe('backoffice');
    expect(m.organizer.userId).toBe(c.id('alice'));
    expect(Object.keys(m.payment).sort()).toEqual(['amount', 'invoiceNo', 'paymentId', 'summary']);
    expect(m.payment.amount).toBe(amount);
    expect(m.payment.summary).toEqual({ subtotal, total: amount, discounts });
    expect(m.payment.invoiceNo).toMatch(/^INV-\d{6}$/);
    expect(m.billingSummaries).toEqual([
      {
        kind: 'quote',
        payment_id: m.payment.paymentId,
        amount,
        total: amount,
        invoice_no: m.payment.invoiceNo,
        status: 'pending',
        expiredAt: expect.any(String),
      },
    ]);
    expect(sameInstant(m.billingSummaries[0].expiredAt, m.paymentDueAt)).toBe(true);
    expect(m.histories.map((h: any) => h.action)).toEqual(['create']);
  }

  // -------------------------------------------------------------------------
  it('an app with MEETING_UPDATE books for a member: unpaid, quote, no page link, bookedVia/bookedByUserId, paymentDueAt = paymentDueMinutes; ROOM_PAYMENT_DUE at create', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await office('b-create', '10:00', '11:30', day, { paymentDueMinutes: 120 });
    // 90 minutes of 300/h.
    expectQuote(m, 450);
    expect(holdMinutes(m)).toBe(120);
    // The caller (the portal's own user) is recorded, not the member.
    expect(m.bookedByUserId).toMatch(/^[0-9a-f]{24}$/);
    expect(m.bookedByUserId).not.toBe(c.id('alice'));
    expect(m.bookedByUserId).toBe(m.histories[0].by);
    // The member sees it, unpaid, with the same quote, plus the page to pay it on their own device.
    const seen = await c.get(m._id, c.alice);
    expect(seen.status).toBe('unpaid');
    expect(seen.payment).toEqual({
      ...m.payment,
      webPaymentUrl: expect.stringMatching(new RegExp(`/pay/${m.payment.paymentId}\\.`)),
      webPaymentQr: expect.stringMatching(/^data:image\/png;base64,/),
    });
    expect(seen.paymentDueAt).toBe(m.paymentDueAt);

    const events = await eventsOf('BO Create');
    expect(kinds(events)).toEqual(['PAYMENT_DUE']);
    const [due] = events;
    expect(due.type).toBe('ROOM_PAYMENT_DUE');
    expect(sameInstant(due.occurredAt, m.createdAt)).toBe(true);
    expect(due.data).toMatchObject({
      projectId: c.projectId,
      userId: c.id('alice'),
      roomName: 'BO Create',
      floorName: '12F',
      startTime: '10:00',
      endTime: '11:30',
      amount: 450,
      currency: 'THB',
      paymentDueTime: dueTime(m.paymentDueAt),
      minutesUntilDue: 120,
      userName: 'Alice Example',
      userEmail: 'alice@example.com',
    });
    expect(sameInstant(due.data.bookingDate, c.t('10:00', day))).toBe(true);
    expect(sameInstant(due.data.paymentDueAt, m.paymentDueAt)).toBe(true);
    expect(due.data.paymentDueTime).toMatch(/^\d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}$/);
    expect(sameInstant(due.data.timestamp, due.occurredAt)).toBe(true);
    expect(JSON.stringify(due.data)).not.toMatch(/\/pay\/|webPayment|pinCode/);
  });

  it('a project admin acting through act_as books for a member; bookedByUserId is the admin', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await office('b-create', '10:00', '11:00', day, {}, bob);
    expectQuote(m, 300);
    expect(m.bookedByUserId).toBe(c.id('bob'));
  });

  it('a desk for a member: DESK_PAYMENT_DUE with deskName', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const res = await c.book(
      {
        deskId: c.id('bd-desk'),
        organizerId: c.id('alice'),
        startDateTime: c.t('07:00', day),
        timePeriod: 'allDay',
        paymentDueMinutes: 60,
      },
      c.portal,
    );
    expect(res.status, res.text).toBe(201);
    const m = res.body.data;
    expectQuote(m, 250);
    const events = await eventsOf('BO Desk');
    expect(events.map((e) => e.type)).toEqual(['DESK_PAYMENT_DUE']);
    expect(events[0].data).toMatchObject({ deskName: 'BO Desk', floorName: '3F', amount: 250, currency: 'THB', minutesUntilDue: 60 });
    expect(events[0].data.roomName).toBeUndefined();
  });

  it('refusals: no MEETING_UPDATE → 403 KS003; organizer not a member → 400 KS001; paymentDueMinutes without organizerId → 400 KS001', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const body = { meetingRoomId: c.id('b-create'), startDateTime: c.t('10:00', day), endDateTime: c.t('11:00', day) };
    expectError(await c.book({ ...body, organizerId: c.id('carol') }, c.alice), 403, 'KS003');
    expectError(await c.book({ ...body, organizerId: UNKNOWN_ID }, c.portal), 400, 'KS001');
    expectError(await c.book({ ...body, paymentDueMinutes: 30 }, c.portal), 400, 'KS001');
    expectError(await c.book({ ...body, paymentDueMinutes: 30 }, c.alice), 400, 'KS001');
    const list = await c.svc.request(
      'GET',
      `/meetings?from=${encodeURIComponent(c.t('00:00', day))}&to=${encodeURIComponent(c.t('00:00', day + 1))}`,
      { token: c.portal },
    );
    expect(list.body.data).toEqual([]);
    expect(await eventsOf('BO Create', Date.parse(c.t('06:00', day)))).toEqual([]);
  });

  // -------------------------------------------------------------------------
  describe('paymentDueAt', () => {
    it("without paymentDueMinutes: the project's backofficePaymentDueMinutes", async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      // Starts the next day, so the hold is not clamped by the start.
      const m = await office('b-default', '10:00', '11:00', day + 1);
      expect(holdMinutes(m)).toBe(TOWER_HOLD_MINUTES);
    });

    it('without either: 1440 minutes (annex has no backofficePaymentDueMinutes)', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const res = await c.book(
        {
          meetingRoomId: c.id('x-default'),
          organizerId: c.id('alice'),
          startDateTime: c.t('10:00', day + 3),
          endDateTime: c.t('11:00', day + 3),
        },
        hub,
      );
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.status).toBe('unpaid');
      expect(holdMinutes(res.body.data)).toBe(1440);
    });

    it('clamped to 10080 minutes (never refused)', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const m = await office('b-week', '10:00', '11:00', day + 10, { paymentDueMinutes: 20_000 });
      expect(holdMinutes(m)).toBe(10_080);
      const exact = await office('b-week', '12:00', '13:00', day + 10, { paymentDueMinutes: 10_080 });
      expect(holdMinutes(exact)).toBe(10_080);
      const under = await office('b-week', '14:00', '15:00', day + 10, { paymentDueMinutes: 10_079 });
      expect(holdMinutes(under)).toBe(10_079);
      // Any integer a JSON number carries exactly is clamped, however large.
      const huge = await office('b-week', '16:00', '17:00', day + 10, { paymentDueMinutes: 2_000_000_000 });
      expect(holdMinutes(huge)).toBe(10_080);
      const largest = await office('b-week', '18:00', '19:00', day + 10, { paymentDueMinutes: Number.MAX_SAFE_INTEGER });
      expect(holdMinutes(largest)).toBe(10_080);
      // Not an integer, or beyond what a JSON number carries exactly: 400 KS001, nothing booked.
      const body = {
        meetingRoomId: c.id('b-week'),
        organizerId: c.id('alice'),
        startDateTime: c.t('20:00', day + 10),
        endDateTime: c.t('21:00', day + 10),
      };
      for (const bad of [90.5, Number.MAX_SAFE_INTEGER + 1, 1e300]) {
        expectError(await c.book({ ...body, paymentDueMinutes: bad }, c.portal), 400, 'KS001');
      }
      const raw = await c.svc.request('POST', '/meetings', {
        token: c.portal,
        raw: JSON.stringify(body).replace(/}$/, ',"paymentDueMinutes":1e999}'),
        headers: { 'content-type': 'application/json' },
      });
      expectError(raw, 400, 'KS001');
    });

    it('clamped to the meeting start; at the start the hold expires (no reminder or no-show steps while unpaid)', async () => {
      const day = newDay();
      await c.clockTo('08:00', day);
      // Project hold 600 min, requested 300; the meeting starts in 2 h.
      const m = await office('b-start', '10:00', '11:00', day, { paymentDueMinutes: 300 });
      expect(sameInstant(m.paymentDueAt, c.t('10:00', day))).toBe(true);
      const m2 = await office('b-start', '12:00', '13:00', day);
      expect(sameInstant(m2.paymentDueAt, c.t('12:00', day))).toBe(true);

      await c.clockTo('09:59', day);
      expect((await c.get(m._id)).status).toBe('unpaid');
      await c.clockTo('10:00', day);
      const lapsed = await c.get(m._id);
      expect(lapsed.status).toBe('cancelled');
      expect(lapsed.cancelReason).toBe(HOLD_REASON);
      await c.clockTo('13:30', day);
      // The events of the 10:00 booking (the 12:00 one lapses at 12:00 too).
      const events = (await eventsOf('BO Start')).filter(
        (e) => sameInstant(e.data.bookingDate, c.t('10:00', day)) || e.data.startTime === '10:00',
      );
      expect(kinds(events)).toEqual(['PAYMENT_DUE', 'PAYMENT_DUE', 'CANCEL']);
      expect(sameInstant(events[2].occurredAt, c.t('10:00', day))).toBe(true);
    });
  });

  // -------------------------------------------------------------------------
  it('the second PAYMENT_DUE at about 75 % of the hold, then at paymentDueAt: cancelled with the exact reason, history payment-timeout, *_CANCEL, billing expired, slot released', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await office('b-expire', '14:00', '15:00', day, { paymentDueMinutes: 120 });
    expectQuote(m, 300);
    const created = Date.parse(m.createdAt);
    const due = Date.parse(m.paymentDueAt);
    expect(due - created).toBe(120 * MINUTE);
    const nudgeAt = created + 0.75 * 120 * MINUTE; // 07:30

    await c.clockSet(nudgeAt - MINUTE);
    expect(kinds(await eventsOf('BO Expire'))).toEqual(['PAYMENT_DUE']);
    await c.clockSet(nudgeAt + MINUTE);
    let events = await eventsOf('BO Expire');
    expect(kinds(events)).toEqual(['PAYMENT_DUE', 'PAYMENT_DUE']);
    const second = events[1];
    expect(Math.abs(Date.parse(second.occurredAt) - nudgeAt)).toBeLessThanOrEqual(MINUTE);
    expect(second.data).toMatchObject({
      amount: 300,
      currency: 'THB',
      paymentDueTime: dueTime(m.paymentDueAt),
      minutesUntilDue: 30,
      startTime: '14:00',
      endTime: '15:00',
    });
    expect(sameInstant(second.data.paymentDueAt, m.paymentDueAt)).toBe(true);
    expect((await c.get(m._id)).status).toBe('unpaid');

    await c.clockSet(due - 1000);
    expect((await c.get(m._id)).status).toBe('unpaid');
    await c.clockSet(due);
    const lapsed = await c.get(m._id);
    expect(lapsed.status).toBe('cancelled');
    expect(lapsed.cancelReason).toBe(HOLD_REASON);
    expect(lapsed.histories.map((h: any) => h.action)).toEqual(['create', 'payment-timeout']);
    expect(lastHistory(lapsed)).toMatchObject({ action: 'payment-timeout', source: 'system', by: 'system' });
    expect(sameInstant(lastHistory(lapsed).at, due)).toBe(true);
    expect(lapsed.billingSummaries).toEqual([{ ...m.billingSummaries[0], status: 'expired' }]);

    events = await eventsOf('BO Expire');
    expect(kinds(events)).toEqual(['PAYMENT_DUE', 'PAYMENT_DUE', 'CANCEL']);
    expect(events[2].type).toBe('ROOM_CANCEL');
    expect(events[2].data.cancelReason).toBe(HOLD_REASON);
    expect(sameInstant(events[2].occurredAt, due)).toBe(true);
    expect(sameInstant(events[2].data.bookingDate, c.t('14:00', day))).toBe(true);

    // The slot is free again.
    const again = await c.book({ meetingRoomId: c.id('b-expire'), startDateTime: c.t('14:00', day), endDateTime: c.t('15:00', day) });
    expect(again.status, again.text).toBe(201);
  });

  it('one clock jump over the whole hold applies the reminder and the expiry in time order', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await office('b-expire', '14:00', '15:00', day, { paymentDueMinutes: 60 });
    await c.advance(61);
    const lapsed = await c.get(m._id);
    expect(lapsed.status).toBe('cancelled');
    expect(lapsed.cancelReason).toBe(HOLD_REASON);
    const events = await eventsOf('BO Expire', Date.parse(m.createdAt));
    expect(kinds(events)).toEqual(['PAYMENT_DUE', 'PAYMENT_DUE', 'CANCEL']);
    expect(events.map((e) => e.data.minutesUntilDue)).toEqual([60, 15, undefined]);
    expect(Date.parse(events[1].occurredAt)).toBeLessThan(Date.parse(events[2].occurredAt));
  });

  it('settling a quote: active, history pay, ROOM_BOOK; no later reminder and no expiry', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await office('b-settle', '14:00', '15:00', day, { paymentDueMinutes: 120 });
    await c.clockTo('06:30', day);
    const s = await settle(m.payment.paymentId);
    expect(s.status, s.text).toBe(200);
    expect(s.body.data).toMatchObject({ outcome: 'settled', meetingStatus: 'active' });
    const paid = await c.get(m._id);
    expect(paid.status).toBe('active');
    expect(paid.histories.map((h: any) => h.action)).toEqual(['create', 'pay']);
    expect(paid.billingSummaries).toEqual([{ ...m.billingSummaries[0], status: 'paid' }]);
    expect(paid.bookedVia).toBe('backoffice');
    expect(paid.bookedByUserId).toBe(m.bookedByUserId);

    // Past the reminder and the old deadline.
    await c.clockTo('08:30', day);
    expect((await c.get(m._id)).status).toBe('active');
    const events = await eventsOf('BO Settle');
    expect(kinds(events)).toEqual(['PAYMENT_DUE', 'BOOK']);
    expect(events[1].data).toMatchObject({ roomName: 'BO Settle', startTime: '14:00', endTime: '15:00', userName: 'Alice Example' });
  });

  it('cancel of an unpaid back-office booking voids the quote; nothing more is sent', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await office('b-cancel', '14:00', '15:00', day, { paymentDueMinutes: 120 });
    const res = await c.action(m._id, 'cancel', { paymentId: m.payment.paymentId }, c.portal);
    expect(res.status, res.text).toBe(202);
    const cancelled = await c.get(m._id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.cancelReason).toBeUndefined();
    expect(cancelled.billingSummaries[0].status).toBe('voided');
    await c.clockTo('09:00', day);
    expect((await c.get(m._id)).histories.map((h: any) => h.action)).toEqual(['create', 'cancel']);
    const events = await eventsOf('BO Cancel');
    expect(kinds(events)).toEqual(['PAYMENT_DUE', 'CANCEL']);
    expect(events[1].data).not.toHaveProperty('cancelReason');
  });

  it('a free asset booked by the back office is active with *_BOOK, no paymentDueAt and no PAYMENT_DUE', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await office('b-free', '10:00', '11:00', day, { paymentDueMinutes: 60 });
    expect(m.status).toBe('active');
    expect(m.bookedVia).toBe('backoffice');
    expect(m.payment).toBeUndefined();
    expect(m.paymentDueAt).toBeUndefined();
    expect(m.billingSummaries).toEqual([]);
    expect(kinds(await eventsOf('BO Free'))).toEqual(['BOOK']);
  });

  it('a promo code prices the quote, and PAYMENT_DUE carries the amount still due', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await office('b-promo', '10:00', '11:00', day, { promoCode: 'HALF', paymentDueMinutes: 60 });
    expectQuote(m, 150, 300, [{ code: 'HALF', value: 150, name: 'Half price' }]);
    const [due] = await eventsOf('BO Promo');
    expect(due.data.amount).toBe(150);
    expectError(
      await c.book(
        {
          meetingRoomId: c.id('b-promo'),
          organizerId: c.id('alice'),
          startDateTime: c.t('13:00', day),
          endDateTime: c.t('14:00', day),
          promoCode: 'NOPE',
        },
        c.portal,
      ),
      400,
      'KS001',
    );
  });

  it('a back-office draft prices the same way and writes nothing', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const res = await c.book(
      {
        meetingRoomId: c.id('b-promo'),
        organizerId: c.id('alice'),
        startDateTime: c.t('10:00', day),
        endDateTime: c.t('11:00', day),
        draft: true,
        promoCode: 'HALF',
        draftEndDateTimes: [c.t('12:00', day)],
      },
      c.portal,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.draftInfo.map((i: any) => [i.amount, i.currency, i.summary.subtotal])).toEqual([
      [150, 'THB', 300],
      [300, 'THB', 600],
    ]);
    const list = await c.svc.request(
      'GET',
      `/meetings?from=${encodeURIComponent(c.t('00:00', day))}&to=${encodeURIComponent(c.t('00:00', day + 1))}&meetingRoomId=${c.id('b-promo')}`,
      { token: c.portal },
    );
    expect(list.body.data).toEqual([]);
    // The back-office permission is still checked on a draft.
    expectError(
      await c.book(
        {
          meetingRoomId: c.id('b-promo'),
          organizerId: c.id('carol'),
          startDateTime: c.t('10:00', day),
          endDateTime: c.t('11:00', day),
          draft: true,
        },
        c.alice,
      ),
      403,
      'KS003',
    );
  });
});
