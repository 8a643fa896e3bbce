/**
 * Starting the bench processes: the service (on a throwaway database, optionally
 * under --cpu-prof), the reference server, the bare baseline and the load
 * generator. Each registers its own clean-up with the bench context.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { modulePath, startChild, type Child } from './children.js';
import { createBenchDatabase, tempDir, type Engine } from './databases.js';
import type { BenchContext } from './harness.js';
import { printProfileTop } from './profile-top.js';

export interface ServiceReady {
  url: string;
  engine: Engine;
  pid: number;
  /** With BENCH_SEED=search: what the seeding made (see search-site.ts). */
  site?: { projectId: string; today: number; headers: Record<string, string>; counts: Record<string, number>; windowCount: number };
}

export interface ServiceProcess extends Child<ServiceReady> {
  url: string;
  engine: Engine;
  /** PostgreSQL: CPU ms used so far by the database's backend processes. */
  dbCpuMs?(): Promise<number | undefined>;
  /** JSON over HTTP to the service. */
  http(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
}

/** BENCH_PROFILE=1: the service under --cpu-prof; BENCH_PROFILE=all: the reference server too. */
export const PROFILING = ['1', 'true', 'all'].includes(process.env.BENCH_PROFILE ?? '');
const PROFILING_ALL = process.env.BENCH_PROFILE === 'all';
let profileRoot: string | undefined;

/** Where --cpu-prof profiles go: BENCH_PROFILE_DIR, else a new directory under the system temp dir (kept). */
function profileDir(name: string): string {
  profileRoot ??=
    process.env.BENCH_PROFILE_DIR || join(tmpdir(), `booking-bench-profile-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const dir = join(profileRoot, name.replace(/[^a-z0-9-]+/gi, '-'));
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function startService(
  ctx: BenchContext,
  engine: Engine,
  o: { seed?: 'search'; name?: string; profile?: boolean } = {},
): Promise<ServiceProcess> {
  const name = o.name ?? `service:${engine}`;
  const db = await createBenchDatabase(engine);
  ctx.defer(`drop ${db.where}`, () => db.drop());
  const prof = (o.profile ?? PROFILING) ? profileDir(name) : undefined;
  const child = await startChild<ServiceReady>({
    name,
    entry: modulePath('./service-main.ts', import.meta.url),
    env: { BENCH_SERVICE_DATABASE_URL: db.url, BENCH_SEED: o.seed },
    nodeArgs: prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
    readyTimeoutMs: o.seed ? 30 * 60_000 : 120_000,
  });
  ctx.defer(`stop ${name}`, () => stopAndReport(child, prof));
  console.log(`${name}: pid ${child.pid}, ${child.ready.url}, ${db.where}${prof ? `, profiling into ${prof}` : ''}`);
  const url = child.ready.url;
  return {
    ...child,
    url,
    engine,
    ...(db.serverCpuMs ? { dbCpuMs: db.serverCpuMs } : {}),
    async http(method, path, body, token) {
      const res = await fetch(url + path, {
        method,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
  };
}

/** Stops a child and, when it ran under --cpu-prof, prints where its profile went and its top functions. */
async function stopAndReport(child: Child<any>, prof: string | undefined): Promise<void> {
  await child.stop();
  if (!prof) return;
  const files = readdirSync(prof).filter((f) => f.endsWith('.cpuprofile'));
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread, the others are tsx's loader thread.
  const main = files.filter((f) => f.split('.')[4] === '0');
  for (const f of main) {
    console.log(`\n${child.name} CPU profile (--cpu-prof, the whole life of the process): ${join(prof, f)}`);
    if (child.measured.length) {
      console.log('(the tables count only the samples taken during the measured runs against it, warm-ups, start-up and set-up left out;');
      console.log(` npm run bench:profile-top -- ${join(prof, f)} shows the whole profile)`);
    }
    printProfileTop(join(prof, f), 25, child.measured.length ? child.measured : undefined);
  }
  const others = files.filter((f) => !main.includes(f));
  if (others.length) console.log(`\n(other threads of ${child.name}, e.g. the tsx loader: ${others.map((f) => join(prof, f)).join(', ')})`);
  if (!files.length) console.log(`\n${child.name}: no CPU profile was written in ${prof}`);
}

export async function startBare(ctx: BenchContext): Promise<Child<{ url: string }>> {
  const child = await startChild<{ url: string }>({ name: 'bare', entry: modulePath('./bare-main.ts', import.meta.url) });
  ctx.defer('stop bare', () => child.stop());
  console.log(`bare Fastify: pid ${child.pid}, ${child.ready.url}`);
  return child;
}

export interface ReferenceReady {
  url: string;
  pid: number;
  /** Bearer token of the reference's app. */
  token: string;
  projectId: string;
  roomIds: string[];
  contendedRoomId: string;
  dbFile: string;
}

/** `o.entry`: another reference server file (BENCH_PREVIOUS_REFERENCE: a previous version, to compare rates). */
export async function startReference(
  ctx: BenchContext,
  o: { rooms: number; timezone: string; entry?: string; name?: string },
): Promise<Child<ReferenceReady>> {
  const tmp = tempDir('booking-bench-reference-');
  ctx.defer(`remove ${tmp.dir}`, () => tmp.remove());
  const name = o.name ?? 'reference';
  const prof = PROFILING_ALL ? profileDir(name) : undefined;
  const child = await startChild<ReferenceReady>({
    name,
    entry: o.entry ?? modulePath('../reference-server.ts', import.meta.url),
    env: { REFERENCE_DB: join(tmp.dir, 'reference.sqlite'), REFERENCE_ROOMS: String(o.rooms), REFERENCE_TIMEZONE: o.timezone },
    nodeArgs: prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
  });
  ctx.defer(`stop ${name}`, () => stopAndReport(child, prof));
  console.log(`${name} server: pid ${child.pid}, ${child.ready.url}, SQLite file in ${tmp.dir}${prof ? `, profiling into ${prof}` : ''}`);
  return child;
}

/**
 * The PostgreSQL reference server (bench/lib/pg-reference.ts) on a throwaway database of the same PostgreSQL
 * server as the service; its backends' CPU is read like the service's.
 */
export async function startPgReference(
  ctx: BenchContext,
  o: { rooms: number; timezone: string },
): Promise<Child<ReferenceReady> & { dbCpuMs?(): Promise<number | undefined> }> {
  const db = await createBenchDatabase('postgres', { throwaway: true });
  ctx.defer(`drop ${db.where}`, () => db.drop());
  const prof = PROFILING_ALL ? profileDir('reference-postgres') : undefined;
  const child = await startChild<ReferenceReady>({
    name: 'reference:postgres',
    entry: modulePath('./pg-reference.ts', import.meta.url),
    env: { REFERENCE_PG_URL: db.url, REFERENCE_ROOMS: String(o.rooms), REFERENCE_TIMEZONE: o.timezone },
    nodeArgs: prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
  });
  ctx.defer('stop reference:postgres', () => stopAndReport(child, prof));
  console.log(`PostgreSQL reference server: pid ${child.pid}, ${child.ready.url}, ${db.where}${prof ? `, profiling into ${prof}` : ''}`);
  return { ...child, ...(db.serverCpuMs ? { dbCpuMs: db.serverCpuMs } : {}) };
}

export async function startLoad(ctx: BenchContext): Promise<Child> {
  const child = await startChild({ name: 'load generator', entry: modulePath('./load-main.ts', import.meta.url) });
  ctx.defer('stop load generator', () => child.stop());
  console.log(`load generator (autocannon): pid ${child.pid}`);
  return child;
}
