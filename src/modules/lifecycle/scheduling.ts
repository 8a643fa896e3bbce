/** Plans and stores the clock-driven steps of a booking window (used by the booking service and the lifecycle worker). */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { resolveMeetingConfig, type AssetConfig } from '../booking/rules/asset-config.js';
import { timerWrites } from './timer-repository.js';
import { planTimers } from './rules/timer-plan.js';

export async function assetConfigOf(trx: Kysely<Database>, assetKind: string, assetId: string): Promise<AssetConfig> {
  const row = await trx.selectFrom(assetKind === 'room' ? 'rooms' : 'desks').select('config').where('id', '=', assetId).executeTakeFirst();
  return row ? (JSON.parse(row.config) as AssetConfig) : {};
}

/** Replaces the pending steps of a booking with those of `window` (none when `window` is null). */
export async function rescheduleTimers(
  trx: Kysely<Database>,
  m: { id: string; asset_kind: string; asset_id: string; all_day: number },
  window: { start: number; end: number } | null,
  now: number,
): Promise<void> {
  await timerWrites.cancelPending(trx, m.id);
  if (!window) return;
  const config = await assetConfigOf(trx, m.asset_kind, m.asset_id);
  await timerWrites.schedule(trx, m.id, window, planTimers(window, resolveMeetingConfig(config), { allDay: m.all_day === 1, now }), now);
}
