/**
 * Effective cleaning time held after every booking of an asset (api-spec "Cleaning time").
 * Pure: callers pass the asset's and the property's settings.
 */

export interface CleaningTimeInput {
  /** Room `cleanupMinutes`; ignored for desks. 0 = none, absent/null = property default. */
  assetCleanupMinutes?: number | null;
  /** Property default cleaning time; absent/null = none. */
  propertyDefaultMinutes?: number | null;
  /** Property booking grid; when positive, caps the cleaning time. */
  bookingGridMinutes?: number | null;
  isDesk: boolean;
}

/** A usable minute count: a finite number >= 0, floored; otherwise null (treated as absent). */
function minutesOrNull(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : null;
}

/**
 * Rooms use their own cleanupMinutes when set (0 = none), else the property default;
 * desks always use the property default; nothing configured = 0.
 * A positive booking grid shorter than that shortens it: min(cleaning, grid).
 */
export function effectiveCleanupMinutes(input: CleaningTimeInput): number {
  const own = input.isDesk ? null : minutesOrNull(input.assetCleanupMinutes);
  const cleaning = own ?? minutesOrNull(input.propertyDefaultMinutes) ?? 0;
  const grid = minutesOrNull(input.bookingGridMinutes);
  return grid !== null && grid > 0 ? Math.min(cleaning, grid) : cleaning;
}
