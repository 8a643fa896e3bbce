/**
 * The analytics module's background work, as a handler of the one job runner: `analytics` takes
 * in what changed since its last pass (assets' hours, bookings whose history has entries not yet
 * taken in, walk-ins) every half second. One instance works at a time (the service's lease);
 * others find the lease taken and wait for their next pass. Not replayed: the figures follow
 * what is stored, not the clock.
 */
import type { JobHandler } from '../../platform/jobs/handler.js';
import type { AnalyticsRepository } from './analytics-repository.js';
import type { AnalyticsService } from './analytics-service.js';

export const ANALYTICS_JOB = 'analytics';

export function analyticsJob(service: AnalyticsService, repo: AnalyticsRepository, intervalMs = 500): JobHandler<{ at: number }> {
  return {
    name: ANALYTICS_JOB,
    intervalMs,
    id: (t) => `${ANALYTICS_JOB}@${t.at}`,
    dueAt: (t) => t.at,
    // Due only when something waits: a drain of the runner ends once the figures have caught up.
    due: async ({ now }) => ((await service.hasWork()) ? [{ at: now }] : []),
    backlog: async ({ now }) => {
      const count = await repo.pendingCount();
      return { count, oldestDueAt: count ? now : null };
    },
    run: async () => {
      await service.refresh();
    },
  };
}
