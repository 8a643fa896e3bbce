/**
 * Rows of the provider log written directly (the webhook route and the refund
 * job write them in the service): provider events and voids/refunds of a payment.
 */
import { randomBytes } from 'node:crypto';
import type { TestService } from './test-service.js';

const newId = () => randomBytes(12).toString('hex');

export interface SeedEvent {
  eventId: string;
  type: string;
  verified: boolean;
  outcome?: string | null;
  receivedAt: number;
  providerRef?: string | null;
}

export async function seedProviderEvent(svc: TestService, paymentId: string, e: SeedEvent): Promise<string> {
  const id = newId();
  await svc.services.storage.db
    .insertInto('payment_provider_events')
    .values({
      id,
      provider_id: 'provider-test',
      event_id: e.eventId,
      type: e.type,
      verified: e.verified ? 1 : 0,
      payment_id: paymentId,
      provider_ref: e.providerRef ?? null,
      outcome: e.outcome ?? null,
      received_at: e.receivedAt,
    })
    .execute();
  return id;
}

export interface SeedAction {
  action: 'void' | 'refund';
  amountMinor: number;
  status: 'queued' | 'pending' | 'succeeded' | 'failed';
  reason?: string | null;
  providerRef?: string | null;
  lastError?: string | null;
  createdAt: number;
  updatedAt?: number;
}

export async function seedProviderAction(svc: TestService, paymentId: string, a: SeedAction): Promise<string> {
  const id = newId();
  await svc.services.storage.db
    .insertInto('payment_provider_actions')
    .values({
      id,
      payment_id: paymentId,
      provider_id: 'provider-test',
      provider: 'stripe',
      action: a.action,
      amount_minor: a.amountMinor,
      status: a.status,
      reason: a.reason ?? null,
      provider_ref: a.providerRef ?? null,
      next_attempt_at: null,
      last_error: a.lastError ?? null,
      created_at: a.createdAt,
      updated_at: a.updatedAt ?? a.createdAt,
    })
    .execute();
  return id;
}
