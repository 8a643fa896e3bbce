/** The sandbox module's front door: the sandbox clock routes and the demo site (no services of its own, so no factory). */
import type { App } from '../../platform/http/types.js';
import { opsClockRoutes, type SandboxRouteDeps } from './routes.js';

export { applyDemoSiteIfEmpty, demoSiteDocument } from './apply-demo.js';
export type { DemoCredentials, DemoDeps } from './apply-demo.js';
export type { SandboxRouteDeps } from './routes.js';

/** GET/POST /ops/v1/clock: register inside the ops guard's scope. */
export async function register(app: App, deps: SandboxRouteDeps): Promise<void> {
  await opsClockRoutes(app, deps);
}
