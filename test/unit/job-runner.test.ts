/**
 * The job runner (src/platform/jobs) driven by small in-memory handlers and
 * hand-moved clocks: leases, retries with backoff, per-key budgets, replay order
 * and graceful stop.
 */
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock/clock.js';
import { JobRunner, type JobHandler, type RetryPolicy } from '../../src/platform/jobs/runner.js';
import { periodicJob } from '../../src/platform/jobs/periodic.js';

const T0 = Date.UTC(2030, 0, 1);

interface Item {
  id: string;
  key: string;
  dueAt: number;
  attempts: number;
  status: 'pending' | 'done' | 'failed';
  leasedUntil: number | null;
}

/** Lets other promise callbacks (another "instance") run in between, like a database round trip. */
const yieldNow = () => new Promise<void>((r) => setImmediate(r));

/** A table of work items shared by every runner ("instance") given it. */
class Store {
  readonly items = new Map<string, Item>();

  add(id: string, dueAt: number, key = 'k'): void {
    this.items.set(id, { id, key, dueAt, attempts: 0, status: 'pending', leasedUntil: null });
  }

  async due(now: number, realNow: number, limit: number, fullKeys: readonly string[]): Promise<Item[]> {
    await yieldNow();
    return [...this.items.values()]
      .filter(
        (i) => i.status === 'pending' && i.dueAt <= now && (i.leasedUntil === null || i.leasedUntil < realNow) && !fullKeys.includes(i.key),
      )
      .sort((a, b) => a.dueAt - b.dueAt || a.id.localeCompare(b.id))
      .slice(0, limit)
      .map((i) => ({ ...i }));
  }

  /** Conditional update: only the attempt `seen` was read for, and only when nobody holds a live lease. */
  async lease(seen: Item, realNow: number, leaseMs: number): Promise<boolean> {
    await yieldNow();
    const i = this.items.get(seen.id)!;
    if (i.status !== 'pending' || i.attempts !== seen.attempts || (i.leasedUntil !== null && i.leasedUntil >= realNow)) return false;
    i.leasedUntil = realNow + leaseMs;
    return true;
  }

  done(id: string): void {
    Object.assign(this.items.get(id)!, { status: 'done', leasedUntil: null });
  }

  failed(id: string, retryAt: number | null): void {
    const i = this.items.get(id)!;
    Object.assign(i, {
      attempts: i.attempts + 1,
      leasedUntil: null,
      status: retryAt === null ? 'failed' : 'pending',
      dueAt: retryAt ?? i.dueAt,
    });
  }
}

/** A leased handler over `store`; `run` defaults to marking the item done. */
function storeHandler(store: Store, o: Partial<JobHandler<Item>> & { name: string }): JobHandler<Item> {
  return {
    intervalMs: 60_000,
    id: (i) => i.id,
    dueAt: (i) => i.dueAt,
    due: ({ now, realNow, limit, fullKeys }) => store.due(now, realNow, limit, fullKeys),
    claim: (i, { realNow, leaseMs }) => store.lease(i, realNow, leaseMs),
    leaseMs: 30_000,
    run: async (i) => store.done(i.id),
    ...o,
  };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function setup() {
  const clock = new ManualClock(T0);
  const realClock = new ManualClock(T0);
  const errors: { job: string; message: string }[] = [];
  const runner = () =>
    new JobRunner({ clock, realClock, onError: (err, { job }) => errors.push({ job, message: (err as Error).message }) });
  return { clock, realClock, errors, runner };
}

describe('job runner: leases', () => {
  it('an item claimed by a worker that died is claimable again once its lease has expired', async () => {
    const { realClock, runner } = setup();
    const store = new Store();
    store.add('x', T0);
    store.add('y', T0);
    // Instance A claims both and never finishes (as if the process had died).
    const a = runner();
    const startedOnA: string[] = [];
    a.register(storeHandler(store, { name: 'job', concurrency: 2, run: (i) => (startedOnA.push(i.id), new Promise(() => {})) }));
    await a.poke('job');
    expect(startedOnA).toEqual(['x', 'y']);
    expect(store.items.get('x')!.leasedUntil).toBe(T0 + 30_000);

    const b = runner();
    const ranOnB: string[] = [];
    b.register(storeHandler(store, { name: 'job', run: async (i) => (ranOnB.push(i.id), store.done(i.id)) }));
    await b.drain('job');
    expect(ranOnB).toEqual([]);
    realClock.advance(30_000); // the lease holds up to and including its last instant
    await b.drain('job');
    expect(ranOnB).toEqual([]);
    realClock.advance(1);
    await b.drain('job');
    expect(ranOnB).toEqual(['x', 'y']);
    expect([...store.items.values()].map((i) => i.status)).toEqual(['done', 'done']);
  });

  it('two instances draining the same items run each exactly once', async () => {
    const { clock, runner } = setup();
    clock.set(T0 + 1000);
    const store = new Store();
    for (let i = 0; i < 30; i++) store.add(`i${String(i).padStart(2, '0')}`, T0 + i, `k${i % 3}`);
    const runs = new Map<string, number>();
    const make = () => {
      const r = runner();
      r.register(
        storeHandler(store, {
          name: 'job',
          concurrency: 4,
          page: { size: 5 },
          run: async (i) => {
            runs.set(i.id, (runs.get(i.id) ?? 0) + 1);
            await yieldNow();
            store.done(i.id);
          },
        }),
      );
      return r;
    };
    await Promise.all([make().drain('job'), make().drain('job')]);
    expect(runs.size).toBe(30);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });
});

describe('job runner: retries', () => {
  it('a durable policy schedules each retry after its backoff and gives up after the last attempt', async () => {
    const { clock, errors, runner } = setup();
    const store = new Store();
    store.add('x', T0);
    const attemptsAt: number[] = [];
    const recorded: { attemptsMade: number; retryAt: number | null }[] = [];
    const retry: RetryPolicy<Item> = {
      maxAttempts: 4,
      delayMs: (n) => 1000 * 2 ** (n - 1),
      attempts: (i) => i.attempts,
      record: async (i, _err, f) => {
        recorded.push({ attemptsMade: f.attemptsMade, retryAt: f.retryAt });
        store.failed(i.id, f.retryAt);
      },
    };
    const r = runner();
    r.register(
      storeHandler(store, {
        name: 'job',
        retry,
        run: async () => (attemptsAt.push(clock.now() - T0), Promise.reject(new Error('refused'))),
      }),
    );

    await r.drain('job');
    expect(attemptsAt).toEqual([0]);
    for (const [wait, expected] of [
      [999, [0]],
      [1, [0, 1000]],
      [1999, [0, 1000]],
      [1, [0, 1000, 3000]],
      [4000, [0, 1000, 3000, 7000]],
    ] as const) {
      clock.advance(wait);
      await r.drain('job');
      expect(attemptsAt).toEqual(expected);
    }
    expect(recorded).toEqual([
      { attemptsMade: 1, retryAt: T0 + 1000 },
      { attemptsMade: 2, retryAt: T0 + 3000 },
      { attemptsMade: 3, retryAt: T0 + 7000 },
      { attemptsMade: 4, retryAt: null },
    ]);
    expect(store.items.get('x')).toMatchObject({ status: 'failed', attempts: 4 });
    clock.advance(3_600_000);
    await r.drain('job');
    expect(attemptsAt).toHaveLength(4);
    // Recorded failures are outcomes, not errors.
    expect(errors).toEqual([]);
  });

  it('without a record, a failure is reported, skipped for the rest of the pass and retried on the next', async () => {
    const { clock, errors, runner } = setup();
    clock.set(T0 + 1000);
    const store = new Store();
    store.add('bad', T0);
    store.add('good1', T0 + 1);
    store.add('good2', T0 + 2);
    let failing = true;
    const order: string[] = [];
    const r = runner();
    r.register(
      storeHandler(store, {
        name: 'steps',
        claim: undefined,
        cascades: true,
        page: { size: 1 },
        run: async (i) => {
          order.push(i.id);
          if (i.id === 'bad' && failing) throw new Error('injected');
          store.done(i.id);
        },
      }),
    );
    await r.drain('steps');
    // One page of one item at a time: the failing item does not hold up the next pages.
    expect(order).toEqual(['bad', 'good1', 'good2']);
    expect(errors).toEqual([{ job: 'steps', message: 'injected' }]);
    expect(store.items.get('bad')!.status).toBe('pending');
    failing = false;
    await r.drain('steps');
    expect(order).toEqual(['bad', 'good1', 'good2', 'bad']);
    expect(store.items.get('bad')!.status).toBe('done');
  });

  it('an in-memory backoff waits on the service clock and gives up after the last attempt', async () => {
    const { clock, errors, runner } = setup();
    const store = new Store();
    store.add('x', T0);
    const attemptsAt: number[] = [];
    const r = runner();
    r.register(
      storeHandler(store, {
        name: 'job',
        claim: undefined,
        retry: { maxAttempts: 3, delayMs: () => 5000 },
        run: async () => (attemptsAt.push(clock.now() - T0), Promise.reject(new Error('nope'))),
      }),
    );
    await r.drain('job');
    await r.drain('job');
    expect(attemptsAt).toEqual([0]);
    clock.advance(4999);
    await r.drain('job');
    expect(attemptsAt).toEqual([0]);
    clock.advance(1);
    await r.drain('job');
    clock.advance(5000);
    await r.drain('job');
    expect(attemptsAt).toEqual([0, 5000, 10000]);
    clock.advance(60_000);
    await r.drain('job');
    expect(attemptsAt).toHaveLength(3);
    expect(errors).toHaveLength(3);
    expect(store.items.get('x')!.status).toBe('pending'); // left as it is: the runner only stops trying
  });
});

describe('job runner: per-key budget', () => {
  it('never runs more than the budget of one key at once, while the other keys proceed', async () => {
    const { clock, runner } = setup();
    clock.set(T0 + 1000);
    const store = new Store();
    // The slow key's backlog is due first and is bigger than a read.
    for (let i = 0; i < 12; i++) store.add(`slow${String(i).padStart(2, '0')}`, T0 + i, 'slow');
    for (let i = 0; i < 5; i++) store.add(`b${i}`, T0 + 100 + i, 'b');
    for (let i = 0; i < 3; i++) store.add(`c${i}`, T0 + 200 + i, 'c');
    const inFlight = new Map<string, number>();
    const maxInFlight = new Map<string, number>();
    const gate = deferred();
    const r = runner();
    r.register(
      storeHandler(store, {
        name: 'send',
        concurrency: Infinity,
        perKey: { key: (i) => i.key, limit: 2 },
        page: { size: 4, max: 8 },
        run: async (i) => {
          inFlight.set(i.key, (inFlight.get(i.key) ?? 0) + 1);
          maxInFlight.set(i.key, Math.max(maxInFlight.get(i.key) ?? 0, inFlight.get(i.key)!));
          // Long enough for the next item of the same key to start meanwhile.
          await (i.key === 'slow' ? gate.promise : new Promise((res) => setTimeout(res, 5)));
          inFlight.set(i.key, inFlight.get(i.key)! - 1);
          store.done(i.id);
        },
      }),
    );
    r.start(); // a freed slot starts another pass at once (the interval is a minute)
    await r.poke('send');
    const pendingOf = (key: string) => [...store.items.values()].filter((i) => i.key === key && i.status === 'pending').length;
    await vi.waitFor(() => expect(pendingOf('b') + pendingOf('c')).toBe(0), { timeout: 2000, interval: 5 });
    expect(inFlight.get('slow')).toBe(2);
    expect(pendingOf('slow')).toBe(12);

    gate.resolve();
    await vi.waitFor(() => expect(pendingOf('slow')).toBe(0), { timeout: 2000, interval: 5 });
    await r.stop();
    expect(Object.fromEntries(maxInFlight)).toEqual({ slow: 2, b: 2, c: 2 });
  });
});

describe('job runner: replay', () => {
  it('runs the replaying handlers over everything due by `until`, merged in due-time order, one at a time', async () => {
    const { clock, runner } = setup();
    const rooms = new Store();
    const desks = new Store();
    const other = new Store();
    rooms.add('r-30', T0 + 30, 'room1');
    rooms.add('r-10', T0 + 10, 'room2');
    rooms.add('r-50', T0 + 50, 'room1');
    rooms.add('r-90', T0 + 90, 'room1'); // after `until`
    desks.add('d-20', T0 + 20, 'desk1');
    desks.add('d-40', T0 + 40, 'desk2');
    desks.add('d-45', T0 + 45, 'desk1');
    other.add('o-5', T0 + 5);
    const order: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const run = (store: Store) => async (i: Item) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      order.push(i.id);
      await yieldNow();
      store.done(i.id);
      inFlight--;
    };
    const r = runner();
    // Pages of one item: the merge must read further pages of one handler before moving on to the other's.
    r.register(storeHandler(rooms, { name: 'rooms', concurrency: 4, page: { size: 1 }, replay: true, run: run(rooms) }));
    r.register(storeHandler(other, { name: 'other', run: run(other) }));
    r.register(
      storeHandler(desks, { name: 'desks', concurrency: 4, perKey: { key: (i) => i.key, limit: 1 }, replay: true, run: run(desks) }),
    );
    // Service time stays at T0: a replay reads as of `until`.
    await r.replay(T0 + 60);
    expect(order).toEqual(['r-10', 'd-20', 'r-30', 'd-40', 'd-45', 'r-50']);
    expect(maxInFlight).toBe(1);
    expect(rooms.items.get('r-90')!.status).toBe('pending');
    expect(other.items.get('o-5')!.status).toBe('pending');
    expect(clock.now()).toBe(T0);

    rooms.add('r-70', T0 + 70, 'room2');
    await r.replay(T0 + 100);
    expect(order.slice(6)).toEqual(['r-70', 'r-90']);
  });

  it('queues behind a pass under way and runs replays one after another', async () => {
    const { runner } = setup();
    const store = new Store();
    store.add('a', T0);
    store.add('b', T0 + 1000);
    store.add('c', T0 + 2000);
    const gate = deferred();
    const order: string[] = [];
    const r = runner();
    r.register(
      storeHandler(store, {
        name: 'steps',
        replay: true,
        run: async (i) => {
          order.push(`start ${i.id}`);
          if (i.id === 'a') await gate.promise;
          store.done(i.id);
          order.push(`end ${i.id}`);
        },
      }),
    );
    const pass = r.poke('steps');
    await vi.waitFor(() => expect(order).toEqual(['start a']));
    const first = r.replay(T0 + 1000).then(() => order.push('replay 1 done'));
    const second = r.replay(T0 + 2000).then(() => order.push('replay 2 done'));
    await yieldNow();
    expect(order).toEqual(['start a']);
    gate.resolve();
    await Promise.all([pass, first, second]);
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b', 'replay 1 done', 'start c', 'end c', 'replay 2 done']);
  });
});

describe('job runner: stop', () => {
  it('lets in-flight work finish and starts nothing new', async () => {
    const { runner } = setup();
    const store = new Store();
    for (const id of ['a', 'b', 'c', 'd']) store.add(id, T0);
    const gates = new Map(['a', 'b'].map((id) => [id, deferred()]));
    const started: string[] = [];
    const finished: string[] = [];
    const r = runner();
    r.register(
      storeHandler(store, {
        name: 'send',
        concurrency: 2,
        intervalMs: 5,
        run: async (i) => {
          started.push(i.id);
          await gates.get(i.id)?.promise;
          store.done(i.id);
          finished.push(i.id);
        },
      }),
    );
    r.start();
    await vi.waitFor(() => expect(started).toEqual(['a', 'b']), { timeout: 2000, interval: 5 });
    let stopped = false;
    const stopping = r.stop().then(() => (stopped = true));
    gates.get('a')!.resolve();
    await vi.waitFor(() => expect(finished).toEqual(['a']));
    expect(stopped).toBe(false); // b is still in flight
    gates.get('b')!.resolve();
    await stopping;
    expect(finished).toEqual(['a', 'b']);
    // Neither the freed slots nor the interval started c or d, then or later.
    await new Promise((res) => setTimeout(res, 50));
    expect(started).toEqual(['a', 'b']);
    expect(store.items.get('c')!.status).toBe('pending');
  });

  it('a sequential pass under way finishes its current item and stops there', async () => {
    const { runner } = setup();
    const store = new Store();
    for (const id of ['a', 'b', 'c']) store.add(id, T0);
    const gate = deferred();
    const started: string[] = [];
    const r = runner();
    r.register(
      storeHandler(store, {
        name: 'steps',
        claim: undefined,
        run: async (i) => {
          started.push(i.id);
          await gate.promise;
          store.done(i.id);
        },
      }),
    );
    const pass = r.poke('steps');
    await vi.waitFor(() => expect(started).toEqual(['a']));
    const stopping = r.stop();
    gate.resolve();
    await Promise.all([pass, stopping]);
    expect(started).toEqual(['a']);
    expect([...store.items.values()].map((i) => i.status)).toEqual(['done', 'pending', 'pending']);
  });
});

describe('periodic jobs', () => {
  it('run once a period on their clock, and a failed run waits for the next period', async () => {
    const { realClock, errors, runner } = setup();
    const runsAt: number[] = [];
    let fail = false;
    const r = runner();
    r.register(
      periodicJob({
        name: 'purge',
        everyMs: 3_600_000,
        clock: realClock,
        run: async () => {
          runsAt.push(realClock.now() - T0);
          if (fail) throw new Error('store down');
        },
      }),
    );
    await r.drain();
    realClock.advance(3_599_999);
    await r.drain();
    expect(runsAt).toEqual([]);
    realClock.advance(1);
    await r.drain();
    await r.drain();
    expect(runsAt).toEqual([3_600_000]);
    fail = true;
    realClock.advance(3_600_000);
    await r.drain();
    await r.drain();
    expect(runsAt).toEqual([3_600_000, 7_200_000]);
    expect(errors).toEqual([{ job: 'purge', message: 'store down' }]);
    fail = false;
    realClock.advance(3_600_000 * 3); // missed periods run once, then the cadence counts from now
    await r.drain();
    realClock.advance(3_599_999);
    await r.drain();
    expect(runsAt).toEqual([3_600_000, 7_200_000, 18_000_000]);
  });
});
