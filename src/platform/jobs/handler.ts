/**
 * What a background job handler tells the runner (see runner.ts): how to find
 * due work, how to claim one item, how to run it and what to do when it fails.
 */

/** One read of due work. */
export interface DueQuery {
  /** Service time (the sandbox offset included); during a replay, the instant replayed up to. */
  now: number;
  /** Real time: compare leases with this. */
  realNow: number;
  /** Return at most this many items. */
  limit: number;
  /** Keys whose concurrency budget is full: leave their items out, so one key's backlog never fills a read. */
  fullKeys: readonly string[];
}

/** Due work waiting now (exact, one COUNT-style read): how many items, and when the earliest fell due (in the clock `due` compares with). */
export interface Backlog {
  count: number;
  oldestDueAt: number | null;
}

export interface JobContext {
  now: number;
  realNow: number;
}

export interface ClaimContext extends JobContext {
  /** How long the claim should hold (real time), from the handler's `leaseMs`. */
  leaseMs: number;
}

/** How a failed attempt is counted and when the item is tried again. */
export interface RetryPolicy<T> {
  /** Attempts in all (the failed one included) before giving up; Infinity never gives up. */
  maxAttempts: number;
  /** Service time to wait after failed attempt number `attemptsMade` (1-based). */
  delayMs(attemptsMade: number): number;
  /** Attempts already made, when the item carries them; otherwise the runner counts in memory. */
  attempts?(item: T): number;
  /**
   * Records the failure durably (the item is due again at `retryAt`, or has given up
   * when it is null). Without it the runner keeps the backoff in memory and reports
   * the error. Throwing leaves the item as it is (reported; skipped for this pass).
   */
  record?(item: T, err: unknown, failure: { attemptsMade: number; retryAt: number | null; now: number }): Promise<void>;
}

export interface JobHandler<T> {
  /** Unique among the runner's handlers. */
  name: string;
  /** How often the runner looks for due work while started (real milliseconds). */
  intervalMs: number;
  /** Items of this handler in flight at once; 1 runs them one after another, in the order `due` gives. Default 1. */
  concurrency?: number;
  /** A budget per key (e.g. per listener), on top of `concurrency`. */
  perKey?: { key(item: T): string; limit: number };
  /** Identity of an item (failed items are skipped by it). */
  id(item: T): string;
  /** When the item fell due (service time): orders a replay across handlers. */
  dueAt(item: T): number;
  /** Due items, earliest first, leaving out items claimed by someone else and keys in `fullKeys`. */
  due(q: DueQuery): Promise<T[]>;
  /** Items per read, and reads per pass (default 100 and no limit). */
  page?: { size: number; max?: number };
  /**
   * Running an item may make further items due at once (a booking series rolling
   * on): a pass reads again after a short page, until a read finds nothing to start.
   */
  cascades?: boolean;
  /**
   * Claims an item before it runs; false when another worker (or instance) has it.
   * Without it, `run` claims the item itself (e.g. inside its own transaction).
   */
  claim?(item: T, ctx: ClaimContext): Promise<boolean>;
  /** Lease length passed to `claim` (real milliseconds); default 60 s. */
  leaseMs?: number;
  /**
   * The trace context (a W3C `traceparent`) stored with the item by the request that
   * caused it, if any: the item's span joins that trace and links to it.
   */
  traceParent?(item: T): string | null;
  /** Does the work. Throwing counts as a failed attempt (see `retry`). */
  run(item: T, ctx: JobContext): Promise<unknown>;
  /** Default: report the error and try again on the next pass, without limit. */
  retry?: RetryPolicy<T>;
  /**
   * Everything due now and not done (metrics): exact, not estimated from a page. `now` and `realNow` as in `due`;
   * `oldestDueAt` in the clock this handler's due times use (`clock: 'real'` when that is real time).
   */
  backlog?(q: { now: number; realNow: number }): Promise<Backlog>;
  /**
   * When the next item falls due after `now` (in the clock of `dueClock`), or null when none waits; read after a pass
   * so the runner can wake the handler at that moment instead of at its next poll. Cheap reads only (an index's
   * first entry): it runs after every pass.
   */
  nextDueAt?(q: { now: number; realNow: number }): Promise<number | null>;
  /** Which clock `backlog().oldestDueAt` and `nextDueAt` are on (default the service clock). */
  dueClock?: 'service' | 'real';
  /** Included in `JobRunner.replay` (moving the sandbox clock runs its due items before answering). */
  replay?: boolean;
}
