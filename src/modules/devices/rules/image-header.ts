/**
 * Reads a picture's size from its header (pure): what a terminal checks before it
 * stores a face. JPEG: the first start-of-frame marker (SOF0/SOF1 baseline, SOF2
 * progressive, …); PNG: the IHDR chunk. Null when the header cannot be read.
 */
export interface ImageHeader {
  type: 'jpeg' | 'png';
  width: number;
  height: number;
  /** JPEG only: a progressive (or other non-baseline) encoding. */
  progressive: boolean;
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function imageHeader(b: Uint8Array): ImageHeader | null {
  if (b.length >= 24 && PNG.every((m, i) => b[i] === m)) {
    const width = ((b[16]! << 24) | (b[17]! << 16) | (b[18]! << 8) | b[19]!) >>> 0;
    const height = ((b[20]! << 24) | (b[21]! << 16) | (b[22]! << 8) | b[23]!) >>> 0;
    return { type: 'png', width, height, progressive: false };
  }
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    } // fill byte
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    } // no length
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or scan data before any frame
    const len = (b[i + 2]! << 8) | b[i + 3]!;
    if (len < 2) return null;
    // SOF markers: C0–CF except C4 (DHT), C8 (JPG) and CC (DAC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (i + 9 > b.length) return null;
      const height = (b[i + 5]! << 8) | b[i + 6]!;
      const width = (b[i + 7]! << 8) | b[i + 8]!;
      return { type: 'jpeg', width, height, progressive: marker !== 0xc0 && marker !== 0xc1 };
    }
    i += 2 + len;
  }
  return null;
}
