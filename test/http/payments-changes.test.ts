/**
 * Paid bookings that change after they were paid, and payments that arrive late,
 * driven over HTTP with the sandbox clock and the sandbox payment routes:
 * - a PATCH that costs more leaves the booking unpaid for the difference
 *   (statusBeforeUpdate recorded); paying restores the status with the new times,
 *   a lapse restores the old times and status (history cancel-updating);
 * - a payment settled after the lapse is refunded, whether or not its slot is
 *   still free: a cancelled booking never comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { actAsToken, appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { webhookSite } from '../support/webhook-site.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';

const LAPSED = 'Payment window lapsed — auto-cancelled by system';

describe('paid bookings that change, and late payments', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  let token: string;

  beforeAll(async () => {
    svc = await startTestService();
    const doc = webhookSite({
      rooms: [
        { key: 'paid', name: 'Paid Room' },
        { key: 'paid2', name: 'Paid Room 2' },
      ],
    });
    // 200 THB an hour, no day cap.
    for (const r of doc.rooms) r.chargeRate = { perHour: 200, perDay: 0 };
    ids = await applySite(svc, doc);
    D = await dayAhead(svc, 'Asia/Bangkok', 2);
    await setClock(svc, at(D, '06:00'));
    token = (await appToken(svc)).access_token;
  });
  afterAll(async () => {
    await svc?.close();
  });

  const book = async (room: string, from: string, to: string) => {
    const res = await svc.request('POST', '/meetings', {
      token,
      body: { meetingRoomId: idOf(ids, room), title: `${room} ${from}`, startDateTime: at(D, from), endDateTime: at(D, to) },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  const get = async (id: string) => {
    const res = await svc.request('GET', `/meetings/${id}`, { token });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  };
  const settle = async (paymentId: string) => {
    const res = await svc.ops('POST', `/ops/v1/payments/${paymentId}/settle`);
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  };
  const advance = async (minutes: number) => {
    const res = await svc.ops('POST', '/ops/v1/clock', { advanceMinutes: minutes });
    expect(res.status, res.text).toBe(200);
  };
  const actions = (m: { histories: { action: string }[] }) => m.histories.map((h) => h.action);

  it('an extension that is paid keeps the new end and the status it had', async () => {
    const m = await book('paid', '09:00', '10:00');
    expect(m.status).toBe('unpaid');
    expect(m.payment.amount).toBe(200);
    await settle(m.payment.paymentId);
    expect((await get(m._id)).status).toBe('active');

    const res = await svc.request('PATCH', `/meetings/${m._id}`, { token, body: { endDateTime: at(D, '11:30') } });
    expect(res.status, res.text).toBe(200);
    const extended = res.body.data;
    expect(extended.status).toBe('unpaid');
    expect(extended.payment.amount).toBe(300); // 1.5 more hours at 200
    expect(extended.payment.webPaymentUrl).toMatch(/\/pay\//);
    expect(extended.payment.paymentId).not.toBe(m.payment.paymentId);
    expect(extended.histories.at(-1)).toMatchObject({ action: 'update', statusBeforeUpdate: 'active' });
    expect(extended.billingSummaries.map((b: { kind: string; status: string }) => [b.kind, b.status])).toEqual([
      ['checkout', 'paid'],
      ['extension', 'pending'],
    ]);
    // Unpaid: no further edits, no check-in.
    const again = await svc.request('PATCH', `/meetings/${m._id}`, { token, body: { title: 'nope' } });
    expect(again.status).toBe(422);

    const paid = await settle(extended.payment.paymentId);
    expect(paid).toMatchObject({ status: 'settled', outcome: 'settled', meetingStatus: 'active' });
    const after = await get(m._id);
    expect(after.status).toBe('active');
    expect(Date.parse(after.endDateTime)).toBe(Date.parse(at(D, '11:30')));
    expect(actions(after)).toEqual(['create', 'pay', 'update', 'pay']);
  });

  it('shortening a paid booking refunds nothing and needs no payment: it stays active with its payment settled', async () => {
    const m = await book('paid2', '10:00', '12:00');
    expect(m.payment.amount).toBe(400);
    await settle(m.payment.paymentId);
    const res = await svc.request('PATCH', `/meetings/${m._id}`, { token, body: { endDateTime: at(D, '11:00') } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('active');
    expect(res.body.data.payment.paymentId).toBe(m.payment.paymentId);
    expect(res.body.data.billingSummaries.map((b: { kind: string; status: string }) => [b.kind, b.status])).toEqual([['checkout', 'paid']]);
    const state = await svc.ops('POST', `/ops/v1/payments/${m.payment.paymentId}/settle`);
    expect(state.body.data).toMatchObject({ status: 'settled', outcome: 'already-settled' });
  });

  it('an extension left unpaid is undone: old times and status back, history cancel-updating, the extra time free again', async () => {
    const m = await book('paid2', '13:00', '14:00');
    await settle(m.payment.paymentId);
    const res = await svc.request('PATCH', `/meetings/${m._id}`, { token, body: { endDateTime: at(D, '15:00') } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('unpaid');

    await advance(6);
    const after = await get(m._id);
    expect(after.status).toBe('active');
    expect(Date.parse(after.endDateTime)).toBe(Date.parse(at(D, '14:00')));
    const last = after.histories.at(-1);
    expect(last).toMatchObject({ action: 'cancel-updating', source: 'system', statusBeforeUpdate: 'unpaid' });
    expect(Date.parse(last.newEndDateTime)).toBe(Date.parse(at(D, '14:00')));
    expect(after.billingSummaries.at(-1)).toMatchObject({ kind: 'extension', status: 'expired' });
    // 14:00-15:00 was held only while unpaid: another booking may take it now (cleaning is 15 minutes).
    const other = await book('paid2', '14:15', '15:00');
    expect(other.status).toBe('unpaid');
  });

  it('a payment that arrives after the lapse is refunded even when the slot is still free: the booking stays cancelled', async () => {
    const m = await book('paid', '16:00', '17:00');
    await advance(6);
    const lapsed = await get(m._id);
    expect(lapsed).toMatchObject({ status: 'cancelled', cancelReason: LAPSED });

    const late = await settle(m.payment.paymentId);
    expect(late).toMatchObject({ outcome: 'refunded', status: 'refunded', meetingStatus: 'cancelled' });
    const still = await get(m._id);
    expect(still).toEqual(lapsed);
    expect(actions(still)).toEqual(['create', 'payment-timeout']);
    // It holds no slot: someone else may book it.
    const taker = await svc.request('POST', '/meetings', {
      token,
      body: { meetingRoomId: idOf(ids, 'paid'), startDateTime: at(D, '16:00'), endDateTime: at(D, '17:00') },
    });
    expect(taker.status, taker.text).toBe(201);
  });

  it("a back-office quote's page link is the member's: staff see none, the member (act_as) sees it and can pay there", async () => {
    const res = await svc.request('POST', '/meetings', {
      token,
      body: {
        meetingRoomId: idOf(ids, 'paid'),
        organizerId: idOf(ids, 'alice'),
        startDateTime: at(D, '20:00'),
        endDateTime: at(D, '21:00'),
      },
    });
    expect(res.status, res.text).toBe(201);
    const m = res.body.data;
    expect(m).toMatchObject({ status: 'unpaid', bookedVia: 'backoffice' });
    expect(m.payment.webPaymentUrl).toBeUndefined();
    expect(m.payment.webPaymentQr).toBeUndefined();
    expect((await get(m._id)).payment.webPaymentUrl).toBeUndefined();

    const alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
    const mine = await svc.request('GET', `/meetings/${m._id}`, { token: alice });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data.payment.webPaymentUrl).toMatch(new RegExp(`/pay/${m.payment.paymentId}\\.`));
    expect(mine.body.data.payment.webPaymentQr).toMatch(/^data:image\/png;base64,/);
    const page = await fetch(mine.body.data.payment.webPaymentUrl);
    expect(page.status).toBe(200);
  });

  it('a payment that arrives after the lapse is refunded when someone else took the slot', async () => {
    const m = await book('paid2', '18:00', '19:00');
    await advance(6);
    const taker = await book('paid2', '18:00', '19:00');
    const late = await settle(m.payment.paymentId);
    expect(late).toMatchObject({ outcome: 'refunded', status: 'refunded', meetingStatus: 'cancelled' });
    const still = await get(m._id);
    expect(still).toMatchObject({ status: 'cancelled', cancelReason: LAPSED });
    expect((await get(taker._id)).status).toBe('unpaid');
  });

  it('settle and fail notifications pass through the inbox: a replayed eventId changes nothing twice', async () => {
    const m = await book('paid', '07:00', '07:30');
    const fail = await svc.ops('POST', `/ops/v1/payments/${m.payment.paymentId}/fail`, { eventId: 'evt-fail-1' });
    expect(fail.status, fail.text).toBe(200);
    expect(fail.body.data).toMatchObject({ outcome: 'failed', replayed: false, failedAttempts: 1, meetingStatus: 'unpaid' });
    const failAgain = await svc.ops('POST', `/ops/v1/payments/${m.payment.paymentId}/fail`, { eventId: 'evt-fail-1' });
    expect(failAgain.body.data).toMatchObject({ outcome: 'failed', replayed: true, failedAttempts: 1 });

    const first = await svc.ops('POST', `/ops/v1/payments/${m.payment.paymentId}/settle`, { eventId: 'evt-settle-1' });
    expect(first.body.data).toMatchObject({ outcome: 'settled', replayed: false, meetingStatus: 'active' });
    const replay = await svc.ops('POST', `/ops/v1/payments/${m.payment.paymentId}/settle`, { eventId: 'evt-settle-1' });
    expect(replay.body.data).toMatchObject({ outcome: 'settled', replayed: true, meetingStatus: 'active' });
    expect(actions(await get(m._id))).toEqual(['create', 'pay']);

    // The same id for another payment is refused.
    const other = await book('paid', '21:30', '22:00');
    const clash = await svc.ops('POST', `/ops/v1/payments/${other.payment.paymentId}/settle`, { eventId: 'evt-settle-1' });
    expect(clash.status).toBe(409);
    expect((await get(other._id)).status).toBe('unpaid');
  });

  it('a notification that could not be applied when it came in is applied by the inbox job', async () => {
    const m = await book('paid2', '07:00', '07:30');
    const db = svc.services.storage.db;
    // As if the settle arrived while the booking could not be written, 20 s ago.
    await db
      .insertInto('payment_inbox')
      .values({
        id: 'a'.repeat(24),
        provider: 'sandbox',
        provider_event_id: 'evt-stuck',
        payment_id: m.payment.paymentId,
        kind: 'settle',
        via: 'provider notification',
        received_at: Date.now() - 20_000,
        processed_at: null,
        outcome: null,
        attempts: 1,
        last_error: 'database unreachable',
      })
      .execute();
    await svc.services.jobs.drain('payment-inbox');
    const after = await get(m._id);
    expect(after.status).toBe('active');
    expect(after.histories.at(-1)).toMatchObject({ action: 'pay', sourceDetail: 'provider notification' });
    const row = await db.selectFrom('payment_inbox').selectAll().where('provider_event_id', '=', 'evt-stuck').executeTakeFirstOrThrow();
    expect(row.outcome).toBe('settled');
    expect(row.processed_at).not.toBeNull();
  });
});
