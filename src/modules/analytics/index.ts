/**
 * Utilisation analytics: figures per asset, floor, zone, project and period (docs/analytics.md),
 * kept in rollups by the `analytics` job from the bookings' histories and the entry log, and
 * rebuilt from them on demand (`npm run analytics:rebuild`).
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { App } from '../../platform/http/types.js';
import { guarded, type RouteGuards } from '../../platform/http/module.js';
import { AnalyticsRepository } from './analytics-repository.js';
import { AnalyticsService } from './analytics-service.js';
import { analyticsJob } from './jobs.js';
import { opsAnalyticsRoutes } from './routes.js';

export { AnalyticsService } from './analytics-service.js';
export { ANALYTICS_JOB } from './jobs.js';

export interface AnalyticsDeps {
  db: Kysely<Database>;
  engine: Engine;
  /** Service time (sandbox offset included). */
  clock: Clock;
  /** Real time (the job's lease). */
  realClock: Clock;
  /** The runner the `analytics` handler is registered with; absent for the rebuild command. */
  jobs?: JobRunner;
}

export function createAnalytics(deps: AnalyticsDeps): { analytics: AnalyticsService } {
  const repo = new AnalyticsRepository(deps.db);
  const analytics = new AnalyticsService({ ...deps, repo });
  deps.jobs?.register(analyticsJob(analytics, repo));
  return { analytics };
}

/** Recomputes every figure (of one project, or all) from the bookings and the entry log. */
export async function rebuildAnalytics(deps: Omit<AnalyticsDeps, 'jobs'>, projectId: string | null = null) {
  return createAnalytics(deps).analytics.rebuild(projectId);
}

export interface AnalyticsRouteDeps {
  guards: RouteGuards;
  analytics: AnalyticsService;
}

export async function register(app: App, deps: AnalyticsRouteDeps): Promise<void> {
  await guarded(app, deps.guards.ops, async (ops) => opsAnalyticsRoutes(ops, deps));
}
