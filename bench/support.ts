/**
 * Shared pieces of the bench scripts: start the real service on a throwaway
 * SQLite (or BENCH_DATABASE_URL) database, a bare Fastify baseline, and an
 * autocannon runner that prints comparable figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import autocannon from 'autocannon';
import { loadConfig } from '../src/platform/config.js';
import { openStorage } from '../src/platform/db/database.js';
import { createServices } from '../src/services.js';
import { buildApp } from '../src/app.js';

export const BENCH_OPS_TOKEN = 'bench-ops-token-0123456789abcdef0123456789';

export async function startBenchService() {
  const dir = mkdtempSync(join(tmpdir(), 'booking-bench-'));
  const config = loadConfig({
    BOOKING_ENV: 'development', DEMO: '0', OPS_TOKEN: BENCH_OPS_TOKEN, HOST: '127.0.0.1', PORT: '0',
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

/** A bare Fastify app answering the same envelope shape with no auth and no database. */
export async function startBareFastify() {
  const app = Fastify();
  app.get('/bare', async () => ({ code: 'KS000', success: true, message: 'Success', data: { status: 'ok' } }));
  app.post('/bare', async (req, reply) => reply.status(201).send({ code: 'KS000', success: true, message: 'Success', data: req.body }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, close: () => app.close() };
}

export interface LoadResult {
  label: string;
  requestsPerSec: number;
  p50: number;
  p90: number;
  p97_5: number;
  p99: number;
  non2xx: number;
}

export async function load(label: string, opts: autocannon.Options): Promise<LoadResult> {
  const r = await autocannon({ connections: 20, duration: Number(process.env.BENCH_SECONDS || 5), ...opts });
  const lat = r.latency as unknown as Record<string, number>;
  return {
    label,
    requestsPerSec: Math.round(r.requests.average),
    p50: lat.p50,
    p90: lat.p90,
    p97_5: lat.p97_5,
    p99: lat.p99,
    non2xx: r.non2xx,
  };
}

export function printTable(rows: LoadResult[]): void {
  console.log('\n| scenario | req/s | p50 ms | p90 ms | p97.5 ms | p99 ms | non-2xx |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.label} | ${r.requestsPerSec} | ${r.p50} | ${r.p90} | ${r.p97_5} | ${r.p99} | ${r.non2xx} |`);
}

/** Exact percentiles of sequential request latencies (ms), for p95 figures. */
export async function sampleLatency(n: number, send: () => Promise<unknown>): Promise<{ p50: number; p95: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await send();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(2));
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}
