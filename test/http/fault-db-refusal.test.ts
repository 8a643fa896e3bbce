/**
 * PostgreSQL refusing the service, under concurrent load. Each way PostgreSQL
 * says "not now" is provoked while many requests run at once, and not one of
 * them may answer 500: each is its normal answer or 503 (KS004, or KS234 when
 * the bearer token could not be checked) with Retry-After.
 *
 * - the database stops accepting connections (`ALTER DATABASE … ALLOW_CONNECTIONS
 *   false`, SQLSTATE 55000) and its backends are terminated (57P01);
 * - backends terminated again and again mid-request (57P01);
 * - too many connections for the role (53300: a throwaway role with a
 *   CONNECTION LIMIT of 1);
 * - connections refused (the port closed).
 * After each, the service recovers by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startTestService, type HttpResult, type TestService } from '../support/test-service.js';
import { TEST_ENGINE, withPgAdmin } from '../support/test-database.js';
import { PORTAL_APP_ID, PORTAL_SECRET, appToken, applySite, idOf, sleep, type SiteIds } from '../support/fixtures.js';
import { meetingSite, TZ } from '../support/meetings.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/delivery-audit.js';
import type { DateTime } from 'luxon';

const ADMIN_URL = process.env.TEST_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const CONCURRENCY = 16;
const LOAD_MS = 2500;

interface Outcome {
  what: string;
  status: number;
  code?: string;
  retryAfter: string | null;
  text: string;
}

/** Runs `CONCURRENCY` request loops for `ms`, each cycling through a mix of reads, writes, token grants and probes. */
async function hammer(svc: TestService, ctx: Ctx, ms: number): Promise<Outcome[]> {
  const out: Outcome[] = [];
  const end = Date.now() + ms;
  const kinds: Array<[string, () => Promise<HttpResult>]> = [
    ['create', () => svc.request('POST', '/meetings', { token: ctx.token, body: createBody(ctx) })],
    ['get', () => svc.request('GET', `/meetings/${ctx.meetingId}`, { token: ctx.token })],
    ['list', () => svc.request('GET', `/meeting-rooms?projectId=${idOf(ctx.ids, 'tower')}`, { token: ctx.token })],
    [
      'token',
      () =>
        svc.request('POST', '/auth/accessToken', {
          body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
        }),
    ],
    ['readyz', () => svc.request('GET', '/readyz')],
  ];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      for (let i = w; Date.now() < end; i++) {
        const [what, send] = kinds[i % kinds.length];
        const res = await send();
        out.push({
          what,
          status: res.status,
          code: res.body?.code,
          retryAfter: res.headers.get('retry-after'),
          text: res.text.slice(0, 300),
        });
      }
    }),
  );
  return out;
}

/** No 500 (no 5xx but 503), every 503 is KS004/KS234 with a whole-seconds Retry-After. Returns the count of 503s. */
function expectNoServerErrors(outcomes: Outcome[], label: string): number {
  const bad = outcomes.filter((o) => o.status >= 500 && o.status !== 503);
  expect(bad.slice(0, 5), `${label}: ${bad.length} of ${outcomes.length} answered 5xx other than 503`).toEqual([]);
  const unavailable = outcomes.filter((o) => o.status === 503);
  for (const o of unavailable) {
    expect(['KS004', 'KS234'], `${label} ${o.what}: ${o.text}`).toContain(o.code);
    expect(o.retryAfter, `${label} ${o.what}: no Retry-After on ${o.text}`).toMatch(/^[1-9]\d*$/);
  }
  const others = outcomes.filter(
    (o) => o.status !== 503 && (o.status < 200 || o.status >= 300) && !(o.what === 'create' && o.status === 409),
  );
  expect(others.slice(0, 5), `${label}: unexpected answers`).toEqual([]);
  console.log(`[${label}] ${outcomes.length} requests, ${unavailable.length} answered 503`);
  return unavailable.length;
}

interface Ctx {
  ids: SiteIds;
  D: DateTime;
  token: string;
  meetingId: string;
  slot: number;
  own: number;
}

/** Rooms the load's creates take turns in; `own` is kept for the creates that must succeed (prepare, recovers). */
const ROOMS = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8'];
const OWN_ROOM = 'own';
/** Days ahead a slot may be, inside the site's advance-booking limit; the load wraps round (a taken slot is a 409, which the load allows). */
const DAYS = 25;

function bodyAt(ctx: Ctx, room: string, k: number, title: string) {
  const start = ctx.D.plus({ days: Math.floor(k / 16) % DAYS, hours: 13, minutes: 30 * (k % 16) });
  return { meetingRoomId: idOf(ctx.ids, room), title, startDateTime: start.toISO(), endDateTime: start.plus({ minutes: 15 }).toISO() };
}

/** The load's next create: 15 minutes every 30 from 13:00, each room in turn, then the next day. */
function createBody(ctx: Ctx) {
  const n = ctx.slot++;
  return bodyAt(ctx, ROOMS[n % ROOMS.length], Math.floor(n / ROOMS.length), `refusal ${n}`);
}

/** A create that must succeed: the next slot of the room the load never books. */
function ownBody(ctx: Ctx) {
  const n = ctx.own++;
  return bodyAt(ctx, OWN_ROOM, n, `recovered ${n}`);
}

async function prepare(svc: TestService): Promise<Ctx> {
  const ids = await applySite(svc, meetingSite({ rooms: [...ROOMS, OWN_ROOM].map((key) => ({ key })) }));
  const D = await dayAhead(svc, TZ, 2);
  await setClock(svc, at(D, '07:00'));
  const token = (await appToken(svc)).access_token;
  const ctx: Ctx = { ids, D, token, meetingId: '', slot: 0, own: 0 };
  const made = await svc.request('POST', '/meetings', { token, body: ownBody(ctx) });
  expect(made.status, made.text).toBe(201);
  ctx.meetingId = made.body.data._id;
  return ctx;
}

async function recovers(svc: TestService, ctx: Ctx): Promise<void> {
  await until('ready again', async () => (await svc.request('GET', '/readyz')).status === 200, 20_000, 200);
  const token = (await appToken(svc)).access_token;
  const res = await svc.request('POST', '/meetings', { token, body: ownBody(ctx) });
  expect(res.status, res.text).toBe(201);
  ctx.token = token;
}

const terminateBackends = (dbName: string) =>
  withPgAdmin(ADMIN_URL, (c) =>
    c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName]),
  );

describe.runIf(TEST_ENGINE === 'postgres')('PostgreSQL refusing connections under concurrent load: never 500', () => {
  const suffix = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const dbName = `booking_refusal_${suffix}`;
  const role = `booking_refusal_role_${suffix}`;
  let proxy: TcpProxy;
  let svc: TestService;
  let ctx: Ctx;

  beforeAll(async () => {
    // A throwaway role owning a throwaway database, so its CONNECTION LIMIT can be lowered (superusers ignore it).
    await withPgAdmin(ADMIN_URL, async (c) => {
      await c.query(`create role ${role} login`);
      await c.query(`create database ${dbName} owner ${role}`);
    });
    const admin = new URL(ADMIN_URL);
    proxy = await TcpProxy.start({ host: admin.hostname, port: Number(admin.port || 5432) });
    const url = new URL(ADMIN_URL);
    url.username = role;
    url.pathname = `/${dbName}`;
    svc = await startTestService({ database: { url: proxy.rewrite(url.toString()), drop: async () => undefined } });
    ctx = await prepare(svc);
  }, 60_000);

  afterAll(async () => {
    await proxy?.up();
    await svc?.close();
    await proxy?.close();
    await withPgAdmin(ADMIN_URL, async (c) => {
      await c.query(`drop database if exists ${dbName} with (force)`);
      await c.query(`drop role if exists ${role}`);
    });
  });

  it('ALLOW_CONNECTIONS false and its backends terminated (55000, 57P01): 503 with Retry-After, never 500', async () => {
    const load = hammer(svc, ctx, LOAD_MS);
    await sleep(200);
    await withPgAdmin(ADMIN_URL, (c) => c.query(`alter database ${dbName} allow_connections false`));
    try {
      await terminateBackends(dbName);
      const outcomes = await load;
      expect(expectNoServerErrors(outcomes, '55000')).toBeGreaterThan(0);
    } finally {
      await withPgAdmin(ADMIN_URL, (c) => c.query(`alter database ${dbName} allow_connections true`));
    }
    await recovers(svc, ctx);
  }, 60_000);

  it('backends terminated again and again mid-request (57P01): never 500', async () => {
    let stop = false;
    const killer = (async () => {
      while (!stop) {
        await terminateBackends(dbName);
        await sleep(40);
      }
    })();
    const outcomes = await hammer(svc, ctx, LOAD_MS).finally(() => {
      stop = true;
    });
    await killer;
    expect(expectNoServerErrors(outcomes, '57P01')).toBeGreaterThan(0);
    await recovers(svc, ctx);
  }, 60_000);

  it('too many connections for the role (53300): 503 with Retry-After, never 500', async () => {
    await withPgAdmin(ADMIN_URL, (c) => c.query(`alter role ${role} connection limit 1`));
    try {
      await terminateBackends(dbName);
      const outcomes = await hammer(svc, ctx, LOAD_MS);
      expect(expectNoServerErrors(outcomes, '53300')).toBeGreaterThan(0);
    } finally {
      await withPgAdmin(ADMIN_URL, (c) => c.query(`alter role ${role} connection limit -1`));
    }
    await recovers(svc, ctx);
  }, 60_000);

  it('connections refused (the port closed): 503 with Retry-After, never 500', async () => {
    const load = hammer(svc, ctx, LOAD_MS);
    await sleep(200);
    await proxy.down();
    try {
      const outcomes = await load;
      expect(expectNoServerErrors(outcomes, 'refused')).toBeGreaterThan(0);
    } finally {
      await proxy.up();
    }
    await recovers(svc, ctx);
  }, 60_000);
});
