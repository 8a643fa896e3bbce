/**
 * bench:scale's probe, its own process on the service's database: times the background reads through
 * the service's own repositories, as their callers call them (the room search's read of the holds, the job runner's due
 * timers and due deliveries, the change stream's booking and delivery sources), shows their plans
 * (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN) from the very statement a repository compiled, and
 * applies or reverts migration 019 (its `up` timed, in a transaction as the migrator runs it).
 *
 * IPC: `time` {name, reps, now, projectId} → ms per call; `plan` {name, now, projectId} → plan lines; `migration` {up} → ms.
 */
import { CompiledQuery, type Kysely, type KyselyPlugin } from 'kysely';
import { openStorage } from '../../src/platform/db/database.js';
import type { Database } from '../../src/platform/db/schema.js';
import { MeetingRepository } from '../../src/modules/booking/meeting-repository.js';
import { TimerRepository } from '../../src/modules/lifecycle/timer-repository.js';
import { DeliveryRepository } from '../../src/modules/webhooks/delivery-repository.js';
import { SlotRepository } from '../../src/modules/booking/slot-repository.js';
import { FEED_AHEAD_MS, FEED_CANCELLED_MS, FEED_PAST_MS, FEED_STATUSES } from '../../src/modules/calendar-sync/feed-service.js';
import * as m019 from '../../src/platform/db/migrations/019-scale-indexes.js';
import { failed, serve } from './rpc-child.js';
import type { ProbeName } from './scale-names.js';

async function main(): Promise<void> {
  const url = process.env.BENCH_SCALE_DATABASE_URL;
  if (!url) throw new Error('BENCH_SCALE_DATABASE_URL is not set');
  const storage = await openStorage(url);
  const db = storage.db;
  // Each statement a repository builds is compiled once more here, with its values, for its plan.
  let last: CompiledQuery | undefined;
  const executor = db.getExecutor();
  const capture: KyselyPlugin = {
    transformQuery: (args) => {
      last = executor.compileQuery(args.node, args.queryId);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const traced = db.withPlugin(capture) as Kysely<Database>;
  const meetings = new MeetingRepository(db);
  const timers = new TimerRepository(db);
  const deliveries = new DeliveryRepository(db);
  const slots = new SlotRepository(db);
  let realNow = Date.now();
  const run = async (name: ProbeName, now: number, on: Kysely<Database>, projectId: string) => {
    switch (name) {
      case 'room search: holds':
        // The read of GET /meeting-rooms (catalogue's BusySlots port): an hour's window a day ahead.
        return (await slots.slotsNear([projectId], now + 86_400_000, now + 90_000_000, on)).length;
      case 'due timers':
        return (await timers.due(now, 100, on)).length;
      case 'due deliveries':
        // A zero lease: the next call finds the same rows due (the bench's probe sends nothing).
        return (await deliveries.claimDue({ now, realNow: ++realNow, leaseMs: 0, budget: 8, room: {} }, on)).length;
      case 'stream: bookings':
        return (await meetings.changedSince(now - 5_000, 500, on)).length;
      case 'stream: deliveries':
        return (await deliveries.changedSince(now - 5_000, 500, on)).length;
      case 'stream: latest':
        return (await meetings.lastChangeAt(on)) + (await deliveries.lastChangeAt(on));
    }
  };
  const explain = async (q: CompiledQuery): Promise<string[]> => {
    const text = storage.engine === 'sqlite' ? `explain query plan ${q.sql}` : `explain ${q.sql}`;
    const rows = (await db.executeQuery(CompiledQuery.raw(text, [...q.parameters]))).rows as Record<string, unknown>[];
    return rows.map((r) => String(r.detail ?? r['QUERY PLAN'] ?? JSON.stringify(r)));
  };
  const rpc = serve(
    {
      async time(msg) {
        const samples: number[] = [];
        for (let i = 0; i < (msg.reps as number); i++) {
          const t0 = performance.now();
          await run(msg.name as ProbeName, msg.now as number, db, msg.projectId as string);
          samples.push(performance.now() - t0);
        }
        return samples;
      },
      async plan(msg) {
        last = undefined;
        if (msg.name === 'due deliveries') return ['(one prebuilt statement along deliveries_pending_idx, migration 010)'];
        if (msg.name === 'stream: latest') {
          await meetings.lastChangeAt(traced);
          const a = await explain(last!);
          await deliveries.lastChangeAt(traced);
          return [...a, ...(await explain(last!))];
        }
        await run(msg.name as ProbeName, msg.now as number, traced, msg.projectId as string);
        return last ? explain(last) : ['(no statement)'];
      },
      async migration(msg) {
        const t0 = performance.now();
        await db
          .transaction()
          .execute((tx) => (msg.up ? m019.up(tx as unknown as Kysely<unknown>) : m019.down(tx as unknown as Kysely<unknown>)));
        return performance.now() - t0;
      },
      /** The plan of a room feed's read (the feed route's window and statuses). */
      async feedPlan(msg) {
        const now = msg.now as number;
        last = undefined;
        await meetings.roomFeed(
          msg.roomId as string,
          {
            projectId: msg.projectId as string,
            from: now - FEED_PAST_MS,
            to: now + FEED_AHEAD_MS,
            statuses: FEED_STATUSES,
            cancelledSince: now - FEED_CANCELLED_MS,
          },
          traced,
        );
        return last ? explain(last) : ['(no statement)'];
      },
    },
    () => storage.close(),
  );
  rpc.ready({ engine: storage.engine, pid: process.pid });
}

main().catch(failed);
