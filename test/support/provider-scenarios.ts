/**
 * The scenarios every real payment provider passes, driven over HTTP like a third
 * party: a paid booking's payment created at the provider's stand-in, settled by the
 * provider's signed event, a forged, repeated or foreign event, a failed attempt, a
 * missed event reconciled before the lapse and by the job, the provider down at
 * create, cancel voiding, a late settlement refunded (pending, then done), and no
 * secret in the logs. A webhook receiver sees exactly one `*_BOOK` per paid booking
 * whatever the provider sends. Each provider's test file adds the checks of its own
 * wire format (test/http/payments-stripe.test.ts, payments-opn.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { WebhookReceiver } from './webhook-receiver.js';
import { eventKinds, paymentTestKit } from './payments.js';
import { expectError } from './fixtures.js';
import { ALL_BOOKING_EVENTS, startWebhookService, type WebhookCtx } from './webhook-site.js';
import type { HttpResult } from './test-service.js';
import { PAYMENT_PROVIDER_ACTIONS_JOB } from '../../src/modules/payments/index.js';

/** A signed (or forged) event as the provider would post it. */
export interface PostedEvent {
  body: string;
  headers: Record<string, string>;
}

/** What the scenarios need of a provider's stand-in. */
export interface ProviderDriver {
  provider: 'stripe' | 'opn';
  secretKey: string;
  webhookSecret: string;
  start(): Promise<{ url: string }>;
  close(): Promise<void>;
  /** The payer pays at the provider (no event is sent). */
  pay(ref: string): void;
  /** An attempt fails at the provider (no event is sent). */
  failAttempt(ref: string): void;
  /** The provider's signed event saying the object was paid (after `pay`). */
  paidEvent(ref: string): PostedEvent;
  /** The provider's signed event saying an attempt failed (after `failAttempt`). */
  failedEvent(ref: string): PostedEvent;
  /** The paid event signed with another secret. */
  forgedEvent(ref: string): PostedEvent;
  /** A signed paid event about an object of the same account that the service never made. */
  foreignEvent(): Promise<PostedEvent>;
  /** The stand-in answers every call as a provider that is down. */
  setDown(on: boolean): void;
  /** Refunds the stand-in creates start pending (a PromptPay refund waiting for bank details). */
  refundsPending(on: boolean): void;
  /** Finishes pending refunds (as the payer's bank eventually does). */
  completeRefunds(): void;
  /** The object was cancelled (voided/expired) at the provider. */
  isCancelled(ref: string): boolean;
  /** Refunds made for the object at the provider, with their amounts and states. */
  refundsOf(ref: string): { amount: number; status: 'pending' | 'succeeded' | 'failed' }[];
}

export interface ProviderScenarioCtx {
  c: WebhookCtx;
  rx: WebhookReceiver;
  driver: ProviderDriver;
  providerId: string;
  logs: string[];
  /** Books room `key` (paid), asserting 201 unpaid; returns the Meeting and its provider reference. */
  bookPaid(key: string, from: string, to: string, plusDays?: number): Promise<{ m: any; ref: string }>;
  post(event: PostedEvent, providerId?: string): Promise<HttpResult>;
  /** Waits until the provider-actions job has nothing due. */
  drainActions(): Promise<void>;
}

const ROOMS = ['p-a', 'p-b', 'p-c', 'p-d', 'p-e', 'p-f', 'p-g', 'p-h', 'p-i', 'p-j', 'p-k', 'p-l'];
const LAPSE_REASON = 'Payment window lapsed — auto-cancelled by system';

/** Starts the stand-in and a service whose project `tower` takes money through it. */
export async function startProviderScenario(driver: ProviderDriver, env: Record<string, string> = {}): Promise<ProviderScenarioCtx> {
  const { url } = await driver.start();
  const rx = await WebhookReceiver.start();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const c = await startWebhookService({
    rooms: ROOMS.map((key) => ({ key, name: `Room ${key}`, chargeRate: { perHour: 200, perDay: 0 } })),
    hooks: [{ key: 'hk', url: rx.url('/events'), events: ALL_BOOKING_EVENTS }],
    paymentProviders: [
      {
        key: 'tower-pay',
        project: 'tower',
        provider: driver.provider,
        secretKey: driver.secretKey,
        webhookSecret: driver.webhookSecret,
        apiBaseUrl: url,
      },
    ],
    clockAt: '05:00',
    env: { PAYMENT_PROVIDER_TIMEOUT_MS: '3000', ...env },
    logger: pino({ level: 'debug' }, sink),
  });
  const providerId = c.id('tower-pay');
  const ctx: ProviderScenarioCtx = {
    c,
    rx,
    driver,
    providerId,
    logs,
    bookPaid: async (key, from, to, plusDays = 0) => {
      const m = await c.bookRoom(key, from, to, plusDays);
      expect(m.status).toBe('unpaid');
      const row = await c.svc.services.payments.byId(m.payment.paymentId);
      expect(row?.provider).toBe(driver.provider);
      expect(row?.provider_ref).toBeTruthy();
      return { m, ref: row!.provider_ref! };
    },
    post: (event, id = providerId) =>
      c.svc.request('POST', `/payments/webhooks/${id}`, { raw: event.body, headers: event.headers, token: null }),
    drainActions: () => c.svc.services.jobs.drain(PAYMENT_PROVIDER_ACTIONS_JOB),
  };
  return ctx;
}

/** The shared scenarios, run once per provider. */
export function describeProviderScenarios(name: string, makeDriver: () => ProviderDriver): void {
  describe(`${name}: paid bookings through the provider's stand-in`, () => {
    let s: ProviderScenarioCtx;
    let day = 0;
    let room = 0;
    const nextRoom = () => ROOMS[room++ % ROOMS.length]!;
    const newDay = () => day++;
    const kit = () => paymentTestKit(s.c, s.rx);

    beforeAll(async () => {
      s = await startProviderScenario(makeDriver());
    });
    afterAll(async () => {
      vi.restoreAllMocks();
      await s?.c.close();
      await s?.rx.close();
      await s?.driver.close();
    });

    const payment = async (paymentId: string) => (await s.c.svc.services.payments.byId(paymentId))!;
    /** Provider references of every payment the service stored. */
    const providerRefs = async () =>
      (await s.c.svc.services.storage.db.selectFrom('payments').select('provider_ref').execute()).map((r) => r.provider_ref);

    it("settles on the provider's signed event: active, `pay` history, one *_BOOK however often the event comes", async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const key = nextRoom();
      const { m, ref } = await s.bookPaid(key, '10:00', '11:00', d);
      s.driver.pay(ref);
      const event = s.driver.paidEvent(ref);
      const first = await s.post(event);
      expect(first.status, first.text).toBe(200);
      expect(first.body.data).toMatchObject({ received: true, duplicate: false, outcome: 'settled' });
      const paid = await s.c.get(m._id);
      expect(paid.status).toBe('active');
      expect(paid.histories.map((h: any) => h.action)).toEqual(['create', 'pay']);
      // The provider retries the same event; reconciliation asks too: nothing happens twice.
      const again = await s.post(event);
      expect(again.status, again.text).toBe(200);
      expect(again.body.data).toMatchObject({ duplicate: true });
      await s.c.svc.services.paymentSync.reconcile(await payment(m.payment.paymentId));
      expect((await s.c.get(m._id)).histories.map((h: any) => h.action)).toEqual(['create', 'pay']);
      expect(eventKinds(await kit().eventsOf(`Room ${key}`))).toEqual(['BOOK']);
    });

    it('an event stored but never applied (the service stopped in between) is applied when the provider sends it again', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const { m, ref } = await s.bookPaid(nextRoom(), '10:00', '11:00', d);
      s.driver.pay(ref);
      const event = s.driver.paidEvent(ref);
      const eventId = (JSON.parse(event.body) as { id: string }).id;
      await s.c.svc.services.storage.db
        .insertInto('payment_provider_events')
        .values({
          id: 'ee0000000000000000000001',
          provider_id: s.providerId,
          event_id: eventId,
          type: 'stored before a crash',
          verified: 1,
          payment_id: m.payment.paymentId,
          provider_ref: ref,
          outcome: null,
          received_at: Date.now(),
        })
        .execute();
      const res = await s.post(event);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ duplicate: false, outcome: 'settled' });
      expect((await s.c.get(m._id)).status).toBe('active');
      expect((await s.post(event)).body.data).toMatchObject({ duplicate: true });
    });

    it('refuses a forged or unsigned event with 400 and changes nothing', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const { m, ref } = await s.bookPaid(nextRoom(), '10:00', '11:00', d);
      s.driver.pay(ref);
      const forged = await s.post(s.driver.forgedEvent(ref));
      expectError(forged, 400, 'KS001');
      const real = s.driver.paidEvent(ref);
      const unsigned = await s.post({ body: real.body, headers: { 'content-type': 'application/json' } });
      expectError(unsigned, 400, 'KS001');
      const tampered = await s.post({ body: real.body.replace(ref, `${ref}x`), headers: real.headers });
      expectError(tampered, 400, 'KS001');
      expect((await s.c.get(m._id)).status).toBe('unpaid');
      expect((await payment(m.payment.paymentId)).status).toBe('pending');
      // Not recorded either: the console shows only what the provider really sent.
      const rows = await s.c.svc.services.storage.db
        .selectFrom('payment_provider_events')
        .selectAll()
        .where('provider_ref', '=', ref)
        .execute();
      expect(rows).toEqual([]);
    });

    it('acknowledges an event about an object it never made (2xx) and changes nothing; an unknown provider id is 404', async () => {
      const res = await s.post(await s.driver.foreignEvent());
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ received: true, outcome: 'unknown-object' });
      const unknown = await s.post(await s.driver.foreignEvent(), '0123456789abcdef01234567');
      expectError(unknown, 404, 'KS005');
    });

    it('counts a failed attempt; the booking stays unpaid and can still be paid', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const { m, ref } = await s.bookPaid(nextRoom(), '10:00', '11:00', d);
      s.driver.failAttempt(ref);
      const res = await s.post(s.driver.failedEvent(ref));
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ outcome: 'failed' });
      expect((await payment(m.payment.paymentId)).failed_attempts).toBe(1);
      expect((await s.c.get(m._id)).status).toBe('unpaid');
      s.driver.pay(ref);
      expect((await s.post(s.driver.paidEvent(ref))).body.data).toMatchObject({ outcome: 'settled' });
    });

    it('events out of order are harmless: a failed attempt reported after the payment changes nothing', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const key = nextRoom();
      const { m, ref } = await s.bookPaid(key, '10:00', '11:00', d);
      s.driver.failAttempt(ref);
      const failed = s.driver.failedEvent(ref);
      s.driver.pay(ref);
      expect((await s.post(s.driver.paidEvent(ref))).body.data).toMatchObject({ outcome: 'settled' });
      const late = await s.post(failed);
      expect(late.status, late.text).toBe(200);
      expect(late.body.data.outcome).not.toBe('failed');
      const after = await s.c.get(m._id);
      expect(after.status).toBe('active');
      expect(after.histories.map((h: any) => h.action)).toEqual(['create', 'pay']);
      expect(eventKinds(await kit().eventsOf(`Room ${key}`))).toEqual(['BOOK']);
    });

    it('a missed event is not a lost payment: the lapse asks the provider first and settles instead', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const key = nextRoom();
      const { m, ref } = await s.bookPaid(key, '10:00', '11:00', d);
      s.driver.pay(ref); // paid at the provider, and its event never arrives
      await s.c.advance(6);
      const after = await s.c.get(m._id);
      expect(after.status).toBe('active');
      expect(after.histories.map((h: any) => h.action)).toEqual(['create', 'pay']);
      expect(eventKinds(await kit().eventsOf(`Room ${key}`))).toEqual(['BOOK']);
    });

    it('a late settlement (after the lapse) is refunded through the provider; a pending refund shows as pending', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const key = nextRoom();
      const { m, ref } = await s.bookPaid(key, '10:00', '11:00', d);
      await s.c.advance(6); // the provider says pending: the booking lapses and the provider's object is cancelled
      expect(await s.c.get(m._id)).toMatchObject({ status: 'cancelled', cancelReason: LAPSE_REASON });
      await s.drainActions();
      expect(s.driver.isCancelled(ref)).toBe(true);
      // The money arrives anyway (paid in the instant before the cancel reached the provider).
      s.driver.refundsPending(true);
      onTestFinished(() => s.driver.refundsPending(false));
      s.driver.pay(ref);
      const res = await s.post(s.driver.paidEvent(ref));
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ outcome: 'refunded' });
      await s.drainActions();
      expect(s.driver.refundsOf(ref)).toEqual([{ amount: 20000, status: 'pending' }]);
      const detail = await s.c.svc.ops('GET', `/ops/v1/payments/${m.payment.paymentId}`);
      expect(detail.status, detail.text).toBe(200);
      // The void sent at the lapse, then the refund of the money that came anyway, waiting on the payer's bank.
      expect(detail.body.data.refunds).toEqual([
        expect.objectContaining({ action: 'void', status: 'succeeded', amount: 200 }),
        expect.objectContaining({ action: 'refund', status: 'pending', amount: 200 }),
      ]);
      expect(detail.body.data).toMatchObject({ provider: s.driver.provider, providerRef: ref, status: 'refunded' });
      expect(detail.body.data.events).toEqual([expect.objectContaining({ verified: true, outcome: 'refunded' })]);
      expect((await s.c.get(m._id)).status).toBe('cancelled');
      expect(eventKinds(await kit().eventsOf(`Room ${key}`))).toEqual(['CANCEL']);
    });

    it('cancelling an unpaid booking cancels the provider object; a paid one cancelled before its start is refunded', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const unpaid = await s.bookPaid(nextRoom(), '10:00', '11:00', d);
      expect((await s.c.action(unpaid.m._id, 'cancel')).status).toBe(202);
      await s.drainActions();
      expect(s.driver.isCancelled(unpaid.ref)).toBe(true);
      const paid = await s.bookPaid(nextRoom(), '12:00', '13:00', d);
      s.driver.pay(paid.ref);
      expect((await s.post(s.driver.paidEvent(paid.ref))).body.data).toMatchObject({ outcome: 'settled' });
      expect((await s.c.action(paid.m._id, 'cancel')).status).toBe(202);
      await s.drainActions();
      expect(s.driver.refundsOf(paid.ref)).toEqual([{ amount: 20000, status: 'succeeded' }]);
    });

    it('an extension that costs more opens its own provider payment; its event restores the status with the new end', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const key = nextRoom();
      const { m, ref } = await s.bookPaid(key, '10:00', '11:00', d);
      s.driver.pay(ref);
      expect((await s.post(s.driver.paidEvent(ref))).body.data).toMatchObject({ outcome: 'settled' });
      const res = await s.c.patch(m._id, { endDateTime: s.c.t('12:00', d) });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'unpaid', payment: { amount: 200 } });
      const extension = await payment(res.body.data.payment.paymentId);
      expect(extension).toMatchObject({ kind: 'extension', provider: s.driver.provider, amount_minor: 20000 });
      expect(extension.provider_ref).toBeTruthy();
      expect(extension.provider_ref).not.toBe(ref);
      s.driver.pay(extension.provider_ref!);
      expect((await s.post(s.driver.paidEvent(extension.provider_ref!))).body.data).toMatchObject({ outcome: 'settled' });
      const after = await s.c.get(m._id);
      expect(after.status).toBe('active');
      expect(Date.parse(after.endDateTime)).toBe(Date.parse(s.c.t('12:00', d)));
    });

    it("the sandbox settle cannot settle a real provider's payment (409 KS012): only the provider's word can", async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const { m } = await s.bookPaid(nextRoom(), '10:00', '11:00', d);
      expectError(await kit().settle(m.payment.paymentId), 409, 'KS012');
      expect((await s.c.get(m._id)).status).toBe('unpaid');
    });

    it('a booking refused after its provider object was made (the slot was taken) leaves nothing payable: the object is cancelled', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const key = nextRoom();
      await s.bookPaid(key, '10:00', '11:00', d);
      const refsBefore = await providerRefs();
      const res = await s.c.book({
        meetingRoomId: s.c.id(key),
        title: 'late',
        startDateTime: s.c.t('10:30', d),
        endDateTime: s.c.t('11:30', d),
      });
      expect(res.status, res.text).toBe(409);
      await s.drainActions();
      const actions = await s.c.svc.services.storage.db
        .selectFrom('payment_provider_actions')
        .selectAll()
        .where('reason', '=', 'The booking it was made for was not made')
        .execute();
      const orphan = actions.find((a) => !refsBefore.includes(a.provider_ref!));
      expect(orphan).toMatchObject({ action: 'void', status: 'succeeded' });
      expect(s.driver.isCancelled(orphan!.provider_ref!)).toBe(true);
    });

    it('the provider down at create: 503 KS234 with Retry-After, and no booking is left (the slot books once it is back)', async () => {
      const d = newDay();
      await s.c.clockTo('08:00', d);
      const key = nextRoom();
      s.driver.setDown(true);
      try {
        const res = await s.c.book({
          meetingRoomId: s.c.id(key),
          title: 'down',
          startDateTime: s.c.t('10:00', d),
          endDateTime: s.c.t('11:00', d),
        });
        expectError(res, 503, 'KS234');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      } finally {
        s.driver.setDown(false);
      }
      const rows = await s.c.svc.services.storage.db.selectFrom('meetings').select('id').where('title', '=', 'down').execute();
      expect(rows).toEqual([]);
      const { m } = await s.bookPaid(key, '10:00', '11:00', d);
      expect(m.status).toBe('unpaid');
    });

    it('no secret key, webhook secret or signature in the logs', async () => {
      const text = s.logs.join('');
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toContain(s.driver.secretKey);
      expect(text).not.toContain(s.driver.webhookSecret);
    });
  });

  describe(`${name}: the reconciliation job`, () => {
    let s: ProviderScenarioCtx;
    beforeAll(async () => {
      s = await startProviderScenario(makeDriver(), { PAYMENT_RECONCILE_AFTER_SECONDS: '1' });
    });
    afterAll(async () => {
      await s?.c.close();
      await s?.rx.close();
      await s?.driver.close();
    });

    it('settles a payment paid at the provider whose event never came, well before its deadline', async () => {
      await s.c.clockTo('08:00');
      const { m, ref } = await s.bookPaid('p-a', '10:00', '11:00');
      s.driver.pay(ref);
      await vi.waitFor(async () => expect((await s.c.get(m._id)).status).toBe('active'), { timeout: 30_000, interval: 250 });
      const row = await s.c.svc.services.payments.byId(m.payment.paymentId);
      expect(row?.status).toBe('settled');
    });
  });
}
