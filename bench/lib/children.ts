/**
 * Parent side of the bench processes: every subject (the service, the reference
 * server, the bare baselines) and the load generator run in their own Node
 * process, spoken to over Node's IPC channel with a tiny request/answer protocol
 * (see rpc-child.ts for the child side).
 *
 * Every child started here is remembered until it exits; `stopAll` stops them
 * politely (an IPC `stop`, so a `--cpu-prof` child writes its profile) and kills
 * what does not exit within a few seconds. An exit of this process by any route
 * (normal end, error, Ctrl-C) SIGKILLs whatever is still running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Child<Ready = Record<string, unknown>> {
  name: string;
  pid: number;
  /** The payload of the child's `ready` message (its URL and whatever else it reports). */
  ready: Ready;
  /** Sends `{type, ...payload}` and resolves with the child's answer (rejects on its error or its exit). */
  call<T = unknown>(type: string, payload?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  /** The child's `process.cpuUsage()` (microseconds), and its monotonic clock (µs, the clock of CPU profiles). */
  cpu(): Promise<CpuReading>;
  /** Monotonic-clock windows (µs) of the measured runs against this child (a CPU profile is cut to them). */
  measured: [number, number][];
  /** Asks the child to stop (it closes what it holds and exits), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export interface CpuReading extends NodeJS.CpuUsage {
  monoUs: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

const live = new Set<ChildProcess>();

process.on('exit', () => {
  for (const c of live) {
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** The absolute path of a module next to `base` (an import.meta.url). */
export const modulePath = (relative: string, base: string) => fileURLToPath(new URL(relative, base));

export interface StartOptions {
  /** A short name for messages ("service:sqlite", "reference"). */
  name: string;
  /** The entry module (TypeScript, run with `node --import tsx`). */
  entry: string;
  env?: Record<string, string | undefined>;
  /** Extra Node flags before `--import tsx` (e.g. --cpu-prof). */
  nodeArgs?: string[];
  args?: string[];
  /** How long the child may take to report `ready` (seeding 100,000 bookings takes a while). */
  readyTimeoutMs?: number;
}

export async function startChild<Ready = Record<string, unknown>>(o: StartOptions): Promise<Child<Ready>> {
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), '--import', 'tsx', o.entry, ...(o.args ?? [])], {
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error(`${o.name} exited (code ${code}${signal ? `, ${signal}` : ''}) before answering`));
      }
      pending.clear();
      resolve(code);
    }),
  );
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let readyResolve!: (v: Ready) => void;
  let readyReject!: (e: Error) => void;
  const ready = new Promise<Ready>((resolve, reject) => {
    readyResolve = resolve;
    readyReject = reject;
  });
  child.on('message', (raw) => {
    const m = raw as { type?: string; id?: number; ok?: boolean; result?: unknown; error?: string; payload?: Ready };
    if (m.type === 'ready') return readyResolve(m.payload as Ready);
    if (m.type === 'failed') return readyReject(new Error(`${o.name} failed to start: ${m.error}`));
    if (m.id === undefined) return;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.result);
    else p.reject(new Error(`${o.name}: ${m.error}`));
  });
  void exited.then((code) => readyReject(new Error(`${o.name} exited with code ${code} before it was ready`)));

  const readyTimeout = o.readyTimeoutMs ?? 60_000;
  const timer = setTimeout(() => readyReject(new Error(`${o.name} was not ready within ${readyTimeout / 1000} s`)), readyTimeout);
  let readyPayload: Ready;
  try {
    readyPayload = await ready;
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  } finally {
    clearTimeout(timer);
  }

  const call = <T>(type: string, payload: Record<string, unknown> = {}, timeoutMs = 0): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (child.exitCode !== null || !child.connected) return reject(new Error(`${o.name} is not running`));
      const id = nextId++;
      const p: Pending = { resolve: resolve as (v: unknown) => void, reject };
      if (timeoutMs > 0) {
        p.timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${o.name}: no answer to ${type} within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      pending.set(id, p);
      child.send({ ...payload, type, id });
    });

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 15_000): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        if (child.connected) child.send({ type: 'stop', id: 0 });
        else child.kill('SIGTERM');
      } catch {
        child.kill('SIGKILL');
      }
      await exited;
      clearTimeout(kill);
    })();
    return stopping;
  };

  return {
    name: o.name,
    pid: child.pid!,
    ready: readyPayload,
    call,
    cpu: () => call<CpuReading>('cpu', {}, 10_000),
    measured: [],
    stop,
    exited,
  };
}
