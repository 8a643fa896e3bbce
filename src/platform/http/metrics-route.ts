/**
 * /metrics on the service's listener, behind METRICS_TOKEN (`Authorization: Bearer`,
 * compared in constant time; missing or wrong: 401 KS002; never logged); without the
 * token there is no such route (404). With METRICS_PORT a separate listener serves
 * /metrics alone without a credential, opened when the app is ready and closed with it.
 * Every answer is counted by route template, method and status (Metrics.observeRequest).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './types.js';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { tokenMatcher } from './authenticate.js';
import type { Metrics } from '../observability/metrics.js';
import { listenForMetrics, type MetricsListener } from '../observability/metrics-listener.js';

export const METRICS_PATH = '/metrics';

export function registerMetrics(app: App, metrics: Metrics, config: Config['metrics']): void {
  // onResponse: after the answer is sent; the route's template, never the raw URL.
  app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    metrics.observeRequest(req.routeOptions.url, req.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  if (config.token !== null) {
    const matches = tokenMatcher(config.token);
    app.get(METRICS_PATH, { schema: { hide: true } }, async (req, reply) => {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      // Always one digest comparison, whether or not a token was presented.
      const ok = matches(m ? m[1]! : '');
      if (!m || !ok) throw errors.unauthorized('A valid metrics token is required');
      const { contentType, body } = await metrics.render();
      return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
    });
  }
  if (config.port !== null) {
    let listener: MetricsListener | null = null;
    const port = config.port;
    app.addHook('onReady', async () => {
      listener = await listenForMetrics(metrics, config.host, port);
    });
    app.addHook('onClose', async () => {
      await listener?.close();
    });
  }
}
