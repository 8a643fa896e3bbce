/**
 * The lifecycle as a job of the runner: due steps (see lifecycle-steps.ts) are
 * applied one at a time, in time order. A step claims its timer inside its own
 * transaction, so the runner has no separate claim. A failing step is reported,
 * left pending and skipped for the rest of the pass; the next pass tries it again.
 */
import type { JobHandler } from '../../platform/jobs/handler.js';
import { timedJob } from '../../platform/jobs/timed.js';
import type { TimerRepository, TimerRow } from './timer-repository.js';
import type { LifecycleSteps } from './lifecycle-steps.js';

export const LIFECYCLE_JOB = 'lifecycle';

export interface LifecycleJobDeps {
  timers: TimerRepository;
  steps: LifecycleSteps;
}

export class Lifecycle {
  constructor(private readonly deps: LifecycleJobDeps) {}

  /** Fires one timer; false when another worker had already claimed it. */
  fire(t: TimerRow): Promise<boolean> {
    return this.deps.steps.fire(t);
  }

  /** The runner's handler; it calls `fire` on this object each time (tests replace it). */
  job(intervalMs = 1000): JobHandler<TimerRow> {
    return timedJob<TimerRow>({
      name: LIFECYCLE_JOB,
      intervalMs,
      id: (t) => t.id,
      dueAt: (t) => t.due_at,
      due: (now, limit) => this.deps.timers.due(now, limit),
      backlog: (now) => this.deps.timers.backlog(now),
      nextDueAt: (now) => this.deps.timers.nextDueAfter(now),
      run: (t) => this.fire(t),
      traceParent: (t) => t.trace_parent ?? null,
      pageSize: 200,
    });
  }
}
