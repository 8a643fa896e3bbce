/**
 * A DATABASE_URL the service cannot connect with stops the start with a message
 * naming DATABASE_URL (and never printing a password), as a newcomer meets it:
 * `npm start` (src/main.ts in a child process) where USER is unset.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PG_HOST = new URL(process.env.TEST_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/postgres').host;

function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const base = { ...process.env };
  delete base.USER;
  delete base.PGUSER;
  delete base.LOGNAME;
  delete base.PGPASSWORD;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...base, PORT: '0', HOST: '127.0.0.1', BOOKING_ENV: 'development', DEMO: '0', OPS_TOKEN: '', SECRETS_KEY: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('start-up with a DATABASE_URL that cannot connect', () => {
  it('a PostgreSQL URL without a user (USER unset) exits non-zero naming DATABASE_URL and a complete URL', async () => {
    const { code, output } = await start({ DATABASE_URL: `postgres://${PG_HOST}/booking` });
    expect(code).not.toBe(0);
    expect(output).not.toMatch(/listening on/);
    expect(output).toMatch(/DATABASE_URL/);
    expect(output).toMatch(/names no user/);
    expect(output).toMatch(/postgres:\/\/postgres@127\.0\.0\.1:5432\/booking/);
  }, 40_000);

  it('nothing listening: names DATABASE_URL and hides the password', async () => {
    const { code, output } = await start({ DATABASE_URL: 'postgres://booking:hunter2-secret@127.0.0.1:1/booking' });
    expect(code).not.toBe(0);
    expect(output).toMatch(/DATABASE_URL names \(postgres:\/\/booking:\*\*\*@127\.0\.0\.1:1\/booking\)/);
    expect(output).not.toContain('hunter2-secret');
  }, 40_000);

  it('a SQLite path that cannot be created names DATABASE_URL', async () => {
    const { code, output } = await start({ DATABASE_URL: '/dev/null/booking.sqlite' });
    expect(code).not.toBe(0);
    expect(output).toMatch(/DATABASE_URL/);
  }, 40_000);
});
