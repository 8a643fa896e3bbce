/** The console module's front door: the operator console's page and bundle (no services of its own, so no factory). */
import type { App } from '../../platform/http/types.js';
import { CONSOLE_DIST, consoleRoutes } from './routes.js';

export { CONSOLE_DIST } from './routes.js';

export interface ConsoleRouteDeps {
  /** Where the built console lives (dist/console of this checkout by default; tests give an empty folder). */
  dir?: string;
}

/** GET /console and /console/assets/* (public: the page holds no data). */
export async function register(app: App, deps: ConsoleRouteDeps = {}): Promise<void> {
  await consoleRoutes(app, deps.dir ?? CONSOLE_DIST);
}
