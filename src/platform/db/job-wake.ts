/**
 * Committed work wakes the job runner at once instead of at its next poll.
 *
 * - SQLite (one process): a statement observer sees the inserts into the tables that hold work (timers,
 *   deliveries) and wakes their jobs in the next turn of the event loop. The pass's read waits for the
 *   database's one connection, which the writing transaction holds until it has committed (or rolled back: a
 *   pass that finds nothing), so it sees the new rows.
 * - PostgreSQL (any number of instances): those inserts notify the channel `job_wake` at commit (a trigger,
 *   migration 021), and each instance listens on one dedicated connection of its own, this instance included.
 *   A lost connection is opened again (backing off up to MAX_RETRY_MS); once listening, it wakes the jobs, since
 *   what was committed meanwhile was not heard (the runner's poll covers the gap too).
 *
 * Wake-ups are cheap to repeat: the runner runs at most one pass per WAKE_GAP_MS per job for them.
 */
import { AsyncResource } from 'node:async_hooks';
import type pg from 'pg';
import type { Engine, QueryObserver } from './database.js';

/** The channel migration 021's trigger notifies. */
export const JOB_WAKE_CHANNEL = 'job_wake';
const FIRST_RETRY_MS = 250;
export const MAX_RETRY_MS = 5_000;

export interface JobWakeDeps {
  engine: Engine;
  databaseUrl: string;
  /** Which job the rows inserted into each table are work for. */
  tables: Readonly<Record<string, string>>;
  observeQueries(listener: QueryObserver): void;
  /** Runs a pass of the job soon (JobRunner.wake). */
  wake(job: string): void;
  /** The listening connection failed (it is opened again). */
  onError?(err: unknown): void;
}

export interface JobWake {
  /** Starts waking (with the workers): on PostgreSQL, opens the listening connection. */
  start(): void;
  /** Stops waking and closes the listening connection. */
  stop(): Promise<void>;
}

export function jobWake(deps: JobWakeDeps): JobWake {
  const jobs = [...new Set(Object.values(deps.tables))];
  // Made here, outside any request: wake-ups run in this scope, so a pass they start is not part of the
  // request (its trace, its log context) whose statement set it off.
  const scope = new AsyncResource('job-wake');
  const wakeAll = () => scope.runInAsyncScope(() => jobs.forEach((job) => deps.wake(job)));
  let started = false;
  if (deps.engine === 'sqlite') observeInserts(deps, scope, () => started);
  let listener: PgListener | null = null;
  return {
    start: () => {
      started = true;
      if (deps.engine === 'postgres' && !listener) listener = new PgListener(deps.databaseUrl, wakeAll, deps.onError);
    },
    stop: async () => {
      started = false;
      const l = listener;
      listener = null;
      await l?.close();
    },
  };
}

/** SQLite: wakes the job of each table a statement inserted into, once per turn of the event loop. */
function observeInserts(deps: JobWakeDeps, scope: AsyncResource, started: () => boolean): void {
  const prefixes = Object.entries(deps.tables).map(([table, job]) => [`insert into "${table}"`, job] as const);
  const due = new Set<string>();
  const flush = () => {
    const list = [...due];
    due.clear();
    for (const job of list) deps.wake(job);
  };
  deps.observeQueries((e) => {
    if (e.failed || !e.sql.startsWith('insert into "') || !started()) return;
    for (const [prefix, job] of prefixes) {
      if (!e.sql.startsWith(prefix)) continue;
      if (due.size === 0) scope.runInAsyncScope(() => setImmediate(flush));
      due.add(job);
    }
  });
}

/** One dedicated connection that LISTENs on JOB_WAKE_CHANNEL, opened again when lost. */
class PgListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private retry?: NodeJS.Timeout;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly onNotify: () => void,
    private readonly onError?: (err: unknown) => void,
  ) {
    this.open();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.connecting;
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }

  private open(): void {
    if (this.closed) return;
    this.connecting = this.connect().finally(() => (this.connecting = null));
  }

  private async connect(): Promise<void> {
    const driver = (await import('pg')).default;
    const client = new driver.Client({ connectionString: this.url });
    let over = false;
    const lost = (err?: unknown) => {
      if (over) return;
      over = true;
      if (this.client === client) this.client = null;
      void client.end().catch(() => undefined);
      if (this.closed) return;
      if (err !== undefined) this.onError?.(err);
      const wait = Math.min(FIRST_RETRY_MS * 2 ** this.failures++, MAX_RETRY_MS);
      this.retry = setTimeout(() => this.open(), wait);
      this.retry.unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (m) => {
      if (m.channel === JOB_WAKE_CHANNEL) this.onNotify();
    });
    try {
      await client.connect();
      await client.query(`listen ${JOB_WAKE_CHANNEL}`);
    } catch (err) {
      lost(err);
      return;
    }
    if (over) return;
    if (this.closed) {
      over = true;
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.failures = 0;
    // Committed while nobody listened here: looked for now.
    this.onNotify();
  }
}
