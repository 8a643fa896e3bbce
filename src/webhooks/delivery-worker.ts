/**
 * Sends queued deliveries to listeners: POST of the stored body with the signed
 * headers, a 10-second timeout, up to 5 attempts with exponential backoff from
 * 1 minute (on the service clock, so the sandbox clock moves retries too), and a
 * listener disabled after 20 consecutive exhausted deliveries.
 *
 * Each listener has its own small concurrency budget, so a slow or dead receiver
 * never holds up the others, and sending never blocks the API. Attempts are
 * leased (real time) so several instances never send the same attempt twice.
 */
import type { Clock } from '../clock/clock.js';
import type { SecretBox } from '../auth/secrets.js';
import type { DeliveryRepository, DeliveryRow } from '../storage/repositories/delivery-repository.js';
import { deliveryHeaders, type DeliveryAuth } from './signing.js';

export const MAX_ATTEMPTS = 5;
export const FIRST_RETRY_MS = 60_000;
export const DISABLE_AFTER_EXHAUSTED = 20;
export const DELIVERY_TIMEOUT_MS = 10_000;
export const PER_LISTENER_CONCURRENCY = 4;

/** When attempt number `attempts + 1` failed, the next try is due after this long (1, 2, 4, 8 minutes). */
export function retryDelayMs(attemptsMade: number): number {
  return FIRST_RETRY_MS * 2 ** (attemptsMade - 1);
}

export interface DeliveryWorkerDeps {
  repo: DeliveryRepository;
  /** Service time: schedules retries. */
  clock: Clock;
  /** Real time: signature timestamps, JWT expiry and leases. */
  realClock: Clock;
  secretBox: SecretBox;
  timeoutMs?: number;
  onError?: (err: unknown) => void;
}

export class DeliveryWorker {
  private readonly inFlight = new Map<string, number>();
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(private readonly deps: DeliveryWorkerDeps) {}

  start(intervalMs = 250): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.pending]);
  }

  /** Starts every due attempt the concurrency budgets allow; resolves once they are started. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const realNow = this.deps.realClock.now();
      const due = await this.deps.repo.due(this.deps.clock.now(), realNow, 100);
      for (const d of due) {
        const busy = this.inFlight.get(d.webhook_id) ?? 0;
        if (busy >= PER_LISTENER_CONCURRENCY) continue;
        if (!(await this.deps.repo.lease(d.id, realNow, (this.deps.timeoutMs ?? DELIVERY_TIMEOUT_MS) + 20_000))) continue;
        this.inFlight.set(d.webhook_id, busy + 1);
        const p = this.attempt(d)
          .catch((err) => this.deps.onError?.(err))
          .finally(() => {
            this.inFlight.set(d.webhook_id, (this.inFlight.get(d.webhook_id) ?? 1) - 1);
            this.pending.delete(p);
          });
        this.pending.add(p);
      }
    } catch (err) {
      this.deps.onError?.(err);
    } finally {
      this.polling = false;
    }
  }

  /** Polls until nothing is in flight or due (tests and shutdown). */
  async drain(maxMs = 30_000): Promise<void> {
    const until = Date.now() + maxMs;
    do {
      await this.poll();
      await Promise.allSettled([...this.pending]);
    } while (this.pending.size > 0 && Date.now() < until);
  }

  private async attempt(d: DeliveryRow): Promise<void> {
    const hook = await this.deps.repo.webhook(d.webhook_id);
    if (!hook) return;
    const secret = this.deps.secretBox.open(hook.secret_enc);
    const auth = JSON.parse(this.deps.secretBox.open(hook.auth_enc)) as DeliveryAuth;
    const headers = await deliveryHeaders({
      deliveryId: d.id, type: d.type, projectId: hook.project_id, body: d.body, secret, auth, nowMs: this.deps.realClock.now(),
    });
    let outcome: { ok: boolean; status: number | null; error: string };
    try {
      const res = await fetch(hook.url, {
        method: 'POST', headers, body: d.body, redirect: 'manual',
        signal: AbortSignal.timeout(this.deps.timeoutMs ?? DELIVERY_TIMEOUT_MS),
      });
      await res.arrayBuffer().catch(() => undefined);
      outcome = { ok: res.status >= 200 && res.status < 300, status: res.status, error: res.status >= 300 ? `HTTP ${res.status}` : '' };
    } catch (err) {
      const name = (err as Error)?.name;
      outcome = { ok: false, status: null, error: name === 'TimeoutError' ? 'timed out after 10 s' : `connection error: ${(err as Error)?.message ?? err}` };
    }
    const now = this.deps.clock.now();
    if (outcome.ok) return this.deps.repo.recordSuccess(d, outcome.status!, now);
    const attemptsMade = d.attempts + 1;
    const next = attemptsMade >= MAX_ATTEMPTS ? null : now + retryDelayMs(attemptsMade);
    await this.deps.repo.recordFailure(d, outcome, now, next, DISABLE_AFTER_EXHAUSTED);
  }
}
