/**
 * Shared pieces of the bench scripts: the ops token of every bench service, and
 * the real service started inside the calling process on a throwaway SQLite (or
 * BENCH_DATABASE_URL) database, for the scripts that drive its services directly
 * (bench:delivery). The throughput and latency benches (bench:auth, bench:booking,
 * bench:search) run the service in its own process instead: see bench/lib.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/platform/config.js';
import { openStorage } from '../src/platform/db/database.js';
import { createServices } from '../src/services.js';
import { buildApp } from '../src/app.js';

export const BENCH_OPS_TOKEN = 'bench-ops-token-0123456789abcdef0123456789';

export async function startBenchService() {
  const dir = mkdtempSync(join(tmpdir(), 'booking-bench-'));
  const config = loadConfig({
    BOOKING_ENV: 'development',
    DEMO: '0',
    OPS_TOKEN: BENCH_OPS_TOKEN,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: process.env.BENCH_DATABASE_URL || join(dir, 'bench.sqlite'),
  });
  const storage = await openStorage(config.databaseUrl);
  const services = await createServices(config, storage);
  const app = await buildApp(services);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return {
    url,
    services,
    async call(method: string, path: string, body?: unknown, token?: string) {
      const res = await fetch(url + path, {
        method,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    },
    async close() {
      await app.close();
      await services.stop();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
