/**
 * The face picture each kind of device takes (pure): the target box, the byte
 * limit and the steps a derivation goes through until the picture fits. A device
 * that holds faces (see `holdsFaces`) is a HikVision-style terminal: a baseline
 * JPEG of at most 200 KB and at most 480×640 pixels (portrait, 3:4).
 *
 * The members module derives one picture per profile from the member's original
 * (decoded, EXIF-oriented, centre-cropped to the aspect, re-encoded); the sharp
 * call is in `members/face-images.ts`, the decisions are here.
 */
import { holdsFaces } from './device-kinds.js';

export interface FaceLimits {
  /** Names these limits; derived pictures are stored per profile. Change it when the limits change. */
  profile: string;
  /** The largest picture, in pixels; its ratio is the aspect a picture is cropped to. */
  width: number;
  height: number;
  maxBytes: number;
  /** Stepping down stops at this width. */
  minWidth: number;
  /** JPEG qualities tried at each size, best first. */
  qualities: readonly number[];
}

export const TERMINAL_FACE: FaceLimits = {
  profile: 'jpeg-480x640-200k',
  width: 480,
  height: 640,
  maxBytes: 200 * 1024,
  minWidth: 180,
  qualities: [85, 75, 65, 55, 45],
};

/** Every profile a device kind can ask for (the members module derives each once per face). */
export const FACE_PROFILES: readonly FaceLimits[] = [TERMINAL_FACE];

/** The limits of the face a device of this kind takes, or null when it holds no face. */
export function faceLimitsFor(kind: string): FaceLimits | null {
  return holdsFaces(kind) ? TERMINAL_FACE : null;
}

/** The displayed size of a picture with its EXIF orientation applied (5–8 turn it a quarter). */
export function orientedSize(width: number, height: number, orientation: number | undefined): { width: number; height: number } {
  return orientation !== undefined && orientation >= 5 && orientation <= 8 ? { width: height, height: width } : { width, height };
}

export interface EncodeStep {
  width: number;
  height: number;
  quality: number;
}

/**
 * The encodings to try, in order, for a picture of `source` size (oriented): the
 * largest box of the profile's aspect inside the picture, centred, scaled to the
 * profile's size (never enlarged), each quality in turn, then 80 % smaller, down to
 * `minWidth` (a picture already narrower than that is tried at its own size only).
 * Empty for a picture with no pixels.
 */
export function encodeSteps(limits: FaceLimits, source: { width: number; height: number }): EncodeStep[] {
  if (!(source.width >= 1 && source.height >= 1)) return [];
  const aspect = limits.width / limits.height;
  // The centred crop of the profile's aspect.
  const cropW = Math.min(source.width, source.height * aspect);
  let width = Math.max(1, Math.floor(Math.min(limits.width, cropW)));
  const steps: EncodeStep[] = [];
  for (;;) {
    const height = Math.max(1, Math.round(width / aspect));
    for (const quality of limits.qualities) steps.push({ width, height, quality });
    const next = Math.floor(width * 0.8);
    if (next < limits.minWidth || next < 1) break;
    width = next;
  }
  return steps;
}

/** Whether an encoded picture fits: bytes, pixels, baseline JPEG. */
export function fitsLimits(limits: FaceLimits, pic: { bytes: number; width: number; height: number; progressive: boolean }): boolean {
  return !pic.progressive && pic.bytes <= limits.maxBytes && pic.width <= limits.width && pic.height <= limits.height;
}
