/**
 * Paid bookings, self-service, as an integrator sees them over HTTP
 * (api-spec.md: Meeting fields payment/billingSummaries/histories, "Meeting
 * status" unpaid rows, Timers, POST /meetings rule 3, PATCH, cancel, check-in
 * refusals; operator-api.md "Sandbox payments", "Public API additions" promoCode,
 * "Sandbox clock"; docs/decisions.md "Payments" for the price).
 *
 * A room or desk with a non-zero chargeRate books `unpaid` with a payment and a
 * 5-minute checkout; settling it (sandbox) makes it `active` and sends *_BOOK;
 * the deadline passing cancels it with the exact reason. Events are checked as
 * the loopback receiver gets them. Every expected price is worked out by hand in
 * a comment next to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { eventKinds, lastHistory, paymentTestKit } from '../support/payments.js';
import { appToken, applySite, expectError, HUB_APP_ID, HUB_SECRET } from '../support/fixtures.js';
import { qs } from '../support/catalogue.js';
import {
  ALL_BOOKING_EVENTS,
  MINUTE,
  startWebhookService,
  webhookSite,
  type StartWebhookOptions,
  type WebhookCtx,
} from '../support/webhook-site.js';

export const LAPSE_REASON = 'Payment window lapsed — auto-cancelled by system';
const CHECKOUT_MS = 5 * MINUTE;

const sameInstant = (a: string | null | undefined, b: string | number) =>
  !!a && Date.parse(a) === (typeof b === 'number' ? b : Date.parse(b));

const PAYMENT_KEYS = ['amount', 'invoiceNo', 'paymentId', 'summary', 'webPaymentQr', 'webPaymentUrl'];
const PAID_KEYS = ['amount', 'invoiceNo', 'paymentId', 'summary'];

/** Rooms only the concurrent creates use. */
const PARALLEL_ROOMS = [1, 2, 3, 4, 5, 6].map((i) => ({
  key: `p-par${i}`,
  name: `Paid Parallel ${i}`,
  chargeRate: { perHour: 100, perDay: 0 },
}));

const options: StartWebhookOptions = {
  rooms: [
    ...PARALLEL_ROOMS,
    { key: 'p-create', name: 'Paid Create', chargeRate: { perHour: 250, perDay: 0, amount: 50 } },
    { key: 'p-invoice', name: 'Paid Invoice', chargeRate: { perHour: 100, perDay: 0 } },
    { key: 'x-invoice', name: 'Annex Invoice', floor: 'x1', chargeRate: { perHour: 100, perDay: 0 } },
    { key: 'p-settle', name: 'Paid Settle', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-fail', name: 'Paid Fail', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-lapse', name: 'Paid Lapse', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-late', name: 'Paid Late', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-cancel', name: 'Paid Cancel', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-refund', name: 'Paid Refund', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-checkin', name: 'Paid Checkin', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-patch', name: 'Paid Patch', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-series', name: 'Paid Series', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-auto', name: 'Paid Auto', chargeRate: { perHour: 200, perDay: 0 }, meetingConfig: { postStartExpireMinutes: 0 } },
    { key: 'p-price', name: 'Paid Price', chargeRate: { perHour: 100, perDay: 500, amount: 20 } },
    { key: 'p-dayrate', name: 'Paid DayRate', chargeRate: { perHour: 0, perDay: 800 } },
    { key: 'p-half', name: 'Paid Half', chargeRate: { perHour: 1.5, perDay: 0 } },
    { key: 'p-promo', name: 'Paid Promo', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-zero', name: 'Paid Zero', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-once', name: 'Paid Once', chargeRate: { perHour: 200, perDay: 0 } },
    { key: 'p-draft', name: 'Paid Draft', chargeRate: { perHour: 120, perDay: 0 } },
    { key: 'free', name: 'Free Room' },
  ],
  desks: [{ key: 'pd-desk', name: 'Paid Desk', chargeRate: { perHour: 50, perDay: 300 } }],
  hooks: [{ key: 'hk', url: '', events: ALL_BOOKING_EVENTS }],
  promoCodes: [
    { key: 'half', code: 'HALF', name: 'Half price', percentOff: 50 },
    { key: 'odd', code: 'ODD', name: 'Odd percent', percentOff: 12.5 },
    { key: 'fifty', code: 'FIFTY', name: 'Fifty off', amountOff: 50 },
    { key: 'big', code: 'BIG', name: 'Everything off', amountOff: 1000 },
    { key: 'off', code: 'OFF', name: 'Retired', percentOff: 10, active: false },
    { key: 'old', code: 'OLD', name: 'Long gone', percentOff: 10, validUntil: '2000-01-01T00:00:00Z' },
    { key: 'future', code: 'FUTURE', name: 'Not yet', percentOff: 10, validFrom: '2999-01-01T00:00:00Z' },
    { key: 'once', code: 'ONCE', name: 'One use', percentOff: 10, maxUses: 1 },
    { key: 'once2', code: 'ONCE2', name: 'One use too', percentOff: 10, maxUses: 1 },
    { key: 'freebie', code: 'FREEBIE', name: 'One free booking', percentOff: 100, maxUses: 1 },
    { key: 'annex10', code: 'ANNEX10', name: 'Annex only', percentOff: 10, project: 'annex' },
  ],
};

describe('paid bookings (self-service checkout)', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  let nextDay = 0;
  /** Each test works on its own local day (the clock only moves forward). */
  const newDay = () => nextDay++;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    options.hooks = [{ key: 'hk', url: rx.url('/events'), events: ALL_BOOKING_EVENTS }];
    c = await startWebhookService({ ...options, clockAt: '05:00' });
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  const kit = () => paymentTestKit(c, rx);
  const eventsOf = (name: string, since = 0) => kit().eventsOf(name, since);
  const kinds = eventKinds;
  const settle = (paymentId: string) => kit().settle(paymentId);
  const fail = (paymentId: string) => kit().fail(paymentId);
  const okState = (res: { status: number; text: string; body: any }) => {
    expect(res.status, res.text).toBe(200);
    expect(res.body.code).toBe('KS000');
    return res.body.data;
  };
  const serviceNow = async () => Date.parse(okState(await c.svc.ops('GET', '/ops/v1/clock')).now);
  const roomBody = (key: string, from: string, to: string, day: number, extra: Record<string, unknown> = {}) => ({
    meetingRoomId: c.id(key),
    title: `${key} ${from}`,
    startDateTime: c.t(from, day),
    endDateTime: c.t(to, day),
    ...extra,
  });
  /** Bookings of room `key` on day D + day (any status). */
  async function bookingsOf(key: string, day: number): Promise<any[]> {
    const res = await c.svc.request(
      'GET',
      `/meetings${qs({ from: c.t('00:00', day), to: c.t('00:00', day + 1), meetingRoomId: c.id(key), limit: 100 })}`,
      { token: c.portal },
    );
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  /** The payment and billing entry of a fresh self-service checkout of `amount`, created at `createdAt`. */
  function expectCheckout(m: any, amount: number, subtotal = amount, discounts: unknown[] = []) {
    expect(m.status).toBe('unpaid');
    expect(Object.keys(m.payment).sort()).toEqual(PAYMENT_KEYS);
    expect(m.payment.paymentId).toMatch(/^[0-9a-f]{24}$/);
    expect(m.payment.invoiceNo).toMatch(/^INV-\d{6}$/);
    expect(m.payment.amount).toBe(amount);
    expect(m.payment.summary).toEqual({ subtotal, total: amount, discounts });
    expect(m.payment.webPaymentUrl.startsWith(`${c.svc.url}/pay/`), m.payment.webPaymentUrl).toBe(true);
    expect(m.payment.webPaymentQr).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    // A real PNG (signature bytes).
    const png = Buffer.from(m.payment.webPaymentQr.split(',')[1], 'base64');
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(m.paymentDueAt).toBeUndefined();
    expect(m.bookedVia).toBeUndefined();
    expect(m.billingSummaries).toEqual([
      {
        kind: 'checkout',
        payment_id: m.payment.paymentId,
        amount,
        total: amount,
        invoice_no: m.payment.invoiceNo,
        status: 'pending',
        expiredAt: expect.any(String),
      },
    ]);
    expect(Date.parse(m.billingSummaries[0].expiredAt) - Date.parse(m.createdAt)).toBe(CHECKOUT_MS);
    expect(m.histories.map((h: any) => h.action)).toEqual(['create']);
    expect(m.cancelReason).toBeUndefined();
  }

  // -------------------------------------------------------------------------
  it('invoice numbers run INV-000001, INV-000002 … per project; drafts and free bookings take none', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const a = await c.bookRoom('p-invoice', '08:00', '09:00', day);
    const b = await c.bookRoom('p-invoice', '10:00', '11:00', day);
    // A draft and a free booking in between take no number.
    const draft = await c.book(roomBody('p-invoice', '12:00', '13:00', day, { draft: true }));
    expect(draft.status, draft.text).toBe(200);
    await c.bookRoom('free', '08:00', '09:00', day);
    const d = await c.bookRoom('p-invoice', '14:00', '15:00', day);
    expect([a, b, d].map((m) => m.payment.invoiceNo)).toEqual(['INV-000001', 'INV-000002', 'INV-000003']);
    // The annex counts on its own (hub is the app with both projects).
    const hub = (await appToken(c.svc, HUB_APP_ID, HUB_SECRET)).access_token;
    const x = await c.book(roomBody('x-invoice', '08:00', '09:00', day), hub);
    expect(x.status, x.text).toBe(201);
    expect(x.body.data.payment.invoiceNo).toBe('INV-000001');
    const e = await c.bookRoom('p-invoice', '16:00', '17:00', day);
    expect(e.payment.invoiceNo).toBe('INV-000004');
    const x2 = await c.book(roomBody('x-invoice', '10:00', '11:00', day), hub);
    expect(x2.body.data.payment.invoiceNo).toBe('INV-000002');
    // Every payment id is its own.
    expect(new Set([a, b, d, e, x.body.data, x2.body.data].map((m) => m.payment.paymentId)).size).toBe(6);

    // Concurrent creates on six rooms take six distinct, consecutive numbers.
    const rooms = PARALLEL_ROOMS.map((r) => r.key);
    const parallel = await Promise.all(rooms.map((k) => c.book(roomBody(k, '18:00', '19:00', day))));
    for (const r of parallel) expect(r.status, r.text).toBe(201);
    expect(parallel.map((r) => r.body.data.payment.invoiceNo).sort()).toEqual([
      'INV-000005',
      'INV-000006',
      'INV-000007',
      'INV-000008',
      'INV-000009',
      'INV-000010',
    ]);
  });

  // -------------------------------------------------------------------------
  it('a paid room books unpaid with a payment, a 5-minute checkout entry, and no *_BOOK; GET shows the same', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const before = await serviceNow();
    const m = await c.bookRoom('p-create', '10:00', '11:30', day);
    const after = await serviceNow();
    // 90 minutes of 250/h = 375, plus the flat fee 50.
    expectCheckout(m, 425);
    expect(Date.parse(m.createdAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(m.createdAt)).toBeLessThanOrEqual(after);
    expect(m.pinCode).toMatch(/^\d{6}$/);

    const read = await c.get(m._id);
    expect(read.status).toBe('unpaid');
    expect(read.payment).toEqual(m.payment);
    expect(read.billingSummaries).toEqual(m.billingSummaries);
    // The list shows it under its status.
    const list = await c.svc.request(
      'GET',
      `/meetings${qs({ from: c.t('00:00', day), to: c.t('00:00', day + 1), statuses: 'unpaid', meetingRoomId: c.id('p-create') })}`,
      { token: c.alice },
    );
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((x: any) => [x._id, x.status, x.payment?.paymentId])).toEqual([[m._id, 'unpaid', m.payment.paymentId]]);

    // No event while unpaid (the free room shows the receiver works).
    await c.bookRoom('free', '10:00', '11:00', day);
    expect(kinds(await eventsOf('Free Room')).filter((k) => k === 'BOOK').length).toBeGreaterThan(0);
    expect(await eventsOf('Paid Create')).toEqual([]);
  });

  it('an unpaid booking holds its slot: the same window is refused 409 KS012 and searches leave the room out', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const m = await c.bookRoom('p-create', '10:00', '11:00', day);
    expect(m.status).toBe('unpaid');
    expectError(await c.book(roomBody('p-create', '10:30', '11:30', day), c.portal), 409, 'KS012');
    const search = await c.svc.request(
      'GET',
      `/meeting-rooms${qs({ projectId: c.projectId, startDateTime: c.t('10:00', day), endDateTime: c.t('11:00', day) })}`,
      { token: c.alice },
    );
    expect(search.status, search.text).toBe(200);
    const found = search.body.data.map((r: any) => r._id);
    expect(found).toContain(c.id('p-settle'));
    expect(found).not.toContain(c.id('p-create'));
  });

  it('a free room books active with *_BOOK at create, no payment and no billing', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const since = await serviceNow();
    const m = await c.bookRoom('free', '10:00', '11:00', day);
    expect(m.status).toBe('active');
    expect(m.payment).toBeUndefined();
    expect(m.billingSummaries).toEqual([]);
    const events = await eventsOf('Free Room', since);
    expect(kinds(events)).toEqual(['BOOK']);
  });

  // -------------------------------------------------------------------------
  it('settle: active, history pay, billing paid, the page link and QR gone, *_BOOK with the booking data; settling again changes nothing', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const m = await c.bookRoom('p-settle', '10:00', '11:00', day, { attendees: [{ email: 'bob@example.com' }] });
    expectCheckout(m, 200);
    await c.clockTo('07:02', day);
    const settledAt = await serviceNow();

    const s = okState(await settle(m.payment.paymentId));
    expect(s).toMatchObject({
      paymentId: m.payment.paymentId,
      meetingId: m._id,
      invoiceNo: m.payment.invoiceNo,
      outcome: 'settled',
      meetingStatus: 'active',
      status: 'settled',
    });

    const paid = await c.get(m._id);
    expect(paid.status).toBe('active');
    expect(Object.keys(paid.payment).sort()).toEqual(PAID_KEYS);
    expect(paid.payment).toEqual({
      paymentId: m.payment.paymentId,
      invoiceNo: m.payment.invoiceNo,
      amount: 200,
      summary: m.payment.summary,
    });
    expect(paid.billingSummaries).toEqual([{ ...m.billingSummaries[0], status: 'paid' }]);
    expect(paid.histories.map((h: any) => h.action)).toEqual(['create', 'pay']);
    const pay = lastHistory(paid);
    expect(pay.by).toBe(c.id('alice'));
    expect(Date.parse(pay.at) - settledAt).toBeGreaterThanOrEqual(0);
    expect(Date.parse(pay.at) - settledAt).toBeLessThan(MINUTE);

    const events = await eventsOf('Paid Settle');
    expect(kinds(events)).toEqual(['BOOK']);
    const [book] = events;
    expect(book.type).toBe('ROOM_BOOK');
    expect(book.projectId).toBe(c.projectId);
    expect(Date.parse(book.occurredAt) - settledAt).toBeGreaterThanOrEqual(0);
    expect(Date.parse(book.occurredAt) - settledAt).toBeLessThan(MINUTE);
    expect(book.data).toMatchObject({
      projectId: c.projectId,
      userId: c.id('alice'),
      roomName: 'Paid Settle',
      floorName: '12F',
      startTime: '10:00',
      endTime: '11:00',
      attendees: ['Bob Admin'],
      userName: 'Alice Example',
      userEmail: 'alice@example.com',
    });
    expect(sameInstant(book.data.bookingDate, c.t('10:00', day))).toBe(true);
    expect(JSON.stringify(book.data)).not.toMatch(/\/pay\/|webPayment|pinCode/);

    // Settling again: nothing new.
    const again = okState(await settle(m.payment.paymentId));
    expect(again).toMatchObject({ outcome: 'already-settled', meetingStatus: 'active' });
    // The old deadline passing does nothing to a paid booking.
    await c.clockTo('07:10', day);
    const later = await c.get(m._id);
    expect(later.status).toBe('active');
    expect(later.histories.map((h: any) => h.action)).toEqual(['create', 'pay']);
    expect(later.billingSummaries[0].status).toBe('paid');
    expect(kinds(await eventsOf('Paid Settle'))).toEqual(['BOOK']);
  });

  it('a paid desk (all day, perDay) settles into DESK_BOOK with deskName', async () => {
    const day = newDay();
    await c.clockTo('06:00', day);
    const m = await c.bookDesk('pd-desk', '07:00', 'allDay', day);
    // All day: the day rate 300.
    expectCheckout(m, 300);
    expect(m.deskId).toBe(c.id('pd-desk'));
    okState(await settle(m.payment.paymentId));
    expect((await c.get(m._id)).status).toBe('active');
    const events = await eventsOf('Paid Desk');
    expect(events.map((e) => e.type)).toEqual(['DESK_BOOK']);
    expect(events[0].data).toMatchObject({ deskName: 'Paid Desk', floorName: '3F', startTime: '07:00', endTime: '22:00' });
    expect(events[0].data.roomName).toBeUndefined();
  });

  // -------------------------------------------------------------------------
  it('fail: counted, the booking stays unpaid with its payment; a later settle inside the window still works', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const m = await c.bookRoom('p-fail', '10:00', '11:00', day);
    const f1 = okState(await fail(m.payment.paymentId));
    expect(f1).toMatchObject({ paymentId: m.payment.paymentId, failedAttempts: 1, meetingStatus: 'unpaid', status: 'pending' });
    const f2 = okState(await fail(m.payment.paymentId));
    expect(f2.failedAttempts).toBe(2);
    const still = await c.get(m._id);
    expect(still.status).toBe('unpaid');
    expect(still.payment).toEqual(m.payment);
    expect(still.billingSummaries).toEqual(m.billingSummaries);
    expect(still.histories.map((h: any) => h.action)).toEqual(['create']);
    expect(await eventsOf('Paid Fail')).toEqual([]);

    await c.clockTo('07:04', day);
    expect(okState(await settle(m.payment.paymentId))).toMatchObject({ outcome: 'settled', meetingStatus: 'active', failedAttempts: 2 });
    expect(kinds(await eventsOf('Paid Fail'))).toEqual(['BOOK']);
  });

  it('an unknown payment id is 404 on settle and fail', async () => {
    expect((await settle('ffffffffffffffffffffffff')).status).toBe(404);
    expect((await fail('ffffffffffffffffffffffff')).status).toBe(404);
  });

  // -------------------------------------------------------------------------
  it('lapse: at creation + 5 min the booking is cancelled with the exact reason, history payment-timeout (system), *_CANCEL, billing expired, slot released', async () => {
    const day = newDay();
    await c.clockTo('08:00', day);
    const m = await c.bookRoom('p-lapse', '10:00', '11:00', day);
    expectCheckout(m, 200);
    const deadline = Date.parse(m.billingSummaries[0].expiredAt);

    // One second before the deadline: still unpaid.
    await c.clockSet(deadline - 1000);
    expect((await c.get(m._id)).status).toBe('unpaid');
    expect(await eventsOf('Paid Lapse')).toEqual([]);

    await c.clockSet(deadline);
    const lapsed = await c.get(m._id);
    expect(lapsed.status).toBe('cancelled');
    expect(lapsed.cancelReason).toBe(LAPSE_REASON);
    expect(lapsed.histories.map((h: any) => h.action)).toEqual(['create', 'payment-timeout']);
    const h = lastHistory(lapsed);
    expect(h).toMatchObject({ action: 'payment-timeout', source: 'system', by: 'system' });
    expect(sameInstant(h.at, deadline)).toBe(true);
    expect(lapsed.billingSummaries).toEqual([{ ...m.billingSummaries[0], status: 'expired' }]);

    const events = await eventsOf('Paid Lapse');
    expect(kinds(events)).toEqual(['CANCEL']);
    expect(events[0].type).toBe('ROOM_CANCEL');
    expect(events[0].data.cancelReason).toBe(LAPSE_REASON);
    expect(events[0].data).toMatchObject({ roomName: 'Paid Lapse', floorName: '12F', userId: c.id('alice') });
    expect(sameInstant(events[0].data.bookingDate, c.t('10:00', day))).toBe(true);
    expect(sameInstant(events[0].occurredAt, deadline)).toBe(true);

    // The slot is free again: someone else books it.
    const other = await c.book(roomBody('p-lapse', '10:00', '11:00', day), c.portal);
    expect(other.status, other.text).toBe(201);
    expect(other.body.data.status).toBe('unpaid');
    // A lapsed booking cannot be cancelled again.
    expectError(await c.action(m._id, 'cancel'), 409, 'MEETING_011');
    // Nothing more happens to the lapsed booking.
    await c.advance(30);
    const later = await c.get(m._id);
    expect(later.histories.map((x: any) => x.action)).toEqual(['create', 'payment-timeout']);
    expect(kinds(await eventsOf('Paid Lapse'))).toEqual(['CANCEL', 'CANCEL']); // the first, and the other booking's lapse
  });

  it('a lapse also happens with POST /ops/v1/clock {advanceMinutes: 6}', async () => {
    const day = newDay();
    await c.clockTo('08:00', day);
    const m = await c.bookRoom('p-lapse', '12:00', '13:00', day);
    await c.advance(6);
    const lapsed = await c.get(m._id);
    expect(lapsed.status).toBe('cancelled');
    expect(lapsed.cancelReason).toBe(LAPSE_REASON);
    expect(lastHistory(lapsed).action).toBe('payment-timeout');
  });

  it('a settle after the deadline is refunded and changes no booking, whether the slot was taken meanwhile or is still free', async () => {
    const day = newDay();
    await c.clockTo('08:00', day);
    const m = await c.bookRoom('p-late', '10:00', '11:00', day);
    await c.advance(6);
    const lapsed = await c.get(m._id);
    expect(lapsed.status).toBe('cancelled');
    // Someone else books the released slot before the late payment arrives.
    const taker = await c.bookRoom('p-late', '10:00', '11:00', day);

    const late = okState(await settle(m.payment.paymentId));
    expect(late).toMatchObject({ outcome: 'refunded', status: 'refunded', meetingStatus: 'cancelled', paymentId: m.payment.paymentId });
    const after = await c.get(m._id);
    expect(after).toEqual(lapsed);
    expect((await c.get(taker._id)).status).toBe('unpaid');
    expect(kinds(await eventsOf('Paid Late'))).toEqual(['CANCEL']);

    // Exactly at the deadline the booking has already lapsed. Its slot is still free, but a cancelled booking
    // never comes back: the late payment is refunded too.
    const m2 = await c.bookRoom('p-late', '12:00', '13:00', day);
    await c.clockSet(Date.parse(m2.billingSummaries[0].expiredAt));
    const lapsed2 = await c.get(m2._id);
    expect(lapsed2.status).toBe('cancelled');
    const late2 = okState(await settle(m2.payment.paymentId));
    expect(late2).toMatchObject({ outcome: 'refunded', status: 'refunded', meetingStatus: 'cancelled' });
    expect(await c.get(m2._id)).toEqual(lapsed2);
    // The first booking's lapse, the taker's own lapse (it never paid), m2's lapse; no BOOK.
    expect(kinds(await eventsOf('Paid Late'))).toEqual(['CANCEL', 'CANCEL', 'CANCEL']);
  });

  // -------------------------------------------------------------------------
  it('cancel of an unpaid booking voids its payment (billing voided), sends *_CANCEL without a reason; the payment cannot be settled and never lapses', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const m = await c.bookRoom('p-cancel', '10:00', '11:00', day);
    const res = await c.action(m._id, 'cancel');
    expect(res.status, res.text).toBe(202);
    const cancelled = await c.get(m._id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.cancelReason).toBeUndefined();
    expect(cancelled.billingSummaries).toEqual([{ ...m.billingSummaries[0], status: 'voided' }]);
    expect(cancelled.histories.map((h: any) => h.action)).toEqual(['create', 'cancel']);

    const s = await settle(m.payment.paymentId);
    expect(s.status, s.text).toBe(409);
    expect(s.body.code).toBe('KS012');
    expect((await c.get(m._id)).status).toBe('cancelled');

    await c.advance(10);
    const later = await c.get(m._id);
    expect(later.histories.map((h: any) => h.action)).toEqual(['create', 'cancel']);
    expect(later.billingSummaries[0].status).toBe('voided');
    const events = await eventsOf('Paid Cancel');
    expect(kinds(events)).toEqual(['CANCEL']);
    expect(events[0].data).not.toHaveProperty('cancelReason');
    // The slot is free again.
    const again = await c.book(roomBody('p-cancel', '10:00', '11:00', day), c.portal);
    expect(again.status, again.text).toBe(201);
  });

  it('cancel with a paymentId: another payment is 400 KS001 and nothing changes; the pending payment is voided', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const m = await c.bookRoom('p-cancel', '10:00', '11:00', day);
    const other = await c.bookRoom('p-cancel', '13:00', '14:00', day);
    expectError(await c.action(m._id, 'cancel', { paymentId: other.payment.paymentId }), 400, 'KS001');
    expectError(await c.action(m._id, 'cancel', { paymentId: 'ffffffffffffffffffffffff' }), 400, 'KS001');
    const still = await c.get(m._id);
    expect(still.status).toBe('unpaid');
    expect(still.billingSummaries[0].status).toBe('pending');
    expect((await c.get(other._id)).billingSummaries[0].status).toBe('pending');

    const res = await c.action(m._id, 'cancel', { paymentId: m.payment.paymentId });
    expect(res.status, res.text).toBe(202);
    const cancelled = await c.get(m._id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.billingSummaries[0].status).toBe('voided');
    // The other booking's payment is untouched and still settles.
    expect(okState(await settle(other.payment.paymentId))).toMatchObject({ outcome: 'settled', meetingStatus: 'active' });
  });

  it('cancel of a paid booking before its start refunds it (billing refunded); after the start it is not refunded', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const m = await c.bookRoom('p-refund', '10:00', '11:00', day);
    okState(await settle(m.payment.paymentId));
    const res = await c.action(m._id, 'cancel');
    expect(res.status, res.text).toBe(202);
    const cancelled = await c.get(m._id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.billingSummaries).toEqual([{ ...m.billingSummaries[0], status: 'refunded' }]);
    expect(cancelled.histories.map((h: any) => h.action)).toEqual(['create', 'pay', 'cancel']);
    const events = await eventsOf('Paid Refund');
    expect(kinds(events)).toEqual(['BOOK', 'CANCEL']);
    expect(events[1].data).not.toHaveProperty('cancelReason');

    const late = await c.bookRoom('p-refund', '13:00', '14:00', day);
    okState(await settle(late.payment.paymentId));
    await c.clockTo('13:05', day);
    expect((await c.action(late._id, 'cancel')).status).toBe(202);
    const after = await c.get(late._id);
    expect(after.status).toBe('cancelled');
    expect(after.billingSummaries[0].status).toBe('paid');
  });

  // -------------------------------------------------------------------------
  it('check-in while unpaid is 422 MEETING_005 (inside the window and before it); after settling it works', async () => {
    const day = newDay();
    await c.clockTo('09:00', day);
    const m = await c.bookRoom('p-checkin', '10:00', '11:00', day);
    // Too early and unpaid: unpaid comes first.
    expectError(await c.action(m._id, 'check-in'), 422, 'MEETING_005');
    const m2 = await c.bookRoom('p-checkin', '09:10', '09:40', day);
    // Inside the check-in window (opens 08:55) and unpaid.
    expectError(await c.action(m2._id, 'check-in'), 422, 'MEETING_005');
    expectError(await c.action(m2._id, 'check-in', { pinCode: m2.pinCode }, c.portal), 422, 'MEETING_005');
    expect((await c.get(m2._id)).status).toBe('unpaid');
    okState(await settle(m2.payment.paymentId));
    const res = await c.action(m2._id, 'check-in');
    expect(res.status, res.text).toBe(202);
    expect((await c.get(m2._id)).status).toBe('checked-in');
  });

  it('postStartExpireMinutes 0: created unpaid inside the check-in window it is not checked in; once paid, the start checks it in', async () => {
    const day = newDay();
    await c.clockTo('09:50', day);
    const m = await c.bookRoom('p-auto', '10:00', '11:00', day);
    expect(m.status).toBe('unpaid');
    await c.clockTo('09:52', day);
    okState(await settle(m.payment.paymentId));
    expect((await c.get(m._id)).status).toBe('active');
    await c.clockTo('10:00', day);
    const started = await c.get(m._id);
    expect(started.status).toBe('checked-in');
    expect(started.histories.map((h: any) => h.action)).toEqual(['create', 'pay', 'check-in']);
    expect(kinds(await eventsOf('Paid Auto'))).toEqual(['BOOK']);
  });

  it('PATCH while unpaid is 422 (title and times alike), nothing changes; after settling the edit goes through', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const m = await c.bookRoom('p-patch', '10:00', '11:00', day);
    const t1 = await c.patch(m._id, { title: 'renamed' });
    expect(t1.status, t1.text).toBe(422);
    expect(t1.body.success).toBe(false);
    expect(t1.body.code).toBe('MEETING_005');
    const t2 = await c.patch(m._id, { endDateTime: c.t('11:30', day) });
    expect(t2.status, t2.text).toBe(422);
    const t3 = await c.patch(m._id, { title: 'by pin', pinCode: m.pinCode }, c.portal);
    expect(t3.status, t3.text).toBe(422);
    const still = await c.get(m._id);
    expect(still.title).toBe(m.title);
    expect(still.endDateTime).toBe(m.endDateTime);
    expect(still.histories.map((h: any) => h.action)).toEqual(['create']);

    okState(await settle(m.payment.paymentId));
    const ok = await c.patch(m._id, { title: 'renamed' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.title).toBe('renamed');
    expect(ok.body.data.status).toBe('active');
  });

  it('extending a paid booking is not free: the PATCH answers unpaid with a payment for the extra time', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const m = await c.bookRoom('p-patch', '10:00', '11:00', day);
    okState(await settle(m.payment.paymentId));
    const res = await c.patch(m._id, { endDateTime: c.t('12:00', day) });
    expect(res.status, res.text).toBe(200);
    // api-spec.md: "Extending a paid booking can return status unpaid with a payment object" (extension needs payment).
    expect(res.body.data.status).toBe('unpaid');
    // The extra hour at 200/h.
    expect(res.body.data.payment?.amount).toBe(200);
    expect(res.body.data.billingSummaries.filter((b: any) => b.status === 'pending').map((b: any) => b.amount)).toEqual([200]);
  });

  it('a recurring series on a paid asset is 400 KS001 and books nothing', async () => {
    const day = newDay();
    await c.clockTo('07:00', day);
    const res = await c.book(roomBody('p-series', '20:00', '21:00', day, { recurrence: 'FREQ=DAILY;COUNT=3' }));
    expectError(res, 400, 'KS001');
    for (const d of [day, day + 1, day + 2]) expect(await bookingsOf('p-series', d)).toEqual([]);
    // The same series on a free room is fine (the refusal is about the price).
    const free = await c.book(roomBody('free', '20:00', '21:00', day, { recurrence: 'FREQ=DAILY;COUNT=3' }));
    expect(free.status, free.text).toBe(201);
  });

  // -------------------------------------------------------------------------
  describe('price (docs/decisions.md "Payments")', () => {
    const draftOf = async (key: string, from: string, ends: string[], day: number, extra: Record<string, unknown> = {}) => {
      const res = await c.book(
        roomBody(key, from, ends[0], day, { draft: true, draftEndDateTimes: ends.slice(1).map((e) => c.t(e, day)), ...extra }),
      );
      expect(res.status, res.text).toBe(200);
      return res.body.data.draftInfo as any[];
    };

    it('per minute pro rata of perHour, capped per day at perDay, plus the flat fee once', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      // perHour 100, perDay 500, fee 20.
      const info = await draftOf('p-price', '07:00', ['07:07', '08:00', '11:00', '12:00', '13:00', '22:00'], day);
      expect(info.map((i) => i.amount)).toEqual([
        31.67, // 7/60 × 100 = 11.666… + 20 = 31.666… → 31.67
        120, // 100 + 20
        420, // 400 + 20
        520, // 500 (= the cap exactly) + 20
        520, // 600 capped at 500 + 20
        520, // 1500 capped at 500 + 20
      ]);
      for (const i of info) {
        expect(i.currency).toBe('THB');
        expect(i.summary).toEqual({ subtotal: i.amount, total: i.amount, discounts: [] });
      }
    });

    it('perHour 0 with perDay: every day touched costs perDay', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const info = await draftOf('p-dayrate', '09:00', ['09:01', '22:00'], day);
      expect(info.map((i) => i.amount)).toEqual([800, 800]);
    });

    it('rounding is half up to the minor unit, once (perHour 1.5)', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const info = await draftOf('p-half', '09:00', ['09:01', '09:02', '09:03', '09:07', '10:00'], day);
      expect(info.map((i) => i.amount)).toEqual([
        0.03, // 0.025 → 0.03
        0.05,
        0.08, // 0.075 → 0.08 (a float 0.075 × 100 rounds to 7)
        0.18, // 0.175 → 0.18
        1.5,
      ]);
    });

    it('a created booking costs what its draft said', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const [info] = await draftOf('p-price', '09:00', ['09:07'], day);
      const m = await c.bookRoom('p-price', '09:00', '09:07', day);
      expect(m.payment.amount).toBe(info.amount);
      expect(m.payment.summary).toEqual(info.summary);
      expect(m.billingSummaries[0].amount).toBe(info.amount);
    });

    it('desk periods: morning by the hour (07:00-12:00 = 250), afternoon capped at perDay (10 h → 300), all day at perDay', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const priceOf = async (timePeriod: string) => {
        const res = await c.book({ deskId: c.id('pd-desk'), startDateTime: c.t('07:00', day), timePeriod, draft: true });
        expect(res.status, res.text).toBe(200);
        return res.body.data.draftInfo[0].amount;
      };
      expect(await priceOf('morning')).toBe(250);
      expect(await priceOf('afternoon')).toBe(300);
      expect(await priceOf('allDay')).toBe(300);
    });
  });

  // -------------------------------------------------------------------------
  describe('drafts', () => {
    it('each draftInfo entry has amount, currency and summary; nothing is written', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const res = await c.book(
        roomBody('p-draft', '09:00', '09:30', day, {
          draft: true,
          draftEndDateTimes: [c.t('10:00', day), c.t('11:15', day), c.t('23:30', day)],
        }),
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.draft).toBe(true);
      const info = res.body.data.draftInfo;
      expect(info).toHaveLength(4);
      // 120/h: 30 min = 60, 60 min = 120, 135 min = 270; the last end is past closing, priced anyway.
      expect(info.slice(0, 3).map((i: any) => [i.isAvailable, i.amount, i.currency])).toEqual([
        [true, 60, 'THB'],
        [true, 120, 'THB'],
        [true, 270, 'THB'],
      ]);
      expect(info[2].summary).toEqual({ subtotal: 270, total: 270, discounts: [] });
      expect(info[3].isAvailable).toBe(false);
      expect(info[3].reason).toBe('OPERATING_HOURS');
      expect(res.body.data.payment).toBeUndefined();
      expect(res.body.data._id).toBeUndefined();

      expect(await bookingsOf('p-draft', day)).toEqual([]);
      expect(await eventsOf('Paid Draft')).toEqual([]);
      // The window is still free.
      const m = await c.bookRoom('p-draft', '09:00', '09:30', day);
      expect(m.payment.amount).toBe(60);
    });

    it('a draft with a promo code shows the discount per entry; a refused code is 400 KS001', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const res = await c.book(
        roomBody('p-draft', '09:00', '10:00', day, { draft: true, promoCode: 'HALF', draftEndDateTimes: [c.t('11:00', day)] }),
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.draftInfo.map((i: any) => [i.amount, i.summary])).toEqual([
        [60, { subtotal: 120, total: 60, discounts: [{ code: 'HALF', value: 60, name: 'Half price' }] }],
        [120, { subtotal: 240, total: 120, discounts: [{ code: 'HALF', value: 120, name: 'Half price' }] }],
      ]);
      expectError(await c.book(roomBody('p-draft', '09:00', '10:00', day, { draft: true, promoCode: 'NOPE' })), 400, 'KS001');
    });

    it('a promo code on a free room is accepted and shows a discount of 0', async () => {
      const day = newDay();
      await c.clockTo('06:00', day);
      const res = await c.book(roomBody('free', '09:00', '10:00', day, { draft: true, promoCode: 'HALF' }));
      expect(res.status, res.text).toBe(200);
      const [info] = res.body.data.draftInfo;
      expect(info.amount).toBe(0);
      expect(info.summary).toEqual({ subtotal: 0, total: 0, discounts: [{ code: 'HALF', value: 0, name: 'Half price' }] });
      const m = await c.bookRoom('free', '09:00', '10:00', day, { promoCode: 'HALF' });
      expect(m.status).toBe('active');
    });
  });

  // -------------------------------------------------------------------------
  describe('promo codes', () => {
    it('percentOff: the discount is listed {code, value, name} and lowers total, amount and the billing entry', async () => {
      const day = newDay();
      await c.clockTo('07:00', day);
      const m = await c.bookRoom('p-promo', '10:00', '11:00', day, { promoCode: 'HALF' });
      // 200 − 50 % = 100.
      expectCheckout(m, 100, 200, [{ code: 'HALF', value: 100, name: 'Half price' }]);
    });

    it('a percent discount is rounded half up once (12.5 % of 23.33 = 2.91625 → 2.92)', async () => {
      const day = newDay();
      await c.clockTo('07:00', day);
      // 7 minutes of 200/h = 23.333… → 23.33; 12.5 % → 2.92; total 20.41.
      const m = await c.bookRoom('p-promo', '10:00', '10:07', day, { promoCode: 'ODD' });
      expectCheckout(m, 20.41, 23.33, [{ code: 'ODD', value: 2.92, name: 'Odd percent' }]);
    });

    it('amountOff: a fixed discount', async () => {
      const day = newDay();
      await c.clockTo('07:00', day);
      const m = await c.bookRoom('p-promo', '10:00', '11:00', day, { promoCode: 'FIFTY' });
      expectCheckout(m, 150, 200, [{ code: 'FIFTY', value: 50, name: 'Fifty off' }]);
    });

    it('a total of 0 (amountOff above the subtotal) books like a free asset: active, *_BOOK at create', async () => {
      const day = newDay();
      await c.clockTo('07:00', day);
      const draft = await c.book(roomBody('p-zero', '10:00', '11:00', day, { draft: true, promoCode: 'BIG' }));
      expect(draft.body.data.draftInfo[0].summary).toEqual({
        subtotal: 200,
        total: 0,
        discounts: [{ code: 'BIG', value: 200, name: 'Everything off' }],
      });
      const m = await c.bookRoom('p-zero', '10:00', '11:00', day, { promoCode: 'BIG' });
      expect(m.status).toBe('active');
      expect(m.payment).toBeUndefined();
      expect(m.billingSummaries).toEqual([]);
      expect(kinds(await eventsOf('Paid Zero'))).toEqual(['BOOK']);
      // And nothing lapses.
      await c.advance(6);
      expect((await c.get(m._id)).status).toBe('active');
    });

    it("unknown, inactive, expired, not yet valid and another project's codes are 400 KS001, naming the code; nothing is booked", async () => {
      const day = newDay();
      await c.clockTo('07:00', day);
      for (const code of ['NOPE', 'OFF', 'OLD', 'FUTURE', 'ANNEX10']) {
        const res = await c.book(roomBody('p-promo', '10:00', '11:00', day, { promoCode: code }));
        expectError(res, 400, 'KS001');
        expect(res.body.message.join(' '), code).toContain(code);
      }
      expect(await bookingsOf('p-promo', day)).toEqual([]);
    });

    it('validity is judged at the service time: from validFrom (inclusive) until validUntil (exclusive)', async () => {
      const day = newDay();
      const windowed = {
        key: 'windowed',
        code: 'WINDOW',
        name: 'Morning only',
        percentOff: 10,
        validFrom: c.t('10:00', day),
        validUntil: c.t('11:00', day),
      };
      await applySite(c.svc, webhookSite({ ...options, promoCodes: [...options.promoCodes!, windowed] }));
      const tryAt = async (hhmm: string) => {
        await c.clockTo(hhmm, day);
        return c.book(roomBody('p-promo', '18:00', '19:00', day, { draft: true, promoCode: 'WINDOW' }));
      };
      expectError(await tryAt('09:59'), 400, 'KS001');
      const atFrom = await tryAt('10:00');
      expect(atFrom.status, atFrom.text).toBe(200);
      // 200 − 10 % = 180.
      expect(atFrom.body.data.draftInfo[0].amount).toBe(180);
      expect((await tryAt('10:59')).status).toBe(200);
      expectError(await tryAt('11:00'), 400, 'KS001');
    });

    it('maxUses: once a payment with the code has settled, the code is used up', async () => {
      const day = newDay();
      await c.clockTo('07:00', day);
      const m = await c.bookRoom('p-once', '10:00', '11:00', day, { promoCode: 'ONCE' });
      expect(m.payment.summary.discounts).toEqual([{ code: 'ONCE', value: 20, name: 'One use' }]);
      okState(await settle(m.payment.paymentId));
      const res = await c.book(roomBody('p-once', '13:00', '14:00', day, { promoCode: 'ONCE' }));
      expectError(res, 400, 'KS001');
      expect(res.body.message.join(' ')).toContain('ONCE');
      // Without the code the same window books.
      expect((await c.book(roomBody('p-once', '13:00', '14:00', day))).status).toBe(201);
    });

    it('maxUses: two bookings made with a one-use code cannot both end up paid with its discount', async () => {
      const day = newDay();
      await c.clockTo('07:00', day);
      const first = await c.book(roomBody('p-once', '10:00', '11:00', day, { promoCode: 'ONCE2' }));
      const second = await c.book(roomBody('p-once', '13:00', '14:00', day, { promoCode: 'ONCE2' }));
      expect(first.status, first.text).toBe(201);
      for (const r of [first, second]) {
        if (r.status === 201) await settle(r.body.data.payment.paymentId);
      }
      const discounted = (await bookingsOf('p-once', day)).filter(
        (m) => m.status === 'active' && m.payment?.summary.discounts.some((x: any) => x.code === 'ONCE2'),
      );
      expect(discounted.length, 'bookings holding the discount of a maxUses 1 code').toBeLessThanOrEqual(1);
    });

    it('maxUses: a code that made a booking free counts its use too (one free booking, not unlimited)', async () => {
      const day = newDay();
      await c.clockTo('07:00', day);
      const first = await c.bookRoom('p-once', '15:00', '16:00', day, { promoCode: 'FREEBIE' });
      expect(first.status).toBe('active');
      const second = await c.book(roomBody('p-once', '17:00', '18:00', day, { promoCode: 'FREEBIE' }));
      expectError(second, 400, 'KS001');
    });
  });
});
