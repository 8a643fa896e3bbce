/**
 * `npm run backup -- FILE [--force]`: an online backup of the SQLite database named by
 * DATABASE_URL (default ./data/booking.sqlite) while the service keeps serving and writing.
 *
 * It uses SQLite's online backup API (better-sqlite3's `db.backup`): pages are copied in
 * steps from a consistent snapshot; when another process writes between two steps the copy
 * starts again, and after a few restarts it copies everything in one step. The copy goes to
 * a temporary name beside FILE, passes `PRAGMA integrity_check`, and is renamed to FILE only
 * then, so FILE is either absent or a complete backup. An existing FILE is kept unless
 * `--force` is given.
 *
 * Exit codes: 0 the backup is written; 1 the backup failed (the database is missing or
 * unreadable, an I/O error, the copy failed its integrity check), nothing left behind;
 * 2 nothing was done: wrong usage, FILE exists (without --force), or DATABASE_URL names
 * PostgreSQL (use pg_dump; the message says how).
 *
 * Restore (docs/operations.md): stop the service, copy the backup to DATABASE_URL's path,
 * remove any `-wal` and `-shm` files beside it, start the service.
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { readDatabaseUrl } from '../platform/config.js';

/** Pages copied per step (4 KiB pages: 16 MiB) while the copy keeps up with writers. */
const PAGES_PER_STEP = 4096;
/** Restarts (another process wrote between steps) tolerated before the rest is copied in one step. */
const RESTARTS_BEFORE_ONE_STEP = 3;

class UsageError extends Error {}

interface Arguments {
  file: string;
  force: boolean;
}

function parseArguments(argv: string[]): Arguments {
  const force = argv.includes('--force');
  const rest = argv.filter((a) => a !== '--force');
  if (rest.length !== 1 || rest[0]!.startsWith('-')) {
    throw new UsageError('usage: npm run backup -- FILE [--force]   (DATABASE_URL names the SQLite database to copy)');
  }
  return { file: resolve(rest[0]!), force };
}

const POSTGRES_HINT = [
  'DATABASE_URL names a PostgreSQL database: back it up with PostgreSQL tools, for example',
  '  pg_dump --format=custom --file=booking.dump "$DATABASE_URL"',
  'and restore into an empty database with',
  '  createdb booking_restored && pg_restore --no-owner --dbname=postgres://USER@HOST:5432/booking_restored booking.dump',
  '(see docs/operations.md, "Backups and restore", also for point-in-time recovery).',
].join('\n');

async function copy(source: string, temp: string): Promise<{ totalPages: number }> {
  const db = new SqliteDatabase(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    let restarts = 0;
    let lastRemaining = Number.POSITIVE_INFINITY;
    let lastReport = Date.now();
    const progress = await db.backup(temp, {
      progress: ({ totalPages, remainingPages }) => {
        if (remainingPages > lastRemaining) restarts++;
        lastRemaining = remainingPages;
        if (Date.now() - lastReport > 1000) {
          lastReport = Date.now();
          process.stderr.write(`backup: ${totalPages - remainingPages} of ${totalPages} pages copied\n`);
        }
        return restarts >= RESTARTS_BEFORE_ONE_STEP ? 0x7fffffff : PAGES_PER_STEP;
      },
    });
    return { totalPages: progress.totalPages };
  } finally {
    db.close();
  }
}

function checkIntegrity(path: string): void {
  const db = new SqliteDatabase(path, { fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    const result = rows.map((r) => r.integrity_check).join('; ');
    if (result !== 'ok') throw new Error(`the copy failed PRAGMA integrity_check: ${result}`);
    // The copy is a WAL database: fold everything into the one file, so FILE alone is the backup.
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const { file, force } = parseArguments(argv);
  const { databaseUrl, engine } = readDatabaseUrl();
  if (engine === 'postgres') {
    console.error(POSTGRES_HINT);
    return 2;
  }
  if (databaseUrl === ':memory:') throw new UsageError('DATABASE_URL is :memory:: there is no database file to back up');
  const source = resolve(databaseUrl);
  if (source === file) throw new UsageError('FILE is the database itself');
  if (existsSync(file) && !force) throw new UsageError(`${file} exists: choose another name, or pass --force to replace it`);
  if (!existsSync(source)) {
    console.error(`backup failed: no database at ${source} (DATABASE_URL)`);
    return 1;
  }
  const temp = join(dirname(file), `.${basename(file)}.partial-${process.pid}`);
  const started = performance.now();
  try {
    const { totalPages } = await copy(source, temp);
    checkIntegrity(temp);
    renameSync(temp, file);
    const bytes = statSync(file).size;
    const ms = Math.round(performance.now() - started);
    console.log(`backup written: ${file} (${totalPages} pages, ${bytes} bytes, ${ms} ms) from ${source}`);
    return 0;
  } catch (err) {
    for (const leftover of [temp, `${temp}-wal`, `${temp}-shm`]) rmSync(leftover, { force: true });
    console.error(`backup failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof UsageError ? err.message : `backup failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
