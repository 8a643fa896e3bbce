/**
 * The real service as `npm start` runs it (`node --import tsx src/main.ts`), in a
 * child process on a given test database, for crash and restart tests: it can be
 * SIGKILLed at any moment and started again on the same database.
 *
 * (test/support/service-process.ts runs the in-process test harness in a child and
 * only stops it gracefully; this one runs src/main.ts itself and exposes the kill.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { httpRequest, type HttpResult, type RequestOptions } from './test-service.js';
import type { TestDatabase } from './test-database.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface MainProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** What it wrote to stdout alone, and to stderr alone. */
  stdout(): string;
  stderr(): string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResult<T>>;
  /** An ops call with the process's OPS_TOKEN. */
  ops<T = any>(method: string, path: string, body?: unknown): Promise<HttpResult<T>>;
  /** Sends `signal` and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface MainProcessOptions {
  database: TestDatabase;
  opsToken: string;
  /** 64 hex characters: the same key across restarts keeps stored webhook secrets readable. */
  secretsKey: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}

export async function startMainProcess(o: MainProcessOptions): Promise<MainProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: o.database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      BOOKING_ENV: 'development',
      DEMO: '0',
      OPS_TOKEN: o.opsToken,
      SECRETS_KEY: o.secretsKey,
      LOG_LEVEL: 'warn',
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    stdout += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    out += c.toString();
    stderr += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start in time; output:\n${out}`));
    }, o.timeoutMs ?? 60_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve(m[1]);
    };
    child.stdout!.on('data', check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${code ?? signal}) before it started; output:\n${out}`));
    });
  });
  return {
    url,
    child,
    output: () => out,
    stdout: () => stdout,
    stderr: () => stderr,
    request: (method, path, options) => httpRequest(url, method, path, options),
    ops: (method, path, body) => httpRequest(url, method, path, { body, token: o.opsToken }),
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
