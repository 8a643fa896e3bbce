/**
 * Card codec: the worked vectors from the issue, every format both ways, edge UIDs,
 * bad inputs with their reasons, and round trips over random UIDs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CARD_CODE_FORMAT_NAMES,
  CARD_CODE_FORMATS,
  cardNoOf,
  decodeCard,
  defaultCardLabel,
  encodeCard,
  fitsFormat,
  isCardCodeFormat,
  isUid,
  type CardCodeFormat,
} from '../../src/modules/members/rules/card-codec.js';

const uidOf = (cardNo: string, format?: string) => {
  const r = decodeCard(cardNo, format);
  if (!r.ok) throw new Error(r.reason);
  return r.uid;
};
const reasonOf = (cardNo: string, format?: string) => {
  const r = decodeCard(cardNo, format);
  if (r.ok) throw new Error(`decoded to ${r.uid}`);
  return r.reason;
};

const FOUR_BYTE: CardCodeFormat[] = ['decimal-reversed', 'decimal', 'hex', 'hex-reversed'];
const THREE_BYTE: CardCodeFormat[] = ['decimal-3byte', 'decimal-3byte-reversed', 'facility-card'];

describe('worked vectors (UID 04A32B1C)', () => {
  it('the arithmetic', () => {
    expect(0x04a32b1c).toBe(77802268);
    expect(0x1c2ba304).toBe(472621828);
  });

  it('decodes each form to the same UID', () => {
    expect(uidOf('0077802268', 'decimal')).toBe('04A32B1C');
    expect(uidOf('1C2BA304', 'hex-reversed')).toBe('04A32B1C');
    expect(uidOf('0472621828', 'decimal-reversed')).toBe('04A32B1C');
    expect(uidOf('0472621828')).toBe('04A32B1C'); // the default format
    expect(uidOf('04a32b1c', 'hex')).toBe('04A32B1C');
  });

  it('encodes back', () => {
    expect(encodeCard('04A32B1C', 'decimal')).toBe('0077802268');
    expect(encodeCard('04A32B1C', 'hex-reversed')).toBe('1C2BA304');
    expect(encodeCard('04A32B1C', 'decimal-reversed')).toBe('0472621828');
    expect(encodeCard('04A32B1C', 'hex')).toBe('04A32B1C');
    expect(cardNoOf('04A32B1C')).toBe('0472621828');
    expect(cardNoOf('04a32b1c')).toBe('0472621828');
  });
});

describe('every format both ways', () => {
  // UID 00772B1C: byte 1 is 00, so every format carries it.
  const table: [CardCodeFormat, string][] = [
    ['decimal-reversed', '0472610560'], // 0x1C2B7700
    ['decimal', '0007809820'], // 0x00772B1C
    ['hex', '00772B1C'],
    ['hex-reversed', '1C2B7700'],
    ['decimal-3byte', '07809820'], // 0x772B1C
    ['decimal-3byte-reversed', '01846135'], // 0x1C2B77
    ['facility-card', '119-11036'], // 0x77 = 119, 0x2B1C = 11036
  ];
  it.each(table)('%s: 00772B1C <-> %s', (format, cardNo) => {
    expect(encodeCard('00772B1C', format)).toBe(cardNo);
    expect(uidOf(cardNo, format)).toBe('00772B1C');
  });

  it('the table covers every format, each with a description', () => {
    expect(table.map(([f]) => f).sort()).toEqual([...CARD_CODE_FORMAT_NAMES].sort());
    for (const f of CARD_CODE_FORMAT_NAMES) expect(CARD_CODE_FORMATS[f].length).toBeGreaterThan(10);
  });
});

describe('edge UIDs', () => {
  it('00000000', () => {
    for (const f of CARD_CODE_FORMAT_NAMES) expect(uidOf(encodeCard('00000000', f), f)).toBe('00000000');
    expect(cardNoOf('00000000')).toBe('0000000000');
    expect(encodeCard('00000000', 'facility-card')).toBe('000-00000');
    expect(encodeCard('00000000', 'decimal-3byte')).toBe('00000000');
    expect(uidOf('0', 'decimal-reversed')).toBe('00000000');
    expect(uidOf('0-0', 'facility-card')).toBe('00000000');
  });

  it('FFFFFFFF and the 24-bit top', () => {
    expect(cardNoOf('FFFFFFFF')).toBe('4294967295');
    expect(uidOf('4294967295', 'decimal')).toBe('FFFFFFFF');
    expect(uidOf('ffffffff', 'hex-reversed')).toBe('FFFFFFFF');
    expect(encodeCard('00FFFFFF', 'decimal-3byte')).toBe('16777215');
    expect(uidOf('16777215', 'decimal-3byte-reversed')).toBe('00FFFFFF');
    expect(encodeCard('00FFFFFF', 'facility-card')).toBe('255-65535');
    expect(uidOf('255-65535', 'facility-card')).toBe('00FFFFFF');
  });

  it('decimal formats put the bytes where the rules say', () => {
    expect(uidOf('1', 'decimal')).toBe('00000001');
    expect(uidOf('1', 'decimal-reversed')).toBe('01000000');
    expect(uidOf('1', 'decimal-3byte')).toBe('00000001');
    expect(uidOf('1', 'decimal-3byte-reversed')).toBe('00010000');
    expect(uidOf('1-2', 'facility-card')).toBe('00010002');
  });
});

describe('lenient input', () => {
  it('accepts surrounding spaces and omitted leading zeros', () => {
    expect(uidOf('  0472621828 ', 'decimal-reversed')).toBe('04A32B1C');
    expect(uidOf('77802268', 'decimal')).toBe('04A32B1C');
    expect(uidOf('\t1c2ba304\n', 'hex-reversed')).toBe('04A32B1C');
    expect(uidOf('7809820', 'decimal-3byte')).toBe('00772B1C');
    expect(uidOf(' 119 - 11036 ', 'facility-card')).toBe('00772B1C');
    expect(uidOf('7-5', 'facility-card')).toBe(uidOf('007-00005', 'facility-card'));
  });
});

describe('bad input, with a reason', () => {
  const cases: [string, string, RegExp][] = [
    ['', 'decimal-reversed', /empty/],
    ['   ', 'hex', /empty/],
    ['12a4', 'decimal', /digits only/],
    ['-1', 'decimal-reversed', /digits only/],
    ['1e9', 'decimal', /digits only/],
    ['4294967296', 'decimal', /out of range/],
    ['9999999999', 'decimal-reversed', /out of range/],
    ['00472621828', 'decimal-reversed', /at most 10/],
    ['16777216', 'decimal-3byte', /out of range/],
    ['012345678', 'decimal-3byte-reversed', /at most 8/],
    ['04A32B1', 'hex', /8 hex digits, got 7/],
    ['04A32B1C0', 'hex-reversed', /8 hex digits, got 9/],
    ['04A32B1G', 'hex', /not a hex number/],
    ['0x04A32B', 'hex', /not a hex number/],
    ['11911036', 'facility-card', /FFF-NNNNN/],
    ['1-2-3', 'facility-card', /FFF-NNNNN/],
    ['256-1', 'facility-card', /facility code 256 is out of range/],
    ['1-65536', 'facility-card', /card number 65536 is out of range/],
    ['-5', 'facility-card', /facility code is empty/],
    ['0119-11036', 'facility-card', /facility code has 4 digits; at most 3/],
    ['ab-5', 'facility-card', /facility code must be digits/],
    ['0472621828', 'wiegand-34', /unknown card format 'wiegand-34'/],
  ];
  it.each(cases)('%j as %s', (cardNo, format, reason) => {
    expect(reasonOf(cardNo, format)).toMatch(reason);
  });

  it('encode refuses a malformed UID and a UID a 3-byte format cannot carry', () => {
    expect(() => encodeCard('04A32B1', 'hex')).toThrow(RangeError);
    expect(() => encodeCard('XYZ', 'decimal')).toThrow(RangeError);
    for (const f of THREE_BYTE) {
      expect(fitsFormat('04A32B1C', f)).toBe(false);
      expect(() => encodeCard('04A32B1C', f)).toThrow(/carries only UID bytes 2-4/);
    }
    for (const f of FOUR_BYTE) expect(fitsFormat('04A32B1C', f)).toBe(true);
  });
});

describe('helpers', () => {
  it('formats and UIDs', () => {
    expect(isCardCodeFormat('decimal-reversed')).toBe(true);
    expect(isCardCodeFormat('toString')).toBe(false);
    expect(isUid('04a32b1c')).toBe(true);
    expect(isUid('04A32B1')).toBe(false);
  });

  it('default labels', () => {
    expect(defaultCardLabel('04a32b1c')).toBe('Card 04A32B1C');
    expect(defaultCardLabel('04A32B1C', 'virtual')).toBe('Virtual card 04A32B1C');
  });
});

describe('round trips (property)', () => {
  const hexUid = fc.integer({ min: 0, max: 0xffffffff }).map((n) => n.toString(16).toUpperCase().padStart(8, '0'));
  const shortUid = fc.integer({ min: 0, max: 0xffffff }).map((n) => n.toString(16).toUpperCase().padStart(8, '0'));

  it('any UID survives every 4-byte format', () => {
    fc.assert(
      fc.property(hexUid, fc.constantFrom(...FOUR_BYTE), (uid, format) => {
        expect(uidOf(encodeCard(uid, format), format)).toBe(uid);
        expect(uidOf(encodeCard(uid.toLowerCase(), format), format)).toBe(uid);
      }),
      { numRuns: 2000 },
    );
  });

  it('a UID with byte 1 = 00 survives every format', () => {
    fc.assert(
      fc.property(shortUid, fc.constantFrom(...CARD_CODE_FORMAT_NAMES), (uid, format) => {
        expect(uidOf(encodeCard(uid, format), format)).toBe(uid);
      }),
      { numRuns: 2000 },
    );
  });

  it('decoding is canonical: decode then encode gives the zero-padded number', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom<CardCodeFormat>('decimal', 'decimal-reversed'), (n, format) => {
        expect(encodeCard(uidOf(String(n), format), format)).toBe(String(n).padStart(10, '0'));
      }),
    );
  });

  it('the same card in two 4-byte formats is one UID', () => {
    fc.assert(
      fc.property(hexUid, fc.constantFrom(...FOUR_BYTE), fc.constantFrom(...FOUR_BYTE), (uid, a, b) => {
        expect(uidOf(encodeCard(uid, a), a)).toBe(uidOf(encodeCard(uid, b), b));
      }),
    );
  });
});

describe('card formats in the contract', () => {
  it('the API lists exactly the formats the codec reads', async () => {
    const { CARD_FORMAT_VALUES } = await import('../../src/contract/member-credentials.js');
    const { CARD_CODE_FORMAT_NAMES } = await import('../../src/modules/members/rules/card-codec.js');
    expect([...CARD_FORMAT_VALUES].sort()).toEqual([...CARD_CODE_FORMAT_NAMES].sort());
  });
});
