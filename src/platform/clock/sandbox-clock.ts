/**
 * The sandbox clock (development and uat): a forward-only offset on top of the
 * machine clock, persisted so it survives restarts and shared by every instance
 * on the same database.
 *
 * Moving the clock runs the registered advance hooks (timers, deliveries) before
 * the move is reported done, so everything due up to the new time has happened.
 */
import type { OffsetClock } from './clock.js';
import type { SettingsRepository } from '../db/settings-repository.js';
import { errors } from '../errors.js';

const OFFSET_SETTING = 'sandbox_clock_offset_ms';

/** Runs everything that falls due in (from, to], in time order. */
export type ClockAdvanceHook = (from: number, to: number) => Promise<void>;

export class SandboxClock {
  private readonly hooks: ClockAdvanceHook[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private poller: NodeJS.Timeout | undefined;

  constructor(
    readonly clock: OffsetClock,
    private readonly settings: SettingsRepository,
    readonly enabled: boolean,
  ) {}

  /** Loads the persisted offset (another instance may have moved the clock). */
  async refresh(): Promise<void> {
    if (!this.enabled) return;
    const stored = Number((await this.settings.get(OFFSET_SETTING)) ?? '0');
    // Forward-only: never step back, even if a stale value is read.
    if (Number.isFinite(stored) && stored > this.clock.offsetMs) this.clock.setOffset(stored);
  }

  /** Polls the shared offset so several instances agree on the time. */
  startPolling(intervalMs = 1000): void {
    if (!this.enabled || this.poller) return;
    this.poller = setInterval(() => void this.refresh().catch(() => {}), intervalMs);
    this.poller.unref();
  }

  stop(): void {
    clearInterval(this.poller);
    this.poller = undefined;
  }

  onAdvance(hook: ClockAdvanceHook): void {
    this.hooks.push(hook);
  }

  state(): { now: string; offsetMs: number } {
    return { now: new Date(this.clock.now()).toISOString(), offsetMs: this.clock.offsetMs };
  }

  /** Moves service time forward to `target` (epoch ms). Calls are serialized. */
  advanceTo(target: number): Promise<{ now: string; offsetMs: number }> {
    return this.move(() => target);
  }

  /**
   * Moves service time forward by `ms`, measured from the service time when the move
   * runs (not when it was requested), so queued concurrent advances all apply in full.
   */
  advanceBy(ms: number): Promise<{ now: string; offsetMs: number }> {
    return this.move((from) => from + ms);
  }

  private move(targetOf: (from: number) => number): Promise<{ now: string; offsetMs: number }> {
    const run = async () => {
      await this.refresh();
      const from = this.clock.now();
      const target = targetOf(from);
      if (target < from) throw errors.validation([`set must not be earlier than the current service time ${new Date(from).toISOString()}`]);
      const offset = this.clock.offsetMs + (target - from);
      await this.settings.set(OFFSET_SETTING, String(offset));
      this.clock.setOffset(offset);
      for (const hook of this.hooks) await hook(from, target);
      return this.state();
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => {});
    return result;
  }
}
