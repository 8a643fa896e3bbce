/**
 * The auth module's front door: token grants and the resolution of a bearer token to a Principal
 * (TokenService), the bearer hook the public API's guard is built from, the token endpoint's brute-force
 * limit, and the hourly token purge.
 */
import type { Kysely } from 'kysely';
import type { App } from '../../platform/http/types.js';
import type { Clock } from '../../platform/clock/clock.js';
import type { BookingEnv, Config, TokenLifetimes } from '../../platform/config.js';
import type { Database } from '../../platform/db/schema.js';
import type { JobHandler } from '../../platform/jobs/handler.js';
import { RateLimitRepository } from '../../platform/db/rate-limit-repository.js';
import { RateLimiter } from '../../platform/rate-limit.js';
import { TokenRepository } from './token-repository.js';
import { TokenService } from './token-service.js';
import type { Principal } from './principal.js';
import { TokenAttempts } from './token-attempts.js';
import { tokenPurgeJob } from './jobs.js';
import { tokenRoutes, type AuthRouteDeps } from './routes.js';

export { TokenService } from './token-service.js';
export { TokenAttempts } from './token-attempts.js';
export { bearerAuth } from './routes.js';
export type { AuthRouteDeps } from './routes.js';
export { hasPermission } from './principal.js';
export type { Principal, ProjectScope } from './principal.js';

export interface AuthDeps {
  db: Kysely<Database>;
  env: BookingEnv;
  lifetimes: TokenLifetimes;
  /** Real time: token lifetimes, failure windows and the purge do not follow the sandbox clock. */
  realClock: Clock;
  /** CALLER_CACHE_MS (0 turns the cache off). */
  callerCacheMs: number;
  /** Failed app_secret attempts allowed per (app, address) and per address, and their window. */
  tokenFailures: Config['tokenFailures'];
}

export interface AuthModule {
  tokens: TokenService;
  /** Failed app_secret attempts per (app_id, client address) and per client address. */
  tokenAttempts: TokenAttempts;
  /** The hourly purge of expired tokens, for the job runner. */
  purgeJob: JobHandler<{ at: number }>;
}

export function createAuth(deps: AuthDeps): AuthModule {
  const tokens = new TokenService({
    repo: new TokenRepository(deps.db),
    env: deps.env,
    lifetimes: deps.lifetimes,
    clock: deps.realClock,
    callerCacheMs: deps.callerCacheMs,
  });
  const { perApp, perAddress, windowMs } = deps.tokenFailures;
  const tokenAttempts = new TokenAttempts(
    new RateLimiter(new RateLimitRepository(deps.db), deps.realClock, perApp, windowMs),
    new RateLimiter(new RateLimitRepository(deps.db), deps.realClock, perAddress, windowMs),
  );
  return { tokens, tokenAttempts, purgeJob: tokenPurgeJob(tokens, deps.realClock) };
}

/** POST /auth/accessToken, POST /auth/revoke, GET /auth/whoami. */
export async function register(app: App, deps: AuthRouteDeps): Promise<void> {
  // Declared on every request up front (set by bearerAuth): requests keep one shape, not one more after authentication.
  app.decorateRequest('principal', null as unknown as Principal);
  await tokenRoutes(app, deps);
}
