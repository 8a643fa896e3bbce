/**
 * Sandbox payments (development and uat only; 404 in production):
 * POST /ops/v1/payments/{paymentId}/settle and /fail act exactly as paying, or
 * failing to pay, on the web payment page.
 */
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { PaymentIdParams, PaymentState } from '../../contract/ops.js';
import { errors } from '../../platform/errors.js';
import type { PaymentRow } from './payment-repository.js';

export async function opsPaymentRoutes(app: App, services: Services): Promise<void> {
  const payments = services.payments;
  const requireSandbox = async () => {
    if (!services.sandboxClock.enabled) throw errors.notFound('Sandbox payments exist only in development and uat');
  };
  const state = async (p: PaymentRow, outcome?: string): Promise<PaymentState> => {
    const booking = await services.bookings.read(p.meeting_id);
    return {
      paymentId: p.id, meetingId: p.meeting_id, invoiceNo: p.invoice_no, status: p.status, failedAttempts: p.failed_attempts,
      meetingStatus: booking?.meeting.status ?? 'unknown', ...(outcome ? { outcome } : {}),
    };
  };
  const responses = { 200: Envelope(PaymentState), 404: ErrorEnvelope, 409: ErrorEnvelope };

  app.post('/ops/v1/payments/:paymentId/settle', {
    onRequest: requireSandbox,
    schema: { tags: ['ops'], summary: 'Sandbox: settle a payment as the payment page would', security: [{ opsToken: [] }], params: PaymentIdParams, response: responses },
  }, async (req) => {
    const outcome = await payments.settle(req.params.paymentId, 'sandbox settle');
    return ok(await state((await payments.byId(req.params.paymentId))!, outcome));
  });

  app.post('/ops/v1/payments/:paymentId/fail', {
    onRequest: requireSandbox,
    schema: { tags: ['ops'], summary: 'Sandbox: a failed payment attempt (the booking stays unpaid)', security: [{ opsToken: [] }], params: PaymentIdParams, response: responses },
  }, async (req) => ok(await state(await payments.fail(req.params.paymentId))));
}
