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
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { DeliveryRepository, DeliveryRow } from './delivery-repository.js';
import { deliveryHeaders, type DeliveryAuth } from './signing.js';

export const MAX_ATTEMPTS = 5;
export const FIRST_RETRY_MS = 60_000;
export const DISABLE_AFTER_EXHAUSTED = 20;
export const DELIVERY_TIMEOUT_MS = 10_000;
export const PER_LISTENER_CONCURRENCY = 4;
/** Due deliveries read per query; a round reads up to DUE_PAGES pages while they keep starting attempts. */
const DUE_PAGE = 50;
const DUE_PAGES = 8;

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

/** What one polling round did: attempts started, and due ones held back by a full listener budget. */
interface RoundResult {
  started: number;
  deferred: number;
}

export class DeliveryWorker {
  private readonly inFlight = new Map<string, number>();
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<RoundResult> | null = null;
  /** An attempt ended while a round was running: run another round after it. */
  private refillAfterRound = false;

  constructor(private readonly deps: DeliveryWorkerDeps) {}

  start(intervalMs = 250): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    // A round under way may still start attempts: let it finish first.
    while (this.polling) await this.polling;
    await Promise.allSettled([...this.pending]);
  }

  /** Starts every due attempt the concurrency budgets allow; resolves once they are started. */
  async poll(): Promise<void> {
    await this.pollRound();
  }

  /**
   * One polling round; a call made while a round is running joins it (so a caller
   * never returns before attempts that round found are started).
   */
  private pollRound(): Promise<RoundResult> {
    if (this.polling) return this.polling;
    const round = this.startDue().finally(() => {
      this.polling = null;
      if (this.refillAfterRound) {
        this.refillAfterRound = false;
        this.refill();
      }
    });
    this.polling = round;
    return round;
  }

  private async startDue(): Promise<RoundResult> {
    const result: RoundResult = { started: 0, deferred: 0 };
    try {
      const realNow = this.deps.realClock.now();
      // A full page that started attempts may have more behind it (the listeners it
      // filled are left out of the next read).
      for (let page = 0; page < DUE_PAGES; page++) {
        const { read, started } = await this.startPage(realNow, result);
        if (read < DUE_PAGE || started === 0) break;
      }
    } catch (err) {
      this.deps.onError?.(err);
    }
    return result;
  }

  /**
   * Reads one page of due deliveries and starts those the budgets allow. Listeners
   * whose budget is already full are left out of the query, so one listener's
   * backlog (a slow or dead receiver) never fills the page and hides the others'.
   */
  private async startPage(realNow: number, result: RoundResult): Promise<{ read: number; started: number }> {
    const full = [...this.inFlight].filter(([, n]) => n >= PER_LISTENER_CONCURRENCY).map(([id]) => id);
    const due = await this.deps.repo.due(this.deps.clock.now(), realNow, DUE_PAGE, full);
    let started = 0;
    for (const d of due) {
      const busy = this.inFlight.get(d.webhook_id) ?? 0;
      if (busy >= PER_LISTENER_CONCURRENCY) {
        result.deferred++;
        continue;
      }
      if (!(await this.deps.repo.lease(d, realNow, (this.deps.timeoutMs ?? DELIVERY_TIMEOUT_MS) + 20_000))) continue;
      // Re-read the count: attempts may have ended while the lease was taken (`busy` is stale).
      this.inFlight.set(d.webhook_id, (this.inFlight.get(d.webhook_id) ?? 0) + 1);
      result.started++;
      started++;
      const p = this.attempt(d)
        .catch((err) => this.deps.onError?.(err))
        .finally(() => {
          this.inFlight.set(d.webhook_id, (this.inFlight.get(d.webhook_id) ?? 1) - 1);
          this.pending.delete(p);
          this.refill();
        });
      this.pending.add(p);
    }
    return { read: due.length, started };
  }

  /**
   * A listener's slot just freed up: while the worker runs, look for due work now
   * instead of at the next tick (otherwise a listener gets at most its budget of
   * attempts per poll interval, 16 a second, however fast it answers).
   */
  private refill(): void {
    if (!this.timer) return; // stopped, or driven by drain()
    if (this.polling) {
      this.refillAfterRound = true;
      return;
    }
    void this.pollRound();
  }

  /**
   * Polls until nothing is in flight and a round finds nothing more to start
   * (tests and shutdown). A listener's concurrency budget defers attempts from one
   * round to the next, so one round is not enough.
   */
  async drain(maxMs = 30_000): Promise<void> {
    const until = Date.now() + maxMs;
    while (Date.now() < until) {
      // Let running rounds and attempts finish; an attempt that ends may start another
      // round (refill), so settle until nothing runs at all.
      while (this.polling) await this.polling;
      await Promise.allSettled([...this.pending]);
      if (this.polling || this.pending.size > 0) continue;
      // Nothing in flight, so no listener is left out of the read: a round of our own
      // sees every due delivery. Done when it finds nothing to start or hold back.
      const round = await this.pollRound();
      if (round.started === 0 && round.deferred === 0 && this.pending.size === 0 && !this.polling) return;
    }
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
    const timeoutMs = this.deps.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    try {
      const res = await fetch(hook.url, {
        method: 'POST', headers, body: d.body, redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      outcome = { ok: res.status >= 200 && res.status < 300, status: res.status, error: res.status >= 300 ? `HTTP ${res.status}` : '' };
    } catch (err) {
      const name = (err as Error)?.name;
      outcome = { ok: false, status: null, error: name === 'TimeoutError' ? `timed out after ${timeoutMs / 1000} s` : `connection error: ${(err as Error)?.message ?? err}` };
    }
    const now = this.deps.clock.now();
    if (outcome.ok) return this.deps.repo.recordSuccess(d, outcome.status!, now);
    const attemptsMade = d.attempts + 1;
    const next = attemptsMade >= MAX_ATTEMPTS ? null : now + retryDelayMs(attemptsMade);
    await this.deps.repo.recordFailure(d, outcome, now, next, DISABLE_AFTER_EXHAUSTED);
  }
}
