/**
 * Backups, proved by restoring them.
 *
 * SQLite: the real service (`src/main.ts` in a child process) takes bookings from
 * concurrent clients while `npm run backup` (src/cli/backup.ts, run as a child
 * process) copies the database. A fresh service started on a copy of the backup
 * (the documented restore) has every booking acknowledged (201) before the backup
 * began, and the restored file passes `PRAGMA integrity_check`.
 *
 * PostgreSQL: the commands docs/operations.md gives (`pg_dump -Fc`, `createdb`,
 * `pg_restore`) dump a database holding a booking; a service started on the
 * restored database serves it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { DateTime } from 'luxon';
import SqliteDatabase from 'better-sqlite3';
import { createTestDatabase, TEST_ENGINE, withPgAdmin, type TestDatabase } from '../support/test-database.js';
import { siteDocument, PORTAL_APP_ID, PORTAL_SECRET } from '../support/fixtures.js';
import { everyDay } from '../support/catalogue.js';
import { startMainProcess, type MainProcess } from '../support/main-process.js';
import { until } from '../support/delivery-audit.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OPS_TOKEN = 'backup-test-ops-token-0123456789abcdef0123456789';
const SECRETS_KEY = 'b7'.repeat(32);
const ROOMS = 4;
const run = promisify(execFile);

/** A site of `ROOMS` rooms open around the clock, without cleaning time: each client books its own room, slot after slot. */
function site() {
  const doc = siteDocument() as any;
  doc.zones = [{ key: 'z', project: 'tower', name: 'Tower' }];
  doc.floors = [{ key: 'f', zone: 'z', name: '3F' }];
  doc.rooms = Array.from({ length: ROOMS }, (_, i) => ({
    key: `r${i}`,
    floor: 'f',
    name: `Room ${i}`,
    capacity: 4,
    cleanupMinutes: 0,
    config: everyDay('00:00:00', '24:00:00', [], { minimumLeadTime: { minutes: 0, hours: 0, days: 0 }, maxAdvanceBookingDays: 60 }),
  }));
  return doc;
}

async function prepare(svc: MainProcess): Promise<{ roomIds: string[]; token: string; day: DateTime }> {
  const applied = await svc.ops('POST', '/ops/v1/apply', site());
  expect(applied.status, applied.text).toBe(200);
  const roomIds: string[] = Array.from({ length: ROOMS }, (_, i) => applied.body.data.idsByKind.rooms[`r${i}`]);
  const tokenRes = await svc.request('POST', '/auth/accessToken', {
    body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
  });
  expect(tokenRes.status, tokenRes.text).toBe(201);
  const clock = await svc.ops('GET', '/ops/v1/clock');
  const day = DateTime.fromISO(clock.body.data.now).setZone('Asia/Bangkok').startOf('day').plus({ days: 1 });
  return { roomIds, token: tokenRes.body.access_token, day };
}

async function book(svc: MainProcess, token: string, roomId: string, start: DateTime) {
  return svc.request('POST', '/meetings', {
    token,
    body: { meetingRoomId: roomId, title: 'backup load', startDateTime: start.toISO(), endDateTime: start.plus({ minutes: 30 }).toISO() },
  });
}

/** Runs `node --import tsx src/cli/backup.ts ...args` (what `npm run backup` runs, compiled) on DATABASE_URL. */
function runBackup(databaseUrl: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/backup.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe.skipIf(TEST_ENGINE === 'postgres')('SQLite online backup under load, restored', () => {
  let database: TestDatabase;
  let dir: string;
  let svc: MainProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'booking-backup-'));
  });

  afterAll(async () => {
    await svc?.kill('SIGKILL');
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every booking acknowledged before the backup began, and the copy is intact', { timeout: 120_000 }, async () => {
    svc = await startMainProcess({ database, opsToken: OPS_TOKEN, secretsKey: SECRETS_KEY });
    const { roomIds, token, day } = await prepare(svc);
    const current = svc;

    const acknowledged: { id: string; at: number }[] = [];
    let stop = false;
    let failure: Error | undefined;
    const client = async (room: number) => {
      for (let slot = 0; !stop; slot++) {
        const res = await book(current, token, roomIds[room]!, day.plus({ minutes: 30 * slot }));
        if (res.status !== 201) {
          failure ??= new Error(`create answered ${res.status}: ${res.text}`);
          return;
        }
        acknowledged.push({ id: res.body.data._id, at: performance.now() });
      }
    };
    const clients = roomIds.map((_, i) => client(i));
    await until('load under way', () => (failure ? Promise.reject(failure) : acknowledged.length >= 40), 60_000, 5);

    const file = join(dir, 'backup.sqlite');
    const began = performance.now();
    const before = acknowledged.filter((b) => b.at < began);
    const result = await runBackup(database.url, [file]);
    const ended = performance.now();
    // The service kept taking bookings while the backup ran.
    await until('a booking acknowledged after the backup', () => acknowledged.some((b) => b.at > ended), 30_000, 5);
    stop = true;
    await Promise.all(clients);
    expect(failure).toBeUndefined();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/backup written: .*\(\d+ pages, \d+ bytes, \d+ ms\)/);
    expect(acknowledged.filter((b) => b.at > began && b.at < ended).length, 'bookings acknowledged during the backup').toBeGreaterThan(0);
    expect(existsSync(`${file}-wal`), 'the backup is one file').toBe(false);

    // A second run refuses to overwrite FILE (exit 2), and leaves it as it was.
    const again = await runBackup(database.url, [file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('--force');

    await svc.kill('SIGTERM');
    svc = undefined;

    // The documented restore: the backup put in place as DATABASE_URL's file (no -wal/-shm beside it), then start.
    const restoredDir = mkdtempSync(join(dir, 'restored-'));
    const restored: TestDatabase = { url: join(restoredDir, 'booking.sqlite'), drop: async () => {} };
    copyFileSync(file, restored.url);
    svc = await startMainProcess({ database: restored, opsToken: OPS_TOKEN, secretsKey: SECRETS_KEY });
    for (const b of before) {
      const res = await svc.request('GET', `/meetings/${b.id}`, { token });
      expect(res.status, `${b.id}: ${res.text}`).toBe(200);
      expect(res.body.data.status).toBe('active');
    }
    expect(before.length).toBeGreaterThanOrEqual(40);
    // It keeps serving: a new booking after the last slot any client took.
    const more = await book(svc, token, roomIds[0]!, day.plus({ days: 50 }));
    expect(more.status, more.text).toBe(201);
    await svc.kill('SIGTERM');
    svc = undefined;

    const check = new SqliteDatabase(restored.url, { readonly: true });
    try {
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      check.close();
    }
  });
});

describe.skipIf(TEST_ENGINE !== 'postgres')('PostgreSQL pg_dump / pg_restore, restored', () => {
  let database: TestDatabase;
  let restoredName: string | undefined;
  let dir: string;
  let svc: MainProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'booking-pgdump-'));
  });

  afterAll(async () => {
    await svc?.kill('SIGKILL');
    await database?.drop();
    if (restoredName) {
      const admin = new URL(database.url);
      admin.pathname = '/postgres';
      await withPgAdmin(admin.toString(), (c) => c.query(`DROP DATABASE IF EXISTS ${restoredName} WITH (FORCE)`));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the documented commands restore a database that serves its bookings', { timeout: 120_000 }, async () => {
    svc = await startMainProcess({ database, opsToken: OPS_TOKEN, secretsKey: SECRETS_KEY });
    const { roomIds, token, day } = await prepare(svc);
    const booked = await book(svc, token, roomIds[0]!, day.plus({ hours: 9 }));
    expect(booked.status, booked.text).toBe(201);
    const id: string = booked.body.data._id;

    // As docs/operations.md says (the service may keep running: pg_dump reads one consistent snapshot).
    const dump = join(dir, 'booking.dump');
    await run('pg_dump', ['--format=custom', `--file=${dump}`, database.url]);
    await svc.kill('SIGTERM');
    svc = undefined;
    const source = new URL(database.url);
    restoredName = `${source.pathname.slice(1)}_restored`;
    const target = new URL(database.url);
    target.pathname = `/${restoredName}`;
    await run('createdb', ['--host', source.hostname, '--port', source.port || '5432', '--username', source.username, restoredName]);
    await run('pg_restore', ['--no-owner', `--dbname=${target.toString()}`, dump]);

    svc = await startMainProcess({
      database: { url: target.toString(), drop: async () => {} },
      opsToken: OPS_TOKEN,
      secretsKey: SECRETS_KEY,
    });
    const res = await svc.request('GET', `/meetings/${id}`, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('active');
    const more = await book(svc, token, roomIds[1]!, day.plus({ hours: 10 }));
    expect(more.status, more.text).toBe(201);
  });
});
