/**
 * Property tests for the pricing rules over random rates, currencies, zones (with and
 * without DST, one changing at midnight), windows of up to ten days and promo codes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { priceBooking, toMinor, type Price, type PricingInput, type PromoTerms } from '../../src/modules/payments/rules/pricing.js';

const MIN = 60_000;
const FROM = Date.parse('2024-01-01T00:00:00Z');
const NOW = FROM - 86_400_000;

const money = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 5000 }),
  fc.integer({ min: 1, max: 1_000_000 }).map((n) => n / 100),
  fc.integer({ min: 1, max: 100_000 }).map((n) => n / 1000),
);

const rateArb = fc.record({ perHour: money, perDay: money, amount: money }, { requiredKeys: ['perHour', 'perDay'] });

const promoArb: fc.Arbitrary<PromoTerms | undefined> = fc.option(
  fc
    .oneof(
      fc.integer({ min: 1, max: 10_000 }).map((n) => ({ percentOff: n / 100 })),
      money.filter((m) => m > 0).map((amountOff) => ({ amountOff })),
    )
    .map((off) => ({ code: 'P', name: 'Promo', active: true, ...off })),
  { nil: undefined },
);

const baseArb = fc.record({
  chargeRate: rateArb,
  currency: fc.constantFrom('THB', 'JPY', 'USD', 'KWD', 'EUR'),
  timeZone: fc.constantFrom('Asia/Bangkok', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/Santiago', 'UTC'),
  startMinute: fc.integer({ min: 0, max: 3 * 365 * 1440 }),
  allDay: fc.boolean(),
  promo: promoArb,
});
type Base = typeof baseArb extends fc.Arbitrary<infer T> ? T : never;

const durationArb = fc.integer({ min: 0, max: 10 * 1440 });

function priced(b: Base, minutes: number): Price {
  const start = FROM + b.startMinute * MIN;
  const input: PricingInput = {
    chargeRate: b.chargeRate,
    currency: b.currency,
    timeZone: b.timeZone,
    start,
    end: start + minutes * MIN,
    allDay: b.allDay,
    now: NOW,
    ...(b.promo ? { promo: { code: b.promo.code, terms: b.promo } } : {}),
  };
  const r = priceBooking(input);
  if (!r.ok) throw new Error(r.refusal.message);
  return r.price;
}

/** The number has no more fraction digits than the currency allows. */
const wholeMinor = (x: number, digits: number) => (String(x).split('.')[1]?.length ?? 0) <= digits && !String(x).includes('e');

describe('pricing properties', () => {
  it('totals are never negative and discounts never exceed the subtotal', () => {
    fc.assert(
      fc.property(baseArb, durationArb, (b, d) => {
        const p = priced(b, d);
        const discounts = p.summary.discounts.reduce((s, x) => s + toMinor(x.value, b.currency), 0);
        expect(p.summary.total).toBeGreaterThanOrEqual(0);
        expect(p.minor.total).toBeGreaterThanOrEqual(0);
        expect(discounts).toBeLessThanOrEqual(p.minor.subtotal);
        for (const x of p.summary.discounts) expect(x.value).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 400 },
    );
  });

  it('total = subtotal − the sum of the discounts, exactly in minor units', () => {
    fc.assert(
      fc.property(baseArb, durationArb, (b, d) => {
        const p = priced(b, d);
        const m = (x: number) => toMinor(x, b.currency);
        const discounts = p.summary.discounts.reduce((s, x) => s + m(x.value), 0);
        expect(m(p.summary.total)).toBe(m(p.summary.subtotal) - discounts);
        expect(p.minor).toEqual({ subtotal: m(p.summary.subtotal), discount: discounts, total: m(p.summary.total) });
      }),
      { numRuns: 400 },
    );
  });

  it('every amount is a whole number of minor units', () => {
    fc.assert(
      fc.property(baseArb, durationArb, (b, d) => {
        const p = priced(b, d);
        for (const n of Object.values(p.minor)) expect(Number.isSafeInteger(n)).toBe(true);
        for (const x of [p.summary.subtotal, p.summary.total, ...p.summary.discounts.map((v) => v.value)]) {
          expect(wholeMinor(x, p.minorUnit)).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('the price never falls as the booking gets longer (fixed start)', () => {
    fc.assert(
      fc.property(baseArb, durationArb, durationArb, (b, d1, d2) => {
        const [short, long] = d1 <= d2 ? [d1, d2] : [d2, d1];
        const a = priced(b, short);
        const z = priced(b, long);
        expect(a.minor.subtotal).toBeLessThanOrEqual(z.minor.subtotal);
        expect(a.minor.total).toBeLessThanOrEqual(z.minor.total);
      }),
      { numRuns: 400 },
    );
  });

  it('without a day rate, the price is the elapsed minutes at the hourly rate, rounded once', () => {
    fc.assert(
      fc.property(baseArb, durationArb, fc.integer({ min: 0, max: 1_000_000 }), (b, d, perHourMinor) => {
        const digits = priced(b, 0).minorUnit;
        const p = priced({ ...b, chargeRate: { perHour: perHourMinor / 10 ** digits, perDay: 0 }, allDay: false, promo: undefined }, d);
        // d × perHourMinor / 60, halves up
        expect(p.minor.subtotal).toBe(Math.floor((2 * d * perHourMinor + 60) / 120));
        expect(p.days.reduce((s, x) => s + x.minutes, 0)).toBe(d);
      }),
      { numRuns: 300 },
    );
  });
});
