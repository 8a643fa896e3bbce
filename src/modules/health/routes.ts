/**
 * Liveness and readiness probes; no authentication. `/healthz`: the process is up
 * (it never touches the database). `/readyz`: the database answers and has run
 * every migration this code knows.
 */
import type { App } from '../../platform/http/types.js';
import type { Storage } from '../../platform/db/database.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { HealthStatus } from '../../contract/common.js';
import { errors } from '../../platform/errors.js';

const Status = Envelope(HealthStatus);

/** What the probes use: the database's answer and its pending migrations. */
export interface HealthRouteDeps {
  storage: Pick<Storage, 'ping' | 'pendingMigrations'>;
}

export async function healthRoutes(app: App, deps: HealthRouteDeps): Promise<void> {
  app.get(
    '/healthz',
    {
      schema: { tags: ['health'], summary: 'The process is up', security: [], response: { 200: Status } },
    },
    async () => ok({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The database answers and every migration has run',
        security: [],
        response: { 200: Status, 503: ErrorEnvelope },
      },
    },
    async () => {
      let pending: string[];
      try {
        await deps.storage.ping();
        pending = await deps.storage.pendingMigrations();
      } catch {
        throw errors.upstreamUnavailable(
          'Not ready: the service is temporarily unavailable (the database is not reachable); retry after the Retry-After seconds',
        );
      }
      if (pending.length) throw errors.upstreamUnavailable(`Not ready: ${pending.length} database migration(s) have not run`);
      return ok({ status: 'ready' });
    },
  );
}
