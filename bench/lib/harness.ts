/**
 * The bench harness: settings, clean-up, interleaved measured rounds and the
 * markdown tables every bench prints.
 *
 * A measured run is one autocannon run in the load process against one subject
 * process, with the subject's CPU time read before and after it (server CPU ms
 * per response). Subjects take turns inside each round, in an order that rotates
 * from round to round, so a swing of the shared machine's load hits every subject
 * alike; the figures compared are medians over the rounds.
 *
 * Settings (environment):
 *   BENCH_SECONDS      seconds per measured run (5)
 *   BENCH_ROUNDS       interleaved rounds (3)
 *   BENCH_WARMUP       seconds of unmeasured warm-up per subject (2)
 *   BENCH_CONNECTIONS  concurrent connections of the load generator (20)
 */
import os from 'node:os';
import type { Child, CpuReading } from './children.js';
import type { LoadResult, LoadSpec } from './load-main.js';

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name] || dflt);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};

export const SETTINGS = {
  seconds: num('BENCH_SECONDS', 5),
  rounds: Math.round(num('BENCH_ROUNDS', 3)),
  warmupSeconds: num('BENCH_WARMUP', 2),
  connections: Math.round(num('BENCH_CONNECTIONS', 20)),
};

// ---------------------------------------------------------------------------
// Running a bench with guaranteed clean-up
// ---------------------------------------------------------------------------

export interface BenchContext {
  /** Registers clean-up work; it runs in reverse order at the end, on error and on Ctrl-C. */
  defer(label: string, fn: () => unknown): void;
}

/**
 * Runs a bench script's body. Whatever happens, the deferred clean-ups run (stop
 * the child processes, drop the databases, remove temp directories); the exit
 * code is 1 when the body throws or returns false.
 */
export async function runBench(body: (ctx: BenchContext) => Promise<boolean | void>): Promise<void> {
  const cleanups: { label: string; fn: () => unknown }[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const c of cleanups.reverse()) {
        try {
          await c.fn();
        } catch (err) {
          console.error(`clean-up "${c.label}" failed:`, err instanceof Error ? err.message : err);
        }
      }
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`\n${signal}: stopping the bench processes and removing the throwaway databases`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let ok = false;
  try {
    ok = (await body({ defer: (label, fn) => cleanups.push({ label, fn }) })) !== false;
  } catch (err) {
    console.error('\nbench failed:', err instanceof Error ? err.stack : err);
  } finally {
    await cleanUp();
  }
  process.exitCode = ok ? 0 : 1;
}

// ---------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------

const loadAvg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

export function environmentLine(engines: string): string {
  const cpus = os.cpus();
  return (
    `environment: engine ${engines}; Node ${process.version}; ${os.availableParallelism()} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}); ` +
    `load average (1/5/15 min) ${loadAvg()}; ${SETTINGS.rounds} rounds × ${SETTINGS.seconds} s, ${SETTINGS.connections} connections, ${SETTINGS.warmupSeconds} s warm-up`
  );
}

export const loadAverageNow = () => `load average now ${loadAvg()}`;

// ---------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------

export interface Measured extends LoadResult {
  subject: string;
  round: number;
  /** CPU time of the subject's process per request it was sent (ms): user + system. */
  serverCpuMsPerRequest: number;
  /** PostgreSQL: CPU time of the database's backend processes per request (ms). */
  dbCpuMsPerRequest?: number;
}

/** A subject's process: its CPU is read around each run (and its PostgreSQL backends' CPU where it has them). */
export interface CpuSource {
  cpu(): Promise<CpuReading>;
  dbCpuMs?(): Promise<number | undefined>;
  /** Where measured runs (not warm-ups) are recorded, to cut a CPU profile to them. */
  measured?: [number, number][];
}

/** How long the subject gets to finish the requests in flight when a timed run stops, before its CPU is read again. */
const SETTLE_MS = 300;

/**
 * One load run against `server`, with the server's CPU time around it. The
 * requests still in flight when a timed run stops are served after it, so the
 * CPU is read once they are done and divided by the requests sent.
 */
export async function measure(load: Child<unknown>, server: CpuSource, spec: LoadSpec, subject: string, round: number): Promise<Measured> {
  const db0 = await server.dbCpuMs?.();
  const before = await server.cpu();
  const r = await load.call<LoadResult>('run', { spec }, 0);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const after = await server.cpu();
  const db1 = await server.dbCpuMs?.();
  const cpuMs = (after.user - before.user + after.system - before.system) / 1000;
  if (round > 0) server.measured?.push([before.monoUs, after.monoUs]);
  const dbCpu = db0 !== undefined && db1 !== undefined && r.sent ? { dbCpuMsPerRequest: round3((db1 - db0) / r.sent) } : {};
  return { ...r, subject, round, serverCpuMsPerRequest: r.sent ? round3(cpuMs / r.sent) : NaN, ...dbCpu };
}

export interface Subject {
  /** Short key used in ratios ("service", "reference"). */
  key: string;
  label: string;
  /** The subject's process (its CPU is read around each run). */
  server: CpuSource;
  /** The load of one run (called anew for each run: distinct-slot plans move on). */
  spec(seconds: number): LoadSpec;
  /** Sees each run's result (e.g. to move a slot plan's index on). */
  after?(r: LoadResult): void;
}

/**
 * One unmeasured warm-up run per subject, then `rounds` rounds in which every
 * subject runs once; round r starts with subject r mod n (A B C, B C A, C A B…).
 */
export async function interleavedRounds(
  load: Child<unknown>,
  subjects: Subject[],
  o: { rounds?: number; seconds?: number; warmupSeconds?: number; quiet?: boolean } = {},
): Promise<Measured[]> {
  const rounds = o.rounds ?? SETTINGS.rounds;
  const seconds = o.seconds ?? SETTINGS.seconds;
  const warmup = o.warmupSeconds ?? SETTINGS.warmupSeconds;
  for (const s of subjects) {
    const w = await measure(load, s.server, s.spec(warmup), s.key, 0);
    s.after?.(w);
    if (!o.quiet) console.log(`  warm-up ${s.label}: ${w.requestsPerSec} req/s (${fmtStatuses(w.statuses)})`);
  }
  const rows: Measured[] = [];
  for (let round = 1; round <= rounds; round++) {
    const order = subjects.map((_, i) => subjects[(i + round - 1) % subjects.length]);
    for (const s of order) {
      const m = await measure(load, s.server, s.spec(seconds), s.key, round);
      s.after?.(m);
      rows.push(m);
      if (!o.quiet)
        console.log(
          `  round ${round} ${s.label}: ${m.requestsPerSec} req/s, p95 ${m.p95} ms, server CPU ${m.serverCpuMsPerRequest} ms/req`,
        );
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------
// Figures and tables
// ---------------------------------------------------------------------------

export const round2 = (x: number) => Math.round(x * 100) / 100;
export const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export const fmtStatuses = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, v]) => `${k}×${v}`)
    .join(' ') || '—';

export function printRuns(title: string, rows: Measured[], labelOf: (key: string) => string): void {
  console.log(`\n${title}\n`);
  const db = rows.some((r) => r.dbCpuMsPerRequest !== undefined);
  console.log(
    `| round | subject | responses | req/s | p50 ms | p95 ms | p99 ms | max ms | server CPU ms/req |${db ? ' PostgreSQL CPU ms/req |' : ''} load-gen CPU ms/req | bytes/resp | statuses | errors |`,
  );
  console.log(`|---:|---|---:|---:|---:|---:|---:|---:|---:|${db ? '---:|' : ''}---:|---:|---|---:|`);
  for (const r of rows) {
    console.log(
      `| ${r.round} | ${labelOf(r.subject)} | ${r.requests} | ${r.requestsPerSec} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} | ` +
        `${r.serverCpuMsPerRequest} |${db ? ` ${r.dbCpuMsPerRequest ?? '—'} |` : ''} ${r.clientCpuMsPerRequest} | ${r.bytesPerResponse} | ${fmtStatuses(r.statuses)} | ${r.errors} |`,
    );
  }
}

export interface Summary {
  key: string;
  label: string;
  requestsPerSec: number;
  p50: number;
  p95: number;
  serverCpuMsPerRequest: number;
  dbCpuMsPerRequest?: number;
  perRound: number[];
}

export function summarize(subjects: Pick<Subject, 'key' | 'label'>[], rows: Measured[]): Map<string, Summary> {
  const out = new Map<string, Summary>();
  for (const s of subjects) {
    const mine = rows.filter((r) => r.subject === s.key);
    out.set(s.key, {
      key: s.key,
      label: s.label,
      requestsPerSec: Math.round(median(mine.map((r) => r.requestsPerSec))),
      p50: round2(median(mine.map((r) => r.p50))),
      p95: round2(median(mine.map((r) => r.p95))),
      serverCpuMsPerRequest: round3(median(mine.map((r) => r.serverCpuMsPerRequest))),
      ...(mine.some((r) => r.dbCpuMsPerRequest !== undefined)
        ? { dbCpuMsPerRequest: round3(median(mine.map((r) => r.dbCpuMsPerRequest ?? NaN))) }
        : {}),
      perRound: mine.map((r) => r.requestsPerSec),
    });
  }
  return out;
}

export function printSummary(title: string, summaries: Map<string, Summary>): void {
  console.log(`\n${title}\n`);
  const db = [...summaries.values()].some((s) => s.dbCpuMsPerRequest !== undefined);
  console.log(
    `| subject | median req/s | median p50 ms | median p95 ms | median server CPU ms/req |${db ? ' median PostgreSQL CPU ms/req |' : ''} req/s per round |`,
  );
  console.log(`|---|---:|---:|---:|---:|${db ? '---:|' : ''}---|`);
  for (const s of summaries.values()) {
    console.log(
      `| ${s.label} | ${s.requestsPerSec} | ${s.p50} | ${s.p95} | ${s.serverCpuMsPerRequest} |${db ? ` ${s.dbCpuMsPerRequest ?? '—'} |` : ''} ${s.perRound.join(', ')} |`,
    );
  }
}

export interface Ratio {
  label: string;
  /** Median req/s of `a` over median req/s of `b`. */
  throughput: number;
  /** Median CPU per request of `b` over that of `a` (above 1: `a` spends less), PostgreSQL backends included. */
  cpuEfficiency: number;
  /** Median p95 of `a` over that of `b`. */
  p95: number;
  target?: number;
  meets?: boolean;
}

/** CPU per request of the subject and, on PostgreSQL, its database backends. */
const totalCpu = (s: Summary) => s.serverCpuMsPerRequest + (s.dbCpuMsPerRequest ?? 0);

export function ratio(label: string, a: Summary, b: Summary, target?: number): Ratio {
  const throughput = round3(a.requestsPerSec / b.requestsPerSec);
  return {
    label,
    throughput,
    cpuEfficiency: round3(totalCpu(b) / totalCpu(a)),
    p95: round3(a.p95 / b.p95),
    ...(target !== undefined ? { target, meets: throughput >= target } : {}),
  };
}

export function printRatios(title: string, ratios: Ratio[]): void {
  console.log(`\n${title}\n`);
  console.log('| ratio | throughput (median req/s) | CPU per request (inverse) | p95 | target | |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const r of ratios) {
    console.log(
      `| ${r.label} | **${r.throughput.toFixed(3)}** | ${r.cpuEfficiency.toFixed(3)} | ${r.p95.toFixed(2)}× | ${r.target !== undefined ? `≥ ${r.target}` : ''} | ` +
        `${r.meets === undefined ? '' : r.meets ? 'meets' : 'BELOW'} |`,
    );
  }
  console.log(
    "\n(throughput: a/b of median req/s; CPU per request (inverse): b's CPU ms/req over a's (the subject's process, plus its PostgreSQL " +
      "backends on PostgreSQL), the same comparison in CPU time, which depends less on what else runs on the machine; p95: a's median p95 over b's.)",
  );
}
