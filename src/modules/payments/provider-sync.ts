/**
 * Keeping our payments and the provider's objects in step:
 * - events a provider posts (`POST /payments/webhooks/{providerId}`): verified over
 *   the raw bytes, stored once by event id, then applied through the payment inbox
 *   exactly like the sandbox's settle;
 * - reconciliation: pending payments the provider was not heard about are asked
 *   about (the job), so a lost event is not a lost payment;
 * - voids and refunds queued by booking changes, sent by a job with retries, and a
 *   refund the provider answers as pending re-read until it finishes.
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { ServiceError, errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  BadSignatureError,
  ProviderRefusedError,
  ProviderUnavailableError,
  type PaymentProvider,
  type ProviderRefund,
} from './provider.js';
import type { ProviderRegistry } from './provider-registry.js';
import type { ProviderActionRow, ProviderRecordsRepository } from './provider-records-repository.js';
import type { PaymentRecord, PaymentRepository } from './payment-repository.js';
import type { PaymentService } from './payment-service.js';

export interface ProviderSyncDeps {
  repo: PaymentRepository;
  records: ProviderRecordsRepository;
  providers: ProviderRegistry;
  payments: PaymentService;
  /** Service time (reconciliation ages). */
  clock: Clock;
  /** Real time (events received, action retries). */
  realClock: Clock;
  /** A pending payment is asked about once it is this old, and again this long after. */
  reconcileAfterMs: number;
}

/** What the webhook route answers (2xx: the provider stops retrying). */
export interface EventReceipt {
  received: true;
  /** The event id was seen before: nothing was done twice. */
  duplicate: boolean;
  /** What the event did: settled, failed, refunded, already-settled, ignored, unknown-object, or refused: … */
  outcome: string;
}

/** How long a pending refund waits before it is re-read (real ms). */
const REFUND_RECHECK_MS = 10 * 60_000;
/** The longest wait between attempts of an action the provider could not take (real ms). */
const MAX_BACKOFF_MS = 60 * 60_000;
/** How long one instance holds an action it is sending (real ms). */
const ACTION_LEASE_MS = 60_000;

export class ProviderSync {
  constructor(private readonly deps: ProviderSyncDeps) {}

  // ---------------------------------------------------------------------------
  // Events
  // ---------------------------------------------------------------------------

  /** A provider posted an event: verify, store once, apply. Throws 404 (unknown account), 400 (bad signature), 503 (provider not reachable for the re-read). */
  async receive(providerId: string, rawBody: Buffer, headers: Record<string, string | string[] | undefined>): Promise<EventReceipt> {
    const provider = /^[0-9a-f]{24}$/.test(providerId) ? await this.deps.providers.byAccountId(providerId) : undefined;
    if (!provider || provider === this.deps.providers.sandbox) throw errors.notFound('Payment provider not found');
    const event = await this.verify(provider, rawBody, headers);
    const payment = event.ref ? await this.deps.repo.byProviderRef(providerId, event.ref) : undefined;
    const stored = await this.deps.records.recordEvent({
      id: newId(this.deps.realClock.now()),
      provider_id: providerId,
      event_id: event.eventId,
      type: event.type.slice(0, 200),
      verified: 1,
      payment_id: payment?.id ?? null,
      provider_ref: event.ref ?? null,
      outcome: null,
      received_at: this.deps.realClock.now(),
    });
    // Seen and applied before: nothing again. Seen but never applied (a crash between the two): applied now.
    if (stored.outcome !== null) return { received: true, duplicate: true, outcome: 'duplicate' };
    if (event.refund) await this.refundReported(event.refund);
    const outcome = await this.applyEvent(providerId, provider, event, payment);
    await this.deps.records.setEventOutcome(stored.id, outcome);
    return { received: true, duplicate: false, outcome };
  }

  private async verify(provider: PaymentProvider, rawBody: Buffer, headers: Record<string, string | string[] | undefined>) {
    try {
      return await provider.verifyEvent(rawBody, headers);
    } catch (err) {
      if (err instanceof BadSignatureError) throw errors.validation(['The event signature is missing or does not verify']);
      if (err instanceof ProviderUnavailableError) {
        throw new ServiceError(
          503,
          'KS234',
          'The payment provider could not be reached to confirm the event; send it again',
          undefined,
          30,
        );
      }
      throw err;
    }
  }

  private async applyEvent(
    providerId: string,
    provider: PaymentProvider,
    event: Awaited<ReturnType<PaymentProvider['verifyEvent']>>,
    payment: PaymentRecord | undefined,
  ): Promise<string> {
    if (event.outcome === 'ignore') return 'ignored';
    // Not one of ours (another system on the same account, or an object we never made): acknowledged, nothing changes.
    if (!payment) return 'unknown-object';
    try {
      const result = await this.deps.payments.notify({
        provider: providerId,
        eventId: event.eventId,
        paymentId: payment.id,
        kind: event.outcome,
        via: `${provider.name} ${event.type}`,
      });
      return result.outcome;
    } catch (err) {
      if (err instanceof ServiceError && err.status < 500) return `refused: ${err.message}`;
      throw err;
    }
  }

  /** A refund's state reported in an event updates the queued action that asked for it. */
  private async refundReported(refund: ProviderRefund): Promise<void> {
    await this.deps.records.finishRefundByRef(refund.ref, refund.status, this.deps.realClock.now());
  }

  // ---------------------------------------------------------------------------
  // Reconciliation
  // ---------------------------------------------------------------------------

  /** Pending payments due to be asked about by `now` (service time; the reconciliation job's due read). */
  reconcileDue(now: number, limit: number): Promise<PaymentRecord[]> {
    const cutoff = now - this.deps.reconcileAfterMs;
    return this.deps.repo.reconcileDue(cutoff, cutoff, limit);
  }

  /** Asks the provider about one pending payment; paid there settles it here. */
  async reconcile(p: PaymentRecord): Promise<void> {
    const state = await this.deps.payments.askProvider(p);
    if (state === 'unknown') {
      // Asked again after the usual wait rather than at once.
      await this.deps.repo.markReconciled(p.id, this.deps.clock.now());
      return;
    }
    if (state !== 'succeeded') return;
    await this.deps.payments
      .notify({ provider: p.provider_id!, eventId: `reconcile-${p.id}`, paymentId: p.id, kind: 'settle', via: 'reconciliation' })
      .catch((err: unknown) => {
        if (err instanceof ServiceError && err.status < 500) return;
        throw err;
      });
  }

  // ---------------------------------------------------------------------------
  // Voids and refunds
  // ---------------------------------------------------------------------------

  /** Voids and refunds due by `realNow` (the actions job's due read). */
  dueActions(realNow: number, limit: number): Promise<ProviderActionRow[]> {
    return this.deps.records.dueActions(realNow, limit);
  }

  actionBacklog(realNow: number): Promise<Backlog> {
    return this.deps.records.actionBacklog(realNow);
  }

  claimAction(a: ProviderActionRow): Promise<boolean> {
    return this.deps.records.claimAction(a.id, a.next_attempt_at!, this.deps.realClock.now() + ACTION_LEASE_MS);
  }

  /** Sends a queued void or refund, or re-reads a pending refund. */
  async runAction(a: ProviderActionRow): Promise<void> {
    const payment = await this.deps.repo.byId(a.payment_id);
    const provider = await this.deps.providers.byAccountId(a.provider_id);
    const now = this.deps.realClock.now();
    if (!payment && a.action === 'void' && a.provider_ref && provider) {
      // An object made for a booking that was then not made (PaymentService.discard).
      await this.runAndRecord(a, () => this.sendVoid(a, provider, a.provider_ref!));
      return;
    }
    if (!payment || !provider || !payment.provider_ref) {
      await this.deps.records.updateAction(a.id, {
        status: 'failed',
        last_error: 'The payment or its provider account is gone',
        next_attempt_at: null,
        updated_at: now,
      });
      return;
    }
    const ref = payment.provider_ref;
    await this.runAndRecord(a, () =>
      a.action === 'void' ? this.sendVoid(a, provider, ref) : this.sendRefund(a, provider, ref, payment.id),
    );
  }

  private async runAndRecord(a: ProviderActionRow, send: () => Promise<void>): Promise<void> {
    try {
      await send();
    } catch (err) {
      await this.actionFailed(a, err);
    }
  }

  private async sendVoid(a: ProviderActionRow, provider: PaymentProvider, ref: string): Promise<void> {
    try {
      await provider.void(ref);
    } catch (err) {
      if (!(err instanceof ProviderRefusedError && err.code === 'already_succeeded')) throw err;
      // Paid at the provider after all, for a payment that is no longer wanted: the money goes back.
      await this.deps.records.updateAction(a.id, {
        action: 'refund',
        status: 'queued',
        reason: `${a.reason ?? 'Voided'}; the provider had already taken the money`,
        next_attempt_at: this.deps.realClock.now(),
        updated_at: this.deps.realClock.now(),
      });
      return;
    }
    await this.deps.records.updateAction(a.id, {
      status: 'succeeded',
      next_attempt_at: null,
      last_error: null,
      updated_at: this.deps.realClock.now(),
    });
  }

  private async sendRefund(a: ProviderActionRow, provider: PaymentProvider, ref: string, paymentId: string): Promise<void> {
    const refund =
      a.status === 'pending' && a.provider_ref
        ? await provider.retrieveRefund(ref, a.provider_ref)
        : await provider.refund(ref, Number(a.amount_minor), `refund-${paymentId}-${a.id}`);
    const now = this.deps.realClock.now();
    await this.deps.records.updateAction(a.id, {
      status: refund.status,
      provider_ref: refund.ref,
      last_error: null,
      next_attempt_at: refund.status === 'pending' ? now + REFUND_RECHECK_MS : null,
      updated_at: now,
    });
  }

  private async actionFailed(a: ProviderActionRow, err: unknown): Promise<void> {
    const now = this.deps.realClock.now();
    const message = err instanceof Error ? err.message.slice(0, 500) : 'unknown error';
    if (err instanceof ProviderRefusedError) {
      await this.deps.records.updateAction(a.id, { status: 'failed', last_error: message, next_attempt_at: null, updated_at: now });
      return;
    }
    const attempts = a.attempts + 1;
    const wait = Math.min(MAX_BACKOFF_MS, 5_000 * 2 ** Math.min(attempts, 20));
    await this.deps.records.updateAction(a.id, { attempts, last_error: message, next_attempt_at: now + wait, updated_at: now });
    if (!(err instanceof ProviderUnavailableError)) throw err;
  }
}
