/**
 * Payments as jobs of the runner: lapsed deadlines, the second reminder of
 * back-office holds (both replayed in time order when the sandbox clock moves),
 * and the inbox's notifications that could not be applied when they came in.
 * Each handler reads what is due and hands it to the payment service.
 */
import type { JobHandler } from '../../platform/jobs/handler.js';
import { timedJob } from '../../platform/jobs/timed.js';
import { ServiceError } from '../../platform/errors.js';
import type { InboxRow, PaymentRecord } from './payment-repository.js';
import type { PaymentService } from './payment-service.js';

export const PAYMENTS_JOB = 'payments';
export const PAYMENT_NUDGES_JOB = 'payment-nudges';
export const PAYMENT_INBOX_JOB = 'payment-inbox';

/** The payments module's handlers, for the runner. */
export interface PaymentJobs {
  /** Lapsed deadlines. */
  lapse: JobHandler<PaymentRecord>;
  /** The second reminder of back-office holds. */
  nudge: JobHandler<PaymentRecord>;
  /** Notifications that could not be applied when they came in. */
  inbox: JobHandler<InboxRow>;
}

export function paymentJobs(payments: PaymentService): PaymentJobs {
  return { lapse: paymentLapseJob(payments), nudge: paymentNudgeJob(payments), inbox: paymentInboxJob(payments) };
}

/** The runner's handler for lapsed payments; replayed in time order when the sandbox clock moves. */
export function paymentLapseJob(payments: PaymentService, intervalMs = 1000): JobHandler<PaymentRecord> {
  return timedJob<PaymentRecord>({
    name: PAYMENTS_JOB,
    intervalMs,
    id: (p) => p.id,
    dueAt: (p) => p.expires_at,
    due: (now, limit) => payments.lapsed(now, limit),
    backlog: (now) => payments.dueBacklog('expires_at', now),
    run: (p) => payments.lapse(p),
  });
}

/** The runner's handler for due reminders of back-office holds; replayed in time order. */
export function paymentNudgeJob(payments: PaymentService, intervalMs = 1000): JobHandler<PaymentRecord> {
  return timedJob<PaymentRecord>({
    name: PAYMENT_NUDGES_JOB,
    intervalMs,
    id: (p) => p.id,
    dueAt: (p) => p.nudge_at!,
    due: (now, limit) => payments.nudgesDue(now, limit),
    backlog: (now) => payments.dueBacklog('nudge_at', now),
    run: (p) => payments.nudge(p),
  });
}

/** The runner's handler for notifications that could not be applied when they came in. */
export function paymentInboxJob(payments: PaymentService, intervalMs = 5000): JobHandler<InboxRow> {
  return {
    name: PAYMENT_INBOX_JOB,
    intervalMs,
    concurrency: 1,
    id: (n) => n.id,
    dueAt: (n) => n.received_at,
    // Left to the request that received it for a few seconds.
    due: ({ realNow, limit }) => payments.unprocessed(realNow - 10_000, limit),
    dueClock: 'real',
    backlog: ({ realNow }) => payments.inboxBacklog(realNow - 10_000),
    page: { size: 50 },
    run: async (n) => {
      await payments.apply(n).catch((err) => {
        if (err instanceof ServiceError && err.status < 500) return;
        throw err;
      });
    },
  };
}
