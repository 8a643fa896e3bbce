/** A job that runs every so often (e.g. a purge), as a handler of the job runner. */
import type { Clock } from '../clock/clock.js';
import type { JobHandler } from './handler.js';

export interface PeriodicJob {
  name: string;
  everyMs: number;
  /** The clock the period is measured on; the first run is one period after the handler is made. */
  clock: Clock;
  run(): Promise<unknown>;
  /** How often to check whether a run is due; default min(everyMs, 60 s). */
  checkMs?: number;
}

export function periodicJob(job: PeriodicJob): JobHandler<{ at: number }> {
  let next = job.clock.now() + job.everyMs;
  return {
    name: job.name,
    intervalMs: job.checkMs ?? Math.min(job.everyMs, 60_000),
    id: (t) => `${job.name}@${t.at}`,
    dueAt: (t) => t.at,
    due: async () => (job.clock.now() >= next ? [{ at: next }] : []),
    // One run at most is ever due; its due time told on the service clock the runner measures with.
    backlog: async ({ now }) => {
      const late = job.clock.now() - next;
      return late >= 0 ? { count: 1, oldestDueAt: now - late } : { count: 0, oldestDueAt: null };
    },
    run: async (t) => {
      // The next run keeps the cadence (or counts from now when runs were missed); a failed run is
      // reported by the runner and waits for it too.
      const now = job.clock.now();
      next = t.at + job.everyMs > now ? t.at + job.everyMs : now + job.everyMs;
      await job.run();
    },
  };
}
