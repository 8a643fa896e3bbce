/**
 * Licence plates and QR card codes as matched (pure).
 *
 * A plate is matched by its key: NFC, upper case, without any whitespace, dashes
 * (ASCII and Unicode) or dots. So `1กข 1234`, `1กข-1234` and ` 1 กข 1234 ` are one
 * plate, and `ab-1234` matches `AB 1234`.
 */

/** Whitespace, dots, the ASCII hyphen and the Unicode dashes and minus. */
const SEPARATORS = /[\s.\u002d\u00ad\u2010-\u2015\u2212\ufe58\ufe63\uff0d\uff0e]/gu;

/** The key a plate is matched by; '' when nothing but separators was given. */
export function plateKey(plate: string): string {
  return plate.normalize('NFC').toUpperCase().normalize('NFC').replace(SEPARATORS, '');
}

/**
 * QR card codes: 16 characters of Crockford's base32 alphabet (no I, L, O or U,
 * so nothing reads as another character), 80 random bits.
 */
export const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const CODE_LENGTH = 16;
/** Random bytes a code takes: 16 characters of 5 bits. */
export const CODE_BYTES = 10;

/** The code spelled by `bytes` (at least CODE_BYTES of them): 5 bits per character, most significant first. */
export function codeFromBytes(bytes: Uint8Array): string {
  if (bytes.length < CODE_BYTES) throw new Error(`a code needs ${CODE_BYTES} random bytes`);
  let out = '';
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < CODE_BYTES; i++) {
    acc = (acc << 8) | bytes[i]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CODE_ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/**
 * A code as read by a reader, in the form it was issued: upper case, without
 * whitespace or dashes (a person may type it in groups).
 */
export function normalizeCode(code: string): string {
  return code.normalize('NFC').toUpperCase().replace(SEPARATORS, '');
}
