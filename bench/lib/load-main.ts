/**
 * The load generator in its own process: autocannon runs described by a
 * serializable `LoadSpec` (IPC `run`), answering with exact latency percentiles
 * (every response's time, sorted, not autocannon's histogram buckets), status
 * counts and this process's own CPU per request. Distinct-slot creates are
 * generated here from a `SlotPlan` (functions cannot cross processes).
 */
import autocannon from 'autocannon';
import { failed, serve } from './rpc-child.js';
import { slotBodies, type SlotPlan } from './slots.js';

export interface LoadSpec {
  /** Base URL of the subject. */
  url: string;
  method?: 'GET' | 'POST';
  /** One path, or several taken in turn by each connection. */
  path?: string;
  paths?: string[];
  headers?: Record<string, string>;
  body?: string;
  /** Each request books its own slot (POST bodies made from this plan). */
  slots?: SlotPlan;
  connections: number;
  /** Seconds; or `amount` requests in all. */
  duration?: number;
  amount?: number;
}

export interface LoadResult {
  /** Responses received. */
  requests: number;
  /** Requests sent: the responses plus those still in flight when a timed run stopped. */
  sent: number;
  seconds: number;
  requestsPerSec: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  /** Connection errors and timeouts. */
  errors: number;
  bytesPerResponse: number;
  /** CPU of the load generator per response (ms). */
  clientCpuMsPerRequest: number;
  /** With `slots`: the next unused index. */
  next?: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

async function run(spec: LoadSpec): Promise<LoadResult> {
  const method = spec.method ?? 'GET';
  const headers = { ...(spec.headers ?? {}), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) };
  let next = spec.slots?.start ?? 0;
  const body = spec.slots ? slotBodies(spec.slots) : undefined;
  const paths = spec.paths ?? [spec.path ?? '/'];
  const requests: autocannon.Request[] = paths.map((path) => ({
    method,
    path,
    headers,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    ...(body ? { setupRequest: (req: autocannon.Request) => ({ ...req, body: body(next++) }) } : {}),
  }));
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let bytes = 0;
  const options: autocannon.Options = {
    url: spec.url,
    connections: spec.connections,
    requests,
    timeout: 30,
    ...(spec.amount ? { amount: spec.amount } : { duration: spec.duration ?? 5 }),
  };
  const cpu0 = process.cpuUsage();
  // Without a callback autocannon returns its event emitter, made thenable.
  const instance = autocannon(options) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
  instance.on('response', ((_client: unknown, status: number, resBytes: number, ms: number) => {
    latencies.push(ms);
    bytes += resBytes;
    statuses[status] = (statuses[status] ?? 0) + 1;
  }) as never);
  const result = await instance;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? round2(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]) : NaN);
  const seconds = spec.amount ? result.duration : (spec.duration ?? 5);
  return {
    requests: latencies.length,
    sent: Math.max(result.requests.sent, latencies.length),
    seconds,
    requestsPerSec: Math.round(latencies.length / seconds),
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: latencies.length ? round2(latencies[latencies.length - 1]) : NaN,
    statuses,
    errors: result.errors + result.timeouts,
    bytesPerResponse: latencies.length ? Math.round(bytes / latencies.length) : 0,
    clientCpuMsPerRequest: latencies.length ? round2((cpu.user + cpu.system) / 1000 / latencies.length) : NaN,
    ...(spec.slots ? { next } : {}),
  };
}

try {
  serve({ run: (msg) => run(msg.spec as LoadSpec) }, async () => undefined).ready({ pid: process.pid });
} catch (err) {
  failed(err);
}
