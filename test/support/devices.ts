/**
 * Helpers of the device tests: a site whose partner app grants two access groups
 * with devices of several kinds, faces, and waiting for a device to settle.
 */
import { deflateSync } from 'node:zlib';
import { expect } from 'vitest';
import type { TestService } from './test-service.js';
import { partnerSite } from './partner-members.js';

export const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(b: Buffer): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A small real PNG (64×64, one colour per `seed`) as base64: a face photo devices can be given. */
export function face(seed = 1): string {
  const w = 64;
  const h = 64;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.alloc(1 + w * 3);
  for (let x = 0; x < w; x++) row.set([(seed * 37) & 0xff, (seed * 91) & 0xff, (seed * 53 + x) & 0xff], 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: h }, () => row));
  return Buffer.concat([PNG_MAGIC, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]).toString(
    'base64',
  );
}

/** Something that starts like a JPEG but is not one (base64): the service cannot decode it. */
export function undecodableFace(size = 4096): string {
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(size - 4, 7)]).toString('base64');
}

/**
 * A phone photo: a 3000×4000 noisy JPEG, well over 300 KB, stored sideways (4000×3000 pixels)
 * with EXIF orientation 6, as phones save portrait shots. Base64.
 */
export async function phonePhoto(seed = 1): Promise<string> {
  const sharp = (await import('sharp')).default;
  const w = 400;
  const h = 300;
  const noise = Buffer.alloc(w * h * 3);
  let x = seed * 2654435761;
  for (let i = 0; i < noise.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    noise[i] = x >>> 24;
  }
  const jpeg = await sharp(noise, { raw: { width: w, height: h, channels: 3 } })
    .resize(4000, 3000, { kernel: 'nearest' })
    .jpeg({ quality: 92, progressive: true })
    .withMetadata({ orientation: 6 })
    .toBuffer();
  return jpeg.toString('base64');
}

/**
 * partnerSite() with devices: lobby (t1 face-card-reader, t2 card-reader in hex format),
 * gym (g1 face-card-reader with a location), annexGate (a1, another project) and
 * staffOnly (s1, a group the partner app does not grant).
 */
export function deviceSite() {
  const doc = partnerSite();
  doc.accessGroups = [
    {
      key: 'lobby',
      project: 'tower',
      name: 'Lobby turnstiles',
      devices: [
        { key: 't1', name: 'Turnstile 1', kind: 'face-card-reader' },
        { key: 't2', name: 'Turnstile 2', kind: 'card-reader', cardFormat: 'hex' },
      ],
    },
    {
      key: 'gym',
      project: 'tower',
      name: 'Gym door',
      devices: [{ key: 'g1', name: 'Gym reader', kind: 'face-card-reader', location: { en: 'Gym, 5th floor', th: 'ฟิตเนส ชั้น 5' } }],
    },
    { key: 'staffOnly', project: 'tower', name: 'Staff door', devices: [{ key: 's1', name: 'Staff reader', kind: 'face-card-reader' }] },
    { key: 'annexGate', project: 'annex', name: 'Annex gate', devices: [{ key: 'a1', name: 'Annex reader', kind: 'face-card-reader' }] },
  ];
  return doc;
}

export async function deviceView(svc: TestService, id: string): Promise<any> {
  const res = await svc.ops('GET', `/ops/v1/devices/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** Polls the device view until `done` holds (5 s at most). */
export async function waitForDevice(svc: TestService, id: string, done: (view: any) => boolean, timeoutMs = 5_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const view = await deviceView(svc, id);
    if (done(view)) return view;
    if (Date.now() > until) throw new Error(`device ${id} did not settle: ${JSON.stringify(view)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const settled = (v: any) => v.pendingChanges === 0;
