/**
 * Card number codec (pure). A card is stored as its decoded 4-byte UID, written as
 * 8 uppercase hex digits, bytes in the order the card reports them (b1 b2 b3 b4).
 * Partners submit the number their reader or card print shows, in one of the
 * formats below; every response shows the decimal-reversed number.
 *
 * 4-byte formats carry the whole UID. The 3-byte and split formats carry only
 * b2 b3 b4 (what a 26-bit Wiegand reader sees): decoding sets b1 to 00, and a UID
 * whose b1 is not 00 cannot be encoded in them.
 */

export const CARD_CODE_FORMATS = {
  'decimal-reversed': '8H-10D-R: the 4 UID bytes reversed, read as an unsigned 32-bit number, 10 digits (default)',
  decimal: '8H-10D: the 4 UID bytes in order, read as an unsigned 32-bit number, 10 digits',
  hex: '8 hex digits, the UID bytes in order',
  'hex-reversed': '8 hex digits, the UID bytes reversed',
  'decimal-3byte': '6H-8D: UID bytes 2-4 in order, read as a 24-bit number, 8 digits (byte 1 taken as 00)',
  'decimal-3byte-reversed': '6H-8D-R: UID bytes 2-4 reversed, read as a 24-bit number, 8 digits (byte 1 taken as 00)',
  'facility-card': 'FFF-NNNNN (Wiegand 26): UID byte 2 as facility code 0-255, bytes 3-4 as card number 0-65535 (byte 1 taken as 00)',
} as const;

export type CardCodeFormat = keyof typeof CARD_CODE_FORMATS;

export const CARD_CODE_FORMAT_NAMES = Object.keys(CARD_CODE_FORMATS) as CardCodeFormat[];
export const DEFAULT_CARD_CODE_FORMAT: CardCodeFormat = 'decimal-reversed';

export type CardDecode = { ok: true; uid: string } | { ok: false; reason: string };

const UID_RE = /^[0-9A-F]{8}$/;
const MAX_24 = 0xffffff;
const MAX_32 = 0xffffffff;

export function isCardCodeFormat(value: string): value is CardCodeFormat {
  return Object.prototype.hasOwnProperty.call(CARD_CODE_FORMATS, value);
}

/** True for 8 hex digits, either case. */
export function isUid(value: string): boolean {
  return UID_RE.test(value.toUpperCase());
}

/** Whether `format` can carry `uid` (the 3-byte and split formats need byte 1 = 00). */
export function fitsFormat(uid: string, format: CardCodeFormat): boolean {
  return !isShort(format) || uidToBytes(uid)[0] === 0;
}

/** Reads a card number written in `format` into its UID. */
export function decodeCard(cardNo: string, format: string = DEFAULT_CARD_CODE_FORMAT): CardDecode {
  if (!isCardCodeFormat(format)) {
    return fail(`unknown card format '${format}'; expected one of ${CARD_CODE_FORMAT_NAMES.join(', ')}`);
  }
  const s = cardNo.trim();
  if (s === '') return fail('card number is empty');
  switch (format) {
    case 'decimal':
    case 'decimal-reversed': {
      const n = readDecimal(s, 10, MAX_32);
      if (typeof n === 'string') return fail(n);
      const b = u32Bytes(n);
      return ok(format === 'decimal' ? b : b.reverse());
    }
    case 'hex':
    case 'hex-reversed': {
      if (s.length !== 8) return fail(`expected 8 hex digits, got ${s.length} characters`);
      if (!/^[0-9a-fA-F]{8}$/.test(s)) return fail('not a hex number (0-9, A-F)');
      const b = uidToBytes(s.toUpperCase());
      return ok(format === 'hex' ? b : b.reverse());
    }
    case 'decimal-3byte':
    case 'decimal-3byte-reversed': {
      const n = readDecimal(s, 8, MAX_24);
      if (typeof n === 'string') return fail(n);
      const low = u32Bytes(n).subarray(1);
      if (format === 'decimal-3byte-reversed') low.reverse();
      return ok([0, ...low]);
    }
    case 'facility-card': {
      const parts = s.split('-');
      if (parts.length !== 2) return fail('expected facility code and card number as FFF-NNNNN');
      const facility = readDecimal(parts[0].trim(), 3, 0xff, 'facility code');
      if (typeof facility === 'string') return fail(facility);
      const card = readDecimal(parts[1].trim(), 5, 0xffff, 'card number');
      if (typeof card === 'string') return fail(card);
      return ok([0, facility, card >>> 8, card & 0xff]);
    }
  }
}

/**
 * Writes `uid` in `format`. Throws RangeError for a malformed UID or one the format
 * cannot carry (see `fitsFormat`), so decode(encode(uid)) is always uid.
 */
export function encodeCard(uid: string, format: CardCodeFormat): string {
  const b = uidToBytes(uid);
  if (isShort(format) && b[0] !== 0) {
    throw new RangeError(`${format} carries only UID bytes 2-4; ${uid.toUpperCase()} has byte 1 ${hex(b.subarray(0, 1))}`);
  }
  switch (format) {
    case 'decimal':
      return pad(bytesToU32(b), 10);
    case 'decimal-reversed':
      return pad(bytesToU32(b.reverse()), 10);
    case 'hex':
      return hex(b);
    case 'hex-reversed':
      return hex(b.reverse());
    case 'decimal-3byte':
      return pad(bytesToU32(b), 8);
    case 'decimal-3byte-reversed':
      return pad(bytesToU32(Uint8Array.of(0, b[3], b[2], b[1])), 8);
    case 'facility-card':
      return `${pad(b[1], 3)}-${pad((b[2] << 8) | b[3], 5)}`;
  }
}

/** The number every response shows: decimal-reversed (8H-10D-R). */
export function cardNoOf(uid: string): string {
  return encodeCard(uid, 'decimal-reversed');
}

/** Label for a card submitted without one: `Card 04A32B1C` (`Virtual card …` for a generated card). */
export function defaultCardLabel(uid: string, type: 'real' | 'virtual' = 'real'): string {
  return `${type === 'virtual' ? 'Virtual card' : 'Card'} ${hex(uidToBytes(uid))}`;
}

function isShort(format: CardCodeFormat): boolean {
  return format === 'decimal-3byte' || format === 'decimal-3byte-reversed' || format === 'facility-card';
}

/** Up to `maxDigits` decimal digits (leading zeros optional) not above `max`; a string is the reason it failed. */
function readDecimal(s: string, maxDigits: number, max: number, what = 'card number'): number | string {
  if (s === '') return `${what} is empty`;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return `${what} must be digits only`;
  }
  if (s.length > maxDigits) return `${what} has ${s.length} digits; at most ${maxDigits}`;
  const n = Number(s);
  if (n > max) return `${what} ${s} is out of range (0-${max})`;
  return n;
}

function uidToBytes(uid: string): Uint8Array {
  const u = uid.toUpperCase();
  if (!UID_RE.test(u)) throw new RangeError(`A card UID is 8 hex digits, got '${uid}'`);
  return Uint8Array.from(Buffer.from(u, 'hex'));
}

function u32Bytes(n: number): Uint8Array {
  return Uint8Array.of((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

function bytesToU32(b: Uint8Array): number {
  return ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
}

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex').toUpperCase();
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function ok(bytes: ArrayLike<number>): CardDecode {
  return { ok: true, uid: hex(Uint8Array.from(bytes)) };
}

function fail(reason: string): CardDecode {
  return { ok: false, reason };
}
