/**
 * The real service in its own process, for the bench scripts (started by
 * bench/lib/subjects.ts `startService`). Built like `npm start` (config, storage with
 * migrations, createServices, buildApp, listen on port 0) on the database named by
 * BENCH_SERVICE_DATABASE_URL, without the background workers unless
 * BENCH_SERVICE_WORKERS=1 (the bench measures the request path; deliveries and
 * lifecycle steps would compete for the same CPU at random moments).
 *
 * BENCH_SEED=search seeds the search site (bench/search-site.ts: 1,000 rooms,
 * 2,000 desks, 100,000 bookings) before reporting ready.
 *
 * Answers over IPC: `cpu` (its process.cpuUsage()), `searchRooms` (one
 * CatalogueService.searchRooms call in-process, timed), `stop`.
 */
import { loadConfig } from '../../src/platform/config.js';
import { openStorage } from '../../src/platform/db/database.js';
import { createServices } from '../../src/services.js';
import { buildApp } from '../../src/app.js';
import type { Principal } from '../../src/modules/auth/principal.js';
import { BENCH_OPS_TOKEN } from '../support.js';
import { seedSearchSite } from '../search-site.js';
import { failed, serve } from './rpc-child.js';

async function main(): Promise<void> {
  const databaseUrl = process.env.BENCH_SERVICE_DATABASE_URL;
  if (!databaseUrl) throw new Error('BENCH_SERVICE_DATABASE_URL is not set');
  const config = loadConfig({
    BOOKING_ENV: 'development',
    DEMO: '0',
    OPS_TOKEN: BENCH_OPS_TOKEN,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: databaseUrl,
  });
  const storage = await openStorage(config.databaseUrl);
  const services = await createServices(config, storage);
  const app = await buildApp(services);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  config.publicBaseUrl = url;
  if (process.env.BENCH_SERVICE_WORKERS === '1') services.startWorkers();

  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  let site: Record<string, unknown> | undefined;
  if (process.env.BENCH_SEED === 'search') {
    const seeded = await seedSearchSite({ services, call }, (line) => console.log(`  [service] ${line}`));
    site = {
      projectId: seeded.projectId,
      today: seeded.today,
      headers: seeded.headers,
      counts: seeded.counts,
      windowCount: seeded.windowCount,
    };
  }

  const principals = new Map<string, Principal>();
  const rpc = serve(
    {
      /** Times one in-process CatalogueService.searchRooms call for `path`'s query (ms), the HTTP layer left out. */
      async searchRooms(msg) {
        const authorization = msg.authorization as string;
        let principal = principals.get(authorization);
        if (!principal) {
          principal = await services.tokens.authenticate(authorization);
          principals.set(authorization, principal);
        }
        const query = Object.fromEntries(new URL(url + (msg.path as string)).searchParams) as unknown as Parameters<
          typeof services.catalogue.searchRooms
        >[1];
        const t0 = performance.now();
        await services.catalogue.searchRooms(principal, query);
        return performance.now() - t0;
      },
    },
    async () => {
      await app.close();
      await services.stop();
      await storage.close();
    },
  );
  rpc.ready({ url, engine: storage.engine, pid: process.pid, site });
}

main().catch(failed);
