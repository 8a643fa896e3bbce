/**
 * Per request, once Fastify has routed it: its id into the log context (every
 * line logged while serving it carries `reqId`, see logging.ts) and, tracing on,
 * the route template into its SERVER span's name (`POST /meetings`) and
 * `http.route` (observability/tracing.ts starts the span).
 */
import type { FastifyInstance } from 'fastify';
import { logContext } from '../logging.js';

export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const store = logContext.getStore();
    if (store) {
      store.reqId = req.id;
      const route = req.routeOptions.url;
      if (store.span && route) {
        store.span.updateName(`${req.method} ${route}`);
        store.span.setAttribute('http.route', route);
      }
    }
    done();
  });
}
