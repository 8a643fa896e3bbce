/**
 * Rolling upgrades: release N serves on a database migrated by release N+1, and keeps
 * serving while N+1 migrates under it (CONTRIBUTING.md "Migrations and upgrades").
 *
 * Release N is this code with its newest migration withheld (StorageOptions.migrations),
 * N+1 the full set. Through the real HTTP app (buildApp + createServices): readiness,
 * a token, a site applied, a booking made, read and cancelled. And a database that ran a
 * migration unknown here but lacks one known here is refused with a clear error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import type { Migration } from 'kysely';
import { openStorage } from '../../src/platform/db/database.js';
import { migrations } from '../../src/platform/db/migrations/index.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { siteDocument, PORTAL_APP_ID, PORTAL_SECRET } from '../support/fixtures.js';
import { everyDay } from '../support/catalogue.js';

const NAMES = Object.keys(migrations).sort();
const NEWEST = NAMES[NAMES.length - 1]!;
/** Release N: every migration but the newest. */
const RELEASE_N: Record<string, Migration> = Object.fromEntries(NAMES.filter((n) => n !== NEWEST).map((n) => [n, migrations[n]!]));

function site(room: string) {
  const doc = siteDocument() as any;
  doc.zones = [{ key: 'z', project: 'tower', name: 'Tower' }];
  doc.floors = [{ key: 'f', zone: 'z', name: '5F' }];
  doc.rooms = [
    {
      key: room,
      floor: 'f',
      name: `Room ${room}`,
      capacity: 4,
      cleanupMinutes: 0,
      config: everyDay('00:00:00', '24:00:00', [], { minimumLeadTime: { minutes: 0, hours: 0, days: 0 }, maxAdvanceBookingDays: 60 }),
    },
  ];
  return doc;
}

/** Readiness, a token, a site applied, then a booking made, read and cancelled: all through `svc`. Returns the booking id. */
async function serves(svc: TestService, slot: number, readBack: string[] = []): Promise<string> {
  const ready = await svc.request('GET', '/readyz');
  expect(ready.status, ready.text).toBe(200);
  const applied = await svc.ops('POST', '/ops/v1/apply', site('r'));
  expect(applied.status, applied.text).toBe(200);
  const roomId: string = applied.body.data.idsByKind.rooms.r;
  const tokenRes = await svc.request('POST', '/auth/accessToken', {
    body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
  });
  expect(tokenRes.status, tokenRes.text).toBe(201);
  const token: string = tokenRes.body.access_token;
  const clock = await svc.ops('GET', '/ops/v1/clock');
  const start = DateTime.fromISO(clock.body.data.now)
    .setZone('Asia/Bangkok')
    .startOf('day')
    .plus({ days: 1, hours: 8 + slot });
  const created = await svc.request('POST', '/meetings', {
    token,
    body: { meetingRoomId: roomId, title: 'upgrade', startDateTime: start.toISO(), endDateTime: start.plus({ minutes: 30 }).toISO() },
  });
  expect(created.status, created.text).toBe(201);
  const id: string = created.body.data._id;
  for (const other of [id, ...readBack]) {
    const read = await svc.request('GET', `/meetings/${other}`, { token });
    expect(read.status, read.text).toBe(200);
  }
  const cancelled = await svc.request('POST', `/meetings/${id}/cancel`, { token, body: {} });
  expect(cancelled.status, cancelled.text).toBe(202);
  const after = await svc.request('GET', `/meetings/${id}`, { token });
  expect(after.body.data.status).toBe('cancelled');
  return id;
}

/** Readiness, a site applied, a token and a read of bookings: what "N" can do before the newest migration runs. */
async function preMigrationTraffic(svc: TestService): Promise<void> {
  expect((await svc.request('GET', '/readyz')).status).toBe(200);
  const applied = await svc.ops('POST', '/ops/v1/apply', site('r'));
  expect(applied.status, applied.text).toBe(200);
  const tokenRes = await svc.request('POST', '/auth/accessToken', {
    body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
  });
  expect(tokenRes.status, tokenRes.text).toBe(201);
  const list = await svc.request('GET', '/auth/whoami', { token: tokenRes.body.access_token });
  expect(list.status, list.text).toBe(200);
}

describe(`release N beside release N+1 (${TEST_ENGINE}; N+1 adds ${NEWEST})`, () => {
  const cleanup: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  async function database(): Promise<TestDatabase> {
    const d = await createTestDatabase();
    cleanup.push(() => d.drop());
    return d;
  }

  async function service(d: TestDatabase, set?: Record<string, Migration>): Promise<TestService> {
    const svc = await startTestService({ database: d, keepDatabase: true, migrations: set });
    cleanup.push(() => svc.close());
    return svc;
  }

  it('N starts and serves on a database N+1 migrated, and reports the migration it does not know', async () => {
    const d = await database();
    const newer = await openStorage(d.url);
    expect(newer.migrations.applied).toEqual(NAMES);
    await newer.close();

    const older = await openStorage(d.url, { migrations: RELEASE_N });
    expect(older.migrations).toEqual({ applied: [], unknown: [NEWEST] });
    expect(await older.pendingMigrations()).toEqual([]);
    await older.close();

    await serves(await service(d, RELEASE_N), 0);
  });

  it('an N instance opened first keeps serving after N+1 migrates under it, side by side', async () => {
    const d = await database();
    const n = await service(d, RELEASE_N);
    // "N" is this code with the newest migration withheld, and this code writes that migration's columns (a real
    // release N would not know them): before N+1 migrates it only reads and writes what the newest migration leaves
    // alone (readiness, a site apply, a token, reads). What the test is after is the schema changing under a serving
    // instance: its pooled connections and prepared statements must keep working afterwards.
    await preMigrationTraffic(n);

    const n1 = await service(d);
    // N+1 applied the newest migration; N was running all along.
    const check = await openStorage(d.url);
    expect(check.migrations).toEqual({ applied: [], unknown: [] });
    await check.close();

    const first = await serves(n, 1);
    const second = await serves(n1, 2, [first]);
    await serves(n, 3, [first, second]);
  });

  it('refuses a database that ran a migration unknown here but lacks one known here', async () => {
    const d = await database();
    const newer = await openStorage(d.url);
    await newer.close();
    const noop: Migration = { up: async () => {} };
    const diverged = { ...RELEASE_N, '012a-elsewhere': noop };
    await expect(openStorage(d.url, { migrations: diverged })).rejects.toThrow(
      new RegExp(`refusing to start: .*\\(${NEWEST}\\).*missing: 012a-elsewhere`),
    );
  });
});
