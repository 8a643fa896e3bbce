/** Hourly purge of expired tokens (see TokenService.purgeExpired), as a job of the runner. */
import type { Clock } from '../../platform/clock/clock.js';
import type { JobHandler } from '../../platform/jobs/handler.js';
import { periodicJob } from '../../platform/jobs/periodic.js';
import type { TokenService } from './token-service.js';

export const TOKEN_PURGE_JOB = 'token-purge';
export const TOKEN_PURGE_EVERY_MS = 3_600_000;

/** `realClock`: token lifetimes run on real time. */
export function tokenPurgeJob(tokens: Pick<TokenService, 'purgeExpired'>, realClock: Clock): JobHandler<{ at: number }> {
  return periodicJob({ name: TOKEN_PURGE_JOB, everyMs: TOKEN_PURGE_EVERY_MS, clock: realClock, run: () => tokens.purgeExpired() });
}
