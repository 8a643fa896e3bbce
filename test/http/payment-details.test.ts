/**
 * GET /ops/v1/payments/{paymentId}: the console's payment view — the payment
 * with its provider and reference, the provider events received for it (oldest
 * first, verified as a boolean) and its voids/refunds (amounts in major units).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { TZ, webhookSite } from '../support/webhook-site.js';
import { at, dayAhead } from '../support/catalogue.js';
import { seedPaidBooking } from '../support/payments.js';
import { seedProviderAction, seedProviderEvent } from '../support/provider-log.js';
import type { ConsolePaymentDetail } from '../../src/contract/ops-console.js';

describe('GET /ops/v1/payments/{paymentId}', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, webhookSite({ rooms: [{ key: 'lotus', name: 'Lotus Room' }] }));
    D = await dayAhead(svc, TZ, 2);
  });
  afterAll(async () => {
    await svc?.close();
  });

  const seed = () =>
    seedPaidBooking(svc, {
      projectId: idOf(ids, 'tower'),
      assetId: idOf(ids, 'lotus'),
      organizerUserId: idOf(ids, 'alice'),
      start: at(D, '10:00'),
      end: at(D, '11:00'),
      redirectUrl: null,
      amountMinor: 125050,
    });

  it('shows the payment, its provider events oldest first and its refunds in major units', async () => {
    const p = await seed();
    const paymentId = p.payment.paymentId;
    await svc.services.storage.db
      .updateTable('payments')
      .set({ provider: 'stripe', provider_ref: 'pi_3Test123' })
      .where('id', '=', paymentId)
      .execute();
    const t0 = Date.UTC(2026, 10, 20, 3, 0, 0);
    // Inserted newest first: the answer is in time order all the same.
    const late = await seedProviderEvent(svc, paymentId, {
      eventId: 'evt_2',
      type: 'payment_intent.succeeded',
      verified: true,
      outcome: 'settled',
      receivedAt: t0 + 60_000,
    });
    const early = await seedProviderEvent(svc, paymentId, {
      eventId: 'evt_1',
      type: 'payment_intent.payment_failed',
      verified: false,
      receivedAt: t0,
    });
    const refund = await seedProviderAction(svc, paymentId, {
      action: 'refund',
      amountMinor: 125050,
      status: 'pending',
      reason: 'late settlement',
      providerRef: 're_1',
      createdAt: t0 + 120_000,
      updatedAt: t0 + 180_000,
    });
    const voided = await seedProviderAction(svc, paymentId, {
      action: 'void',
      amountMinor: 125050,
      status: 'failed',
      lastError: 'payment_intent_unexpected_state',
      createdAt: t0 + 90_000,
    });

    const res = await svc.ops<{ data: ConsolePaymentDetail }>('GET', `/ops/v1/payments/${paymentId}`);
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d).toMatchObject({
      _id: paymentId,
      meetingId: p.meetingId,
      status: 'pending',
      amount: 1250.5,
      currency: 'THB',
      kind: 'checkout',
      provider: 'stripe',
      providerRef: 'pi_3Test123',
      failedAttempts: 0,
      settledAt: null,
      expiresAt: new Date(p.expiresAt).toISOString(),
    });
    expect(d.invoiceNo).toEqual(expect.any(String));
    expect(d.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(d.events).toEqual([
      {
        _id: early,
        eventId: 'evt_1',
        type: 'payment_intent.payment_failed',
        verified: false,
        outcome: null,
        receivedAt: new Date(t0).toISOString(),
      },
      {
        _id: late,
        eventId: 'evt_2',
        type: 'payment_intent.succeeded',
        verified: true,
        outcome: 'settled',
        receivedAt: new Date(t0 + 60_000).toISOString(),
      },
    ]);
    expect(d.refunds).toEqual([
      {
        _id: voided,
        action: 'void',
        amount: 1250.5,
        currency: 'THB',
        status: 'failed',
        providerRef: null,
        reason: null,
        lastError: 'payment_intent_unexpected_state',
        createdAt: new Date(t0 + 90_000).toISOString(),
        updatedAt: new Date(t0 + 90_000).toISOString(),
      },
      {
        _id: refund,
        action: 'refund',
        amount: 1250.5,
        currency: 'THB',
        status: 'pending',
        providerRef: 're_1',
        reason: 'late settlement',
        lastError: null,
        createdAt: new Date(t0 + 120_000).toISOString(),
        updatedAt: new Date(t0 + 180_000).toISOString(),
      },
    ]);
    // The booking's newest payment reads the same through the booking.
    const byMeeting = await svc.ops<{ data: ConsolePaymentDetail }>('GET', `/ops/v1/meetings/${p.meetingId}/payment`);
    expect(byMeeting.status).toBe(200);
    expect(byMeeting.body.data).toEqual(d);
    // Nothing of a provider account's secrets.
    expect(res.text).not.toMatch(/secret|whsec_|sk_(test|live)_/i);
  });

  it('a payment with no provider events or refunds has empty lists', async () => {
    const p = await seed();
    const res = await svc.ops<{ data: ConsolePaymentDetail }>('GET', `/ops/v1/payments/${p.payment.paymentId}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ provider: 'sandbox', events: [], refunds: [] });
  });

  it('answers 404 for an unknown payment and 401 without the ops token', async () => {
    const unknown = await svc.ops('GET', `/ops/v1/payments/${'0'.repeat(24)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, code: 'KS005' });
    const noBooking = await svc.ops('GET', `/ops/v1/meetings/${'0'.repeat(24)}/payment`);
    expect(noBooking.status).toBe(404);
    const p = await seed();
    const anon = await svc.request('GET', `/ops/v1/payments/${p.payment.paymentId}`, { token: null });
    expect(anon.status).toBe(401);
    const anonByMeeting = await svc.request('GET', `/ops/v1/meetings/${p.meetingId}/payment`, { token: null });
    expect(anonByMeeting.status).toBe(401);
  });

  it('is in the OpenAPI document', async () => {
    const doc = await svc.request('GET', '/openapi.json', { token: null });
    expect(doc.body.paths['/ops/v1/payments/{paymentId}']?.get).toBeDefined();
  });
});
