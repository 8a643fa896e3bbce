/**
 * A child process for migration races: loads the storage code, says `ready`, waits for a
 * line on stdin, then opens MIGRATE_PROCESS_DATABASE_URL (running the migrations) and prints
 * its migration report as one JSON line (`{"applied":[...],"unknown":[...]}`), or
 * `{"error":"..."}`. Several of them released at once race for the migration lock.
 */
import { once } from 'node:events';
import { openStorage } from '../../src/platform/db/database.js';

process.stdout.write('ready\n');
await once(process.stdin, 'data');
process.stdin.destroy();
try {
  const storage = await openStorage(process.env.MIGRATE_PROCESS_DATABASE_URL!);
  process.stdout.write(JSON.stringify(storage.migrations) + '\n');
  await storage.close();
} catch (err) {
  process.stdout.write(
    JSON.stringify({ error: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined }) + '\n',
  );
  process.exitCode = 1;
}
