/**
 * The visitors module's pure rules: plate keys, QR card codes, validity windows
 * (null end, across DST), invite status, scan decisions and the choice among
 * several matching invites, and the English/Thai display strings.
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { CODE_ALPHABET, CODE_BYTES, CODE_LENGTH, codeFromBytes, normalizeCode, plateKey } from '../../src/modules/visitors/rules/plates.js';
import { inviteStatus, pickInvite, scanDecision, validUntil } from '../../src/modules/visitors/rules/window.js';
import { displayBoth, displayEn, displayTh, ENTRY_TYPE_LABELS } from '../../src/modules/visitors/rules/display.js';

const HOUR = 3_600_000;
const at = (isoLocal: string, zone = 'Asia/Bangkok') => DateTime.fromISO(isoLocal, { zone }).toMillis();

describe('plate keys', () => {
  it('Thai plates written with spaces, dashes or padding are one plate', () => {
    const key = plateKey('1กข 1234');
    expect(key).toBe('1กข1234');
    for (const p of ['1กข-1234', ' 1 กข 1234 ', '1กข1234', '1 กข - 1234', '1กข.1234', '1กข\t1234', '1กข–1234'])
      expect(plateKey(p)).toBe(key);
  });

  it('Latin plates ignore case, spaces, dashes and dots', () => {
    expect(plateKey('ab-1234')).toBe('AB1234');
    expect(plateKey('A.B 12 34')).toBe('AB1234');
  });

  it('NFC: a decomposed and a composed letter give the same key', () => {
    expect(plateKey('E\u0301-12')).toBe(plateKey('\u00c9 12'));
  });

  it('only separators give an empty key', () => {
    expect(plateKey(' - . ')).toBe('');
  });

  const plateChar = fc.constantFrom(...'0123456789ABCDEFGHKLMNPRTXYZabcxyzกขคงจฉชซญฎฐณดตถทธนบปผพภมยรลวศษสหฬอฮ'.split(''));
  const separator = fc.constantFrom(' ', '-', '.', '  ', '\u2013', '\u00a0');
  const plateArb = fc.array(plateChar, { minLength: 1, maxLength: 10 }).map((cs) => cs.join(''));

  it('property: idempotent, upper case, no separators left', () => {
    fc.assert(
      fc.property(plateArb, fc.array(separator, { maxLength: 4 }), (p, seps) => {
        const written = seps.reduce((s, sep, i) => s.slice(0, i) + sep + s.slice(i), p);
        const key = plateKey(written);
        expect(plateKey(key)).toBe(key);
        expect(key).toBe(key.toUpperCase());
        expect(key).not.toMatch(/[\s.\-\u2013]/);
      }),
    );
  });

  it('property: inserting separators anywhere or changing case never changes the key', () => {
    fc.assert(
      fc.property(plateArb, fc.array(fc.tuple(fc.nat(), separator), { maxLength: 5 }), fc.boolean(), (p, inserts, lower) => {
        let written = lower ? p.toLowerCase() : p.toUpperCase();
        for (const [pos, sep] of inserts) {
          const i = pos % (written.length + 1);
          written = written.slice(0, i) + sep + written.slice(i);
        }
        expect(plateKey(written)).toBe(plateKey(p));
      }),
    );
  });
});

describe('QR card codes', () => {
  it('16 characters of an alphabet without I, L, O or U', () => {
    expect(CODE_ALPHABET).toHaveLength(32);
    expect(CODE_ALPHABET).not.toMatch(/[ILOU]/);
    expect(codeFromBytes(new Uint8Array(CODE_BYTES))).toBe('0'.repeat(CODE_LENGTH));
    expect(codeFromBytes(new Uint8Array(CODE_BYTES).fill(255))).toBe('Z'.repeat(CODE_LENGTH));
  });

  it('property: every 80-bit value spells a distinct code (injective) of the alphabet', () => {
    const bytes = fc.uint8Array({ minLength: CODE_BYTES, maxLength: CODE_BYTES });
    fc.assert(
      fc.property(bytes, bytes, (a, b) => {
        const ca = codeFromBytes(a);
        expect(ca).toHaveLength(CODE_LENGTH);
        for (const ch of ca) expect(CODE_ALPHABET).toContain(ch);
        expect(ca === codeFromBytes(b)).toBe(Buffer.from(a).equals(Buffer.from(b)));
        expect(normalizeCode(ca.toLowerCase().replace(/(....)(?=.)/g, '$1-'))).toBe(ca);
      }),
    );
  });
});

describe('validity window', () => {
  it('a given end is the end', () => {
    expect(validUntil(at('2026-11-25T09:00'), at('2026-11-25T11:00'), 'Asia/Bangkok')).toBe(at('2026-11-25T11:00'));
  });

  it('a null end is the next property-local midnight', () => {
    expect(validUntil(at('2026-11-25T09:00'), null, 'Asia/Bangkok')).toBe(at('2026-11-26T00:00'));
    expect(validUntil(at('2026-11-25T00:00'), null, 'Asia/Bangkok')).toBe(at('2026-11-26T00:00'));
    expect(validUntil(at('2026-11-25T23:59'), null, 'Asia/Bangkok')).toBe(at('2026-11-26T00:00'));
    // 02:30 UTC is 09:30 in Bangkok but 21:30 the day before in New York.
    const utc = Date.parse('2026-11-25T02:30:00Z');
    expect(validUntil(utc, null, 'Asia/Bangkok')).toBe(Date.parse('2026-11-25T17:00:00Z'));
    expect(validUntil(utc, null, 'America/New_York')).toBe(Date.parse('2026-11-25T05:00:00Z'));
  });

  it('across DST: the start day lasts 23 or 25 hours', () => {
    const spring = at('2026-03-08T10:00', 'America/New_York');
    expect(validUntil(spring, null, 'America/New_York')).toBe(at('2026-03-09T00:00', 'America/New_York'));
    expect(validUntil(spring, null, 'America/New_York') - at('2026-03-08T00:00', 'America/New_York')).toBe(23 * HOUR);
    const autumn = at('2026-10-25T01:30', 'Europe/London');
    expect(validUntil(autumn, null, 'Europe/London') - at('2026-10-25T00:00', 'Europe/London')).toBe(25 * HOUR);
  });

  it('where the clocks skip midnight (Santiago, September), a null end is the first instant of the next local day', () => {
    const start = at('2025-09-06T10:00', 'America/Santiago');
    const end = validUntil(start, null, 'America/Santiago');
    expect(DateTime.fromMillis(end, { zone: 'America/Santiago' }).toISO()).toBe('2025-09-07T01:00:00.000-03:00');
    expect(end - at('2025-09-06T00:00', 'America/Santiago')).toBe(24 * HOUR); // the hour skipped is the next day's first
    // A visit on the short day itself ends at the next real midnight, not at 01:00.
    const short = at('2025-09-07T10:00', 'America/Santiago');
    expect(DateTime.fromMillis(validUntil(short, null, 'America/Santiago'), { zone: 'America/Santiago' }).toISO()).toBe(
      '2025-09-08T00:00:00.000-03:00',
    );
  });

  it('property: a null end lies within (start, start + 25 h] and is the start of the next local day', () => {
    const zones = fc.constantFrom(
      'Asia/Bangkok',
      'America/New_York',
      'Europe/London',
      'Australia/Lord_Howe',
      'America/Santiago',
      'Pacific/Chatham',
    );
    fc.assert(
      fc.property(fc.integer({ min: Date.parse('2020-01-01'), max: Date.parse('2035-01-01') }), zones, (start, zone) => {
        const end = validUntil(start, null, zone);
        expect(end).toBeGreaterThan(start);
        expect(end - start).toBeLessThanOrEqual(25 * HOUR);
        const local = DateTime.fromMillis(end, { zone });
        // Local midnight, or the first instant of the day where the clocks skip midnight.
        expect(local.toMillis()).toBe(local.startOf('day').toMillis());
        expect(local.minus({ days: 1 }).toISODate()).toBe(DateTime.fromMillis(start, { zone }).toISODate());
      }),
    );
  });
});

describe('status and scans', () => {
  const invite = { startAt: 1000, endAt: 2000, cancelledAt: null as number | null, entries: 0 };

  it('status at an instant', () => {
    expect(inviteStatus(invite, 500)).toBe('invited');
    expect(inviteStatus(invite, 1500)).toBe('invited');
    expect(inviteStatus(invite, 2000)).toBe('expired');
    expect(inviteStatus({ ...invite, entries: 1 }, 3000)).toBe('checked-in');
    expect(inviteStatus({ ...invite, entries: 1, cancelledAt: 1600 }, 1700)).toBe('cancelled');
    expect(inviteStatus({ ...invite, cancelledAt: 2500 }, 3000)).toBe('cancelled');
  });

  it('scan decision: valid from start (inclusive) to end (exclusive)', () => {
    expect(scanDecision(invite, 999)).toEqual({ granted: false, reason: 'not-yet-valid' });
    expect(scanDecision(invite, 1000)).toEqual({ granted: true });
    expect(scanDecision(invite, 1999)).toEqual({ granted: true });
    expect(scanDecision(invite, 2000)).toEqual({ granted: false, reason: 'expired' });
    expect(scanDecision({ ...invite, cancelledAt: 1 }, 1500)).toEqual({ granted: false, reason: 'cancelled' });
  });

  it('among several invites of one plate: the one valid now, else the next, else the latest', () => {
    const past = { startAt: 0, endAt: 100, cancelledAt: null, n: 'past' };
    const now = { startAt: 1000, endAt: 2000, cancelledAt: null, n: 'now' };
    const cancelledNow = { startAt: 1000, endAt: 2000, cancelledAt: 900, n: 'cancelledNow' };
    const next = { startAt: 3000, endAt: 4000, cancelledAt: null, n: 'next' };
    const later = { startAt: 5000, endAt: 6000, cancelledAt: null, n: 'later' };
    expect(pickInvite([past, cancelledNow, now, next], 1500)?.n).toBe('now');
    expect(pickInvite([later, past, cancelledNow, next], 1500)?.n).toBe('next');
    expect(pickInvite([past, cancelledNow], 1500)?.n).toBe('cancelledNow');
    expect(pickInvite([past], 1500)?.n).toBe('past');
    expect(pickInvite([], 1500)).toBeUndefined();
  });

  it('property: a pick is granted whenever any candidate would be', () => {
    const cand = fc
      .record({ startAt: fc.integer({ min: 0, max: 100 }), len: fc.integer({ min: 1, max: 50 }), cancelled: fc.boolean() })
      .map((c) => ({ startAt: c.startAt, endAt: c.startAt + c.len, cancelledAt: c.cancelled ? 0 : null }));
    fc.assert(
      fc.property(fc.array(cand, { maxLength: 6 }), fc.integer({ min: 0, max: 160 }), (cs, t) => {
        const picked = pickInvite(cs, t);
        expect(picked === undefined).toBe(cs.length === 0);
        if (cs.some((c) => scanDecision(c, t).granted)) expect(scanDecision(picked!, t).granted).toBe(true);
      }),
    );
  });
});

describe('display strings (Node ICU, luxon)', () => {
  it('English dd MMM yyyy HH:mm and Thai with the Buddhist-era year, property-local', () => {
    const ms = at('2026-11-25T09:00');
    expect(displayEn(ms, 'Asia/Bangkok')).toBe('25 Nov 2026 09:00');
    expect(displayTh(ms, 'Asia/Bangkok')).toBe('25 พ.ย. 2569 09:00');
    expect(displayBoth(Date.parse('2026-11-25T02:00:00Z'), 'Asia/Bangkok')).toEqual({ en: '25 Nov 2026 09:00', th: '25 พ.ย. 2569 09:00' });
  });

  it('every month, leading zeros, the year turning in local time', () => {
    const th = ['ม.ค.', 'ก.พ.', 'มี.ค.', 'เม.ย.', 'พ.ค.', 'มิ.ย.', 'ก.ค.', 'ส.ค.', 'ก.ย.', 'ต.ค.', 'พ.ย.', 'ธ.ค.'];
    const en = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    for (let m = 1; m <= 12; m++) {
      const ms = at(`2027-${String(m).padStart(2, '0')}-05T07:05`);
      expect(displayEn(ms, 'Asia/Bangkok')).toBe(`05 ${en[m - 1]} 2027 07:05`);
      expect(displayTh(ms, 'Asia/Bangkok')).toBe(`05 ${th[m - 1]} 2570 07:05`);
    }
    // 31 Dec 2026 17:30 UTC is already 1 Jan 2027 in Bangkok.
    expect(displayBoth(Date.parse('2026-12-31T17:30:00Z'), 'Asia/Bangkok')).toEqual({ en: '01 Jan 2027 00:30', th: '01 ม.ค. 2570 00:30' });
  });

  it('entry type labels', () => {
    expect(ENTRY_TYPE_LABELS.card).toEqual({ entryType: 'card', en: 'QR code', th: 'คิวอาร์โค้ด' });
    expect(ENTRY_TYPE_LABELS['license-plate']).toEqual({ entryType: 'license-plate', en: 'Licence plate', th: 'ป้ายทะเบียนรถ' });
  });
});
