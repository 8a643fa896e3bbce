/** Dates and times in the property's zone (Intl only: no date library in the bundle). */
import type { Lang } from './i18n.js';

const locale = (lang: Lang) => (lang === 'th' ? 'th-TH' : 'en-GB');
const cache = new Map<string, Intl.DateTimeFormat>();
function fmt(lang: Lang, timeZone: string, opts: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${lang}|${timeZone}|${JSON.stringify(opts)}`;
  let f = cache.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale(lang), { timeZone, ...opts });
    cache.set(key, f);
  }
  return f;
}

export const time = (iso: string, tz: string, lang: Lang) =>
  fmt(lang, tz, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
export const dateTime = (iso: string | null | undefined, tz: string, lang: Lang) =>
  iso ? fmt(lang, tz, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso)) : '—';
export const longDate = (ymd: string, lang: Lang) =>
  fmt(lang, 'UTC', { weekday: 'short', day: 'numeric', month: 'long', year: 'numeric' }).format(new Date(`${ymd}T12:00:00Z`));
export const span = (a: string, b: string, tz: string, lang: Lang) => `${time(a, tz, lang)}–${time(b, tz, lang)}`;

/** The property-local calendar date (YYYY-MM-DD) of an instant. */
export function localDate(epochMs: number, tz: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(epochMs));
}

/** Offset of the zone from UTC at an instant, in ms. */
export function zoneOffset(epochMs: number, tz: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(epochMs));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour') % 24, n('minute'), n('second'));
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

/** The instant of a property-local wall time on a date (good for every zone without a gap at that time). */
export function localInstant(ymd: string, hhmm: string, tz: string): number {
  const [y, m, d] = ymd.split('-').map(Number) as [number, number, number];
  const [h, mi] = hhmm.split(':').map(Number) as [number, number];
  const guess = Date.UTC(y, m - 1, d, h, mi);
  const first = guess - zoneOffset(guess, tz);
  return guess - zoneOffset(first, tz);
}

export function addDays(ymd: string, days: number): string {
  const d = new Date(`${ymd}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export function money(amount: number, currency: string, lang: Lang): string {
  try {
    return new Intl.NumberFormat(locale(lang), { style: 'currency', currency }).format(amount);
  } catch {
    return `${currency} ${amount.toFixed(2)}`;
  }
}
