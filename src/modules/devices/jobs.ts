/**
 * The devices module's background work, as handlers of the one job runner:
 * - `device-sync`: a device with pending commands gets them delivered in sequence
 *   order; one delivery per device at a time (per-device budget 1), several devices
 *   at once; leased so two instances never deliver to one device together.
 * - `device-reconcile`: every few minutes (and soon after start), plan every
 *   subject again and queue what devices lack (repairs drift).
 * - `door-entries`: each pending entry of the entry log is claimed (a conditional update of its
 *   lease, so one instance judges it), handed to the booking module and its outcome stored; an
 *   error leaves it pending, tried again with backoff.
 * - `door-windows`: a booking participant's door window that is over goes, and the
 *   user's devices drop the member or move to the next window; replayed in time order
 *   when the sandbox clock moves.
 */
import type { JobHandler } from '../../platform/jobs/handler.js';
import type { DeviceStateRow } from './device-repository.js';
import type { DeviceSync } from './device-sync.js';
import { timedJob } from '../../platform/jobs/timed.js';
import type { EntryLog } from './entry-log.js';
import type { EntryRow } from './entry-repository.js';
import type { DoorWindowRow } from './door-window-repository.js';
import type { DoorWindows } from './door-windows.js';

export const DEVICE_SYNC_JOB = 'device-sync';
export const DEVICE_RECONCILE_JOB = 'device-reconcile';
export const DOOR_ENTRIES_JOB = 'door-entries';
export const DOOR_WINDOWS_JOB = 'door-windows';
/** Devices delivered to at once. */
export const DEVICE_CONCURRENCY = 8;

export function deviceSyncJob(sync: DeviceSync, opts: { leaseMs: number; intervalMs?: number }): JobHandler<DeviceStateRow> {
  return {
    name: DEVICE_SYNC_JOB,
    intervalMs: opts.intervalMs ?? 500,
    concurrency: DEVICE_CONCURRENCY,
    perKey: { key: (d) => d.device_id, limit: 1 },
    id: (d) => d.device_id,
    dueAt: (d) => d.next_attempt_at,
    due: ({ now, realNow, limit, fullKeys }) => sync.dueDevices(now, realNow, limit, fullKeys),
    backlog: ({ now }) => sync.dueBacklog(now),
    page: { size: 50, max: 4 },
    cascades: true,
    claim: (d, { realNow, leaseMs }) => sync.lease(d.device_id, realNow, leaseMs),
    leaseMs: opts.leaseMs,
    run: (d) => sync.deliver(d.device_id),
  };
}

/** Reconcile every `everyMs` (real time) and whenever `soon()` asked for it (after a site apply, after start). */
export class ReconcileSchedule {
  private next: number;
  constructor(
    private readonly realNow: () => number,
    private readonly everyMs: number,
    firstAfterMs = 5_000,
  ) {
    this.next = realNow() + Math.min(firstAfterMs, everyMs);
  }

  soon(): void {
    this.next = Math.min(this.next, this.realNow());
  }

  job(sync: DeviceSync): JobHandler<{ at: number }> {
    return {
      name: DEVICE_RECONCILE_JOB,
      intervalMs: Math.min(1_000, this.everyMs),
      id: (t) => `${DEVICE_RECONCILE_JOB}@${t.at}`,
      dueAt: (t) => t.at,
      due: async () => (this.realNow() >= this.next ? [{ at: this.next }] : []),
      dueClock: 'real',
      backlog: async () => (this.realNow() >= this.next ? { count: 1, oldestDueAt: this.next } : { count: 0, oldestDueAt: null }),
      run: async () => {
        this.next = this.realNow() + this.everyMs;
        await sync.reconcileAll();
      },
    };
  }
}

/** Pending door entries: claimed one by one (lease), judged by the booking module, retried with backoff on error. */
export function doorEntriesJob(log: EntryLog, opts: { leaseMs?: number; intervalMs?: number } = {}): JobHandler<EntryRow> {
  return {
    name: DOOR_ENTRIES_JOB,
    intervalMs: opts.intervalMs ?? 1_000,
    concurrency: 4,
    id: (e) => e.id,
    dueAt: (e) => e.receivedAt,
    dueClock: 'real',
    due: ({ realNow, limit }) => log.due(realNow, limit),
    backlog: () => log.backlog(),
    page: { size: 50, max: 4 },
    claim: (e, { realNow, leaseMs }) => log.claim(e.id, realNow, leaseMs),
    leaseMs: opts.leaseMs ?? 30_000,
    run: (e) => log.process(e),
    retry: { maxAttempts: Infinity, delayMs: (n) => Math.min(60_000, 1_000 * 2 ** Math.min(n - 1, 6)) },
  };
}

/** Door windows that are over: each row goes and its user's devices are planned again. */
export function doorWindowsJob(windows: DoorWindows, intervalMs = 1000): JobHandler<DoorWindowRow> {
  return timedJob<DoorWindowRow>({
    name: DOOR_WINDOWS_JOB,
    intervalMs,
    id: (r) => `${r.meetingId}:${r.userId}@${r.validUntil}`,
    dueAt: (r) => r.validUntil,
    due: (now, limit) => windows.due(now, limit),
    backlog: (now) => windows.backlog(now),
    run: (r) => windows.expire(r),
  });
}
