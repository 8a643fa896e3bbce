/**
 * The job runner's wake-ups (src/platform/jobs/runner.ts) on fake timers: a handler that tells its next due time
 * is run when that time comes rather than at its next poll, and `wake` (committed work) runs a pass at once, at
 * most one per WAKE_GAP_MS.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/platform/clock/clock.js';
import { JobRunner, WAKE_GAP_MS, type JobHandler } from '../../src/platform/jobs/runner.js';

const T0 = Date.UTC(2030, 0, 1);
const POLL_MS = 60_000;

/** Both clocks read the faked Date, so they move with the fake timers. */
const fakeNow: Clock = { now: () => Date.now() };

/** `readMs`: how long (fake time) each read of due items takes, as a database read does. */
function timedHandler(dueTimes: number[], ran: number[], withNextDue = true, readMs = 0): JobHandler<{ at: number }> {
  const pending = new Set(dueTimes);
  return {
    name: 'timed',
    intervalMs: POLL_MS,
    id: (t) => String(t.at),
    dueAt: (t) => t.at,
    due: async ({ now }) => {
      if (readMs) await new Promise((resolve) => setTimeout(resolve, readMs));
      return [...pending].filter((at) => at <= now).map((at) => ({ at }));
    },
    run: async (t) => {
      pending.delete(t.at);
      ran.push(Date.now() - T0);
    },
    ...(withNextDue
      ? {
          nextDueAt: async ({ now }: { now: number }) => {
            const later = [...pending].filter((at) => at > now);
            return later.length ? Math.min(...later) : null;
          },
        }
      : {}),
  };
}

describe('job runner: waking at the next due time', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs an item when it falls due, long before the next poll', async () => {
    const ran: number[] = [];
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow });
    runner.register(timedHandler([T0 + 300, T0 + 700], ran));
    runner.start();
    runner.wake('timed');
    await vi.advanceTimersByTimeAsync(299);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual([300]);
    // The pass that ran the first item set the timer for the second.
    await vi.advanceTimersByTimeAsync(400);
    expect(ran).toEqual([300, 700]);
    await runner.stop();
  });

  it('leaves an item due after the next poll to that poll, which then sets the timer', async () => {
    const ran: number[] = [];
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow });
    runner.register(timedHandler([T0 + POLL_MS + 500], ran));
    runner.start();
    runner.wake('timed');
    await vi.advanceTimersByTimeAsync(POLL_MS - 1);
    expect(runner.pollStats().timed.polls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runner.pollStats().timed.polls).toBe(2);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(500);
    expect(ran).toEqual([POLL_MS + 500]);
    expect(runner.pollStats().timed.polls).toBe(3);
    await runner.stop();
  });

  it('an item that falls due while the pass reads is run at once, not left to the poll', async () => {
    // The pass reads at T0 (the item is not due yet) and its read answers at T0 + 5, after the item fell due at
    // T0 + 3: looking for the next item after the answer would miss it until the poll, a minute later.
    const ran: number[] = [];
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow });
    runner.register(timedHandler([T0 + 3], ran, true, 5));
    runner.start();
    runner.wake('timed');
    await vi.advanceTimersByTimeAsync(5);
    expect(ran).toEqual([]);
    // The next pass starts at once (a timer of no delay, which Node runs after 1 ms) and its own read takes 5 ms.
    await vi.advanceTimersByTimeAsync(6);
    expect(ran).toEqual([11]);
    expect(runner.pollStats().timed.polls).toBe(2);
    await runner.stop();
  });

  it('an item the pass read and left (not run) is not read again before the poll', async () => {
    // A handler whose read returns an item that its claim refuses (another instance holds it): the wake-up plan
    // must not turn that item into a pass after pass.
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow });
    runner.register({ ...timedHandler([T0 - 100], [], true, 1), claim: async () => false });
    runner.start();
    runner.wake('timed');
    await vi.advanceTimersByTimeAsync(POLL_MS - 1);
    expect(runner.pollStats().timed.polls).toBe(1);
    await runner.stop();
  });

  it('without nextDueAt, waits for the poll', async () => {
    const ran: number[] = [];
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow });
    runner.register(timedHandler([T0 + 300], ran, false));
    runner.start();
    runner.wake('timed');
    await vi.advanceTimersByTimeAsync(POLL_MS - 1);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual([POLL_MS]);
    await runner.stop();
  });

  it('stop clears the timer: nothing runs after it', async () => {
    const ran: number[] = [];
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow });
    runner.register(timedHandler([T0 + 300], ran));
    runner.start();
    runner.wake('timed');
    await vi.advanceTimersByTimeAsync(100);
    await runner.stop();
    await vi.advanceTimersByTimeAsync(POLL_MS * 2);
    expect(ran).toEqual([]);
  });
});

describe('job runner: wake (committed work)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs a pass at once, and a burst of wakes costs one more pass WAKE_GAP_MS later', async () => {
    const ran: number[] = [];
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow });
    runner.register(timedHandler([T0], ran));
    runner.start();
    runner.wake('timed');
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual([0]);
    expect(runner.pollStats().timed.polls).toBe(1);
    for (let i = 0; i < 5; i++) runner.wake('timed');
    await vi.advanceTimersByTimeAsync(WAKE_GAP_MS - 1);
    expect(runner.pollStats().timed.polls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runner.pollStats().timed.polls).toBe(2);
    await vi.advanceTimersByTimeAsync(WAKE_GAP_MS * 10);
    expect(runner.pollStats().timed.polls).toBe(2);
    await runner.stop();
  });

  it('does nothing while the runner is not started, and ignores names it does not know', async () => {
    const ran: number[] = [];
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow });
    runner.register(timedHandler([T0], ran));
    runner.wake('timed');
    runner.wake('no-such-job');
    await vi.advanceTimersByTimeAsync(POLL_MS * 2);
    expect(ran).toEqual([]);
    expect(runner.pollStats().timed.polls).toBe(0);
  });

  it('pollMs replaces every handler interval', async () => {
    const ran: number[] = [];
    const runner = new JobRunner({ clock: fakeNow, realClock: fakeNow, pollMs: 3 * POLL_MS });
    runner.register(timedHandler([T0 + 1], ran, false));
    runner.start();
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(runner.pollStats().timed.polls).toBe(0);
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(ran).toEqual([3 * POLL_MS]);
    await runner.stop();
  });
});
