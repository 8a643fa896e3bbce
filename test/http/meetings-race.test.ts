/**
 * Concurrent POST /meetings (api-spec "POST /meetings", "Cleaning time"): many
 * valid requests racing for one room and slot must produce exactly one booking
 * (201) and 409 KS012 for every other request, never a 5xx and never a second
 * stored meeting or slot. The conflict check and the write run under the asset
 * lock of src/platform/db/transactions.ts (PostgreSQL: row lock on the asset;
 * SQLite: BEGIN IMMEDIATE), which must also hold across two service instances
 * sharing one database: in this process (each instance has its own connection
 * or pool) and in a separate Node process (truly parallel connections).
 *
 * Note on SQLite: two in-process instances never actually contend for the write
 * lock, because better-sqlite3 is synchronous and a create's locked section runs
 * to commit without yielding to the event loop; the separate-process variant is
 * the one that exercises BEGIN IMMEDIATE against another connection.
 *
 * Runs on SQLite by default and on PostgreSQL with TEST_DATABASE=postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DateTime } from 'luxon';
import { startTestService, type HttpResult, type TestService } from '../support/test-service.js';
import {
  actAsToken,
  appToken,
  applySite,
  expectError,
  idOf,
  PORTAL_APP_ID,
  PORTAL_SECRET,
  siteDocument,
  type SiteIds,
} from '../support/fixtures.js';
import { at, dayAhead, everyDay } from '../support/catalogue.js';
import { TEST_ENGINE } from '../support/test-database.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const TZ = 'Asia/Bangkok';
const N = 50;
/** Distinct act_as callers in the multi-instance scenarios (each sends N / CALLERS requests). */
const CALLERS = 10;
const CLEANUP = 15;
/** Rooms used by the cleaning-pair scenarios; each carries PAIRS_PER_ROOM disjoint pairs. */
const PAIR_ROOMS = 5;
const PAIRS_PER_ROOM = 5;

const ROOM_CONFIG = everyDay('07:00:00', '22:00:00', [], {
  minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
  maxAdvanceBookingDays: 90,
  maxDurationMinutes: 480,
});

const memberKey = (i: number) => `racer${String(i).padStart(2, '0')}`;

/**
 * The fixtures' site plus N tower members linked to the portal app (so N distinct
 * act_as callers), and public tower rooms with 15 minutes of cleaning, open
 * 07:00-22:00 every day: `solo`, `duo` (two-instance runs) and `pairN` rooms.
 */
function raceSite() {
  const doc = siteDocument() as any;
  for (let i = 0; i < N; i++) {
    doc.users.push({
      key: memberKey(i),
      email: `${memberKey(i)}@example.com`,
      name: `Racer ${i}`,
      phone: `+668100${String(i).padStart(5, '0')}`,
      memberships: [{ project: 'tower', role: 'member' }],
      blockedFromBooking: false,
    });
  }
  const portal = doc.apps.find((a: any) => a.appId === PORTAL_APP_ID);
  for (let i = 0; i < N; i++) portal.links.push({ user: memberKey(i), externalUserId: `ext-${memberKey(i)}` });
  doc.zones = [{ key: 'zR', project: 'tower', name: 'Race zone' }];
  doc.floors = [{ key: 'fR', zone: 'zR', name: 'Race floor' }];
  const room = (key: string) => ({
    key,
    floor: 'fR',
    name: key,
    capacity: 6,
    isPublic: true,
    cleanupMinutes: CLEANUP,
    config: ROOM_CONFIG,
  });
  doc.rooms = ['solo', 'solo2', 'duo', ...Array.from({ length: 2 * PAIR_ROOMS }, (_, i) => `pair${i}`)].map(room);
  return doc;
}

/** Anything that answers HTTP like the service: an in-process instance or a service process. */
type Target = Pick<TestService, 'request'>;

interface Attempt {
  /** Which service instance receives the request. */
  svc: Target;
  token: string;
  body: Record<string, unknown>;
  /** Scenario label, e.g. the pair the request belongs to. */
  tag: string;
}

/** Fires all attempts at once (bodies and tokens prepared beforehand). */
async function fire(attempts: Attempt[]): Promise<(HttpResult & { tag: string })[]> {
  const results = await Promise.all(
    attempts.map((a) => a.svc.request('POST', '/meetings', { token: a.token, body: a.body }).then((r) => ({ ...r, tag: a.tag }))),
  );
  return results;
}

function statusCounts(results: HttpResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** Exactly one 201 and every other answer a 409 KS012 envelope; returns the winner. */
function expectSingleWinner(results: HttpResult[]): HttpResult {
  const counts = statusCounts(results);
  const unexpected = results.filter((r) => r.status !== 201 && r.status !== 409);
  expect(
    unexpected.map((r) => r.text),
    `status counts ${JSON.stringify(counts)}`,
  ).toEqual([]);
  const winners = results.filter((r) => r.status === 201);
  expect(winners.length, `status counts ${JSON.stringify(counts)}`).toBe(1);
  for (const r of results) if (r.status === 409) expectError(r, 409, 'KS012');
  return winners[0];
}

async function storedFor(svc: TestService, roomId: string) {
  const db = svc.services.storage.db;
  const meetings = await db
    .selectFrom('meetings')
    .select(['id', 'start_at', 'end_at', 'organizer_user_id'])
    .where('room_id', '=', roomId)
    .execute();
  const slots = await db.selectFrom('meeting_slots').select(['meeting_id', 'start_at', 'end_at']).where('asset_id', '=', roomId).execute();
  return { meetings, slots };
}

function shuffle<T>(list: T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Pairs that clash only through cleaning: A = [base, base+60) and B = [base+65, base+120)
 * with 15 minutes of cleaning (A is held until base+75). Pairs on a room are 150 minutes
 * apart, so B's hold (until base+135) never reaches the next pair.
 */
function cleaningPairs(day: DateTime, roomIds: string[]) {
  const pairs: {
    tag: string;
    roomId: string;
    a: { startDateTime: string; endDateTime: string };
    b: { startDateTime: string; endDateTime: string };
  }[] = [];
  const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  for (const roomId of roomIds) {
    for (let k = 0; k < PAIRS_PER_ROOM; k++) {
      const base = 8 * 60 + k * 150;
      pairs.push({
        tag: `${roomId}#${k}`,
        roomId,
        a: { startDateTime: at(day, hhmm(base)), endDateTime: at(day, hhmm(base + 60)) },
        b: { startDateTime: at(day, hhmm(base + 65)), endDateTime: at(day, hhmm(base + 120)) },
      });
    }
  }
  return pairs;
}

async function expectPairsResolved(svc: TestService, pairs: ReturnType<typeof cleaningPairs>, results: (HttpResult & { tag: string })[]) {
  const counts = statusCounts(results);
  expect(
    results.filter((r) => r.status !== 201 && r.status !== 409).map((r) => r.text),
    `status counts ${JSON.stringify(counts)}`,
  ).toEqual([]);
  for (const pair of pairs) {
    const mine = results.filter((r) => r.tag === pair.tag);
    expect(mine).toHaveLength(2);
    expect(mine.map((r) => r.status).sort(), `pair ${pair.tag}`).toEqual([201, 409]);
    expectError(
      mine.find((r) => r.status === 409)!,
      409,
      'KS012',
    );
  }
  for (const roomId of new Set(pairs.map((p) => p.roomId))) {
    const stored = await storedFor(svc, roomId);
    expect(stored.meetings).toHaveLength(PAIRS_PER_ROOM);
    expect(stored.slots).toHaveLength(PAIRS_PER_ROOM);
    // The stored holds never clash, cleaning included.
    const sorted = [...stored.slots].sort((x, y) => x.start_at - y.start_at);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i].start_at).toBeGreaterThanOrEqual(sorted[i - 1].end_at + CLEANUP * 60_000);
  }
  expect(results.filter((r) => r.status === 201)).toHaveLength(pairs.length);
}

describe(`concurrent POST /meetings on one instance (${TEST_ENGINE})`, () => {
  let svc: TestService;
  let ids: SiteIds;
  let day: DateTime;
  let memberTokens: string[];

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, raceSite());
    day = await dayAhead(svc, TZ, 3);
    memberTokens = await Promise.all(
      Array.from({ length: N }, async (_, i) => (await actAsToken(svc, { subject: `ext-${memberKey(i)}` })).access_token),
    );
  });
  afterAll(async () => {
    await svc?.close();
  });

  it(`${N} distinct act_as members booking one room and slot: one 201, ${N - 1} x 409 KS012, one stored meeting`, async () => {
    const roomId = idOf(ids, 'solo', 'rooms');
    const body = { meetingRoomId: roomId, title: 'Race', startDateTime: at(day, '10:00'), endDateTime: at(day, '11:00') };
    const results = await fire(memberTokens.map((token, i) => ({ svc, token, body, tag: String(i) })));
    const winner = expectSingleWinner(results);
    const stored = await storedFor(svc, roomId);
    expect(stored.meetings).toHaveLength(1);
    expect(stored.slots).toHaveLength(1);
    expect(stored.meetings[0].id).toBe(winner.body.data._id);
    expect(stored.slots[0].meeting_id).toBe(winner.body.data._id);
    expect(stored.slots[0]).toMatchObject({ start_at: Date.parse(body.startDateTime), end_at: Date.parse(body.endDateTime) });
  });

  it(`${N} creates with one app token (its first bookings) for one room and slot: one winner`, async () => {
    const roomId = idOf(ids, 'solo2', 'rooms');
    const token = (await appToken(svc, PORTAL_APP_ID, PORTAL_SECRET)).access_token;
    const body = { meetingRoomId: roomId, title: 'Race', startDateTime: at(day, '14:00'), endDateTime: at(day, '15:30') };
    const results = await fire(Array.from({ length: N }, (_, i) => ({ svc, token, body, tag: String(i) })));
    const winner = expectSingleWinner(results);
    const stored = await storedFor(svc, roomId);
    expect(stored.meetings.map((m) => m.id)).toEqual([winner.body.data._id]);
    expect(stored.slots.map((s) => s.meeting_id)).toEqual([winner.body.data._id]);
  });

  it(`${N} creates in pairs that overlap only through cleaning time: exactly one of each pair wins`, async () => {
    const token = (await appToken(svc, PORTAL_APP_ID, PORTAL_SECRET)).access_token;
    const roomIds = Array.from({ length: PAIR_ROOMS }, (_, i) => idOf(ids, `pair${i}`, 'rooms'));
    const pairs = cleaningPairs(day, roomIds);
    expect(pairs.length * 2).toBe(N);
    const attempts = shuffle(
      pairs.flatMap((p) => [
        { svc, token, tag: p.tag, body: { meetingRoomId: p.roomId, title: 'A', ...p.a } },
        { svc, token: memberTokens[Math.floor(Math.random() * N)], tag: p.tag, body: { meetingRoomId: p.roomId, title: 'B', ...p.b } },
      ]),
    );
    await expectPairsResolved(svc, pairs, await fire(attempts));
  });
});

describe(`concurrent POST /meetings spread over two service instances on one ${TEST_ENGINE} database`, () => {
  let first: TestService;
  let second: TestService;
  let ids: SiteIds;
  let day: DateTime;
  let memberTokens: string[];

  beforeAll(async () => {
    // The first keeps the database when it closes; the second (closed last) drops it.
    first = await startTestService({ keepDatabase: true });
    second = await startTestService({ database: first.database });
    ids = await applySite(first, raceSite());
    day = await dayAhead(first, TZ, 3);
    // Tokens minted on either instance work on both (they live in the shared database).
    // A few callers, each sending several of the concurrent requests, keep the setup short.
    memberTokens = await Promise.all(
      Array.from(
        { length: CALLERS },
        async (_, i) => (await actAsToken(i % 2 ? second : first, { subject: `ext-${memberKey(i)}` })).access_token,
      ),
    );
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  it(`${N} creates for one room and slot, alternating instances: one 201 in total, ${N - 1} x 409 KS012`, async () => {
    const roomId = idOf(ids, 'duo', 'rooms');
    const body = { meetingRoomId: roomId, title: 'Race', startDateTime: at(day, '09:00'), endDateTime: at(day, '10:00') };
    const results = await fire(
      Array.from({ length: N }, (_, i) => ({
        svc: i % 2 ? second : first,
        token: memberTokens[i % CALLERS],
        body,
        tag: i % 2 ? 'second' : 'first',
      })),
    );
    const winner = expectSingleWinner(results);
    // Both instances took part in the race and lost at least once.
    expect(results.filter((r) => r.tag === 'first' && r.status === 409).length).toBeGreaterThan(0);
    expect(results.filter((r) => r.tag === 'second' && r.status === 409).length).toBeGreaterThan(0);
    for (const svc of [first, second]) {
      const stored = await storedFor(svc, roomId);
      expect(stored.meetings.map((m) => m.id)).toEqual([winner.body.data._id]);
      expect(stored.slots.map((s) => s.meeting_id)).toEqual([winner.body.data._id]);
    }
  });

  it(`${N} cleaning-pair creates across both instances: exactly one of each pair wins`, async () => {
    const roomIds = Array.from({ length: PAIR_ROOMS }, (_, i) => idOf(ids, `pair${PAIR_ROOMS + i}`, 'rooms'));
    const pairs = cleaningPairs(day, roomIds);
    // The two requests of a pair always go to different instances.
    const attempts = shuffle(
      pairs.flatMap((p, k) => [
        {
          svc: k % 2 ? first : second,
          token: memberTokens[(2 * k) % CALLERS],
          tag: p.tag,
          body: { meetingRoomId: p.roomId, title: 'A', ...p.a },
        },
        {
          svc: k % 2 ? second : first,
          token: memberTokens[(2 * k + 1) % CALLERS],
          tag: p.tag,
          body: { meetingRoomId: p.roomId, title: 'B', ...p.b },
        },
      ]),
    );
    await expectPairsResolved(first, pairs, await fire(attempts));
  });
});

describe(`concurrent POST /meetings spread over this process and a second service process on one ${TEST_ENGINE} database`, () => {
  let local: TestService;
  let remote: ServiceProcess;
  let ids: SiteIds;
  let day: DateTime;
  let memberTokens: string[];

  beforeAll(async () => {
    local = await startTestService({ keepDatabase: true });
    ids = await applySite(local, raceSite());
    remote = await startServiceProcess(local.database);
    day = await dayAhead(local, TZ, 3);
    memberTokens = await Promise.all(
      Array.from({ length: CALLERS }, async (_, i) => (await actAsToken(local, { subject: `ext-${memberKey(i)}` })).access_token),
    );
    // The remote instance answers with tokens minted here.
    const whoami = await remote.request('GET', '/auth/whoami', { token: memberTokens[0] });
    expect(whoami.status, whoami.text).toBe(200);
  });
  afterAll(async () => {
    await remote?.close();
    await local?.close();
    await local?.database.drop();
  });

  it(`${N} creates for one room and slot, alternating processes: one 201 in total, ${N - 1} x 409 KS012`, async () => {
    const roomId = idOf(ids, 'duo', 'rooms');
    const body = { meetingRoomId: roomId, title: 'Race', startDateTime: at(day, '09:00'), endDateTime: at(day, '10:00') };
    const results = await fire(
      Array.from({ length: N }, (_, i) => ({
        svc: i % 2 ? remote : local,
        token: memberTokens[i % CALLERS],
        body,
        tag: i % 2 ? 'remote' : 'local',
      })),
    );
    const winner = expectSingleWinner(results);
    expect(results.filter((r) => r.tag === 'local' && r.status === 409).length).toBeGreaterThan(0);
    expect(results.filter((r) => r.tag === 'remote' && r.status === 409).length).toBeGreaterThan(0);
    const stored = await storedFor(local, roomId);
    expect(stored.meetings.map((m) => m.id)).toEqual([winner.body.data._id]);
    expect(stored.slots.map((s) => s.meeting_id)).toEqual([winner.body.data._id]);
  });

  it(`${N} cleaning-pair creates across both processes: exactly one of each pair wins`, async () => {
    const roomIds = Array.from({ length: PAIR_ROOMS }, (_, i) => idOf(ids, `pair${i}`, 'rooms'));
    const pairs = cleaningPairs(day, roomIds);
    const attempts = shuffle(
      pairs.flatMap((p, k) => [
        {
          svc: k % 2 ? local : remote,
          token: memberTokens[(2 * k) % CALLERS],
          tag: p.tag,
          body: { meetingRoomId: p.roomId, title: 'A', ...p.a },
        },
        {
          svc: k % 2 ? remote : local,
          token: memberTokens[(2 * k + 1) % CALLERS],
          tag: p.tag,
          body: { meetingRoomId: p.roomId, title: 'B', ...p.b },
        },
      ]),
    );
    await expectPairsResolved(local, pairs, await fire(attempts));
  });
});
