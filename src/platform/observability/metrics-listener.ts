/**
 * The separate metrics listener (METRICS_PORT, METRICS_HOST): it serves `GET /metrics`
 * and nothing else, without a credential, for a private scrape network. Anything else
 * is 404 in the envelope.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

export interface MetricsListener {
  address: { host: string; port: number };
  close(): Promise<void>;
}

export async function listenForMetrics(metrics: Metrics, host: string, port: number): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ code: 'KS005', success: false, message: 'Only GET /metrics is served here' }));
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => {
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ code: 'KS004', success: false, message: 'Internal server error' }));
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const address = { host: bound.address, port: bound.port };
  metrics.listener = address;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        metrics.listener = null;
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
