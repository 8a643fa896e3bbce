/** Liveness and readiness probes; no authentication. */
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { HealthStatus } from '../../contract/common.js';
import { errors } from '../../platform/errors.js';

const Status = Envelope(HealthStatus);

export async function healthRoutes(app: App, services: Services): Promise<void> {
  app.get('/healthz', {
    schema: { tags: ['health'], summary: 'The process is up', security: [], response: { 200: Status } },
  }, async () => ok({ status: 'ok' }));

  app.get('/readyz', {
    schema: { tags: ['health'], summary: 'The database answers', security: [], response: { 200: Status, 503: ErrorEnvelope } },
  }, async () => {
    try {
      await services.storage.ping();
    } catch {
      throw errors.upstreamUnavailable('Database is not reachable');
    }
    return ok({ status: 'ready' });
  });
}
