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
import type { ProviderSync } from './provider-sync.js';
import type { ProviderActionRow } from './provider-records-repository.js';

export const PAYMENTS_JOB = 'payments';
export const PAYMENT_NUDGES_JOB = 'payment-nudges';
export const PAYMENT_INBOX_JOB = 'payment-inbox';
export const PAYMENT_RECONCILE_JOB = 'payment-reconcile';
export const PAYMENT_PROVIDER_ACTIONS_JOB = 'payment-provider-actions';

/** The payments module's handlers, for the runner. */
export interface PaymentJobs {
  /** Lapsed deadlines. */
  lapse: JobHandler<PaymentRecord>;
  /** The second reminder of back-office holds. */
  nudge: JobHandler<PaymentRecord>;
  /** Notifications that could not be applied when they came in. */
  inbox: JobHandler<InboxRow>;
  /** Pending payments of real providers asked about (a lost event is not a lost payment). */
  reconcile: JobHandler<PaymentRecord>;
  /** Voids and refunds sent to providers, and pending refunds re-read. */
  providerActions: JobHandler<ProviderActionRow>;
}

export function paymentJobs(payments: PaymentService, sync: ProviderSync): PaymentJobs {
  return {
    lapse: paymentLapseJob(payments),
    nudge: paymentNudgeJob(payments),
    inbox: paymentInboxJob(payments),
    reconcile: paymentReconcileJob(sync),
    providerActions: providerActionsJob(sync),
  };
}

/** The runner's handler asking providers about payments they were not heard about. */
export function paymentReconcileJob(sync: ProviderSync, intervalMs = 10_000): JobHandler<PaymentRecord> {
  return {
    name: PAYMENT_RECONCILE_JOB,
    intervalMs,
    concurrency: 2,
    id: (p) => p.id,
    dueAt: (p) => p.created_at,
    due: ({ now, limit }) => sync.reconcileDue(now, limit),
    page: { size: 50, max: 1 },
    run: (p) => sync.reconcile(p),
  };
}

/** The runner's handler for voids and refunds owed to providers (real time; retried with backoff). */
export function providerActionsJob(sync: ProviderSync, intervalMs = 1000): JobHandler<ProviderActionRow> {
  return {
    name: PAYMENT_PROVIDER_ACTIONS_JOB,
    intervalMs,
    concurrency: 2,
    id: (a) => a.id,
    dueAt: (a) => a.next_attempt_at!,
    due: ({ realNow, limit }) => sync.dueActions(realNow, limit),
    dueClock: 'real',
    backlog: ({ realNow }) => sync.actionBacklog(realNow),
    page: { size: 50 },
    claim: (a) => sync.claimAction(a),
    run: (a) => sync.runAction(a),
  };
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
