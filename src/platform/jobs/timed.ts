/**
 * A handler for durable timed items (a booking's lifecycle step, a payment
 * deadline, a reminder): due items are applied one at a time in due order, each
 * claiming itself inside its own transaction, and a sandbox-clock move replays
 * them in time order with the other timed handlers.
 */
import type { Backlog, JobHandler } from './handler.js';

export function timedJob<T>(p: {
  name: string;
  intervalMs: number;
  id(item: T): string;
  dueAt(item: T): number;
  /** Items due by `now` (service time), earliest first. */
  due(now: number, limit: number): Promise<T[]>;
  run(item: T): Promise<unknown>;
  pageSize?: number;
  /** The trace context stored with the item (see JobHandler.traceParent). */
  traceParent?(item: T): string | null;
  /** Everything due by `now` (service time): count and earliest due time (metrics). */
  backlog?(now: number): Promise<Backlog>;
  /** The earliest due time after `now` (service time) of a waiting item, or null (see JobHandler.nextDueAt). */
  nextDueAt?(now: number): Promise<number | null>;
}): JobHandler<T> {
  return {
    name: p.name,
    intervalMs: p.intervalMs,
    concurrency: 1,
    id: p.id,
    dueAt: p.dueAt,
    ...(p.traceParent ? { traceParent: p.traceParent } : {}),
    due: ({ now, limit }) => p.due(now, limit),
    page: { size: p.pageSize ?? 100 },
    cascades: true,
    run: async (item) => {
      await p.run(item);
    },
    replay: true,
    ...(p.backlog ? { backlog: ({ now }: { now: number }) => p.backlog!(now) } : {}),
    ...(p.nextDueAt ? { nextDueAt: ({ now }: { now: number }) => p.nextDueAt!(now) } : {}),
  };
}
