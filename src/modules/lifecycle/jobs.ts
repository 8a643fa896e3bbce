/**
 * The lifecycle as a job of the runner: due steps (see lifecycle-steps.ts) are
 * applied one at a time, in time order. A step claims its timer inside its own
 * transaction, so the runner has no separate claim. A failing step is reported,
 * left pending and skipped for the rest of the pass; the next pass tries it again.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Engine } from '../../platform/db/database.js';
import type { JobHandler } from '../../platform/jobs/handler.js';
import { dueTimers, type TimerRow } from './timer-repository.js';
import { LifecycleSteps } from './lifecycle-steps.js';

export const LIFECYCLE_JOB = 'lifecycle';

export interface LifecycleDeps {
  db: Kysely<Database>;
  engine: Engine;
}

export class Lifecycle {
  private readonly steps: LifecycleSteps;

  constructor(private readonly deps: LifecycleDeps) {
    this.steps = new LifecycleSteps(deps);
  }

  /** Fires one timer; false when another worker had already claimed it. */
  fire(t: TimerRow): Promise<boolean> {
    return this.steps.fire(t);
  }

  /** The runner's handler; it calls `fire` on this object each time (tests replace it). */
  job(intervalMs = 1000): JobHandler<TimerRow> {
    return {
      name: LIFECYCLE_JOB,
      intervalMs,
      concurrency: 1,
      id: (t) => t.id,
      dueAt: (t) => t.due_at,
      due: ({ now, limit }) => dueTimers(this.deps.db, now, limit),
      page: { size: 200 },
      cascades: true,
      run: (t) => this.fire(t),
      replay: true,
    };
  }
}
