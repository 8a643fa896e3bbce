/** The health module's front door: liveness and readiness probes (no services of its own, so no factory). */
import type { App } from '../../platform/http/types.js';
import { healthRoutes, type HealthRouteDeps } from './routes.js';

export type { HealthRouteDeps } from './routes.js';

/** GET /healthz and GET /readyz (public). */
export async function register(app: App, deps: HealthRouteDeps): Promise<void> {
  await healthRoutes(app, deps);
}
