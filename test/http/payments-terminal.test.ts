/**
 * Terminal states stay terminal (api-spec.md "Meeting status": done, cancelled
 * and rejected are final). A paid booking whose payment window lapsed is
 * `cancelled`; money that arrives afterwards, through the sandbox settle route,
 * the hosted page or a provider's notification, never brings it back: the payment
 * is refunded (the provider's refund is called), the booking, its history and its
 * slot stay as the lapse left them, and no `*_BOOK` is outboxed or delivered.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SandboxProvider } from '../../src/modules/payments/provider.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { eventKinds, paymentTestKit, seedPaidBooking } from '../support/payments.js';
import { expectError, applySite, appToken, idOf } from '../support/fixtures.js';
import { ALL_BOOKING_EVENTS, TZ, startWebhookService, webhookSite, type WebhookCtx } from '../support/webhook-site.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { at, dayAhead } from '../support/catalogue.js';

const LAPSE_REASON = 'Payment window lapsed — auto-cancelled by system';
const form = { 'content-type': 'application/x-www-form-urlencoded' };

/** The event types the service put in its outbox for one booking (delivered or not). */
async function outboxed(svc: TestService, meetingId: string): Promise<string[]> {
  const rows = await svc.services.storage.db
    .selectFrom('events')
    .select(['type', 'occurred_at'])
    .where('meeting_id', '=', meetingId)
    .execute();
  return rows.sort((a, b) => Number(a.occurred_at) - Number(b.occurred_at)).map((r) => r.type);
}

describe('a lapsed paid booking stays cancelled whatever pays for it later', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  let day = 0;
  const newDay = () => day++;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    c = await startWebhookService({
      rooms: [
        { key: 't-route', name: 'Terminal Route', chargeRate: { perHour: 200, perDay: 0 } },
        { key: 't-page', name: 'Terminal Page', chargeRate: { perHour: 200, perDay: 0 } },
      ],
      hooks: [{ key: 'hk', url: rx.url('/events'), events: ALL_BOOKING_EVENTS }],
      clockAt: '05:00',
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await c?.close();
    await rx?.close();
  });

  const kit = () => paymentTestKit(c, rx);

  it('the sandbox settle after the lapse answers refunded, calls the refund, and changes nothing of the booking', async () => {
    const d = newDay();
    await c.clockTo('08:00', d);
    const m = await c.bookRoom('t-route', '10:00', '11:00', d);
    expect(m.status).toBe('unpaid');
    await c.advance(6);
    const lapsed = await c.get(m._id);
    expect(lapsed).toMatchObject({ status: 'cancelled', cancelReason: LAPSE_REASON });
    expect(lapsed.histories.map((h: any) => h.action)).toEqual(['create', 'payment-timeout']);

    const refund = vi.spyOn(SandboxProvider.prototype, 'refund');
    refund.mockClear();
    const res = await kit().settle(m.payment.paymentId);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({
      paymentId: m.payment.paymentId,
      outcome: 'refunded',
      status: 'refunded',
      meetingStatus: 'cancelled',
    });
    // 1 hour at 200 THB: 20000 satang go back to the payer, sent by the provider-actions job
    // (queued with the refund in one transaction), under a key that makes a retry harmless.
    await vi.waitFor(() => expect(refund).toHaveBeenCalledTimes(1), { timeout: 15_000, interval: 100 });
    expect(refund).toHaveBeenCalledWith(
      `sbx_${m.payment.paymentId}`,
      20000,
      expect.stringMatching(new RegExp(`^refund-${m.payment.paymentId}-[0-9a-f]{24}$`)),
    );

    // The booking is exactly as the lapse left it: status, reason, history, billing.
    expect(await c.get(m._id)).toEqual(lapsed);
    // No *_BOOK after the *_CANCEL, neither in the outbox nor at the receiver.
    expect(await outboxed(c.svc, m._id)).toEqual(['ROOM_CANCEL']);
    expect(eventKinds(await kit().eventsOf('Terminal Route'))).toEqual(['CANCEL']);
    // The slot stays free: someone else can take it.
    const other = await c.book({
      meetingRoomId: c.id('t-route'),
      title: 'taker',
      startDateTime: c.t('10:00', d),
      endDateTime: c.t('11:00', d),
    });
    expect(other.status, other.text).toBe(201);

    // A second settle of the refunded payment is refused; still nothing changes.
    expectError(await kit().settle(m.payment.paymentId), 409, 'KS012');
    expect(await c.get(m._id)).toEqual(lapsed);
    expect(await outboxed(c.svc, m._id)).toEqual(['ROOM_CANCEL']);
  });

  it('the hosted page: Pay after the lapse takes nothing; after a late settlement it says the money goes back', async () => {
    const d = newDay();
    await c.clockTo('08:00', d);
    const m = await c.bookRoom('t-page', '12:00', '13:00', d);
    const page = new URL(m.payment.webPaymentUrl).pathname;
    await c.advance(6);
    const lapsed = await c.get(m._id);
    expect(lapsed.status).toBe('cancelled');

    // Pay on the page after the lapse: back to the page, which says the time ran out; nothing changes.
    const pay = await fetch(c.svc.url + page, { method: 'POST', headers: form, body: '', redirect: 'manual' });
    expect(pay.status).toBe(303);
    expect(await c.get(m._id)).toEqual(lapsed);
    expect((await c.svc.request('GET', page)).text).toContain('Time to pay has run out');

    // The provider reports the money after all (late): refunded, the page tells the payer so.
    const late = await kit().settle(m.payment.paymentId);
    expect(late.body.data).toMatchObject({ outcome: 'refunded', meetingStatus: 'cancelled' });
    const shown = await c.svc.request('GET', page);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('data-state="refunded"');
    expect(shown.text).toContain('Payment received after the booking lapsed');
    expect(shown.text).toContain('will be refunded');
    expect(shown.text).not.toMatch(/<button/);
    const th = await c.svc.request('GET', `${page}?lang=th`);
    expect(th.text).toContain('data-state="refunded"');

    // Pay pressed again on the refunded page: nothing is taken, nothing changes.
    const again = await fetch(c.svc.url + page, { method: 'POST', headers: form, body: '', redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(await c.get(m._id)).toEqual(lapsed);
    expect(await outboxed(c.svc, m._id)).toEqual(['ROOM_CANCEL']);
    expect(eventKinds(await kit().eventsOf('Terminal Page'))).toEqual(['CANCEL']);
  });
});

describe('a settlement that arrives after the deadline, before the lapse job ran', () => {
  let svc: TestService;

  beforeAll(async () => {
    // No background workers: the lapse job never gets to the payment on its own.
    svc = await startTestService({ noWorkers: true });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('lapses the booking as of its deadline and refunds the payment; no *_BOOK', async () => {
    const ids = await applySite(svc, webhookSite({ rooms: [{ key: 'late', name: 'Late Room', chargeRate: { perHour: 200, perDay: 0 } }] }));
    const D = await dayAhead(svc, TZ, 2);
    const portal = (await appToken(svc)).access_token;
    const p = await seedPaidBooking(svc, {
      projectId: idOf(ids, 'tower'),
      assetId: idOf(ids, 'late'),
      organizerUserId: idOf(ids, 'alice'),
      appId: idOf(ids, 'portal'),
      start: at(D, '10:00'),
      end: at(D, '11:00'),
      redirectUrl: null,
      payWithinMs: 50,
    });
    await new Promise((r) => setTimeout(r, 120));
    const before = await svc.request('GET', `/meetings/${p.meetingId}`, { token: portal });
    expect(before.body.data.status).toBe('unpaid');

    const res = await svc.ops('POST', `/ops/v1/payments/${p.payment.paymentId}/settle`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ outcome: 'refunded', status: 'refunded', meetingStatus: 'cancelled' });
    const after = (await svc.request('GET', `/meetings/${p.meetingId}`, { token: portal })).body.data;
    expect(after).toMatchObject({ status: 'cancelled', cancelReason: LAPSE_REASON });
    const lapse = after.histories.at(-1);
    expect(lapse).toMatchObject({ action: 'payment-timeout', by: 'system' });
    expect(Date.parse(lapse.at)).toBe(p.expiresAt);
    expect(await outboxed(svc, p.meetingId)).toEqual(['ROOM_CANCEL']);
  });
});
