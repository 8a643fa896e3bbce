/**
 * Entry point of a service instance in its own process (see service-process.ts):
 * starts the real service on the database named by SERVICE_PROCESS_DATABASE_URL
 * (never dropping it), prints `{"url": …}` on one stdout line, and shuts down
 * when its stdin closes.
 */
import { startTestService } from './test-service.js';

const url = process.env.SERVICE_PROCESS_DATABASE_URL;
if (!url) throw new Error('SERVICE_PROCESS_DATABASE_URL is not set');
const svc = await startTestService({ database: { url, drop: async () => undefined }, keepDatabase: true });
process.stdout.write(`${JSON.stringify({ url: svc.url })}\n`);
process.stdin.on('end', () => {
  svc.close().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
});
process.stdin.resume();
