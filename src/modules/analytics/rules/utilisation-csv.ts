/**
 * The utilisation rows as CSV (RFC 4180: comma-separated, CRLF line ends, fields quoted when they
 * hold a comma, quote or line break): the group's fields for the groupBy, then one column per
 * figure; a null ratio is an empty cell. Pure.
 */
import type { AnalyticsGroupBy, UtilisationGroup, UtilisationRow } from '../../../contract/analytics.js';

const GROUP_COLUMNS: Record<AnalyticsGroupBy, (keyof UtilisationGroup)[]> = {
  project: ['projectId', 'projectName'],
  zone: ['zoneId', 'zoneName'],
  floor: ['floorId', 'floorName', 'zoneId', 'zoneName'],
  asset: ['assetId', 'assetName', 'floorId', 'floorName', 'zoneId', 'zoneName'],
  day: ['day'],
  week: ['week'],
  month: ['month'],
  hourOfWeek: ['weekday', 'hour'],
};

export const FIGURE_COLUMNS = [
  'availableMinutes',
  'bookedMinutes',
  'occupiedMinutes',
  'releasedMinutes',
  'bookings',
  'checkIns',
  'noShows',
  'cancellations',
  'walkIns',
  'utilisation',
  'occupancy',
  'noShowRate',
] as const;

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const text = String(v);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function utilisationCsv(groupBy: AnalyticsGroupBy, rows: readonly UtilisationRow[]): string {
  const groupColumns = GROUP_COLUMNS[groupBy];
  const lines = [[...groupColumns, ...FIGURE_COLUMNS].join(',')];
  for (const r of rows) {
    lines.push([...groupColumns.map((c) => cell(r.group[c])), ...FIGURE_COLUMNS.map((c) => cell(r[c]))].join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
