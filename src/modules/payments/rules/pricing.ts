/**
 * The price of a booking, from the asset's charge rate and an optional promo code.
 * Pure: every input is a parameter (the clock too). Money is exact: rates are read
 * as the decimals the operator wrote, summed as integers, and rounded to the
 * currency's minor unit (half up) once for the subtotal and once for a discount.
 * The API sees major-unit numbers (250, 312.5); the minor units are kept beside them.
 */
import { DateTime, IANAZone } from 'luxon';
import type { PaymentSummary } from '../../../contract/meetings.js';
import type { ChargeRate } from '../../../contract/site-document.js';
import { nextLocalDayStart } from '../../../platform/time/local-day.js';

export type { ChargeRate };

/** A project's promo code as the pricing needs it (instants in epoch ms). */
export interface PromoTerms {
  code: string;
  name: string;
  percentOff?: number | null;
  amountOff?: number | null;
  active: boolean;
  validFrom?: number | null;
  validUntil?: number | null;
  maxUses?: number | null;
  usedCount?: number | null;
}

export interface PricingInput {
  chargeRate: ChargeRate;
  /** ISO 4217 code of the project's currency. */
  currency: string;
  /** The booked window, epoch ms; `end` is exclusive. */
  start: number;
  end: number;
  /** The property's IANA zone: days are split at its local midnight. */
  timeZone: string;
  /** An all-day (desk) booking: each day is charged the day rate when there is one. */
  allDay?: boolean;
  /** The code the booker entered and the project's promo code of that code (null when there is none). */
  promo?: { code: string; terms: PromoTerms | null | undefined };
  /** Service time, epoch ms; promo validity is judged at this instant. */
  now: number;
}

/** How one local calendar day of the window was charged. */
export interface DayCharge {
  /** Local date, yyyy-MM-dd. */
  date: string;
  /** Minutes of the window on that date, a started minute counting whole. */
  minutes: number;
  basis: 'hourly' | 'day-cap' | 'day-rate';
}

export interface Price {
  /** Ready for `payment.summary`; `summary.total` is `payment.amount`. */
  summary: PaymentSummary;
  currency: string;
  /** Digits of the currency's minor unit (THB 2, JPY 0). */
  minorUnit: number;
  /** The same amounts in whole minor units. */
  minor: { subtotal: number; discount: number; total: number };
  days: DayCharge[];
}

export type PromoRefusalKind = 'UNKNOWN' | 'INACTIVE' | 'NOT_YET_VALID' | 'EXPIRED' | 'USED_UP';

/** Why a promo code cannot be used; the caller answers 400 KS001 with `message`. */
export interface PromoRefusal {
  kind: PromoRefusalKind;
  code: string;
  message: string;
}

export type PricingResult = { ok: true; price: Price } | { ok: false; refusal: PromoRefusal };

// ---------------------------------------------------------------------------
// Currency and exact decimals
// ---------------------------------------------------------------------------

const minorUnits = new Map<string, number>();

/** Digits of the currency's minor unit; a malformed code throws RangeError. */
export function minorUnitOf(currency: string): number {
  let digits = minorUnits.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat(undefined, { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    minorUnits.set(currency, digits);
  }
  return digits;
}

/** A non-negative decimal as `units / 10^scale`, read from the number's shortest text. */
interface Decimal {
  units: bigint;
  scale: number;
}

function decimalOf(x: number, what: string): Decimal {
  if (!Number.isFinite(x) || x < 0) throw new RangeError(`${what} must be a finite number >= 0, got ${x}`);
  if (Number.isInteger(x)) return { units: BigInt(x), scale: 0 };
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (!m) throw new RangeError(`${what}: cannot read ${x}`);
  const frac = m[2] ?? '';
  const scale = frac.length - Number(m[3] ?? 0);
  const units = BigInt(m[1] + frac);
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 };
}

/** `d` expressed in units of 10^-scale. */
const atScale = (d: Decimal, scale: number): bigint => d.units * 10n ** BigInt(scale - d.scale);

/** round(num / den), halves up; num >= 0, den > 0. */
const divHalfUp = (num: bigint, den: bigint): bigint => (2n * num + den) / (2n * den);

function safe(n: bigint): number {
  const out = Number(n);
  if (!Number.isSafeInteger(out)) throw new RangeError('Amount out of range');
  return out;
}

/** A major-unit amount (e.g. 12.345) in whole minor units, halves up. */
export function toMinor(amount: number, currency: string): number {
  const d = decimalOf(amount, 'amount');
  return safe(divHalfUp(d.units * 10n ** BigInt(minorUnitOf(currency)), 10n ** BigInt(d.scale)));
}

/** Whole minor units as the major-unit number the API shows (31250 THB → 312.5). */
export function fromMinor(minor: number, currency: string): number {
  return minor / 10 ** minorUnitOf(currency) + 0; // + 0 turns -0 into 0
}

/** An amount (major units) for people, e.g. "฿312.50" in th-TH or "THB 312.50" in en-GB. */
export function formatMoney(amount: number, currency: string, locale?: string): string {
  return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount);
}

// ---------------------------------------------------------------------------
// Promo codes
// ---------------------------------------------------------------------------

const localTime = (ms: number, zone: string) => `${DateTime.fromMillis(ms, { zone }).toFormat('yyyy-MM-dd HH:mm')} (${zone})`;

/** Whether `terms` may be used at `now`; undefined when it may. */
export function checkPromo(code: string, terms: PromoTerms | null | undefined, now: number, timeZone: string): PromoRefusal | undefined {
  const refuse = (kind: PromoRefusalKind, message: string): PromoRefusal => ({ kind, code, message });
  if (!terms) return refuse('UNKNOWN', `promoCode "${code}" is not a promo code of this project`);
  if (!terms.active) return refuse('INACTIVE', `promoCode "${code}" is no longer active`);
  if (terms.validFrom != null && now < terms.validFrom) {
    return refuse('NOT_YET_VALID', `promoCode "${code}" is valid from ${localTime(terms.validFrom, timeZone)}`);
  }
  if (terms.validUntil != null && now >= terms.validUntil) {
    return refuse('EXPIRED', `promoCode "${code}" expired at ${localTime(terms.validUntil, timeZone)}`);
  }
  if (terms.maxUses != null && (terms.usedCount ?? 0) >= terms.maxUses) {
    return refuse('USED_UP', `promoCode "${code}" has been used the maximum number of times`);
  }
  return undefined;
}

/** The discount of `terms` on `subtotal` (minor units), never above the subtotal. */
function discountOf(terms: PromoTerms, subtotal: bigint, minorUnit: number): bigint {
  let off = 0n;
  if (terms.percentOff != null) {
    const p = decimalOf(terms.percentOff, 'percentOff');
    off = divHalfUp(subtotal * p.units, 100n * 10n ** BigInt(p.scale));
  } else if (terms.amountOff != null) {
    const a = decimalOf(terms.amountOff, 'amountOff');
    off = divHalfUp(a.units * 10n ** BigInt(minorUnit), 10n ** BigInt(a.scale));
  }
  return off < subtotal ? off : subtotal;
}

// ---------------------------------------------------------------------------
// The price
// ---------------------------------------------------------------------------

/** The window cut at local midnights: one piece per local date, in order. */
function localDays(start: number, end: number, zone: string): { date: string; minutes: number }[] {
  const days: { date: string; minutes: number }[] = [];
  let at = start;
  while (at < end) {
    const local = DateTime.fromMillis(at, { zone });
    const next = Math.min(nextLocalDayStart(at, zone), end);
    days.push({ date: local.toISODate()!, minutes: Math.ceil((next - at) / 60_000) });
    at = next;
  }
  return days;
}

/**
 * Prices a booking. Time charge: per minute pro-rata of `perHour`; each local day's
 * charge capped at `perDay` when `perDay` > 0 (and `perDay` per day touched when
 * `perHour` is 0, or for all-day bookings). `amount` is a flat fee once per booking.
 * Subtotal = time charge + fee, rounded once; a valid promo then takes its discount.
 */
export function priceBooking(input: PricingInput): PricingResult {
  const { chargeRate, currency, start, end, timeZone } = input;
  if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) throw new RangeError('The window must have end >= start');
  if (!IANAZone.isValidZone(timeZone)) throw new RangeError(`Unknown time zone ${timeZone}`);
  const minorUnit = minorUnitOf(currency);

  let refusal: PromoRefusal | undefined;
  if (input.promo) refusal = checkPromo(input.promo.code, input.promo.terms, input.now, timeZone);
  if (refusal) return { ok: false, refusal };

  // Rates at one common scale: units of 10^-scale minor.
  const hour = decimalOf(chargeRate.perHour, 'perHour');
  const day = decimalOf(chargeRate.perDay, 'perDay');
  const fee = decimalOf(chargeRate.amount ?? 0, 'amount');
  const scale = Math.max(hour.scale, day.scale, fee.scale);
  const toMinorScaled = (d: Decimal) => atScale(d, scale) * 10n ** BigInt(minorUnit);
  const perHour = toMinorScaled(hour);
  const perDay = toMinorScaled(day);

  // Sum in sixtieths (per minute of an hourly rate) so nothing is rounded yet.
  let sixtieths = 0n;
  const days: DayCharge[] = localDays(start, end, timeZone).map(({ date, minutes }) => {
    const hourly = BigInt(minutes) * perHour;
    const cap = 60n * perDay;
    let basis: DayCharge['basis'] = 'hourly';
    let charge = hourly;
    if (perDay > 0n && (input.allDay || perHour === 0n)) {
      basis = 'day-rate';
      charge = cap;
    } else if (perDay > 0n && hourly > cap) {
      basis = 'day-cap';
      charge = cap;
    }
    sixtieths += charge;
    return { date, minutes, basis };
  });
  sixtieths += 60n * toMinorScaled(fee);
  const subtotal = divHalfUp(sixtieths, 60n * 10n ** BigInt(scale));

  const discounts: PaymentSummary['discounts'] = [];
  let discount = 0n;
  if (input.promo?.terms) {
    const terms = input.promo.terms;
    discount = discountOf(terms, subtotal, minorUnit);
    discounts.push({ code: terms.code, value: fromMinor(safe(discount), currency), name: terms.name });
  }
  const total = subtotal - discount;

  const minor = { subtotal: safe(subtotal), discount: safe(discount), total: safe(total) };
  return {
    ok: true,
    price: {
      summary: { subtotal: fromMinor(minor.subtotal, currency), total: fromMinor(minor.total, currency), discounts },
      currency,
      minorUnit,
      minor,
      days,
    },
  };
}
