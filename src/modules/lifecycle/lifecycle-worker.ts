/**
 * Polls for due lifecycle steps and applies them in time order (see
 * lifecycle-steps.ts for what one step does).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Clock } from '../../platform/clock/clock.js';
import { dueTimers, type TimerRow } from './timer-repository.js';
import type { LifecycleSteps } from './lifecycle-steps.js';

export interface LifecycleWorkerDeps {
  db: Kysely<Database>;
  steps: LifecycleSteps;
  clock: Clock;
  onError?: (err: unknown) => void;
}

const BATCH = 200;

export class LifecycleWorker {
  private running: Promise<number> | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: LifecycleWorkerDeps) {}

  /** Polls for due steps in the background. */
  start(intervalMs = 1000): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.runDue(this.deps.clock.now()).catch((err) => this.deps.onError?.(err));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** Applies every step due by `until`, in time order. Concurrent calls share one run at a time. */
  async runDue(until: number): Promise<number> {
    const previous = this.running ?? Promise.resolve(0);
    const run = previous.catch(() => 0).then(() => this.drain(until));
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  /**
   * A step that fails is reported and left pending for the next run; it does not
   * hold up the steps after it.
   */
  private async drain(until: number): Promise<number> {
    let applied = 0;
    const failed = new Set<string>();
    for (;;) {
      const batch = (await dueTimers(this.deps.db, until, BATCH + failed.size)).filter((t) => !failed.has(t.id));
      if (!batch.length) return applied;
      for (const t of batch) {
        try {
          if (await this.fire(t)) applied++;
        } catch (err) {
          failed.add(t.id);
          this.deps.onError?.(err);
        }
      }
    }
  }

  /** Fires one timer; false when another worker had already claimed it. */
  fire(t: TimerRow): Promise<boolean> {
    return this.deps.steps.fire(t);
  }
}
