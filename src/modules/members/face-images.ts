/**
 * The image adapter (sharp): derives, from a member's original face photo, the
 * picture a device profile takes (devices/rules/face-limits.ts decides the sizes
 * and limits). Decoded, turned upright by its EXIF orientation, centre-cropped to
 * the profile's aspect (no face detection: a crop on a guessed face would cut heads
 * more often than a centred one), re-encoded as baseline JPEG without metadata,
 * stepping quality and size down until it fits. The bytes are only returned to the
 * caller, which seals them; nothing here logs.
 */
import sharp from 'sharp';
import { encodeSteps, fitsLimits, orientedSize, type FaceLimits } from '../devices/rules/face-limits.js';
import { imageHeader } from '../devices/rules/image-header.js';

export type DerivedFace = { ok: true; bytes: Buffer; mime: 'image/jpeg' } | { ok: false; reason: string };

/** Pictures with more pixels than this are not decoded (a 10 MB upload of a decompression bomb). */
const MAX_INPUT_PIXELS = 100_000_000;

export async function deriveFace(original: Buffer, limits: FaceLimits): Promise<DerivedFace> {
  let size: { width: number; height: number };
  try {
    const meta = await sharp(original, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    if (meta.format !== 'jpeg' && meta.format !== 'png') return { ok: false, reason: 'the face photo is not a JPEG or PNG image' };
    if (!meta.width || !meta.height) return { ok: false, reason: 'the face photo has no readable size' };
    size = orientedSize(meta.width, meta.height, meta.orientation);
  } catch {
    return { ok: false, reason: 'the face photo could not be decoded' };
  }
  const steps = encodeSteps(limits, size);
  if (!steps.length) return { ok: false, reason: 'the face photo has no readable size' };
  try {
    // Decoded, turned upright and cropped once, at the largest step; each step encodes from these pixels.
    const upright = await sharp(original, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .resize(steps[0]!.width, steps[0]!.height, { fit: 'cover', position: 'centre' })
      .flatten({ background: '#ffffff' })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw = { width: upright.info.width, height: upright.info.height, channels: upright.info.channels };
    for (const step of steps) {
      const bytes = await sharp(upright.data, { raw })
        .resize(step.width, step.height, { fit: 'fill' })
        .jpeg({ quality: step.quality, progressive: false, mozjpeg: false, chromaSubsampling: '4:2:0' })
        .toBuffer();
      const header = imageHeader(bytes);
      if (
        header &&
        fitsLimits(limits, { bytes: bytes.length, width: header.width, height: header.height, progressive: header.progressive })
      ) {
        return { ok: true, bytes, mime: 'image/jpeg' };
      }
    }
  } catch {
    return { ok: false, reason: 'the face photo could not be decoded' };
  }
  return {
    ok: false,
    reason: `no picture of the face fits ${Math.round(limits.maxBytes / 1024)} KB at ${limits.width}x${limits.height} pixels or smaller`,
  };
}
