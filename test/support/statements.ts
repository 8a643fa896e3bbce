import type { TestService } from './test-service.js';
import { DEVICE_RECONCILE_JOB } from '../../src/modules/devices/index.js';

/**
 * A statement counter for tests: pass `counter.record` as the service's
 * `onQuery`, then `counter.counted(work)` returns what `work` returned and the
 * SQL text of every statement run meanwhile (run the service without background
 * work so they are all the request's).
 */
export function statementCounter() {
  let seen: string[] | null = null;
  return {
    record: (sql: string) => {
      seen?.push(sql);
    },
    async counted<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
      const mine: string[] = [];
      seen = mine;
      try {
        return { result: await work(), statements: mine };
      } finally {
        seen = null;
      }
    },
  };
}

/**
 * Leaves a service started with `noWorkers` with nothing of its own running, so
 * that every statement counted afterwards is the test's: stops the sandbox clock
 * (it re-reads its offset every second) and waits for the device reconcile a
 * site apply pokes (a pass runs even without workers, and on PostgreSQL it can
 * still be reading when the first count begins).
 */
export async function quietService(svc: TestService): Promise<void> {
  await svc.services.sandboxClock.stop();
  await svc.services.jobs.drain(DEVICE_RECONCILE_JOB);
}
