/**
 * Entry point for `npm start`: loads configuration, opens the database (running
 * migrations), applies the demo site when asked, serves HTTP, and shuts down
 * gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests and the
 * running job, close the database; exit 0, or 1 past SHUTDOWN_TIMEOUT_MS).
 *
 * The start-up banner is the first thing on stdout: log lines written while
 * starting are held and follow it.
 *
 * `node dist/main.js --migrate-only` (a release job): applies the pending migrations
 * (under the migration lock), logs them, and exits 0 (1 when they fail, 2 on a
 * configuration error) without serving, starting workers or applying the demo site.
 */
import { Writable } from 'node:stream';
import { createLogger } from './platform/logging.js';
import { loadConfigOrReport, type Config } from './platform/config.js';
import { openStorage, type MigrationReport } from './platform/db/database.js';
import { createServices } from './services.js';
import { API_VERSION, buildApp } from './app.js';
import { applyDemoSiteIfEmpty } from './modules/sandbox/index.js';
import { startTracing } from './platform/observability/tracing.js';

const migrateOnly = process.argv.slice(2).includes('--migrate-only');

async function main(): Promise<void> {
  const config = loadConfigOrReport();
  if (!config) process.exit(2);
  const held = new HeldOutput(process.stdout);
  process.once('exit', () => held.release());
  const logger = createLogger({ level: config.logLevel }, held);
  // OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT asks for them (platform/observability/tracing.ts).
  const tracing = await startTracing({ env: process.env, serviceVersion: API_VERSION });
  const storage = await openStorage(config.databaseUrl);
  logMigrations(logger, storage.migrations);
  if (migrateOnly) {
    await storage.close();
    held.release();
    process.exit(0);
  }
  const services = await createServices(config, storage, undefined, {
    onError: (err) => logger.error({ err }, 'background worker failed'),
    logger,
  });
  const demo = config.demo ? await applyDemoSiteIfEmpty(services) : null;
  const app = await buildApp(services, { loggerInstance: logger });
  await app.listen({ host: config.host, port: config.port });
  services.startWorkers();

  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  // PORT=0 picks a free port: links the service hands out (payment pages) use the one it got.
  if (config.port === 0 && !process.env.PUBLIC_BASE_URL) config.publicBaseUrl = url;
  printBanner({ url, config, demo });
  held.release();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    try {
      await app.close();
      await services.stop();
      await storage.close();
      // The last spans out, within what is left of SHUTDOWN_TIMEOUT_MS.
      await tracing.shutdown(Math.max(100, config.shutdownTimeoutMs / 4));
      logger.info('stopped');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

function logMigrations(logger: ReturnType<typeof createLogger>, report: MigrationReport): void {
  if (report.applied.length > 0) logger.info({ migrations: report.applied }, 'migrations applied');
  if (report.unknown.length > 0) {
    logger.warn(
      { migrations: report.unknown },
      'the database was migrated by a newer release (migrations unknown here); serving on it (rolling upgrade)',
    );
  }
}

function printBanner(p: { url: string; config: Config; demo: { appId: string; appSecret: string } | null }): void {
  const { url, config, demo } = p;
  const lines = [
    `Room and Desk Booking Service listening on ${url}`,
    `  environment:   ${config.env}`,
    `  database:      ${config.engine === 'postgres' ? 'PostgreSQL' : `SQLite (${config.databaseUrl})`}`,
    `  API reference: ${url}/docs   (OpenAPI: ${url}/openapi.json)`,
    `  console:       ${url}/console   (sign in with the ops token)`,
    `  token:         POST ${url}/auth/accessToken`,
    `  ops token:     ${config.opsTokenGenerated ? config.opsToken : '(from OPS_TOKEN)'}`,
  ];
  if (demo) {
    lines.push(
      `  demo app:      app_id=${demo.appId}  app_secret=${demo.appSecret}`,
      '',
      '  Get a token:',
      `    curl -s -X POST ${url}/auth/accessToken -H 'content-type: application/json' \\`,
      `      -d '{"grant_type":"app_credentials","app_id":"${demo.appId}","app_secret":"${demo.appSecret}"}'`,
    );
  }
  lines.push('');
  process.stdout.write(lines.join('\n') + '\n');
}

/** Holds what is written until `release()`, then writes it and passes everything through. */
class HeldOutput extends Writable {
  private chunks: Buffer[] | null = [];

  constructor(private readonly out: NodeJS.WritableStream) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.chunks) {
      this.chunks.push(chunk);
      done();
    } else {
      this.out.write(chunk, done);
    }
  }

  release(): void {
    if (!this.chunks) return;
    const chunks = this.chunks;
    this.chunks = null;
    for (const c of chunks) this.out.write(c);
  }
}

main().catch((err) => {
  console.error(migrateOnly ? 'migration failed:' : 'failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
