/**
 * Doors over ISAPI, measured from outside: the service (src/main.ts), the load driver (this process) and
 * the HikVision ISAPI terminal stand-ins (bench/isapi-terminals.ts, DEVICES + 1 of them) run as separate
 * processes; the driver watches the terminals through the stand-ins' control server, not the service.
 *
 *   A. From scratch: MEMBERS partner members with two cards and a face each are provisioned (no devices
 *      yet), then one site apply adds DEVICES ISAPI terminals to their access group. Timed from the apply
 *      until every terminal holds every member (user, both cards, face); also until the service reports
 *      every device settled (pendingChanges 0).
 *   B. Booking → door: ROUNDS bookings, one at a time, each by another of those members (act_as token of
 *      the partner app), of a room whose accessDevices is one more ISAPI terminal (in a group the app does
 *      not grant). Timed from the POST /meetings answer until that terminal holds the member with the
 *      booking's window (Valid: 15 min before the start to the end, device-local). Median and p95. Each
 *      booking waits a random 0–600 ms first, so rounds do not fall in step with the service's polls.
 *
 *   npm run bench:doors
 *   BENCH_MEMBERS=200 BENCH_DEVICES=5 BENCH_ROUNDS=20 npm run bench:doors
 *   BENCH_DATABASE_URL=postgres://… npm run bench:doors        (PostgreSQL; an empty database)
 */
import type { ChildProcess } from 'node:child_process';
import { startScript, stopScript } from './lib/scripts.js';
import { apiCall, pool, quantile } from './lib/driver.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import sharp from 'sharp';

const MEMBERS = Number(process.env.BENCH_MEMBERS || 1000);
const DEVICES = Number(process.env.BENCH_DEVICES || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 20);
const OPS = 'bench-ops-token-0123456789abcdef0123456789';
const APP_ID = 'bench-partner';
const APP_SECRET = 'bench-partner-secret-0123456789abcdef0123';
const TZ = 'Asia/Bangkok';
const CONCURRENCY = 8;
const ROUND_TIMEOUT_MS = 60_000;

interface Terminal {
  url: string;
  username: string;
  password: string;
}

let base = '';
let control = '';

const call = (method: string, path: string, body?: unknown, token = OPS): Promise<any> => apiCall(base, token, method, path, body);

async function terminalsRead(path: string): Promise<any> {
  return (await fetch(control + path)).json();
}

const isapi = (t: Terminal) => ({ kind: 'isapi', baseUrl: t.url, username: t.username, password: t.password });

/** The site: DEVICES group terminals the partner app grants (none in phase 0), and the board room's door. */
function site(terminals: Terminal[], devices: number) {
  const door = terminals[terminals.length - 1]!;
  return {
    brands: [{ key: 'b', name: 'Bench' }],
    projects: [{ key: 'p', brand: 'b', name: 'Bench Tower', timezone: TZ, currency: 'THB' }],
    zones: [{ key: 'z', project: 'p', name: 'Z' }],
    floors: [{ key: 'f', zone: 'z', name: '1F' }],
    rooms: [{ key: 'board', floor: 'f', name: 'Board room', capacity: 8, accessDevices: ['door'] }],
    accessGroups: [
      {
        key: 'g',
        project: 'p',
        name: 'All doors',
        devices: terminals
          .slice(0, devices)
          .map((t, i) => ({ key: `d${i}`, name: `Reader ${i}`, kind: 'face-card-reader', transport: isapi(t) })),
      },
      {
        key: 'doors',
        project: 'p',
        name: 'Room doors',
        devices: [{ key: 'door', name: 'Board room door', kind: 'face-card-reader', transport: isapi(door) }],
      },
    ],
    apps: [{ key: 'a', appId: APP_ID, appSecret: APP_SECRET, name: 'Bench partner', projects: ['p'], accessGroups: ['g'], actAs: true }],
  };
}

/** A small real PNG (64×64, one colour per member): the service turns it into the terminal's baseline JPEG. */
async function face(i: number): Promise<string> {
  const png = await sharp({
    create: { width: 64, height: 64, channels: 3, background: { r: (i * 37) & 0xff, g: (i * 91) & 0xff, b: (i * 53) & 0xff } },
  })
    .png()
    .toBuffer();
  return png.toString('base64');
}
const card = (n: number) => String(n).padStart(10, '0');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function provision(token: string): Promise<number> {
  const t = performance.now();
  await pool(
    Array.from({ length: MEMBERS }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      await call('PUT', `/partner/members/m${i}`, { firstName: `M${i}`, lastName: 'Bench' }, token);
      const cards = [{ cardNo: card(1_000_000 + 2 * i) }, { cardNo: card(1_000_001 + 2 * i) }];
      await call('PUT', `/partner/members/m${i}/credentials`, { cards, face: await face(i), faceConsentAt: '2026-01-01T00:00:00Z' }, token);
    },
  );
  return performance.now() - t;
}

/** Phase A: the apply adding the group terminals, until every terminal holds every member; then until settled. */
async function fromScratch(terminals: Terminal[]): Promise<{ heldMs: number; settledMs: number }> {
  const t = performance.now();
  const applied = await call('POST', '/ops/v1/apply', site(terminals, DEVICES));
  const deviceIds = Array.from({ length: DEVICES }, (_, i) => applied.data.ids[`d${i}`] as string);
  for (;;) {
    const counts = (await terminalsRead('/counts')) as { users: number; complete: number }[];
    if (counts.slice(0, DEVICES).every((c) => c.complete === MEMBERS)) break;
    await sleep(50);
  }
  const heldMs = performance.now() - t;
  for (;;) {
    const views = await Promise.all(deviceIds.map((id) => call('GET', `/ops/v1/devices/${id}`)));
    if (views.every((v) => v.data.pendingChanges === 0)) break;
    await sleep(50);
  }
  return { heldMs, settledMs: performance.now() - t };
}

const local = (d: DateTime) => d.setZone(TZ).toFormat("yyyy-MM-dd'T'HH:mm:ss");

/** Phase B: one booking per round; the time from the POST /meetings answer until the door holds the window. */
async function bookingRounds(roomId: string): Promise<number[]> {
  const door = DEVICES; // the last stand-in
  const day = DateTime.now().setZone(TZ).plus({ days: 1 }).startOf('day').plus({ hours: 7 });
  const latencies: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const ext = `m${r % MEMBERS}`;
    const memberId = (await call('GET', `/partner/members/${ext}`, undefined, appToken)).data.memberId as string;
    const token = (
      await call('POST', '/auth/accessToken', { grant_type: 'act_as', app_id: APP_ID, app_secret: APP_SECRET, subject: ext }, '')
    ).access_token as string;
    const start = day.plus({ minutes: 30 * r });
    const end = start.plus({ minutes: 30 });
    const want = { enable: true, beginTime: local(start.minus({ minutes: 15 })), endTime: local(end) };
    const body = { meetingRoomId: roomId, title: `Bench ${r}`, startDateTime: start.toISO(), endDateTime: end.toISO() };
    // A random pause first, so that bookings land at any phase of the service's 500 ms delivery poll (rounds
    // run back to back would otherwise fall in step with it and all wait about the same).
    await sleep(Math.random() * 600);
    await call('POST', '/meetings', body, token);
    const t0 = performance.now();
    for (;;) {
      const u = (await terminalsRead(`/user?t=${door}&e=m${memberId}`)) as { Valid: typeof want; cards: string[] } | null;
      if (u && u.Valid.enable && u.Valid.beginTime === want.beginTime && u.Valid.endTime === want.endTime && u.cards.length === 2) break;
      if (performance.now() - t0 > ROUND_TIMEOUT_MS)
        throw new Error(`round ${r}: the door holds ${JSON.stringify(u)}, wanted ${JSON.stringify(want)}`);
      await sleep(5);
    }
    latencies.push(performance.now() - t0);
  }
  return latencies;
}

let appToken = '';

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-doors-'));
  const procs: ChildProcess[] = [];
  try {
    const sims = await startScript(['bench/isapi-terminals.ts'], { ISAPI_TERMINALS: String(DEVICES + 1) }, /isapi-terminals: (\{.*\})\n/);
    procs.push(sims.child);
    const { control: controlUrl, terminals } = JSON.parse(sims.match[1]!) as { control: string; terminals: Terminal[] };
    control = controlUrl;
    const svc = await startScript(
      ['src/main.ts'],
      {
        PORT: '0',
        HOST: '127.0.0.1',
        DEMO: '0',
        OPS_TOKEN: OPS,
        DATABASE_URL: process.env.BENCH_DATABASE_URL || join(dir, 'bench.sqlite'),
        DEVICE_TRANSPORT: 'sandbox',
        PARTNER_RATE_LIMIT_PER_MINUTE: '10000000',
        LOG_LEVEL: 'warn',
      },
      /listening on (http:\/\/\S+)/,
    );
    procs.push(svc.child);
    base = svc.match[1]!;

    const applied0 = await call('POST', '/ops/v1/apply', site(terminals, 0));
    appToken = (await call('POST', '/auth/accessToken', { grant_type: 'app_credentials', app_id: APP_ID, app_secret: APP_SECRET }, ''))
      .access_token as string;
    const provisionMs = await provision(appToken);
    const a = await fromScratch(terminals);
    const latencies = await bookingRounds(applied0.data.ids.board as string);

    const enrollments = MEMBERS * DEVICES;
    console.log(
      `doors over ISAPI, ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, ${MEMBERS} members × ${DEVICES} ISAPI stand-ins`,
    );
    console.log(
      `  provisioning (2 PUTs per member: 2 cards + a face, ${CONCURRENCY} at a time): ${(provisionMs / 1000).toFixed(1)} s, ${(MEMBERS / (provisionMs / 1000)).toFixed(0)} members/s`,
    );
    console.log(
      `  A. from scratch, apply → every terminal holds every member (user, 2 cards, face): ${(a.heldMs / 1000).toFixed(2)} s (${(enrollments / (a.heldMs / 1000)).toFixed(0)} members×devices/s); every device view settled: ${(a.settledMs / 1000).toFixed(2)} s`,
    );
    console.log(
      `  B. POST /meetings answered → the door terminal holds the member with the booking's window, ${ROUNDS} rounds: median ${quantile(latencies, 0.5).toFixed(0)} ms, p95 ${quantile(latencies, 0.95).toFixed(0)} ms (min ${Math.min(...latencies).toFixed(0)}, max ${Math.max(...latencies).toFixed(0)})`,
    );
  } finally {
    for (const p of procs.reverse()) await stopScript(p);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
