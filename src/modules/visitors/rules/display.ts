/**
 * Display strings of visitor events (pure): property-local `dd MMM yyyy HH:mm` in
 * English, and in Thai with Thai month abbreviations and the Buddhist-era year
 * (Gregorian + 543), e.g. "25 Nov 2026 09:00" and "25 พ.ย. 2569 09:00".
 */
import { DateTime } from 'luxon';
import type { VmsEntryType } from '../../../contract/events.js';

/** Years between the Gregorian and the Thai Buddhist era. */
export const BUDDHIST_ERA_OFFSET = 543;

function local(ms: number, zone: string): DateTime {
  const dt = DateTime.fromMillis(ms, { zone });
  if (!dt.isValid) throw new Error(`unknown time zone ${zone}`);
  return dt;
}

/** "25 Nov 2026 09:00" in the property's zone. */
export function displayEn(ms: number, zone: string): string {
  return local(ms, zone).setLocale('en-US').toFormat('dd MMM yyyy HH:mm');
}

/**
 * "25 พ.ย. 2569 09:00" in the property's zone. The year is computed here rather
 * than left to ICU's Buddhist calendar, so it is the same on every ICU build.
 */
export function displayTh(ms: number, zone: string): string {
  const dt = local(ms, zone);
  const th = dt.setLocale('th');
  return `${th.toFormat('dd MMM')} ${dt.year + BUDDHIST_ERA_OFFSET} ${dt.toFormat('HH:mm')}`;
}

export function displayBoth(ms: number, zone: string): { en: string; th: string } {
  return { en: displayEn(ms, zone), th: displayTh(ms, zone) };
}

/** How a visitor came in, in English and Thai. */
export const ENTRY_TYPE_LABELS: Record<VmsEntryType, { entryType: VmsEntryType; en: string; th: string }> = {
  card: { entryType: 'card', en: 'QR code', th: 'คิวอาร์โค้ด' },
  'license-plate': { entryType: 'license-plate', en: 'Licence plate', th: 'ป้ายทะเบียนรถ' },
};
