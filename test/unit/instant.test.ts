/** The one instant grammar of requests (platform/time/instant.ts). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isInstant, parseInstant, tryParseInstant } from '../../src/platform/time/instant.js';
import { ServiceError } from '../../src/platform/errors.js';

describe('instants in requests', () => {
  it.each([
    ['2026-12-01T12:00:00Z', Date.UTC(2026, 11, 1, 12)],
    ['2026-12-01T12:00:00.5Z', Date.UTC(2026, 11, 1, 12, 0, 0, 500)],
    ['2026-12-01T12:00:00.123456789+00:00', Date.UTC(2026, 11, 1, 12, 0, 0, 123)],
    ['2026-12-01T12:00+07:00', Date.UTC(2026, 11, 1, 5)],
    ['2026-12-01t12:00:30-03:30', Date.UTC(2026, 11, 1, 15, 30, 30)],
    ['2028-02-29T00:00:00Z', Date.UTC(2028, 1, 29)],
    ['2000-02-29T23:59:59Z', Date.UTC(2000, 1, 29, 23, 59, 59)],
    ['1970-01-01T00:00:00Z', 0],
    ['9998-12-31T23:59:59Z', Date.UTC(9998, 11, 31, 23, 59, 59)],
  ])('%s → %d', (text, ms) => {
    expect(parseInstant(text)).toBe(ms);
  });

  it.each([
    '2030-12-31T23:59:60Z', // leap second
    '2030-02-29T00:00:00Z', // not a leap year
    '2100-02-29T00:00:00Z', // century, not a leap year
    '2030-04-31T00:00:00Z',
    '2030-00-10T00:00:00Z',
    '2030-12-00T00:00:00Z',
    '2030-12-31T24:00:00Z',
    '2030-12-31T23:60:00Z',
    '2030-12-31T10:00:00', // no offset
    '2030-12-31T10:00:00+0700', // offset without colon
    '2030-12-31T10:00:00+24:00',
    '2030-12-31T10:00:00+07:60',
    '2030-12-31 10:00:00Z',
    '2030-12-31',
    '1969-12-31T23:59:59Z',
    '10000-01-01T00:00:00Z',
    '9999-06-01T00:00:00Z', // the year 9999 is headroom for spans derived from an instant
    '9998-12-31T23:00:00-05:00', // 9999 in UTC
    '1970-01-01T00:00:00+07:00', // before 1970 in UTC
    '+002030-12-31T10:00:00Z',
    '2030-12-31T10Z',
    '2030-12-31T10:00:00.Z',
    '2030-12-31T10:00:00.1234567890Z',
    ' 2030-12-31T10:00:00Z',
    '2030-12-31T10:00:00Z\n',
    '',
  ])('%j is refused, and parseInstant throws 400 KS001 naming the field', (text) => {
    expect(isInstant(text)).toBe(false);
    let thrown: unknown;
    try {
      parseInstant(text, 'body.when');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ServiceError);
    expect(thrown).toMatchObject({ status: 400, code: 'KS001' });
    expect((thrown as ServiceError).detail[0]).toMatch(/^body\.when must be an ISO 8601 date-time/);
  });

  it('agrees with Date.parse on every valid instant it accepts, and never yields NaN', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-02T00:00:00Z'), max: new Date('9998-12-30T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: -14 * 60, max: 14 * 60 }),
        (d, offsetMinutes) => {
          const local = new Date(d.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 23);
          const sign = offsetMinutes < 0 ? '-' : '+';
          const abs = Math.abs(offsetMinutes);
          const text = `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          expect(tryParseInstant(text)).toBe(d.getTime());
          expect(Date.parse(text)).toBe(d.getTime());
        },
      ),
      { seed: 16, numRuns: 500 },
    );
  });

  it('non-strings are not instants', () => {
    for (const v of [undefined, null, 0, {}, []]) expect(isInstant(v)).toBe(false);
  });
});
