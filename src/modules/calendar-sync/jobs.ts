/**
 * Connected room calendars as jobs of the runner (real time): subscription work
 * (create, renew before expiry, stop), pulls of changes, and writes owed to the
 * providers, each claimed per room so one instance at a time does a room's work,
 * and the periodic check of which rooms take part.
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { JobHandler } from '../../platform/jobs/handler.js';
import { periodicJob } from '../../platform/jobs/periodic.js';
import { CALENDAR_WRITEBACK_JOB, type CalendarWriteback } from './calendar-writeback.js';
import type { ConnectedRoomRow, OutboxRow } from './connected-repository.js';
import { CALENDAR_PULL_JOB, CALENDAR_SUBSCRIPTIONS_JOB, ROOM_LEASE_MS, type ConnectedSync } from './connected-sync.js';

export const CALENDAR_ROOMS_JOB = 'calendar-rooms';

export interface CalendarJobs {
  subscriptions: JobHandler<ConnectedRoomRow>;
  pull: JobHandler<ConnectedRoomRow>;
  writeback: JobHandler<OutboxRow>;
  rooms: JobHandler<{ at: number }>;
}

const roomKey = (r: { connection_id: string; room_id: string }) => `${r.connection_id}|${r.room_id}`;

export function calendarJobs(sync: ConnectedSync, writeback: CalendarWriteback, realClock: Clock): CalendarJobs {
  return {
    subscriptions: {
      name: CALENDAR_SUBSCRIPTIONS_JOB,
      intervalMs: 5_000,
      concurrency: 2,
      id: roomKey,
      dueAt: (r) => Number(r.subscribe_due_at),
      dueClock: 'real',
      due: ({ realNow, limit }) => sync.dueSubscriptions(realNow, limit),
      page: { size: 20, max: 1 },
      leaseMs: ROOM_LEASE_MS,
      claim: (r) => sync.claim(r, 'subscribe'),
      run: (r) => sync.subscription(r),
    },
    pull: {
      name: CALENDAR_PULL_JOB,
      intervalMs: 1_000,
      concurrency: 4,
      id: roomKey,
      dueAt: (r) => Number(r.sync_due_at),
      dueClock: 'real',
      due: ({ realNow, limit }) => sync.dueSyncs(realNow, limit),
      page: { size: 20, max: 1 },
      leaseMs: ROOM_LEASE_MS,
      claim: (r) => sync.claim(r, 'sync'),
      run: (r) => sync.pull(r),
    },
    writeback: {
      name: CALENDAR_WRITEBACK_JOB,
      intervalMs: 1_000,
      concurrency: 4,
      // One write at a time per room: a room's events are written in order.
      perKey: { key: roomKey, limit: 1 },
      id: (o) => `${o.id}#${o.version}`,
      dueAt: (o) => Number(o.due_at),
      dueClock: 'real',
      due: ({ realNow, limit }) => writeback.due(realNow, limit),
      backlog: ({ realNow }) => writeback.backlog(realNow),
      page: { size: 50, max: 1 },
      claim: (o) => writeback.claim(o),
      run: (o) => writeback.run(o),
    },
    rooms: periodicJob({ name: CALENDAR_ROOMS_JOB, everyMs: 5 * 60_000, clock: realClock, run: () => sync.reconcile() }),
  };
}
