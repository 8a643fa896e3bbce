/**
 * The face a device takes: the pure limits and steps (devices/rules/face-limits.ts),
 * the header reader a terminal checks with (image-header.ts), and the sharp adapter
 * (members/face-images.ts) on real pictures.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { encodeSteps, faceLimitsFor, fitsLimits, orientedSize, TERMINAL_FACE } from '../../src/modules/devices/rules/face-limits.js';
import { imageHeader } from '../../src/modules/devices/rules/image-header.js';
import { checkCommand } from '../../src/modules/devices/rules/device-command-check.js';
import { deriveFace } from '../../src/modules/members/face-images.js';
import { face, phonePhoto, undecodableFace } from '../support/devices.js';

describe('per-kind limits (pure)', () => {
  it('face readers take a baseline JPEG within 480x640 and 200 KB; card readers and plate cameras take none', () => {
    expect(faceLimitsFor('face-card-reader')).toBe(TERMINAL_FACE);
    expect(faceLimitsFor('turnstile')).toBe(TERMINAL_FACE);
    expect(faceLimitsFor('card-reader')).toBeNull();
    expect(faceLimitsFor('lpr-camera')).toBeNull();
    expect(TERMINAL_FACE).toMatchObject({ width: 480, height: 640, maxBytes: 200 * 1024 });
  });

  it('EXIF orientations 5-8 swap width and height', () => {
    expect(orientedSize(4000, 3000, 6)).toEqual({ width: 3000, height: 4000 });
    expect(orientedSize(4000, 3000, 8)).toEqual({ width: 3000, height: 4000 });
    expect(orientedSize(4000, 3000, 1)).toEqual({ width: 4000, height: 3000 });
    expect(orientedSize(4000, 3000, 3)).toEqual({ width: 4000, height: 3000 });
    expect(orientedSize(4000, 3000, undefined)).toEqual({ width: 4000, height: 3000 });
  });

  it('steps: the centred 3:4 crop scaled to the box, every quality, then 80 % smaller down to the minimum width', () => {
    const steps = encodeSteps(TERMINAL_FACE, { width: 3000, height: 4000 });
    expect(steps[0]).toEqual({ width: 480, height: 640, quality: 85 });
    expect(steps.slice(0, 5).map((s) => s.quality)).toEqual([...TERMINAL_FACE.qualities]);
    expect(steps[5]).toEqual({ width: 384, height: 512, quality: 85 });
    for (const s of steps) {
      expect(s.width).toBeLessThanOrEqual(480);
      expect(s.height).toBeLessThanOrEqual(640);
      expect(s.width).toBeGreaterThanOrEqual(TERMINAL_FACE.minWidth);
      expect(Math.abs(s.width / s.height - 0.75)).toBeLessThan(0.01);
    }
    // Widths strictly decrease between sizes.
    const widths = [...new Set(steps.map((s) => s.width))];
    expect(widths).toEqual([...widths].sort((a, b) => b - a));
  });

  it('a landscape picture is cropped to its centre 3:4 part; a small one is never enlarged', () => {
    expect(encodeSteps(TERMINAL_FACE, { width: 4000, height: 3000 })[0]).toEqual({ width: 480, height: 640, quality: 85 });
    expect(encodeSteps(TERMINAL_FACE, { width: 64, height: 64 })).toEqual(
      TERMINAL_FACE.qualities.map((quality) => ({ width: 48, height: 64, quality })),
    );
    expect(encodeSteps(TERMINAL_FACE, { width: 0, height: 10 })).toEqual([]);
  });

  it('fits: bytes, pixels and baseline all count', () => {
    const ok = { bytes: 100_000, width: 480, height: 640, progressive: false };
    expect(fitsLimits(TERMINAL_FACE, ok)).toBe(true);
    expect(fitsLimits(TERMINAL_FACE, { ...ok, bytes: 200 * 1024 + 1 })).toBe(false);
    expect(fitsLimits(TERMINAL_FACE, { ...ok, width: 481 })).toBe(false);
    expect(fitsLimits(TERMINAL_FACE, { ...ok, height: 641 })).toBe(false);
    expect(fitsLimits(TERMINAL_FACE, { ...ok, progressive: true })).toBe(false);
  });
});

describe('image headers and the device check (pure)', () => {
  it('reads JPEG and PNG sizes and tells progressive JPEG apart', async () => {
    const base = sharp({ create: { width: 30, height: 20, channels: 3, background: '#808080' } });
    expect(imageHeader(await base.clone().jpeg().toBuffer())).toEqual({ type: 'jpeg', width: 30, height: 20, progressive: false });
    expect(imageHeader(await base.clone().jpeg({ progressive: true }).toBuffer())).toEqual({
      type: 'jpeg',
      width: 30,
      height: 20,
      progressive: true,
    });
    expect(imageHeader(await base.clone().png().toBuffer())).toEqual({ type: 'png', width: 30, height: 20, progressive: false });
    expect(imageHeader(Buffer.from(undecodableFace(), 'base64'))).toBeNull();
  });

  it('a device refuses a progressive or oversized picture', async () => {
    const cmd = (data: Buffer) => ({
      v: 1 as const,
      deviceId: 'd',
      seq: 1,
      op: 'upsert' as const,
      subject: { kind: 'member' as const, id: 'm' },
      stateHash: 'h',
      face: { mime: 'image/jpeg', sha256: 'x', data: data.toString('base64') },
    });
    const pic = (w: number, h: number, progressive = false) =>
      sharp({ create: { width: w, height: h, channels: 3, background: '#808080' } })
        .jpeg({ progressive })
        .toBuffer();
    expect(checkCommand(cmd(await pic(480, 640)), 'face-card-reader')).toEqual({ ok: true });
    expect(checkCommand(cmd(await pic(480, 640, true)), 'face-card-reader')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/progressive/),
    });
    expect(checkCommand(cmd(await pic(600, 800)), 'face-card-reader')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/600x800/),
    });
  });
});

describe('the sharp adapter', () => {
  it('a 3000x4000 phone photo stored sideways becomes an upright 480x640 baseline JPEG within 200 KB, without EXIF', async () => {
    const original = Buffer.from(await phonePhoto(1), 'base64');
    expect(original.length).toBeGreaterThan(300 * 1024);
    const d = await deriveFace(original, TERMINAL_FACE);
    if (!d.ok) throw new Error(d.reason);
    expect(d.bytes.length).toBeLessThanOrEqual(200 * 1024);
    expect(imageHeader(d.bytes)).toEqual({ type: 'jpeg', width: 480, height: 640, progressive: false });
    expect((await sharp(d.bytes).metadata()).orientation).toBeUndefined();
  });

  it('orientation is applied before the crop: a stored-landscape, EXIF-portrait picture keeps its full height', async () => {
    const stored = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#336699' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const d = await deriveFace(stored, TERMINAL_FACE);
    if (!d.ok) throw new Error(d.reason);
    // Upright it is 300x400 (already 3:4); unrotated it would have been cropped to 225x300.
    expect(imageHeader(d.bytes)).toMatchObject({ width: 300, height: 400 });
  });

  it('a PNG becomes a JPEG; an undecodable picture is refused with a reason', async () => {
    const png = await deriveFace(Buffer.from(face(5), 'base64'), TERMINAL_FACE);
    expect(png.ok && imageHeader(png.bytes)).toEqual({ type: 'jpeg', width: 48, height: 64, progressive: false });
    expect(await deriveFace(Buffer.from(undecodableFace(), 'base64'), TERMINAL_FACE)).toEqual({
      ok: false,
      reason: 'the face photo could not be decoded',
    });
  });

  it('a picture that cannot be brought within the byte limit is refused', async () => {
    const tiny = { ...TERMINAL_FACE, maxBytes: 200, minWidth: 400 };
    const d = await deriveFace(Buffer.from(await phonePhoto(2), 'base64'), tiny);
    expect(d).toMatchObject({ ok: false, reason: expect.stringMatching(/no picture of the face fits/) });
  });
});
