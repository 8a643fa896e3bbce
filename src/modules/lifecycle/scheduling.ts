/** Plans and stores the clock-driven steps of a booking window (the booking writer's lifecycle port). */
import type { Db } from '../../platform/db/db.js';
import { resolveMeetingConfig } from '../booking/rules/asset-config.js';
import type { LifecyclePlanner } from '../booking/index.js';
import type { TimerRepository } from './timer-repository.js';
import { planTimers } from './rules/timer-plan.js';

export class TimerScheduler implements LifecyclePlanner {
  constructor(private readonly timers: TimerRepository) {}

  async replan(trx: Db, p: Parameters<LifecyclePlanner['replan']>[1]): Promise<void> {
    if (!p.fresh) await this.timers.cancelPending(p.meetingId, trx);
    if (!p.window) return;
    const plan = planTimers(p.window, resolveMeetingConfig(p.config), { allDay: p.allDay, now: p.now });
    await this.timers.schedule(p.meetingId, p.window, plan, p.now, trx);
  }
}
