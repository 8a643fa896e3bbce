/**
 * The one place background work runs. Handlers (see handler.ts) describe their
 * work; the runner polls each on its own interval, keeps the concurrency budgets
 * (overall and per key), claims items before running them, applies the retry
 * policy to failures, and stops gracefully.
 *
 * A pass over one handler reads due items page by page and starts what the
 * budgets allow; with a budget of 1 it runs them one after another in the order
 * read. Passes over one handler never overlap: a poll that finds one running
 * joins it. While the runner is started, a freed slot of a concurrent handler
 * starts another pass at once rather than at the next tick.
 *
 * `replay(until)` runs the handlers that opt into it over everything due by
 * `until`, merged across handlers in due-time order, one item at a time.
 *
 * A poll that fails (the database is unreachable) backs the handler off: its
 * next polls are skipped for `pollBackoffMs` (doubling per failure up to
 * MAX_POLL_BACKOFF_MS), so an outage costs a few attempts, not one per tick. The
 * first poll that succeeds ends the backoff; a poke (work was just committed)
 * polls at once.
 *
 * Polling is the fallback; two things start work sooner. After a pass, a handler
 * that tells its next due time (`nextDueAt`) is woken by a timer at that moment
 * when it comes before the next poll. And `wake(name)` (work committed here, or on
 * another instance: platform/jobs/wake.ts) runs a pass at once, at most one per
 * WAKE_GAP_MS per handler, so a stream of commits costs a bounded number of reads.
 */
import type { Clock } from '../clock/clock.js';
import type { ClaimContext, JobHandler } from './handler.js';

export type { Backlog, ClaimContext, DueQuery, JobContext, JobHandler, RetryPolicy } from './handler.js';

/** One item run of a handler: it succeeded, failed (tried again later) or failed for the last time. */
export interface JobRunEvent {
  job: string;
  outcome: 'succeeded' | 'failed' | 'gave_up';
  /** Real milliseconds the run took. */
  durationMs: number;
}

export type JobRunObserver = (event: JobRunEvent) => void;

/** A handler's due work now (metrics). */
export interface JobBacklog {
  job: string;
  count: number;
  /** How long the earliest due item has been due (0 when none). */
  oldestAgeMs: number;
}

export interface JobRunnerDeps {
  /** Service time: due times and retry schedules. */
  clock: Clock;
  /** Real time: leases and drain deadlines. */
  realClock: Clock;
  onError?: (err: unknown, context: { job: string }) => void;
  /** Every handler's poll interval instead of its own (real milliseconds; tests prove the wake paths with a long one). */
  pollMs?: number;
  /** Where each item runs (its log context, and tracing on its span: platform/observability/tracing.ts); default: as is. */
  itemContext?: JobItemContext;
}

/** Runs a job item inside its context, and hears of a failed run within it. */
export interface JobItemContext {
  around<R>(job: string, traceParent: string | null | undefined, run: () => Promise<R>): Promise<R>;
  failed(err: unknown): void;
}

const NO_CONTEXT: JobItemContext = { around: (_job, _traceParent, run) => run(), failed: () => {} };

/** What one pass did: items started, and due ones held back by a full key budget. */
interface PassResult {
  started: number;
  deferred: number;
  /** The moment (both clocks) of the pass's last read of due items: what fell due after it, that read did not see. */
  readAt?: DueMoment;
}

/** One moment on both clocks. */
interface DueMoment {
  now: number;
  realNow: number;
}

const DEFAULT_PAGE = 100;
const DEFAULT_LEASE_MS = 60_000;
/** The shortest time between two passes started by `wake` for one handler (real milliseconds). */
export const WAKE_GAP_MS = 10;
/** The longest a failing handler waits between polls (real time). */
export const MAX_POLL_BACKOFF_MS = 5_000;

/** How long a handler skips polls after its `failures`-th failed poll in a row: double its interval per failure, at most MAX_POLL_BACKOFF_MS. */
export function pollBackoffMs(intervalMs: number, failures: number): number {
  if (failures <= 0) return 0;
  return Math.max(intervalMs, Math.min(intervalMs * 2 ** failures, MAX_POLL_BACKOFF_MS));
}

/** Polls of one handler since the runner was made (tests and diagnostics). */
export interface PollStats {
  polls: number;
  failedPolls: number;
  /** Failed polls in a row now (0 once a poll succeeds). */
  failing: number;
}

/** Runtime state of one registered handler. */
interface Slot {
  h: JobHandler<unknown>;
  timer?: NodeJS.Timeout;
  /** The pass (or replay) holding this handler, if any. */
  current: Promise<void> | null;
  /** A slot freed during a pass: run another pass after it. */
  again: boolean;
  inFlight: number;
  byKey: Map<string, number>;
  running: Set<string>;
  pending: Set<Promise<void>>;
  /** In-memory retry state of items whose failure was not recorded durably. */
  backoff: Map<string, { attempts: number; retryAt: number }>;
  stats: PollStats;
  /** Real time before which ticks are skipped (after failed polls). */
  pausedUntil: number;
  /** A timer that runs a pass when the next item falls due (`nextDueAt`), and the real time it is set for. */
  dueTimer?: NodeJS.Timeout;
  dueTimerAt: number;
  /** A `wake` held back by WAKE_GAP_MS, and when the last `wake` pass started (real time). */
  wakeTimer?: NodeJS.Timeout;
  lastWake: number;
}

export class JobRunner {
  private readonly slots = new Map<string, Slot>();
  private started = false;
  private stopping = false;
  private replays: Promise<unknown> = Promise.resolve();
  private readonly runObservers: JobRunObserver[] = [];
  /** `nextDueAt` reads in flight (stop waits for them). */
  private readonly planning = new Set<Promise<void>>();

  constructor(private readonly deps: JobRunnerDeps) {}

  register<T>(handler: JobHandler<T>): void {
    if (this.slots.has(handler.name)) throw new Error(`job handler ${handler.name} is already registered`);
    const s: Slot = {
      h: handler,
      current: null,
      again: false,
      inFlight: 0,
      byKey: new Map(),
      running: new Set(),
      pending: new Set(),
      backoff: new Map(),
      stats: { polls: 0, failedPolls: 0, failing: 0 },
      pausedUntil: 0,
      dueTimerAt: 0,
      lastWake: -Infinity,
    };
    this.slots.set(handler.name, s);
    if (this.started) this.arm(s);
  }

  /** Starts polling every handler on its interval. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const s of this.slots.values()) this.arm(s);
  }

  /** Stops polling and waits for passes and in-flight items to finish; nothing new starts meanwhile. */
  async stop(): Promise<void> {
    this.started = false;
    this.stopping = true;
    try {
      for (const s of this.slots.values()) {
        clearInterval(s.timer);
        clearTimeout(s.dueTimer);
        clearTimeout(s.wakeTimer);
        s.timer = s.dueTimer = s.wakeTimer = undefined;
      }
      for (const s of this.slots.values()) await this.settle(s);
      await Promise.allSettled([...this.planning]);
    } finally {
      this.stopping = false;
    }
  }

  /**
   * Runs a pass over one handler now; when one is running (it may have read before
   * the work that prompted the poke was committed), another follows it. Resolves once
   * the current pass has started its items.
   */
  poke(name: string): Promise<void> {
    const s = this.slot(name);
    if (s.current) s.again = true;
    return this.tick(s, true);
  }

  /**
   * Work for the handler `name` was committed (here or on another instance): while started, a pass runs
   * now, or WAKE_GAP_MS after the last one `wake` started. Unknown names are ignored.
   */
  wake(name: string): void {
    const s = this.slots.get(name);
    if (!s || !this.started || this.stopping || s.wakeTimer) return;
    const wait = s.lastWake + WAKE_GAP_MS - this.deps.realClock.now();
    if (wait <= 0) {
      this.wakeNow(s);
      return;
    }
    s.wakeTimer = setTimeout(() => {
      s.wakeTimer = undefined;
      if (this.started && !this.stopping) this.wakeNow(s);
    }, wait);
    s.wakeTimer.unref();
  }

  /** Names of the registered handlers. */
  names(): string[] {
    return [...this.slots.keys()];
  }

  /** Adds a listener told of every item run and its outcome (metrics); a throwing listener is ignored. */
  observeRuns(listener: JobRunObserver): void {
    this.runObservers.push(listener);
  }

  /**
   * Due work per handler that can tell it (`JobHandler.backlog`), read now; a handler whose read fails is left out
   * and `onError` is told (the caller counts it).
   */
  async backlog(onError?: (err: unknown, job: string) => void): Promise<JobBacklog[]> {
    const now = this.deps.clock.now();
    const realNow = this.deps.realClock.now();
    const out: JobBacklog[] = [];
    for (const s of this.slots.values()) {
      if (!s.h.backlog) continue;
      try {
        const b = await s.h.backlog({ now, realNow });
        const clockNow = s.h.dueClock === 'real' ? realNow : now;
        out.push({ job: s.h.name, count: b.count, oldestAgeMs: b.oldestDueAt === null ? 0 : Math.max(0, clockNow - b.oldestDueAt) });
      } catch (err) {
        onError?.(err, s.h.name);
      }
    }
    return out;
  }

  /** Poll counts per handler name. */
  pollStats(): Record<string, PollStats> {
    return Object.fromEntries([...this.slots].map(([name, s]) => [name, { ...s.stats }]));
  }

  /**
   * Runs passes until nothing is due or in flight (tests, benches). Items that fail
   * without a durable record are skipped for the rest of the drain.
   */
  async drain(name?: string, maxMs = 30_000): Promise<void> {
    const slots = name ? [this.slot(name)] : [...this.slots.values()];
    const failed = new Map(slots.map((s) => [s, new Set<string>()]));
    const deadline = this.deps.realClock.now() + maxMs;
    while (this.deps.realClock.now() < deadline) {
      let quiet = true;
      for (const s of slots) {
        // Let running passes and items settle first: then no key is left out of the read.
        await this.settle(s);
        let r: PassResult = { started: 0, deferred: 0 };
        try {
          r = await this.exclusive(s, () => this.pass(s, failed.get(s)!));
        } catch (err) {
          this.report(err, s);
        }
        if (r.started > 0 || r.deferred > 0 || s.inFlight > 0 || s.current) quiet = false;
      }
      if (quiet) return;
    }
  }

  /**
   * Runs every replaying handler over all items due by `until` (service time), in
   * due-time order across handlers, one at a time, before resolving. Calls queue up.
   */
  replay(until: number): Promise<void> {
    const run = this.replays.then(() => this.replayNow(until));
    this.replays = run.catch(() => undefined);
    return run;
  }

  private slot(name: string): Slot {
    const s = this.slots.get(name);
    if (!s) throw new Error(`no job handler named ${name}`);
    return s;
  }

  private arm(s: Slot): void {
    if (s.timer) return;
    s.timer = setInterval(() => void this.tick(s), this.intervalOf(s));
    s.timer.unref();
  }

  private intervalOf(s: Slot): number {
    return this.deps.pollMs ?? s.h.intervalMs;
  }

  private wakeNow(s: Slot): void {
    s.lastWake = this.deps.realClock.now();
    if (s.current) s.again = true;
    void this.tick(s, true);
  }

  private replan(s: Slot): void {
    clearTimeout(s.dueTimer);
    s.dueTimer = undefined;
    const plan = this.planWake(s).finally(() => this.planning.delete(plan));
    this.planning.add(plan);
  }

  /**
   * After a pass: when the handler's next item falls due before its next poll, a timer runs a pass at that
   * moment (an earlier timer already set stays). The next item is looked for after `after`, the moment of the
   * pass's last read (default: now): an item that fell due between that read and this plan was seen by neither,
   * so it gets a pass at once rather than waiting for the poll. Items due by `after` and left by the pass
   * (backing off, another instance's) are the poll's.
   */
  private async planWake(s: Slot, after?: DueMoment): Promise<void> {
    const h = s.h;
    if (!h.nextDueAt || !this.started || this.stopping) return;
    const from = after ?? { now: this.deps.clock.now(), realNow: this.deps.realClock.now() };
    let at: number | null;
    try {
      at = await h.nextDueAt(from);
    } catch (err) {
      this.report(err, s);
      return;
    }
    if (at === null || !this.started || this.stopping) return;
    const realNow = this.deps.realClock.now();
    const delay = Math.max(0, at - (h.dueClock === 'real' ? realNow : this.deps.clock.now()));
    if (delay >= this.intervalOf(s)) return;
    const fireAt = realNow + delay;
    if (s.dueTimer && s.dueTimerAt <= fireAt) return;
    clearTimeout(s.dueTimer);
    s.dueTimerAt = fireAt;
    s.dueTimer = setTimeout(() => {
      s.dueTimer = undefined;
      if (s.current) s.again = true;
      void this.tick(s, true);
    }, delay);
    s.dueTimer.unref();
  }

  private tick(s: Slot, force = false): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (s.current) return s.current;
    if (!force && this.deps.realClock.now() < s.pausedUntil) return Promise.resolve();
    s.stats.polls++;
    return this.exclusive(s, () => this.pass(s, new Set())).then(
      (r) => {
        s.stats.failing = 0;
        s.pausedUntil = 0;
        const plan = this.planWake(s, r.readAt).finally(() => this.planning.delete(plan));
        this.planning.add(plan);
      },
      (err) => {
        s.stats.failedPolls++;
        s.stats.failing++;
        s.pausedUntil = this.deps.realClock.now() + pollBackoffMs(s.h.intervalMs, s.stats.failing);
        this.report(err, s);
      },
    );
  }

  /** Runs `fn` once no pass or replay holds the handler, holding it meanwhile. */
  private async exclusive<R>(s: Slot, fn: () => Promise<R>): Promise<R> {
    const release = await this.hold(s);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private async hold(s: Slot, idle = false): Promise<() => void> {
    // Checked and taken in one synchronous step once the loop ends.
    while (s.current || (idle && s.pending.size > 0)) {
      if (s.current) await s.current;
      else await Promise.allSettled([...s.pending]);
    }
    let done!: () => void;
    s.current = new Promise<void>((r) => (done = r));
    return () => {
      s.current = null;
      done();
      if (s.again) {
        s.again = false;
        if (this.started && !this.stopping) void this.tick(s);
      }
    };
  }

  /** Waits until no pass holds the handler and none of its items is in flight. */
  private async settle(s: Slot): Promise<void> {
    while (s.current || s.pending.size > 0) {
      if (s.current) await s.current;
      await Promise.allSettled([...s.pending]);
    }
  }

  /** Waits for a free overall slot (items of a budget-1 handler run one after another). */
  private async freeSlot(s: Slot): Promise<void> {
    const limit = s.h.concurrency ?? 1;
    while (s.inFlight >= limit && s.pending.size > 0) await Promise.race(s.pending);
  }

  private keyFull(s: Slot, key: string | undefined): boolean {
    return key !== undefined && (s.byKey.get(key) ?? 0) >= s.h.perKey!.limit;
  }

  /** One read of due items, without those failed in this pass, backing off, or in flight here. */
  private async read(
    s: Slot,
    failed: Set<string>,
    now: number,
    realNow: number,
    ignoreKeys = false,
  ): Promise<{ items: unknown[]; short: boolean }> {
    const h = s.h;
    const skip = new Set(failed);
    for (const [id, b] of s.backoff) if (b.retryAt > now) skip.add(id);
    const fullKeys = ignoreKeys || !h.perKey ? [] : [...s.byKey].filter(([, n]) => n >= h.perKey!.limit).map(([k]) => k);
    const limit = (h.page?.size ?? DEFAULT_PAGE) + skip.size;
    const rows = await h.due({ now, realNow, limit, fullKeys });
    const items = rows.filter((i) => !skip.has(h.id(i)) && !s.running.has(h.id(i)));
    const short = rows.length < limit;
    if (short && !fullKeys.length && s.backoff.size) {
      // A complete read: failed items it no longer returns are done with (or gone).
      const seen = new Set(rows.map((i) => h.id(i)));
      for (const id of s.backoff.keys()) if (!seen.has(id)) s.backoff.delete(id);
    }
    return { items, short };
  }

  private async pass(s: Slot, failed: Set<string>): Promise<PassResult> {
    const h = s.h;
    const result: PassResult = { started: 0, deferred: 0 };
    const maxPages = h.page?.max ?? Infinity;
    for (let page = 0; page < maxPages && !this.stopping; page++) {
      await this.freeSlot(s);
      if (this.stopping) break;
      const realNow = this.deps.realClock.now();
      const now = this.deps.clock.now();
      result.readAt = { now, realNow };
      const { items, short } = await this.read(s, failed, now, realNow);
      let started = 0;
      for (const item of items) {
        const key = h.perKey?.key(item);
        if (this.keyFull(s, key)) {
          result.deferred++;
          continue;
        }
        await this.freeSlot(s);
        if (this.stopping) break;
        // Re-checked: items may have started or ended while waiting.
        if (this.keyFull(s, key)) {
          result.deferred++;
          continue;
        }
        if (s.running.has(h.id(item))) continue;
        if (!(await this.claim(s, item, realNow))) continue;
        void this.launch(s, item, failed); // tracked in s.pending; execute() settles every outcome itself
        started++;
      }
      result.started += started;
      if (started === 0 || (short && !h.cascades)) break;
    }
    return result;
  }

  private claim(s: Slot, item: unknown, realNow: number): Promise<boolean> {
    if (!s.h.claim) return Promise.resolve(true);
    const ctx: ClaimContext = { now: this.deps.clock.now(), realNow, leaseMs: s.h.leaseMs ?? DEFAULT_LEASE_MS };
    return s.h.claim(item, ctx);
  }

  /** Starts one claimed item; the promise settles (never rejects) once it has run and its outcome is handled. */
  private launch(s: Slot, item: unknown, failed: Set<string>): Promise<void> {
    const h = s.h;
    const id = h.id(item);
    const key = h.perKey?.key(item);
    s.inFlight++;
    s.running.add(id);
    if (key !== undefined) s.byKey.set(key, (s.byKey.get(key) ?? 0) + 1);
    const p: Promise<void> = this.execute(s, item, id, failed).finally(() => {
      s.inFlight--;
      s.running.delete(id);
      if (key !== undefined) {
        const n = (s.byKey.get(key) ?? 1) - 1;
        if (n > 0) s.byKey.set(key, n);
        else s.byKey.delete(key);
      }
      s.pending.delete(p);
      this.slotFreed(s);
    });
    s.pending.add(p);
    return p;
  }

  /** Runs one item in its job context: its log lines carry the job's name, and tracing on, it is a span `job <name>`. */
  private execute(s: Slot, item: unknown, id: string, failed: Set<string>): Promise<void> {
    const context = this.deps.itemContext ?? NO_CONTEXT;
    return context.around(s.h.name, s.h.traceParent?.(item), async () => {
      const started = this.deps.realClock.now();
      let outcome: JobRunEvent['outcome'] = 'succeeded';
      try {
        await s.h.run(item, { now: this.deps.clock.now(), realNow: started });
        s.backoff.delete(id);
      } catch (err) {
        context.failed(err);
        outcome = await this.failed(s, item, id, err, failed);
      }
      if (this.runObservers.length) this.told({ job: s.h.name, outcome, durationMs: this.deps.realClock.now() - started });
    });
  }

  private told(event: JobRunEvent): void {
    for (const listener of this.runObservers) {
      try {
        listener(event);
      } catch {
        // An observer (metrics) never disturbs the work.
      }
    }
  }

  /** Applies the retry policy to a failed run; says whether the item will be tried again. */
  private async failed(s: Slot, item: unknown, id: string, err: unknown, failed: Set<string>): Promise<'failed' | 'gave_up'> {
    const policy = s.h.retry;
    const attemptsMade = (policy?.attempts ? policy.attempts(item) : (s.backoff.get(id)?.attempts ?? 0)) + 1;
    const now = this.deps.clock.now();
    const retryAt = attemptsMade >= (policy?.maxAttempts ?? Infinity) ? null : now + (policy?.delayMs(attemptsMade) ?? 0);
    if (policy?.record) {
      try {
        await policy.record(item, err, { attemptsMade, retryAt, now });
        return retryAt === null ? 'gave_up' : 'failed';
      } catch (recordErr) {
        // Not recorded: left as it is (a claim keeps it until its lease expires).
        this.report(recordErr, s);
        failed.add(id);
        return 'failed';
      }
    }
    this.report(err, s);
    failed.add(id);
    s.backoff.set(id, { attempts: attemptsMade, retryAt: retryAt ?? Infinity });
    return retryAt === null ? 'gave_up' : 'failed';
  }

  /** An item ended: a concurrent handler looks for more work now instead of at its next tick. */
  private slotFreed(s: Slot): void {
    if (!this.started || this.stopping || (s.h.concurrency ?? 1) <= 1) return;
    if (s.current) s.again = true;
    else void this.tick(s);
  }

  private async replayNow(until: number): Promise<void> {
    const slots = [...this.slots.values()].filter((s) => s.h.replay);
    const releases: (() => void)[] = [];
    try {
      for (const s of slots) releases.push(await this.hold(s, true));
      await this.merge(slots, until);
    } finally {
      for (const release of releases) release();
    }
    // The clock moved: a wake-up timer set before is for the wrong moment.
    for (const s of slots) this.replan(s);
  }

  /**
   * Runs the handlers' due items in due-time order (ties: registration order), one
   * at a time. A handler's next page is read when its last one is used up, and a
   * handler found empty is read again if anything ran after that.
   */
  private async merge(slots: Slot[], until: number): Promise<void> {
    const cursors = slots.map((s) => ({ s, items: [] as unknown[], emptyAt: -1, failed: new Set<string>() }));
    let ran = 0;
    while (!this.stopping) {
      for (const c of cursors) {
        if (c.items.length > 0 || c.emptyAt === ran) continue;
        c.items = (await this.read(c.s, c.failed, until, this.deps.realClock.now(), true)).items;
        if (!c.items.length) c.emptyAt = ran;
      }
      let next: (typeof cursors)[number] | undefined;
      for (const c of cursors) {
        if (c.items.length && (!next || c.s.h.dueAt(c.items[0]) < next.s.h.dueAt(next.items[0]))) next = c;
      }
      if (!next) return;
      const item = next.items.shift();
      ran++;
      if (next.s.running.has(next.s.h.id(item))) continue;
      if (await this.claim(next.s, item, this.deps.realClock.now())) await this.launch(next.s, item, next.failed);
    }
  }

  private report(err: unknown, s: Slot): void {
    this.deps.onError?.(err, { job: s.h.name });
  }
}
