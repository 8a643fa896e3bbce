/**
 * Starts the real service (same composition as `npm start`) on a random loopback
 * port over a throwaway database, and talks to it over HTTP like a third party.
 */
import { loadConfig } from '../../src/platform/config.js';
import { openStorage, type StorageOptions } from '../../src/platform/db/database.js';
import { createServices, type Services } from '../../src/services.js';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/platform/http/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export const OPS_TOKEN = 'test-ops-token-0123456789abcdef0123456789';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body string sent as-is (with the given content type). */
  raw?: string;
  token?: string | null;
  headers?: Record<string, string>;
}

export interface TestService {
  url: string;
  services: Services;
  app: App;
  database: TestDatabase;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResult<T>>;
  ops<T = any>(method: string, path: string, body?: unknown): Promise<HttpResult<T>>;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Reuse an existing database (e.g. a second instance, or a restart). */
  database?: TestDatabase;
  /** Keep the database when closing (for restarts). */
  keepDatabase?: boolean;
  /** Do not start the background workers (timers, deliveries). */
  noWorkers?: boolean;
  /** Sees the SQL text of every statement the service executes. */
  onQuery?: (sql: string) => void;
  /** PostgreSQL: sees every round trip actually sent (waiting inserts go out together). */
  onRoundTrip?: (sql: string) => void;
  /** Request and error logs go here (none by default), as `npm start` logs them. */
  logger?: FastifyBaseLogger;
  /** The migrations the service knows (default: all; an older release's subset in upgrade tests). */
  migrations?: StorageOptions['migrations'];
}

export async function httpRequest<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export async function startTestService(options: StartOptions = {}): Promise<TestService> {
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    BOOKING_ENV: 'development',
    DEMO: '0',
    OPS_TOKEN,
    DATABASE_URL: database.url,
    HOST: '127.0.0.1',
    PORT: '0',
    // Many services share one test process: one's synchronous start-up (migrations) delays the others' event loop.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...options.env,
  });
  const storage = await openStorage(config.databaseUrl, {
    onQuery: options.onQuery,
    onRoundTrip: options.onRoundTrip,
    migrations: options.migrations,
  });
  const services = await createServices(
    config,
    storage,
    undefined,
    options.logger ? { onError: (err) => options.logger!.error({ err }, 'background worker failed') } : {},
  );
  const app = await buildApp(services, options.logger ? { loggerInstance: options.logger } : {});
  await app.listen({ host: '127.0.0.1', port: 0 });
  if (!options.noWorkers) services.startWorkers();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  // Links the service hands out (payment pages) point at where it really listens.
  if (!options.env?.PUBLIC_BASE_URL) services.config.publicBaseUrl = url;
  return {
    url,
    services,
    app,
    database,
    request: (method, path, opts) => httpRequest(url, method, path, opts),
    ops: (method, path, body) => httpRequest(url, method, path, { body, token: OPS_TOKEN }),
    close: async () => {
      await app.close();
      await services.stop();
      await storage.close();
      if (!options.keepDatabase) await database.drop();
    },
  };
}
