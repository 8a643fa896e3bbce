/**
 * The lifecycle module's front door: the clock's actor on bookings (reminders,
 * no-show, auto check-in, ending soon, end) as a job of the runner, and the planner
 * the booking writer stores a booking's steps through. No routes.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { BookingChanges } from '../booking/index.js';
import { Lifecycle } from './jobs.js';
import { LifecycleSteps } from './lifecycle-steps.js';
import { TimerScheduler } from './scheduling.js';
import { TimerRepository } from './timer-repository.js';

export { Lifecycle, LIFECYCLE_JOB } from './jobs.js';
export { LifecycleSteps, stepChange } from './lifecycle-steps.js';
export { TimerScheduler } from './scheduling.js';
export type { TimerRow } from './timer-repository.js';

export interface LifecycleDeps {
  db: Kysely<Database>;
  /**
   * The booking module's BookingChanges, late-bound: booking's writer plans through this
   * module's planner, so booking is built after it.
   */
  bookings: () => BookingChanges;
}

export interface LifecycleModule {
  /** The lifecycle job (register `lifecycle.job()` with the runner; tests replace its `fire`). */
  lifecycle: Lifecycle;
  /** The booking writer's LifecyclePlanner port. */
  planner: TimerScheduler;
}

export function createLifecycle(deps: LifecycleDeps): LifecycleModule {
  const timers = new TimerRepository(deps.db);
  const steps = new LifecycleSteps({ bookings: { change: (meetingId, work) => deps.bookings().change(meetingId, work) }, timers });
  return { lifecycle: new Lifecycle({ timers, steps }), planner: new TimerScheduler(timers) };
}
