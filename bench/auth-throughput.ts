/**
 * Authenticated GET throughput through the service's full auth layer (bearer →
 * token row → principal with project scope: `GET /auth/whoami`) against
 *   - a bare Fastify GET (no auth, no database; target: service ≥ 0.6 × bare),
 *   - the reference server's authenticated GET (bench/reference-server.ts: the
 *     token row with its app and project roles from a cache filled by one indexed
 *     select, a constant-time compare of the secret's SHA-256, the JSON answer).
 * Each in its own process, autocannon in another; interleaved rounds, medians
 * and ratios, server CPU per request (bench/lib/harness.ts).
 *
 *   npm run bench:auth
 *   BENCH_SECONDS=10 BENCH_ROUNDS=5 npm run bench:auth
 *   BENCH_ENGINES=postgres npm run bench:auth    (the service on a throwaway PostgreSQL database)
 *   BENCH_PROFILE=1 npm run bench:auth           (the service under --cpu-prof)
 *   BENCH_PREVIOUS_REFERENCE=bench/prev.ts        (another reference server file run beside, to compare)
 */
import { BENCH_OPS_TOKEN } from './support.js';
import { benchEngines } from './lib/databases.js';
import {
  SETTINGS,
  environmentLine,
  interleavedRounds,
  loadAverageNow,
  printRatios,
  printRuns,
  printSummary,
  ratio,
  runBench,
  summarize,
  type Ratio,
  type Subject,
} from './lib/harness.js';
import { startBare, startLoad, startReference, startService } from './lib/subjects.js';

const APP_SECRET = 'bench-secret-0123456789abcdef0123456789';
const site = {
  brands: [{ key: 'b', name: 'Bench Brand' }],
  projects: [{ key: 'p', brand: 'b', name: 'Bench Tower', timezone: 'Asia/Bangkok', currency: 'THB' }],
  apps: [
    {
      key: 'app',
      appId: 'bench-app',
      appSecret: APP_SECRET,
      name: 'Bench',
      projects: ['p'],
      projectRoles: [{ project: 'p', permissions: ['MEETING_UPDATE'] }],
    },
  ],
};

await runBench(async (ctx) => {
  const engines = benchEngines();
  console.log(environmentLine(engines.join(', ')));
  console.log('(each party in its own process; the service without background workers)\n');
  const load = await startLoad(ctx);
  const bare = await startBare(ctx);
  const ref = await startReference(ctx, { rooms: 1, timezone: 'Asia/Bangkok' });
  const previous = process.env.BENCH_PREVIOUS_REFERENCE;
  const prev = previous
    ? await startReference(ctx, { rooms: 1, timezone: 'Asia/Bangkok', entry: previous, name: 'previous-reference' })
    : undefined;

  const subjects: Subject[] = [
    {
      key: 'bare',
      label: 'bare Fastify GET /bare',
      server: bare,
      spec: (seconds) => ({ url: bare.ready.url, path: '/bare', connections: SETTINGS.connections, duration: seconds }),
    },
    {
      key: 'reference',
      label: 'reference server authenticated GET /whoami',
      server: ref,
      spec: (seconds) => ({
        url: ref.ready.url,
        path: '/whoami',
        headers: { authorization: `Bearer ${ref.ready.token}` },
        connections: SETTINGS.connections,
        duration: seconds,
      }),
    },
  ];
  if (prev)
    subjects.push({
      key: 'previous-reference',
      label: `previous reference authenticated GET /whoami (${previous})`,
      server: prev,
      spec: (seconds) => ({
        url: prev.ready.url,
        path: '/whoami',
        headers: { authorization: `Bearer ${prev.ready.token}` },
        connections: SETTINGS.connections,
        duration: seconds,
      }),
    });
  for (const engine of engines) {
    const svc = await startService(ctx, engine);
    const applied = await svc.http('POST', '/ops/v1/apply', site, BENCH_OPS_TOKEN);
    if (applied.status !== 200) throw new Error(`apply failed: ${JSON.stringify(applied.body)}`);
    const token = await svc.http('POST', '/auth/accessToken', {
      grant_type: 'app_credentials',
      app_id: 'bench-app',
      app_secret: APP_SECRET,
    });
    if (token.status !== 201) throw new Error(`token failed: ${JSON.stringify(token.body)}`);
    const check = await svc.http('GET', '/auth/whoami', undefined, token.body.access_token);
    if (check.status !== 200 || check.body.data.projects.length !== 1) throw new Error(`whoami: ${JSON.stringify(check.body)}`);
    subjects.push({
      key: `service:${engine}`,
      label: `service GET /auth/whoami (${engine})`,
      server: svc,
      spec: (seconds) => ({
        url: svc.url,
        path: '/auth/whoami',
        headers: { authorization: `Bearer ${token.body.access_token}` },
        connections: SETTINGS.connections,
        duration: seconds,
      }),
    });
  }
  const refCheck = await fetch(`${ref.ready.url}/whoami`, { headers: { authorization: `Bearer ${ref.ready.token}` } });
  if (refCheck.status !== 200) throw new Error(`reference whoami -> ${refCheck.status}`);
  const labelOf = (key: string) => subjects.find((s) => s.key === key)?.label ?? key;

  console.log(`\n${SETTINGS.rounds} interleaved rounds\n`);
  const rows = await interleavedRounds(load, subjects);
  printRuns(
    `every measured run (${SETTINGS.connections} connections, ${SETTINGS.seconds} s each; server CPU = the subject's process)`,
    rows,
    labelOf,
  );
  const sums = summarize(subjects, rows);
  printSummary('medians over the rounds', sums);
  const get = (k: string) => sums.get(k)!;
  const ratios: Ratio[] = [];
  for (const engine of engines) {
    ratios.push(ratio(`service whoami (${engine}) / bare Fastify GET`, get(`service:${engine}`), get('bare'), 0.6));
    ratios.push(ratio(`service whoami (${engine}) / reference authenticated GET`, get(`service:${engine}`), get('reference')));
  }
  ratios.push(ratio('reference authenticated GET / bare Fastify GET', get('reference'), get('bare')));
  if (prev) ratios.push(ratio('previous reference / reference authenticated GET', get('previous-reference'), get('reference')));
  if (engines.length === 2) ratios.push(ratio('service PostgreSQL / service SQLite', get('service:postgres'), get('service:sqlite')));
  printRatios('ratios of the medians', ratios);

  const ok = rows.every((r) => r.errors === 0 && Object.keys(r.statuses).every((s) => s === '200'));
  console.log(`\n${environmentLine(engines.join(', '))}`);
  console.log(`${loadAverageNow()} — ${ok ? 'every answer was 200' : 'SOME ANSWERS WERE NOT 200'}`);
  return ok;
});
