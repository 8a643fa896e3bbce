/**
 * One payment as the console's payment view shows it: the payment, its provider
 * and reference, the provider events received for it and its voids/refunds.
 * Read only; never a secret (the provider account's keys are not read here).
 */
import type { ConsolePaymentDetail, ConsoleProviderAction, ConsoleProviderEvent } from '../../contract/ops-console.js';
import type { PaymentRecord, PaymentRepository } from './payment-repository.js';
import type { ProviderActionRow, ProviderEventRow, ProviderRecordsRepository } from './provider-records-repository.js';
import { fromMinor } from './rules/pricing.js';

const iso = (ms: number): string => new Date(ms).toISOString();

function toEvent(e: ProviderEventRow): ConsoleProviderEvent {
  return {
    _id: e.id,
    eventId: e.event_id,
    type: e.type,
    verified: Number(e.verified) === 1,
    outcome: e.outcome,
    receivedAt: iso(Number(e.received_at)),
  };
}

function toAction(a: ProviderActionRow, currency: string): ConsoleProviderAction {
  return {
    _id: a.id,
    action: a.action === 'void' ? 'void' : 'refund',
    amount: fromMinor(Number(a.amount_minor), currency),
    currency,
    status: a.status,
    providerRef: a.provider_ref,
    reason: a.reason,
    lastError: a.last_error,
    createdAt: iso(Number(a.created_at)),
    updatedAt: iso(Number(a.updated_at)),
  };
}

export class PaymentDetails {
  constructor(
    private readonly deps: {
      repo: PaymentRepository;
      log: ProviderRecordsRepository;
    },
  ) {}

  /** The payment's detail, or undefined for an unknown id. */
  async detail(paymentId: string): Promise<ConsolePaymentDetail | undefined> {
    const p = await this.deps.repo.byId(paymentId);
    return p && this.describe(p);
  }

  /** The detail of a booking's newest payment (the one its booking detail shows), or undefined when it has none. */
  async ofMeeting(meetingId: string): Promise<ConsolePaymentDetail | undefined> {
    const p = await this.deps.repo.latestOf(meetingId);
    return p && this.describe(p);
  }

  private async describe(p: PaymentRecord): Promise<ConsolePaymentDetail> {
    const [events, actions] = await Promise.all([this.deps.log.eventsOf(p.id), this.deps.log.actionsOf(p.id)]);
    return {
      _id: p.id,
      meetingId: p.meeting_id,
      status: p.status,
      amount: fromMinor(Number(p.amount_minor), p.currency),
      currency: p.currency,
      expiresAt: iso(Number(p.expires_at)),
      invoiceNo: p.invoice_no,
      kind: p.kind,
      provider: p.provider,
      providerRef: p.provider_ref,
      failedAttempts: Number(p.failed_attempts),
      createdAt: iso(Number(p.created_at)),
      settledAt: p.settled_at === null ? null : iso(Number(p.settled_at)),
      events: events.map(toEvent),
      refunds: actions.map((a) => toAction(a, p.currency)),
    };
  }
}
