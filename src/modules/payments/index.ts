/**
 * The payments module's front door: the payment service (the booking module's
 * `PaymentDesk`, and the settle/lapse/reminder actors), its jobs, and the
 * payment routes (the public payment page; the ops list and sandbox settle/fail).
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/schema.js';
import { guarded } from '../../platform/http/module.js';
import type { App } from '../../platform/http/types.js';
import type { BookingChanges } from '../booking/index.js';
import { paymentJobs, type PaymentJobs } from './jobs.js';
import { PaymentRepository } from './payment-repository.js';
import { PaymentService } from './payment-service.js';
import { PaymentDetails } from './payment-details.js';
import { ProviderLogRepository } from './provider-log-repository.js';
import { SandboxProvider, type PaymentProvider } from './provider.js';
import { opsPaymentRoutes, paymentPageRoutes, type PaymentsRouteDeps } from './routes.js';

export { PaymentService, paymentDue, PAYMENT_LAPSED_REASON, HOLD_LAPSED_REASON, EXTENSION_LAPSED_REASON } from './payment-service.js';
export type { NotifyResult, PaymentNotification, PaymentPageView, SettleOutcome } from './payment-service.js';
export type { PaymentRecord, PaymentSummary, PromoCodeRecord, InboxRow } from './payment-repository.js';
export { PaymentDetails } from './payment-details.js';
export { SandboxProvider } from './provider.js';
export type { PaymentProvider } from './provider.js';
export { PAYMENTS_JOB, PAYMENT_NUDGES_JOB, PAYMENT_INBOX_JOB } from './jobs.js';
export type { PaymentJobs } from './jobs.js';
export type { PaymentsRouteDeps } from './routes.js';

export interface PaymentsDeps {
  db: Kysely<Database>;
  /** The booking writer: settlements and lapses are booking changes. */
  bookings: BookingChanges;
  secretBox: SecretBox;
  /** Service time (sandbox offset included): deadlines. */
  clock: Clock;
  /** Real time: when notifications arrive. */
  realClock: Clock;
  /** Base of links in payments (read at call time). */
  publicBaseUrl: () => string;
  /** The payment provider (default: the sandbox provider). */
  provider?: PaymentProvider;
}

export interface PaymentsModule {
  payments: PaymentService;
  /** The console's payment view (read only). */
  details: PaymentDetails;
  /** The runner's handlers: lapsed deadlines, hold reminders, the notification inbox. */
  jobs: PaymentJobs;
}

export function createPayments(deps: PaymentsDeps): PaymentsModule {
  const repo = new PaymentRepository(deps.db);
  const payments = new PaymentService({
    repo,
    provider: deps.provider ?? new SandboxProvider(),
    bookings: deps.bookings,
    secretBox: deps.secretBox,
    clock: deps.clock,
    realClock: deps.realClock,
    publicBaseUrl: deps.publicBaseUrl,
  });
  const details = new PaymentDetails({ repo, log: new ProviderLogRepository(deps.db) });
  return { payments, details, jobs: paymentJobs(payments) };
}

/** The payment page (public: its unguessable token is the capability) and the ops payment routes (ops guard). */
export async function register(app: App, deps: PaymentsRouteDeps): Promise<void> {
  await paymentPageRoutes(app, deps);
  await guarded(app, deps.guards.ops, async (ops) => opsPaymentRoutes(ops, deps));
}
