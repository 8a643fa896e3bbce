/**
 * Paid bookings seeded without the booking API, for the payment page tests: a
 * booking row (seedBooking) made `unpaid`, and a payment opened for it through
 * PaymentService.open in one transaction, with the payment snapshot and billing
 * entry written into the row as the booking module does.
 */
import type { TestService } from './test-service.js';
import { seedBooking } from './bookings.js';
import type { PaymentSnapshot } from '../../src/modules/booking/payment-port.js';

export interface PaidBookingInput {
  projectId: string;
  assetKind?: 'room' | 'desk';
  assetId: string;
  organizerUserId: string;
  appId?: string | null;
  title?: string;
  /** ISO instants with an offset. */
  start: string;
  end: string;
  redirectUrl: string | null;
  /** Minor units (default 25000 = 250.00). */
  amountMinor?: number;
  currency?: string;
  /** Time to pay from the service's now (default 5 minutes). */
  payWithinMs?: number;
  discounts?: PaymentSnapshot['summary']['discounts'];
}

export interface PaidBooking {
  meetingId: string;
  payment: PaymentSnapshot;
  /** The page's path (`/pay/<token>`), from `payment.webPaymentUrl`. */
  pagePath: string;
  token: string;
  expiresAt: number;
}

export async function seedPaidBooking(svc: TestService, o: PaidBookingInput): Promise<PaidBooking> {
  const { meetingId } = await seedBooking(svc, {
    assetKind: o.assetKind ?? 'room',
    assetId: o.assetId,
    projectId: o.projectId,
    organizerUserId: o.organizerUserId,
    appId: o.appId ?? null,
    title: o.title ?? 'Paid booking',
    start: o.start,
    end: o.end,
    // Sealed as the booking module stores it: the app that made the booking reads it back.
    pin: svc.services.secretBox.seal('482913'),
  });
  const amountMinor = o.amountMinor ?? 25000;
  const discounts = o.discounts ?? [];
  const total = amountMinor / 100;
  const subtotal = total + discounts.reduce((sum, d) => sum + d.value, 0);
  const now = svc.services.clock.now();
  const expiresAt = now + (o.payWithinMs ?? 5 * 60_000);
  const db = svc.services.storage.db;
  const { snapshot } = await db.transaction().execute(async (trx) => {
    const opened = await svc.services.payments.open(trx, {
      meetingId,
      projectId: o.projectId,
      kind: 'checkout',
      currency: o.currency ?? 'THB',
      amountMinor,
      summary: { subtotal, total, discounts },
      expiresAt,
      redirectUrl: o.redirectUrl,
      promoCodeId: null,
      now,
    });
    await trx
      .updateTable('meetings')
      .set({
        status: 'unpaid',
        // The organizer snapshot the booking module keeps (seedBooking leaves it empty; the Meeting view needs a name).
        organizer: JSON.stringify({
          email: 'alice@example.com',
          name: 'Alice Example',
          displayName: 'Alice Example',
          checkInAt: null,
          checkOutAt: null,
        }),
        payment: JSON.stringify(opened.snapshot),
        billing_summaries: JSON.stringify([opened.billing]),
      })
      .where('id', '=', meetingId)
      .execute();
    return opened;
  });
  const url = new URL(snapshot.webPaymentUrl!);
  return { meetingId, payment: snapshot, pagePath: url.pathname, token: decodeURIComponent(url.pathname.split('/').pop()!), expiresAt };
}

/** Event kinds without their ROOM_/DESK_ prefix. */
export const eventKinds = (events: any[]): string[] => events.map((e) => e.type.replace(/^(ROOM|DESK)_/, ''));

/** The newest history entry of a Meeting. */
export const lastHistory = (m: any) => m.histories[m.histories.length - 1];

/**
 * Helpers of the paid-booking HTTP tests over a webhook site: the events a
 * receiver got about one asset, their kinds, and the sandbox payment calls.
 */
export function paymentTestKit(c: { svc: TestService; drain(): Promise<void> }, rx: { on(path: string): { body: any }[] }) {
  return {
    /** Every event delivered about the asset called `name` (that occurred at `since` or later), in occurredAt order. */
    async eventsOf(name: string, since = 0): Promise<any[]> {
      await c.drain();
      return rx
        .on('/events')
        .map((r) => r.body)
        .filter((b) => (b.data.roomName ?? b.data.deskName) === name && Date.parse(b.occurredAt) >= since)
        .sort((a, b) => Date.parse(a.occurredAt) - Date.parse(b.occurredAt));
    },
    settle: (paymentId: string) => c.svc.ops('POST', `/ops/v1/payments/${paymentId}/settle`),
    fail: (paymentId: string) => c.svc.ops('POST', `/ops/v1/payments/${paymentId}/fail`),
  };
}
