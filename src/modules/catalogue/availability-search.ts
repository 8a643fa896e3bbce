/**
 * Availability of many assets for one requested window, for the room and desk
 * searches. Pure: it applies the same engine as booking (src/modules/booking/rules/availability.ts)
 * to each asset, so search and booking cannot disagree. Assets sharing a config
 * share one evaluation of the config rules. Unlike a booking refusal (config rules
 * first), a search checks holds on every asset: a held asset is 'booked' even when
 * its config also refuses the window, so only free assets get a reason.
 */
import type { AssetConfig } from '../../contract/asset-config.js';
import {
  checkConfigRules,
  findConflict,
  resolveTimePeriod,
  type BusyInterval,
  type ExistingBooking,
  type RuleReason,
  type TimePeriod,
} from '../booking/rules/availability.js';

export interface SearchAsset {
  id: string;
  /** The asset's config (the memo key: assets sharing a config share the object). */
  config: AssetConfig;
  /** Effective cleaning time in minutes. */
  cleanupMinutes: number;
}

export interface SearchWindow {
  start: number;
  /** Explicit end, or a desk timePeriod resolved against each asset's hours. */
  end?: number;
  timePeriod?: TimePeriod;
  now: number;
  timeZone: string;
}

export type Verdict =
  | { status: 'free'; start: number; end: number }
  | { status: 'unbookable'; reason: SearchReason }
  | { status: 'booked'; conflict: BusyInterval };

/**
 * The documented `unavailableReason` values. An empty or inverted window is not one:
 * the searches refuse it with 400 before any asset is judged.
 */
export type SearchReason = Exclude<RuleReason, 'INVALID_WINDOW'>;

export interface Hold extends ExistingBooking {
  assetId: string;
}

/** Each asset's verdict, in the order of `assets`. */
export function assessAssets(assets: readonly SearchAsset[], window: SearchWindow, holds: readonly Hold[]): Verdict[] {
  const holdsByAsset = new Map<string, ExistingBooking[]>();
  for (const h of holds) {
    const list = holdsByAsset.get(h.assetId);
    if (list) list.push(h);
    else holdsByAsset.set(h.assetId, [h]);
  }
  const rulesMemo = new Map<AssetConfig, RulesOutcome>();
  const verdicts: Verdict[] = [];
  for (const asset of assets) {
    let rules = rulesMemo.get(asset.config);
    if (!rules) {
      rules = configVerdict(asset.config, window);
      rulesMemo.set(asset.config, rules);
    }
    // A hold on the window excludes the asset whatever its config says: only a free
    // asset can be "free but not bookable" (api-spec, GET /meeting-rooms).
    const bookings = holdsByAsset.get(asset.id);
    const conflict =
      rules.span && bookings
        ? findConflict({ start: rules.span.start, end: rules.span.end, cleanupMinutes: asset.cleanupMinutes, bookings })
        : null;
    verdicts.push(conflict ? { status: 'booked', conflict } : rules.verdict);
  }
  return verdicts;
}

/** The config rules' verdict, and the (truncated, resolved) window they judged, if any. */
interface RulesOutcome {
  verdict: Verdict;
  span: { start: number; end: number } | null;
}

function configVerdict(config: AssetConfig, w: SearchWindow): RulesOutcome {
  let start = w.start;
  let end = w.end;
  if (w.timePeriod) {
    const resolved = resolveTimePeriod({ start: w.start, period: w.timePeriod, timeZone: w.timeZone, config, now: w.now });
    if (!resolved) return { verdict: { status: 'unbookable', reason: 'OPERATING_HOURS' }, span: null };
    ({ start, end } = resolved);
  }
  const r = checkConfigRules({ start, end: end!, now: w.now, timeZone: w.timeZone, config, allDay: w.timePeriod === 'allDay' });
  const span = { start: r.start, end: r.end };
  if (r.ok) return { verdict: { status: 'free', ...span }, span };
  // The searches check the window (valid instants, end after start) before judging assets.
  if (r.reason === 'INVALID_WINDOW') throw new RangeError('search window must end after it starts');
  return { verdict: { status: 'unbookable', reason: r.reason }, span };
}
