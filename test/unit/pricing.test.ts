import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { PaymentSummary } from '../../src/contract/meetings.js';
import {
  formatMoney,
  fromMinor,
  minorUnitOf,
  priceBooking,
  toMinor,
  type PricingInput,
  type PromoTerms,
} from '../../src/modules/payments/rules/pricing.js';

const at = (iso: string) => Date.parse(iso);
const NOW = at('2025-06-01T00:00:00Z');

/** A THB room in Bangkok (no DST), 09:00 on 2025-06-02 for `minutes`. */
function input(over: Partial<PricingInput> & { minutes?: number } = {}): PricingInput {
  const { minutes = 60, ...rest } = over;
  const start = at('2025-06-02T09:00:00+07:00');
  return {
    chargeRate: { perHour: 100, perDay: 0 },
    currency: 'THB',
    start,
    end: start + minutes * 60_000,
    timeZone: 'Asia/Bangkok',
    now: NOW,
    ...rest,
  };
}

function price(i: PricingInput) {
  const r = priceBooking(i);
  if (!r.ok) throw new Error(`refused: ${r.refusal.message}`);
  return r.price;
}

function refusal(i: PricingInput) {
  const r = priceBooking(i);
  if (r.ok) throw new Error('expected a refusal');
  return r.refusal;
}

const promo = (terms: Partial<PromoTerms>, code = 'SAVE'): PricingInput['promo'] => ({
  code,
  terms: { code, name: 'Save some', active: true, ...terms },
});

describe('priceBooking: time charge', () => {
  it('one hour at the hourly rate', () => {
    const p = price(input());
    expect(p.summary).toEqual({ subtotal: 100, total: 100, discounts: [] });
    expect(p).toMatchObject({ currency: 'THB', minorUnit: 2, minor: { subtotal: 10000, discount: 0, total: 10000 } });
    expect(Value.Check(PaymentSummary, p.summary)).toBe(true);
  });

  it('partial hours are pro-rated per minute, rounded half up once', () => {
    expect(price(input({ minutes: 90 })).summary.total).toBe(150);
    expect(price(input({ minutes: 125 })).summary.total).toBe(208.33); // 208.333…
    // 12.35/h for 10 minutes = 2.058333… → 2.06; 1 minute of 0.30/h = 0.005 → 0.01 (half up)
    expect(price(input({ chargeRate: { perHour: 12.35, perDay: 0 }, minutes: 10 })).summary.total).toBe(2.06);
    expect(price(input({ chargeRate: { perHour: 0.3, perDay: 0 }, minutes: 1 })).summary.total).toBe(0.01);
  });

  it('rounds once at the end, not per day', () => {
    const start = at('2025-06-02T23:59:00+07:00');
    const p = price(input({ chargeRate: { perHour: 0.3, perDay: 0 }, start, end: start + 2 * 60_000 }));
    // 0.005 + 0.005 = 0.01; rounding each day first would give 0.02
    expect(p.days.map((d) => d.minutes)).toEqual([1, 1]);
    expect(p.summary.total).toBe(0.01);
  });

  it('caps each local day at perDay', () => {
    const p = price(input({ chargeRate: { perHour: 100, perDay: 500 }, minutes: 8 * 60 }));
    expect(p.summary.total).toBe(500);
    expect(p.days).toEqual([{ date: '2025-06-02', minutes: 480, basis: 'day-cap' }]);
    expect(price(input({ chargeRate: { perHour: 100, perDay: 500 }, minutes: 4 * 60 })).summary.total).toBe(400);
  });

  it('charges perDay for every day touched when there is no hourly rate', () => {
    const start = at('2025-06-02T20:00:00+07:00');
    const p = price(input({ chargeRate: { perHour: 0, perDay: 300 }, start, end: at('2025-06-03T10:00:00+07:00') }));
    expect(p.summary.total).toBe(600);
    expect(p.days.map((d) => d.basis)).toEqual(['day-rate', 'day-rate']);
  });

  it('charges an all-day booking the day rate, or the hours without one', () => {
    const allDay = { start: at('2025-06-02T08:00:00+07:00'), end: at('2025-06-02T12:00:00+07:00'), allDay: true };
    expect(price(input({ chargeRate: { perHour: 50, perDay: 300 }, ...allDay })).summary.total).toBe(300);
    expect(price(input({ chargeRate: { perHour: 50, perDay: 0 }, ...allDay })).summary.total).toBe(200);
  });

  it('adds the flat amount once per booking', () => {
    const start = at('2025-06-02T20:00:00+07:00');
    const p = price(input({ chargeRate: { perHour: 100, perDay: 500, amount: 49.5 }, start, end: at('2025-06-04T10:00:00+07:00') }));
    // 400 (4 h) + 500 (capped day) + 500 (10 h capped) + 49.5
    expect(p.summary.total).toBe(1449.5);
  });

  it('splits a multi-day window at local midnight across a DST change (Europe/Berlin, spring forward)', () => {
    const start = at('2025-03-29T22:00:00+01:00');
    const end = at('2025-03-31T02:00:00+02:00');
    const hourly = price(input({ chargeRate: { perHour: 10, perDay: 0 }, currency: 'EUR', timeZone: 'Europe/Berlin', start, end }));
    expect(hourly.days).toEqual([
      { date: '2025-03-29', minutes: 120, basis: 'hourly' },
      { date: '2025-03-30', minutes: 23 * 60, basis: 'hourly' },
      { date: '2025-03-31', minutes: 120, basis: 'hourly' },
    ]);
    expect(hourly.summary.total).toBe(270); // 27 elapsed hours
    const capped = price(input({ chargeRate: { perHour: 10, perDay: 100 }, currency: 'EUR', timeZone: 'Europe/Berlin', start, end }));
    expect(capped.summary.total).toBe(140);
  });

  it('splits at the real midnight after a day that began at 01:00 (America/Santiago skips midnight)', () => {
    // 2025-09-07 begins at 01:00 -03 (00:00 -04 is skipped) and lasts 23 hours; 2025-09-08 begins at 00:00 -03.
    const start = at('2025-09-07T12:00:00-03:00');
    const end = at('2025-09-08T12:00:00-03:00');
    const p = price(input({ chargeRate: { perHour: 1, perDay: 0 }, currency: 'CLP', timeZone: 'America/Santiago', start, end }));
    expect(p.days).toEqual([
      { date: '2025-09-07', minutes: 12 * 60, basis: 'hourly' },
      { date: '2025-09-08', minutes: 12 * 60, basis: 'hourly' },
    ]);
  });

  it('counts the 25-hour day of a fall-back change (America/New_York)', () => {
    const start = at('2025-11-02T00:00:00-04:00');
    const end = at('2025-11-03T00:00:00-05:00');
    const p = price(input({ chargeRate: { perHour: 1, perDay: 0 }, currency: 'USD', timeZone: 'America/New_York', start, end }));
    expect(p.days).toEqual([{ date: '2025-11-02', minutes: 25 * 60, basis: 'hourly' }]);
    expect(p.summary.total).toBe(25);
  });

  it('a free asset costs 0', () => {
    const p = price(input({ chargeRate: { perHour: 0, perDay: 0 }, minutes: 600 }));
    expect(p.summary).toEqual({ subtotal: 0, total: 0, discounts: [] });
    expect(price(input({ chargeRate: { perHour: 0, perDay: 0 }, promo: promo({ amountOff: 50 }) })).summary).toEqual({
      subtotal: 0,
      total: 0,
      discounts: [{ code: 'SAVE', value: 0, name: 'Save some' }],
    });
  });

  it('a zero-length window costs only the flat amount', () => {
    expect(price(input({ chargeRate: { perHour: 100, perDay: 0, amount: 20 }, minutes: 0 })).summary.total).toBe(20);
  });

  it('JPY has no minor unit', () => {
    const p = price(input({ chargeRate: { perHour: 1000, perDay: 0 }, currency: 'JPY', timeZone: 'Asia/Tokyo', minutes: 50 }));
    expect(p.minorUnit).toBe(0);
    expect(p.summary.total).toBe(833); // 833.33…
    expect(price(input({ chargeRate: { perHour: 1000, perDay: 0 }, currency: 'JPY', minutes: 3 })).summary.total).toBe(50);
  });

  it('three-digit currencies keep three digits', () => {
    expect(minorUnitOf('KWD')).toBe(3);
    expect(price(input({ chargeRate: { perHour: 1.5, perDay: 0 }, currency: 'KWD', minutes: 1 })).summary.total).toBe(0.025);
  });

  it('refuses bad input loudly', () => {
    expect(() => priceBooking(input({ minutes: -1 }))).toThrow(RangeError);
    expect(() => priceBooking(input({ timeZone: 'Mars/Olympus' }))).toThrow(RangeError);
    expect(() => priceBooking(input({ currency: 'X' }))).toThrow(RangeError);
  });
});

describe('priceBooking: promo codes', () => {
  it('percentOff takes a share of the subtotal, rounded to the minor unit', () => {
    const p = price(input({ minutes: 125, promo: promo({ percentOff: 10 }) })); // 208.33
    expect(p.summary).toEqual({ subtotal: 208.33, total: 187.5, discounts: [{ code: 'SAVE', value: 20.83, name: 'Save some' }] });
    const third = price(input({ promo: promo({ percentOff: 33.3 }) }));
    expect(third.summary.discounts[0].value).toBe(33.3);
    expect(price(input({ promo: promo({ percentOff: 100 }) })).summary.total).toBe(0);
  });

  it('amountOff is capped at the subtotal', () => {
    expect(price(input({ promo: promo({ amountOff: 30 }) })).summary).toMatchObject({ subtotal: 100, total: 70 });
    const p = price(input({ promo: promo({ amountOff: 250 }) }));
    expect(p.summary).toEqual({ subtotal: 100, total: 0, discounts: [{ code: 'SAVE', value: 100, name: 'Save some' }] });
  });

  it('uses the stored spelling of the code in the discount', () => {
    const p = price(input({ promo: { code: 'save', terms: { code: 'SAVE', name: 'Save', active: true, amountOff: 1 } } }));
    expect(p.summary.discounts).toEqual([{ code: 'SAVE', value: 1, name: 'Save' }]);
  });

  it('a code valid inside its window and under its use limit applies', () => {
    const p = price(input({ promo: promo({ amountOff: 10, validFrom: NOW, validUntil: NOW + 1, maxUses: 3, usedCount: 2 }) }));
    expect(p.summary.total).toBe(90);
  });

  it('refuses an unknown code', () => {
    expect(refusal(input({ promo: { code: 'NOPE', terms: null } }))).toEqual({
      kind: 'UNKNOWN',
      code: 'NOPE',
      message: 'promoCode "NOPE" is not a promo code of this project',
    });
  });

  it('refuses an inactive code', () => {
    expect(refusal(input({ promo: promo({ percentOff: 10, active: false }) }))).toMatchObject({ kind: 'INACTIVE', code: 'SAVE' });
  });

  it('refuses a code before its window and after it, naming the local time', () => {
    const early = refusal(input({ promo: promo({ percentOff: 10, validFrom: at('2025-06-01T10:00:00+07:00') }) }));
    expect(early).toEqual({
      kind: 'NOT_YET_VALID',
      code: 'SAVE',
      message: 'promoCode "SAVE" is valid from 2025-06-01 10:00 (Asia/Bangkok)',
    });
    const late = refusal(input({ promo: promo({ percentOff: 10, validUntil: NOW }) }));
    expect(late).toEqual({ kind: 'EXPIRED', code: 'SAVE', message: 'promoCode "SAVE" expired at 2025-06-01 07:00 (Asia/Bangkok)' });
  });

  it('refuses a used-up code', () => {
    expect(refusal(input({ promo: promo({ amountOff: 5, maxUses: 2, usedCount: 2 }) }))).toMatchObject({ kind: 'USED_UP' });
    expect(refusal(input({ promo: promo({ amountOff: 5, maxUses: 0 }) }))).toMatchObject({ kind: 'USED_UP' });
  });
});

describe('money helpers', () => {
  it('converts between major and minor units exactly', () => {
    expect(toMinor(1.005, 'THB')).toBe(101);
    expect(toMinor(312.5, 'THB')).toBe(31250);
    expect(toMinor(999.5, 'JPY')).toBe(1000);
    expect(fromMinor(31250, 'THB')).toBe(312.5);
    expect(fromMinor(1200, 'JPY')).toBe(1200);
  });

  it('formats amounts for people in th-TH and en-GB', () => {
    expect(formatMoney(312.5, 'THB', 'th-TH')).toBe('฿312.50');
    expect(formatMoney(312.5, 'THB', 'en-GB')).toBe('THB\u00a0312.50'); // ICU puts a no-break space there
    expect(formatMoney(1200, 'JPY', 'en-GB')).toBe('JP¥1,200');
  });
});
