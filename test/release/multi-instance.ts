/**
 * Several instances of a release behind a real proxy (issue 25 §2). Run as root, its own CI step:
 *
 *   RELEASE_DIR=/path/to/release node --import tsx test/release/multi-instance.ts
 *
 * RELEASE_DIR is a release tree (dist/, package.json, production node_modules; default: this
 * checkout after `npm run build`); TEST_PG_ADMIN_URL names the PostgreSQL administrative database.
 * A throwaway database, a self-signed certificate (openssl) and Debian's nginx (TLS, the repository's
 * deploy/nginx/booking-proxy.conf) in a temp prefix; two instances started at once on the empty
 * database as the unprivileged user `booking`. Through the proxy it checks a token, a booking and its
 * signed webhook (once), the console's live stream seeing bookings made on either instance, that
 * TRUST_PROXY gives the token-failure limit the real client address, and a SIGTERM mid-load (no
 * failed request, no lost webhook, exit 0 within SHUTDOWN_TIMEOUT_MS). Prints each check as it
 * passes and the figures it measured; on failure exits 1 with the instances' and nginx's logs.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DateTime } from 'luxon';
import { slotBodies } from '../../bench/lib/slots.js';
import {
  CheckFailed,
  check,
  checkReadableByServiceUser,
  client,
  createDatabase,
  ensureServiceUser,
  errorLines,
  freePort,
  makeCertificate,
  makeTempDir,
  sleep,
  startInstance,
  startNginx,
  startReceiver,
  waitUntil,
  type Client,
  type Delivery,
  type Instance,
  type Nginx,
  type ThrowawayDatabase,
} from './harness.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const RELEASE_DIR = resolve(process.env.RELEASE_DIR || REPO);
const ADMIN_URL = process.env.TEST_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SHUTDOWN_TIMEOUT_MS = 10_000;
const TOKEN_FAILURES = 5;
const LOAD_MS = Number(process.env.RELEASE_LOAD_SECONDS || 6) * 1000;
const LOAD_CONNECTIONS = 8;
const OPS_TOKEN = `ops_${randomBytes(24).toString('base64url')}`;
const TZ = 'Asia/Bangkok';
const ROOMS = 24;
const APP_ID = 'release-app';
const APP_SECRET = `release-secret-${randomBytes(16).toString('hex')}`;
const HOOK_SECRET = `release-webhook-${randomBytes(16).toString('hex')}`;
/** The line main.ts logs once it ran migrations (only the instance that ran them). */
const MIGRATED = '"msg":"migrations applied"';

interface World {
  dir: string;
  db: ThrowawayDatabase;
  ca: Buffer;
  nginx: Nginx;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  instances: Instance[];
  env: Record<string, string>;
  proxy: Client;
  token: string;
  roomIds: string[];
  nextBody: (i: number) => string;
  slot: number;
}

function site(hookUrl: string) {
  const weekdays = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
  const config = {
    dayConfig: Object.fromEntries(weekdays.map((d) => [d, { availableTime: { start: '06:00:00', end: '23:00:00' } }])),
    minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
    maxAdvanceBookingDays: 365,
    maxDurationMinutes: 480,
  };
  return {
    brands: [{ key: 'b', name: 'Release Brand' }],
    projects: [
      { key: 'p', brand: 'b', name: 'Release Tower', timezone: TZ, currency: 'THB', defaultCleanupMinutes: 10, bookingGridMinutes: 15 },
    ],
    zones: [{ key: 'z', project: 'p', name: 'Main' }],
    floors: [{ key: 'f', zone: 'z', name: '1F' }],
    rooms: Array.from({ length: ROOMS }, (_, i) => ({
      key: `r${i}`,
      floor: 'f',
      name: `Room ${i}`,
      capacity: 8,
      isPublic: true,
      cleanupMinutes: 15,
      config,
    })),
    apps: [
      {
        key: 'app',
        appId: APP_ID,
        appSecret: APP_SECRET,
        name: 'Release',
        projects: ['p'],
        projectRoles: [{ project: 'p', permissions: ['MEETING_UPDATE'] }],
      },
    ],
    webhooks: [{ key: 'hook', project: 'p', url: hookUrl, secret: HOOK_SECRET, events: ['ROOM_BOOK'] }],
  };
}

function instanceEnv(dbUrl: string, publicUrl: string): Record<string, string> {
  return {
    BOOKING_ENV: 'uat',
    DATABASE_URL: dbUrl,
    WEBHOOK_ALLOW_LOOPBACK: '1',
    DEMO: '0',
    OPS_TOKEN,
    SECRETS_KEY: randomBytes(32).toString('hex'),
    TRUST_PROXY: '127.0.0.1',
    TOKEN_FAILURES_PER_ADDRESS: String(TOKEN_FAILURES),
    TOKEN_FAILURES_PER_APP: String(TOKEN_FAILURES),
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    PUBLIC_BASE_URL: publicUrl,
    PARTNER_RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: 'info',
  };
}

const ready = async (i: Instance) => {
  const res = await fetch(`${i.url}/readyz`).catch(() => null);
  return res?.status === 200;
};

/** Both instances started at the same moment on the empty database: one migrates, both serve. */
async function startBoth(w: World, ports: number[]): Promise<void> {
  w.instances = ['A', 'B'].map((name, i) => startInstance({ name, port: ports[i], releaseDir: RELEASE_DIR, logDir: w.dir, env: w.env }));
  const t0 = performance.now();
  for (const i of w.instances) {
    const died = i.exited.then((e) => {
      throw new CheckFailed(`instance ${i.name} exited (code ${e.code}) before it was ready`);
    });
    await Promise.race([waitUntil(`instance ${i.name} /readyz`, 60_000, () => ready(i)), died]);
  }
  check(true, 'both instances, started at once on the empty database, are ready', `${Math.round(performance.now() - t0)} ms`);
  const migrated = w.instances.filter((i) => i.log().includes(MIGRATED)).map((i) => i.name);
  check(
    migrated.length === 1,
    'exactly one instance ran the migrations (under the lock), the other found them done',
    `instance ${migrated.join(', ') || 'none'}`,
  );
  const errors = w.instances.flatMap((i) => errorLines(i.log()).map((l) => `${i.name}: ${l}`));
  check(errors.length === 0, 'no error lines in either log', errors.join('\n'));
}

async function book(c: Client, w: World, token = w.token): Promise<string> {
  const res = await c.request('POST', '/meetings', { token, body: JSON.parse(w.nextBody(w.slot++)) });
  if (res.status !== 201) throw new CheckFailed(`POST /meetings answered ${res.status}: ${res.text.slice(0, 500)}`);
  return res.body.data._id as string;
}

/** Through the proxy: apply the site, take a token, book; the signed webhook arrives exactly once. */
async function bookThroughProxy(w: World): Promise<void> {
  const health = await w.proxy.request('GET', '/readyz');
  check(health.status === 200, 'GET /readyz through nginx (TLS, certificate trusted as the only CA)', `status ${health.status}`);
  const applied = await w.proxy.request('POST', '/ops/v1/apply', { token: OPS_TOKEN, body: site(w.receiver.url) });
  check(
    applied.status === 200,
    'POST /ops/v1/apply through the proxy',
    `status ${applied.status} ${applied.status === 200 ? '' : applied.text}`,
  );
  const rooms = applied.body.data.idsByKind.rooms as Record<string, string>;
  w.roomIds = Array.from({ length: ROOMS }, (_, i) => rooms[`r${i}`]);
  const firstDay = DateTime.now().setZone(TZ).startOf('day').plus({ days: 1 }).toISODate()!;
  w.nextBody = slotBodies({ roomIds: w.roomIds, firstDay, zone: TZ, firstHour: 6, hoursPerDay: 16, minutes: 45, start: 0 });
  const token = await w.proxy.request('POST', '/auth/accessToken', {
    body: { grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET },
  });
  check(token.status === 201, 'POST /auth/accessToken through the proxy', `status ${token.status}`);
  w.token = token.body.access_token as string;
  const id = await book(w.proxy, w);
  check(true, 'POST /meetings through the proxy', `201, meeting ${id}`);
  const forIt = () => w.receiver.deliveries.filter((d) => d.meetingId === id);
  await waitUntil(`the ROOM_BOOK webhook of ${id}`, 20_000, () => forIt().length > 0);
  await sleep(4000);
  const got = forIt();
  check(
    got.length === 1 && got[0].verified && got[0].type === 'ROOM_BOOK',
    'the signed ROOM_BOOK webhook arrived exactly once (signature verified; none more 4 s later)',
    JSON.stringify(got),
  );
}

/** GET /ops/v1/stream through nginx sees a booking made directly on each instance. */
async function liveStream(w: World): Promise<void> {
  const seen: string[] = [];
  const { pathname, port } = new URL('/ops/v1/stream', w.nginx.url);
  const req = https.get({ host: 'localhost', port, path: pathname, ca: w.ca, headers: { authorization: `Bearer ${OPS_TOKEN}` } });
  const status = await new Promise<number>((resolveStatus, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let buffered = '';
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const events = buffered.split('\n\n');
        buffered = events.pop()!;
        for (const e of events) {
          const data = e.split('\n').find((l) => l.startsWith('data: '));
          if (e.includes('event: change') && data) seen.push((JSON.parse(data.slice(6)) as { id: string }).id);
        }
      });
      res.on('error', () => {});
      resolveStatus(res.statusCode ?? 0);
    });
  });
  try {
    check(status === 200, 'GET /ops/v1/stream through the proxy', `status ${status}`);
    await sleep(500);
    const [a, b] = w.instances.map((i) => client(i.url));
    const onA = await book(a, w);
    const onB = await book(b, w);
    a.close();
    b.close();
    const t0 = performance.now();
    await waitUntil('both bookings on the live stream', 15_000, () => seen.includes(onA) && seen.includes(onB));
    check(
      true,
      'the live stream through nginx shows a booking made on instance A and one made on instance B',
      `${Math.round(performance.now() - t0)} ms`,
    );
  } finally {
    req.destroy();
  }
}

/** TRUST_PROXY=127.0.0.1: the token-failure limit counts the client's address that nginx passes on, not a spoofed one. */
async function trustProxy(w: World): Promise<void> {
  const from2 = client(w.nginx.url, { ca: w.ca, localAddress: '127.0.0.2' });
  const from3 = client(w.nginx.url, { ca: w.ca, localAddress: '127.0.0.3' });
  const tokenBody = (secret: string) => ({ body: { grant_type: 'app_credentials', app_id: APP_ID, app_secret: secret } });
  try {
    let attempts = 0;
    let last = 0;
    while (attempts < TOKEN_FAILURES * 3) {
      const res = await from2.request('POST', '/auth/accessToken', tokenBody('wrong-secret-0123456789abcdef0123456789'));
      attempts++;
      last = res.status;
      if (res.status === 429) {
        check(res.body?.code === 'KS036', 'wrong app_secret from 127.0.0.2 until 429 KS036', `after ${attempts} attempts`);
        break;
      }
    }
    check(last === 429, 'the token-failure limit was reached from 127.0.0.2', `last status ${last} after ${attempts} attempts`);
    const other = await from3.request('POST', '/auth/accessToken', tokenBody(APP_SECRET));
    check(
      other.status === 201,
      '127.0.0.3 with the right secret still gets a token (the limit is per client address)',
      `status ${other.status}`,
    );
    const spoofed = await from2.request('POST', '/auth/accessToken', {
      ...tokenBody(APP_SECRET),
      headers: { 'x-forwarded-for': '127.0.0.9' },
    });
    check(
      spoofed.status === 429 && spoofed.body?.code === 'KS036',
      '127.0.0.2 sending X-Forwarded-For: 127.0.0.9 is still limited (the spoof is not believed)',
      `status ${spoofed.status}`,
    );
  } finally {
    from2.close();
    from3.close();
  }
}

interface LoadResult {
  statuses: Map<string, number>;
  created: string[];
  requests: number;
  seconds: number;
  exitMs: number | null;
  exitCode: number | null;
}

/** Load through the proxy on LOAD_CONNECTIONS kept-alive connections; instance A gets SIGTERM a third of the way in. */
async function loadWithSigterm(w: World): Promise<LoadResult> {
  const c = client(w.nginx.url, { ca: w.ca, maxSockets: LOAD_CONNECTIONS });
  const statuses = new Map<string, number>();
  const created: string[] = [];
  const count = (k: string) => statuses.set(k, (statuses.get(k) ?? 0) + 1);
  const t0 = performance.now();
  const until = t0 + LOAD_MS;
  const a = w.instances[0];
  let sigtermAt = 0;
  const exit = a.exited.then((e) => ({ ...e, ms: e.at - sigtermAt }));
  const sigterm = sleep(LOAD_MS / 3).then(() => {
    sigtermAt = performance.now();
    a.child.kill('SIGTERM');
    console.log(`     SIGTERM sent to instance A at ${Math.round(sigtermAt - t0)} ms of ${LOAD_MS} ms of load`);
  });
  const worker = async () => {
    while (performance.now() < until) {
      try {
        const res = await c.request('POST', '/meetings', { token: w.token, body: JSON.parse(w.nextBody(w.slot++)) });
        count(`POST ${res.status}${res.status >= 300 ? ` ${res.body?.code ?? res.text.slice(0, 80)}` : ''}`);
        if (res.status !== 201) continue;
        created.push(res.body.data._id as string);
        const got = await c.request('GET', `/meetings/${res.body.data._id}`, { token: w.token });
        count(`GET ${got.status}${got.status >= 300 ? ` ${got.body?.code ?? got.text.slice(0, 80)}` : ''}`);
      } catch (err) {
        count(`error ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
  };
  await Promise.all([...Array.from({ length: LOAD_CONNECTIONS }, worker), sigterm]);
  const seconds = (performance.now() - t0) / 1000;
  c.close();
  const e = await Promise.race([exit, sleep(SHUTDOWN_TIMEOUT_MS + 5000).then(() => null)]);
  const requests = [...statuses.values()].reduce((s, n) => s + n, 0);
  return { statuses, created, requests, seconds, exitMs: e ? Math.round(e.ms) : null, exitCode: e ? e.code : null };
}

async function sigtermMidLoad(w: World): Promise<void> {
  const r = await loadWithSigterm(w);
  const table = [...r.statuses.entries()].sort().map(([k, n]) => `${k}: ${n}`);
  console.log(`     load: ${r.requests} requests in ${r.seconds.toFixed(1)} s on ${LOAD_CONNECTIONS} connections: ${table.join(', ')}`);
  console.log(
    `     proxy throughput: ${Math.round(r.requests / r.seconds)} requests/s (${Math.round(r.created.length / r.seconds)} bookings/s)`,
  );
  const retried = [...w.nginx.retried().entries()].map(([k, n]) => `[${k}]: ${n}`);
  console.log(`     nginx sent ${retried.length ? retried.join(', ') : 'no request'} to the other instance (upstream statuses per try)`);
  const failed = [...r.statuses.entries()].filter(([k]) => !/^(POST 201|GET 200)$/.test(k));
  check(
    failed.length === 0,
    'every request during the SIGTERM succeeded (no 502/503/reset)',
    failed.length ? table.join(', ') : `${r.requests} requests`,
  );
  check(r.exitCode === 0, 'instance A exited 0 after SIGTERM', `code ${r.exitCode}`);
  check(
    r.exitMs !== null && r.exitMs <= SHUTDOWN_TIMEOUT_MS,
    `instance A exited within SHUTDOWN_TIMEOUT_MS (${SHUTDOWN_TIMEOUT_MS} ms)`,
    `${r.exitMs} ms`,
  );
  const byMeeting = new Map<string, Delivery[]>();
  for (const d of w.receiver.deliveries) if (d.meetingId) byMeeting.set(d.meetingId, [...(byMeeting.get(d.meetingId) ?? []), d]);
  const t0 = performance.now();
  const missing = () => r.created.filter((id) => !byMeeting.has(id) && !w.receiver.deliveries.some((d) => d.meetingId === id));
  await waitUntil(`the webhooks of ${r.created.length} bookings`, 60_000 + 100 * r.created.length, () => {
    for (const d of w.receiver.deliveries) if (d.meetingId && !byMeeting.has(d.meetingId)) byMeeting.set(d.meetingId, [d]);
    return missing().length === 0;
  }).catch((err: Error) => {
    throw new CheckFailed(`${err.message}; missing ${missing().length}: ${missing().slice(0, 10).join(', ')}`);
  });
  check(
    true,
    'no job lost: every booking created under load got its webhook',
    `${r.created.length} bookings, all in ${Math.round(performance.now() - t0)} ms`,
  );
  await sleep(3000);
  const unverified = w.receiver.deliveries.filter((d) => !d.verified);
  check(unverified.length === 0, 'every delivery carried a valid signature', JSON.stringify(unverified.slice(0, 3)));
  const per = new Map<string, number>();
  for (const d of w.receiver.deliveries) if (d.meetingId) per.set(d.meetingId, (per.get(d.meetingId) ?? 0) + 1);
  const duplicates = [...per.values()].filter((n) => n > 1).length;
  console.log(`     duplicate deliveries: ${duplicates} booking(s) got more than one webhook`);
}

async function restartA(w: World): Promise<void> {
  const old = w.instances[0];
  const a = startInstance({ name: 'A2', port: old.port, releaseDir: RELEASE_DIR, logDir: w.dir, env: w.env });
  w.instances.push(a);
  await waitUntil('instance A (restarted) /readyz', 30_000, () => ready(a));
  const direct = client(a.url);
  const id = await book(direct, w);
  direct.close();
  check(true, 'instance A started again and serves', `booked ${id} on it directly`);
  // nginx tries it again once its fail_timeout (5 s) has passed: requests through the proxy reach it.
  const t0 = performance.now();
  await waitUntil('a request through nginx on the restarted instance A', 30_000, async () => {
    const res = await w.proxy.request('GET', `/meetings/${id}`, { token: w.token });
    if (res.status !== 200) throw new CheckFailed(`GET /meetings/${id} through the proxy answered ${res.status}`);
    return a.log().includes('"host":"localhost"');
  });
  check(true, 'nginx sends requests to the restarted instance A again', `after ${Math.round(performance.now() - t0)} ms`);
  const errors = w.instances.flatMap((i) => errorLines(i.log()).map((l) => `${i.name}: ${l}`));
  check(errors.length === 0, 'no error lines in any instance log', errors.join('\n'));
}

async function setUp(w: World): Promise<number[]> {
  console.log(`release: ${RELEASE_DIR}\nwork dir: ${w.dir}`);
  ensureServiceUser();
  checkReadableByServiceUser(RELEASE_DIR);
  w.db = await createDatabase(ADMIN_URL);
  const cert = makeCertificate(w.dir);
  w.ca = cert.pem;
  w.receiver = await startReceiver(HOOK_SECRET);
  const ports = [await freePort(), await freePort()];
  w.nginx = await startNginx({ dir: w.dir, cert: cert.cert, key: cert.key, upstreams: ports, repoRoot: REPO });
  check(true, "nginx terminates TLS on 127.0.0.1 with the repository's booking-proxy.conf", w.nginx.url);
  w.env = instanceEnv(w.db.url, w.nginx.url);
  w.proxy = client(w.nginx.url, { ca: w.ca });
  return ports;
}

async function tearDown(w: World): Promise<void> {
  w.proxy?.close();
  for (const i of w.instances) if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill('SIGTERM');
  await Promise.race([Promise.all(w.instances.map((i) => i.exited)), sleep(SHUTDOWN_TIMEOUT_MS + 2000)]);
  for (const i of w.instances) if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill('SIGKILL');
  await w.nginx?.stop();
  await w.receiver?.close();
  await w.db?.drop().catch((err: Error) => console.error(`could not drop the test database: ${err.message}`));
}

function printLogs(w: World): void {
  for (const i of w.instances) console.error(`--- instance ${i.name} (port ${i.port}) log\n${i.log()}`);
  if (w.nginx) console.error(w.nginx.logs());
}

async function main(): Promise<void> {
  const started = performance.now();
  const w = { slot: 0, instances: [] as Instance[] } as unknown as World;
  w.dir = makeTempDir(tmpdir());
  let failure: unknown = null;
  try {
    const ports = await setUp(w);
    await startBoth(w, ports);
    await bookThroughProxy(w);
    await liveStream(w);
    await trustProxy(w);
    await sigtermMidLoad(w);
    await restartA(w);
  } catch (err) {
    failure = err;
  }
  if (failure) printLogs(w);
  await tearDown(w);
  if (failure) {
    console.error(`\nnot ok - ${failure instanceof CheckFailed ? failure.message : ((failure as Error).stack ?? String(failure))}`);
    console.error(`(logs kept in ${w.dir})`);
    process.exit(1);
  }
  rmSync(w.dir, { recursive: true, force: true });
  console.log(`\nall checks passed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  process.exit(0);
}

await main();
