/**
 * The analytics job and the rebuild agree: figures kept as bookings change (created, checked in,
 * checked out early, cancelled, left to a no-show) equal the figures `rebuildAnalytics` computes
 * from the bookings afterwards, for every groupBy. Also: the job takes a change in within about a
 * second (GET /ops/v1/analytics/status), and a change of opening hours keeps the past.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { siteDocument, PORTAL_APP_ID, PORTAL_SECRET } from '../support/fixtures.js';
import { everyDay, setClock, qs } from '../support/catalogue.js';
import { rebuildAnalytics } from '../../src/modules/analytics/index.js';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `node --import tsx src/cli/analytics-rebuild.ts ...args` (what `npm run analytics:rebuild` runs, compiled) on DATABASE_URL. */
function runRebuild(databaseUrl: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/analytics-rebuild.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, BOOKING_ENV: 'development', DEMO: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const ZONE = 'Asia/Bangkok';
let svc: TestService;
let token: string;
let projectId: string;
let rooms: string[];

function site() {
  const doc = siteDocument() as any;
  doc.zones = [{ key: 'z', project: 'tower', name: 'Tower' }];
  doc.floors = [
    { key: 'f1', zone: 'z', name: '1F' },
    { key: 'f2', zone: 'z', name: '2F' },
  ];
  const config = everyDay('08:00:00', '18:00:00', [{ start: '12:00:00', end: '13:00:00' }], {
    minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
    maxAdvanceBookingDays: 60,
  });
  doc.rooms = ['a', 'b', 'c'].map((k, i) => ({
    key: k,
    floor: i < 2 ? 'f1' : 'f2',
    name: `Room ${k}`,
    capacity: 4,
    cleanupMinutes: 0,
    config,
  }));
  return doc;
}

async function waitTaken(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await svc.ops('GET', `/ops/v1/analytics/status?project=${projectId}`);
    expect(res.status, res.text).toBe(200);
    if (res.body.data.pendingBookings === 0 && res.body.data.pendingWalkIns === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('analytics did not catch up');
}

async function book(room: string, start: DateTime, minutes: number): Promise<string> {
  const res = await svc.request('POST', '/meetings', {
    token,
    body: { meetingRoomId: room, title: 't', startDateTime: start.toISO(), endDateTime: start.plus({ minutes }).toISO() },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id;
}

const GROUPS = ['project', 'zone', 'floor', 'asset', 'day', 'week', 'month', 'hourOfWeek'] as const;

async function allFigures(from: string, to: string) {
  const out: Record<string, unknown> = {};
  for (const groupBy of GROUPS) {
    const res = await svc.ops('GET', `/ops/v1/analytics/utilisation${qs({ project: projectId, from, to, groupBy })}`);
    expect(res.status, res.text).toBe(200);
    out[groupBy] = res.body.data;
  }
  return out;
}

describe('analytics: the job and the rebuild', () => {
  let day: DateTime;
  beforeAll(async () => {
    svc = await startTestService();
    await setClock(svc, '2027-03-01T00:00:00.000Z');
    const applied = await svc.ops('POST', '/ops/v1/apply', site());
    expect(applied.status, applied.text).toBe(200);
    projectId = applied.body.data.idsByKind.projects.tower;
    rooms = ['a', 'b', 'c'].map((k) => applied.body.data.idsByKind.rooms[k]);
    const t = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
    });
    token = t.body.access_token;
    day = DateTime.fromISO('2027-03-02T00:00', { zone: ZONE });
  });
  afterAll(async () => svc?.close());

  it('keeps the figures as bookings change, and a rebuild computes the same', async () => {
    const m1 = await book(rooms[0], day.set({ hour: 9 }), 60); // checked in 09:05, out 09:40:30
    const m2 = await book(rooms[1], day.set({ hour: 10 }), 90); // no-show
    const m3 = await book(rooms[2], day.set({ hour: 14 }), 60); // cancelled before start
    const m4 = await book(rooms[0], day.set({ hour: 15 }), 60); // checked in before its start, runs to its end
    await setClock(svc, day.set({ hour: 9, minute: 5 }).toUTC().toISO()!);
    expect((await svc.request('POST', `/meetings/${m1}/check-in`, { token, body: {} })).status).toBeLessThan(300);
    await setClock(svc, day.set({ hour: 9, minute: 40, second: 30 }).toUTC().toISO()!);
    expect((await svc.request('POST', `/meetings/${m1}/check-out`, { token, body: {} })).status).toBeLessThan(300);
    expect((await svc.request('POST', `/meetings/${m3}/cancel`, { token, body: {} })).status).toBeLessThan(300);
    await setClock(svc, day.set({ hour: 14, minute: 50 }).toUTC().toISO()!);
    expect((await svc.request('POST', `/meetings/${m4}/check-in`, { token, body: {} })).status).toBeLessThan(300);
    await setClock(svc, day.set({ hour: 17 }).toUTC().toISO()!);
    await waitTaken();

    const date = day.toISODate()!;
    const project = await svc.ops('GET', `/ops/v1/analytics/utilisation${qs({ project: projectId, from: date, to: date })}`);
    expect(project.status, project.text).toBe(200);
    const row = project.body.data[0];
    // 3 rooms × (600 - 60) = 1620 available. m1 09:00-09:40 (checked out 09:40:30, truncated), occupied from 09:05;
    // m2 released at 10:15 (no-show, 15 min); m3 cancelled before its start; m4 the whole hour, occupied from its start.
    expect(row).toMatchObject({
      availableMinutes: 1620,
      bookedMinutes: 40 + 15 + 0 + 60,
      occupiedMinutes: 35 + 60,
      releasedMinutes: 20 + 75,
      bookings: 4,
      checkIns: 2,
      noShows: 1,
      cancellations: 1,
    });
    expect(row.noShowRate).toBeCloseTo(1 / 3, 10);
    void m2;

    const kept = await allFigures(date, day.plus({ days: 40 }).toISODate()!);
    const { db, engine } = svc.services.storage;
    const rebuilt = await rebuildAnalytics({ db, engine, clock: svc.services.clock, realClock: svc.services.clock });
    expect(rebuilt.bookings).toBe(4);
    expect(await allFigures(date, day.plus({ days: 40 }).toISODate()!)).toEqual(kept);

    // The command does the same, beside the serving instance, for one project.
    const run = await runRebuild(svc.database.url, ['--project', projectId]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ bookings: 4, walkIns: 0 });
    expect(await allFigures(date, day.plus({ days: 40 }).toISODate()!)).toEqual(kept);
  }, 60_000);
});

describe('analytics: two instances on one database', () => {
  let a: TestService;
  let b: TestService;
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('count every booking once while both run the job (one holds the lease at a time)', async () => {
    a = await startTestService({ keepDatabase: true });
    await setClock(a, '2027-06-01T00:00:00.000Z');
    b = await startTestService({ database: a.database, keepDatabase: true }); // reads the moved sandbox clock at start
    const applied = await a.ops('POST', '/ops/v1/apply', site());
    expect(applied.status, applied.text).toBe(200);
    const pid = applied.body.data.idsByKind.projects.tower;
    const ids = ['a', 'b', 'c'].map((k) => applied.body.data.idsByKind.rooms[k]);
    const tokenOf = async (s: TestService) =>
      (
        await s.request('POST', '/auth/accessToken', {
          body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
        })
      ).body.access_token as string;
    const tokens = [await tokenOf(a), await tokenOf(b)];
    const first = DateTime.fromISO('2027-06-02T08:00', { zone: ZONE });
    // 24 one-hour bookings over two days and three rooms, made alternately through each instance, all at once.
    const made = await Promise.all(
      Array.from({ length: 24 }, (_, i) => {
        const s = i % 2 ? b : a;
        const start = first.plus({ days: Math.floor(i / 12), hours: Math.floor((i % 12) / 3) + (Math.floor((i % 12) / 3) >= 4 ? 1 : 0) });
        return s.request('POST', '/meetings', {
          token: tokens[i % 2],
          body: { meetingRoomId: ids[i % 3], title: 't', startDateTime: start.toISO(), endDateTime: start.plus({ hours: 1 }).toISO() },
        });
      }),
    );
    const booked = made.filter((r) => r.status === 201).length;
    expect(booked, made.map((r) => r.text).join('\n')).toBe(24);
    for (let i = 0; i < 100; i++) {
      const res = await a.ops('GET', `/ops/v1/analytics/status?project=${pid}`);
      if (res.body.data.pendingBookings === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const query = `/ops/v1/analytics/utilisation${qs({ project: pid, from: '2027-06-02', to: '2027-06-03' })}`;
    const row = (await b.ops('GET', query)).body.data[0];
    expect(row.bookings).toBe(booked);
    expect(row.bookedMinutes).toBe(booked * 60);
    const { db, engine } = a.services.storage;
    await rebuildAnalytics({ db, engine, clock: a.services.clock, realClock: a.services.clock });
    expect((await a.ops('GET', query)).body.data[0]).toEqual(row);
  });
});
