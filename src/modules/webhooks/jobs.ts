/**
 * Webhook delivery as a job of the runner: POST of the stored body with the
 * signed headers, a 10-second timeout, up to 5 attempts with exponential backoff
 * from 1 minute (on the service clock, so the sandbox clock moves retries too),
 * and a listener disabled after 20 consecutive exhausted deliveries.
 *
 * Each listener has its own small concurrency budget, so a slow or dead receiver
 * never holds up the others, and sending never blocks the API. Attempts are
 * leased (real time) so several instances never send the same attempt twice.
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { JobHandler } from '../../platform/jobs/handler.js';
import type { DeliveryRepository, DeliveryRow } from './delivery-repository.js';
import { deliveryHeaders, type DeliveryAuth } from './signing.js';

export const DELIVERY_JOB = 'webhook-delivery';
export const MAX_ATTEMPTS = 5;
export const FIRST_RETRY_MS = 60_000;
export const DISABLE_AFTER_EXHAUSTED = 20;
export const DELIVERY_TIMEOUT_MS = 10_000;
export const PER_LISTENER_CONCURRENCY = 4;
/** A lease outlasts the attempt's timeout by this much. */
const LEASE_MARGIN_MS = 20_000;

/** When attempt number `attemptsMade` failed, the next try is due after this long (1, 2, 4, 8 minutes). */
export function retryDelayMs(attemptsMade: number): number {
  return FIRST_RETRY_MS * 2 ** (attemptsMade - 1);
}

export interface DeliveryJobDeps {
  repo: DeliveryRepository;
  /** Service time: schedules retries. */
  clock: Clock;
  /** Real time: signature timestamps and JWT expiry. */
  realClock: Clock;
  secretBox: SecretBox;
  timeoutMs?: number;
  intervalMs?: number;
}

/** The receiver refused the attempt (or could not be reached): recorded as a failed attempt. */
export class DeliveryFailed extends Error {
  constructor(readonly outcome: { status: number | null; error: string }) {
    super(outcome.error);
  }
}

export function deliveryJob(deps: DeliveryJobDeps): JobHandler<DeliveryRow> {
  const { repo } = deps;
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return {
    name: DELIVERY_JOB,
    intervalMs: deps.intervalMs ?? 250,
    concurrency: Infinity,
    perKey: { key: (d) => d.webhook_id, limit: PER_LISTENER_CONCURRENCY },
    id: (d) => d.id,
    dueAt: (d) => d.next_attempt_at ?? d.created_at,
    due: ({ now, realNow, limit, fullKeys }) => repo.due(now, realNow, limit, fullKeys),
    // A full page that started attempts may have more behind it (the listeners it filled are left out of the next read).
    page: { size: 50, max: 8 },
    claim: (d, { realNow, leaseMs }) => repo.lease(d, realNow, leaseMs),
    leaseMs: timeoutMs + LEASE_MARGIN_MS,
    run: (d) => attempt(deps, timeoutMs, d),
    retry: {
      maxAttempts: MAX_ATTEMPTS,
      delayMs: retryDelayMs,
      attempts: (d) => d.attempts,
      record: async (d, err, { retryAt, now }) => {
        // Anything else (e.g. the database) leaves the lease to expire, and the attempt is made again.
        if (!(err instanceof DeliveryFailed)) throw err;
        await repo.recordFailure(d, err.outcome, now, retryAt, DISABLE_AFTER_EXHAUSTED);
      },
    },
  };
}

async function attempt(deps: DeliveryJobDeps, timeoutMs: number, d: DeliveryRow): Promise<void> {
  const hook = await deps.repo.webhook(d.webhook_id);
  if (!hook) return;
  const secret = deps.secretBox.open(hook.secret_enc);
  const auth = JSON.parse(deps.secretBox.open(hook.auth_enc)) as DeliveryAuth;
  const headers = await deliveryHeaders({
    deliveryId: d.id, type: d.type, projectId: hook.project_id, body: d.body, secret, auth, nowMs: deps.realClock.now(),
  });
  let res: Response;
  try {
    res = await fetch(hook.url, { method: 'POST', headers, body: d.body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
  } catch (err) {
    const name = (err as Error)?.name;
    throw new DeliveryFailed({
      status: null,
      error: name === 'TimeoutError' ? `timed out after ${timeoutMs / 1000} s` : `connection error: ${(err as Error)?.message ?? err}`,
    });
  }
  if (res.status < 200 || res.status >= 300) throw new DeliveryFailed({ status: res.status, error: `HTTP ${res.status}` });
  await deps.repo.recordSuccess(d, res.status, deps.clock.now());
}
