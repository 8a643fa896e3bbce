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
import type { PaymentProvider, ProviderFactory } from './provider.js';
import { ProviderRecordsRepository } from './provider-records-repository.js';
import { ProviderRegistry } from './provider-registry.js';
import { ProviderSync } from './provider-sync.js';
import { opnProvider } from './providers/opn.js';
import { stripeProvider } from './providers/stripe.js';
import { opsPaymentRoutes, paymentPageRoutes, providerWebhookRoutes, type PaymentsRouteDeps } from './routes.js';
import { PaymentDetails } from './payment-details.js';

export { PaymentService, paymentDue, PAYMENT_LAPSED_REASON, HOLD_LAPSED_REASON, EXTENSION_LAPSED_REASON } from './payment-service.js';
export type { NotifyResult, PaymentNotification, PaymentPageView, SettleOutcome } from './payment-service.js';
export type { PaymentRecord, PaymentSummary, PromoCodeRecord, InboxRow } from './payment-repository.js';
export { PaymentDetails } from './payment-details.js';
export { SandboxProvider } from './provider.js';
export type { PaymentProvider } from './provider.js';
export { PAYMENTS_JOB, PAYMENT_NUDGES_JOB, PAYMENT_INBOX_JOB, PAYMENT_RECONCILE_JOB, PAYMENT_PROVIDER_ACTIONS_JOB } from './jobs.js';
export type { ProviderSync, EventReceipt } from './provider-sync.js';
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
  /** The provider of projects without an account (default: the sandbox provider, which moves no money). */
  sandboxProvider?: PaymentProvider;
  /** Adapters of real providers by name (default: Stripe and Opn Payments). */
  providerFactories?: Partial<Record<'stripe' | 'opn', ProviderFactory>>;
  /** PAYMENT_PROVIDER_TIMEOUT_MS, PAYMENT_RECONCILE_AFTER_SECONDS, PAYMENT_LAPSE_GRACE_SECONDS. */
  policy: { providerTimeoutMs: number; reconcileAfterMs: number; lapseGraceMs: number };
}

export interface PaymentsModule {
  payments: PaymentService;
  /** Provider events, reconciliation, voids and refunds at the provider. */
  sync: ProviderSync;
  /** The console's payment view (read only). */
  details: PaymentDetails;
  /** The runner's handlers: lapsed deadlines, hold reminders, the notification inbox. */
  jobs: PaymentJobs;
}

/** The adapters of real providers. */
const DEFAULT_FACTORIES: Partial<Record<'stripe' | 'opn', ProviderFactory>> = { stripe: stripeProvider, opn: opnProvider };

export function createPayments(deps: PaymentsDeps): PaymentsModule {
  const repo = new PaymentRepository(deps.db);
  const records = new ProviderRecordsRepository(deps.db);
  const providers = new ProviderRegistry({
    records,
    secretBox: deps.secretBox,
    factories: deps.providerFactories ?? DEFAULT_FACTORIES,
    providerDeps: { realClock: deps.realClock, timeoutMs: deps.policy.providerTimeoutMs },
    ...(deps.sandboxProvider ? { sandbox: deps.sandboxProvider } : {}),
  });
  const payments = new PaymentService({
    repo,
    providers,
    records,
    lapseGraceMs: deps.policy.lapseGraceMs,
    bookings: deps.bookings,
    secretBox: deps.secretBox,
    clock: deps.clock,
    realClock: deps.realClock,
    publicBaseUrl: deps.publicBaseUrl,
  });
  const sync = new ProviderSync({
    repo,
    records,
    providers,
    payments,
    clock: deps.clock,
    realClock: deps.realClock,
    reconcileAfterMs: deps.policy.reconcileAfterMs,
  });
  const details = new PaymentDetails({ repo, log: records });
  return { payments, sync, details, jobs: paymentJobs(payments, sync) };
}

/** The payment page (public: its unguessable token is the capability) and the ops payment routes (ops guard). */
export async function register(app: App, deps: PaymentsRouteDeps): Promise<void> {
  await paymentPageRoutes(app, deps);
  // Its own scope: provider events are read as raw bytes, every other route keeps the JSON parser.
  await app.register(async (scope) => providerWebhookRoutes(scope, deps));
  await guarded(app, deps.guards.ops, async (ops) => opsPaymentRoutes(ops, deps));
}
