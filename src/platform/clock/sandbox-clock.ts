/**
 * The sandbox clock (development and uat): a forward-only offset on top of the
 * machine clock, persisted so it survives restarts and shared by every instance
 * on the same database.
 *
 * Moving the clock runs the registered advance hooks (timers, deliveries) before
 * the move is reported done, so everything due up to the new time has happened.
 *
 * The offset is bounded: service time never runs more than MAX_OFFSET_MS (100 years)
 * ahead of the machine clock. A reset is the one backward move: it drops the offset
 * to 0 and bumps a generation counter, so the instances polling the shared setting
 * accept the lower offset instead of keeping their own (forward-only) one. A stored
 * offset that is not a whole number of milliseconds within bounds (a corrupt or
 * hand-edited row) is read as 0; the next move or reset writes a good value.
 */
import type { OffsetClock } from './clock.js';
import type { SettingsRepository } from '../db/settings-repository.js';
import { errors } from '../errors.js';
import { CLOCK_MAX_ADVANCE_MINUTES } from '../../contract/ops.js';

const OFFSET_SETTING = 'sandbox_clock_offset_ms';
const GENERATION_SETTING = 'sandbox_clock_generation';

const MINUTE_MS = 60_000;
/** The furthest service time may run ahead of the machine clock: 100 years. */
export const MAX_OFFSET_MS = CLOCK_MAX_ADVANCE_MINUTES * MINUTE_MS;

/** Runs everything that falls due in (from, to], in time order. */
export type ClockAdvanceHook = (from: number, to: number) => Promise<void>;

export interface SandboxClockState {
  now: string;
  offsetMs: number;
}

/** A stored offset, or 0 when the stored text is not a whole number of ms within bounds. */
export function readStoredOffset(text: string | undefined): number {
  if (text === undefined || !/^\d{1,16}$/.test(text)) return 0;
  const n = Number(text);
  return Number.isSafeInteger(n) && n <= MAX_OFFSET_MS ? n : 0;
}

const readGeneration = (text: string | undefined): number => {
  const n = Number(text ?? '0');
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
};

export class SandboxClock {
  private readonly hooks: ClockAdvanceHook[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private poller: NodeJS.Timeout | undefined;
  /** The poll in flight, if any: stop() waits for it, so no poll's statement runs after stop() resolves. */
  private polling: Promise<void> | null = null;
  /** The reset generation this instance's offset belongs to. */
  private generation = 0;

  constructor(
    readonly clock: OffsetClock,
    private readonly settings: SettingsRepository,
    readonly enabled: boolean,
  ) {}

  /** Loads the persisted offset (another instance may have moved or reset the clock). */
  async refresh(): Promise<void> {
    if (!this.enabled) return;
    // The generation is read before the offset, and a reset writes the offset before the
    // generation: whoever sees a new generation also sees the reset's (or a later) offset.
    const generation = readGeneration(await this.settings.get(GENERATION_SETTING));
    const stored = readStoredOffset(await this.settings.get(OFFSET_SETTING));
    if (generation !== this.generation) {
      this.generation = generation;
      this.clock.setOffset(stored);
      return;
    }
    // Forward-only within a generation: never step back, even if a stale value is read.
    if (stored > this.clock.offsetMs) this.clock.setOffset(stored);
  }

  /** Polls the shared offset so several instances agree on the time. */
  startPolling(intervalMs = 1000): void {
    if (!this.enabled || this.poller) return;
    this.poller = setInterval(() => {
      if (this.polling) return;
      this.polling = this.refresh()
        .catch(() => {})
        .finally(() => (this.polling = null));
    }, intervalMs);
    this.poller.unref();
  }

  /** Stops polling; resolves once a poll in flight has finished. */
  async stop(): Promise<void> {
    clearInterval(this.poller);
    this.poller = undefined;
    await this.polling;
  }

  onAdvance(hook: ClockAdvanceHook): void {
    this.hooks.push(hook);
  }

  state(): SandboxClockState {
    return { now: new Date(this.clock.now()).toISOString(), offsetMs: this.clock.offsetMs };
  }

  /** Moves service time forward to `target` (epoch ms). Calls are serialized. */
  advanceTo(target: number): Promise<SandboxClockState> {
    return this.move(() => target);
  }

  /**
   * Moves service time forward by `ms`, measured from the service time when the move
   * runs (not when it was requested), so queued concurrent advances all apply in full.
   */
  advanceBy(ms: number): Promise<SandboxClockState> {
    return this.move((from) => from + ms);
  }

  /** Drops the offset back to 0 (service time = machine time), for every instance. */
  reset(): Promise<SandboxClockState> {
    return this.serialized(async () => {
      const generation = readGeneration(await this.settings.get(GENERATION_SETTING)) + 1;
      await this.settings.set(OFFSET_SETTING, '0');
      await this.settings.set(GENERATION_SETTING, String(generation));
      this.generation = generation;
      this.clock.setOffset(0);
      return this.state();
    });
  }

  private move(targetOf: (from: number) => number): Promise<SandboxClockState> {
    return this.serialized(async () => {
      await this.refresh();
      const from = this.clock.now();
      const target = targetOf(from);
      if (!Number.isFinite(target)) throw errors.validation(['the target time must be a finite instant']);
      if (target < from) throw errors.validation([`set must not be earlier than the current service time ${new Date(from).toISOString()}`]);
      const offset = this.clock.offsetMs + (target - from);
      if (!Number.isSafeInteger(offset) || offset > MAX_OFFSET_MS) {
        throw errors.validation([
          `the sandbox clock may run at most 100 years (${CLOCK_MAX_ADVANCE_MINUTES} minutes) ahead of the machine clock; ` +
            `the latest possible time is ${new Date(from - this.clock.offsetMs + MAX_OFFSET_MS).toISOString()} (POST {"reset": true} starts over)`,
        ]);
      }
      await this.settings.set(OFFSET_SETTING, String(offset));
      this.clock.setOffset(offset);
      for (const hook of this.hooks) await hook(from, target);
      return this.state();
    });
  }

  private serialized<T>(run: () => Promise<T>): Promise<T> {
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => {});
    return result;
  }
}
