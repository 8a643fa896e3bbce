/**
 * A /healthz prober in a separate Node process. A prober inside the test's own process
 * also measures that process: receiving tens of MB of answers there (and vitest's own
 * work) pauses its event loop for 50–150 ms on a 2-core machine, which reads as the
 * service's latency. In its own process it waits only on the service (and the CPU).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('./health-prober-main.ts', import.meta.url));

export interface HealthProber {
  /** Stops probing; each probe's latency in ms, in order. */
  stop(): Promise<number[]>;
}

/** Starts probing `${url}/healthz`, `gapMs` between an answer and the next request; resolves once probing runs. */
export async function startHealthProber(url: string, gapMs = 10, timeoutMs = 30_000): Promise<HealthProber> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, PROBER_URL: url, PROBER_GAP_MS: String(gapMs) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let buffered = '';
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      lines.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
    waiters.splice(0).forEach((w) => w());
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const nextLine = async (what: string): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    while (!lines.length) {
      if (child.exitCode !== null) throw new Error(`the prober exited (code ${child.exitCode}) before ${what}`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`the prober did not answer in time (${what})`);
      }
      await Promise.race([new Promise<void>((r) => waiters.push(r)), exited, new Promise((r) => setTimeout(r, 100))]);
    }
    return lines.shift()!;
  };
  await nextLine('it started');
  return {
    async stop() {
      child.stdin!.end();
      const out = JSON.parse(await nextLine('its latencies')) as { latencies: number[] };
      await exited;
      return out.latencies;
    },
  };
}
