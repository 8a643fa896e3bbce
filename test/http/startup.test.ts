/**
 * `npm start` as a newcomer runs it: a child process on an empty database with the
 * demo site, a banner with everything needed, and a graceful SIGTERM shutdown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { httpRequest } from '../support/test-service.js';
import { startMainProcess, type MainProcess } from '../support/main-process.js';
import { until } from '../support/delivery-audit.js';

function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output:\n${out}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ${pattern}; output:\n${out}`));
    });
  });
}

describe('npm start', () => {
  let db: TestDatabase;
  let child: ChildProcess;
  let banner = '';
  let url = '';

  beforeAll(async () => {
    db = await createTestDatabase();
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        PORT: '0',
        HOST: '127.0.0.1',
        BOOKING_ENV: 'development',
        OPS_TOKEN: '',
        DEMO: '1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    banner = await waitForOutput(child, /curl[\s\S]*app_secret[\s\S]*\n\n/);
    url = /listening on (http:\/\/\S+)/.exec(banner)![1];
  }, 60_000);

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await db.drop();
  });

  it('prints the URL, the ops token, the demo app credentials, a curl line and the reference location', () => {
    expect(banner).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(banner).toMatch(/ops token:\s+ops_\S{20,}/);
    expect(banner).toMatch(/app_id=\S+\s+app_secret=\S{32,}/);
    expect(banner).toContain('/docs');
    expect(banner).toContain('curl');
  });

  it('serves the demo app: the printed curl credentials obtain a token', async () => {
    const [, appId, appSecret] = /app_id=(\S+)\s+app_secret=(\S+)/.exec(banner)!;
    const res = await httpRequest(url, 'POST', '/auth/accessToken', {
      body: { grant_type: 'app_credentials', app_id: appId, app_secret: appSecret },
    });
    expect(res.status).toBe(201);
    expect(typeof res.body.access_token).toBe('string');
    const opsToken = /ops token:\s+(\S+)/.exec(banner)![1];
    const clock = await httpRequest(url, 'GET', '/ops/v1/clock', { token: opsToken });
    expect(clock.status).toBe(200);
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('npm start without the demo app: the banner comes first', () => {
  let db: TestDatabase;
  let svc: MainProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    svc = await startMainProcess({
      database: db,
      opsToken: 'startup-ops-token-0123456789abcdef0123456789',
      secretsKey: 'b2'.repeat(32),
      env: { LOG_LEVEL: 'info', DEMO: '0' },
    });
    // The first log line (Fastify's "Server listening") is written after the banner.
    await until('a log line', () => svc!.stdout().includes('"level"'), 15_000);
  }, 60_000);

  afterAll(async () => {
    await svc?.kill('SIGKILL');
    await db.drop();
  });

  it('prints the banner before any log line, naming the token endpoint', () => {
    const lines = svc!.stdout().split('\n');
    expect(lines[0]).toBe(`Room and Desk Booking Service listening on ${svc!.url}`);
    const firstLog = lines.findIndex((l) => l.startsWith('{'));
    const token = lines.findIndex((l) => l.includes(`POST ${svc!.url}/auth/accessToken`));
    expect(token).toBeGreaterThan(0);
    expect(firstLog).toBeGreaterThan(token);
    expect(
      lines.some((l) => l.includes(`${svc!.url}/console`)),
      'the banner names the console',
    ).toBe(true);
  });

  it('prints no deprecation warning (FSTDEP022: router options passed under routerOptions)', () => {
    expect(svc!.stderr()).not.toMatch(/FSTDEP|DeprecationWarning|FastifyWarning/);
  });
});
