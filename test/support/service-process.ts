/**
 * A second service instance in a separate Node process, on an existing test
 * database. Unlike a second in-process instance, its database connection runs
 * truly in parallel with this process's (SQLite write locks really contend).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { httpRequest, type HttpResult, type RequestOptions } from './test-service.js';
import type { TestDatabase } from './test-database.js';

export interface ServiceProcess {
  url: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResult<T>>;
  /** Stops the process; the database is left as it is. */
  close(): Promise<void>;
}

const MAIN = fileURLToPath(new URL('./service-process-main.ts', import.meta.url));

export async function startServiceProcess(database: TestDatabase, timeoutMs = 30_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, SERVICE_PROCESS_DATABASE_URL: database.url },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error('service process did not start in time'));
    }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n').find((l) => l.startsWith('{"url"'));
      if (!line) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { url: string }).url);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service process exited with code ${code} before it started`));
    });
  });
  return {
    url,
    request: (method, path, options) => httpRequest(url, method, path, options),
    close: async () => {
      if (child.exitCode !== null) return;
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
