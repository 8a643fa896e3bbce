/** POST /ops/v1/apply: declarative site configuration (placeholder until the apply service lands). */
import type { App } from '../types.js';
import type { Services } from '../../services.js';

export async function opsApplyRoutes(_app: App, _services: Services): Promise<void> {}
