/**
 * Helpers of the device tests: a site whose partner app grants two access groups
 * with devices of several kinds, faces, and waiting for a device to settle.
 */
import { expect } from 'vitest';
import type { TestService } from './test-service.js';
import { partnerSite } from './partner-members.js';

export const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A small PNG-typed image as base64 (`size` bytes, a distinct body per `seed`). */
export function face(seed = 1, size = 256): string {
  const body = Buffer.alloc(size - PNG_MAGIC.length, seed);
  return Buffer.concat([PNG_MAGIC, body]).toString('base64');
}

/**
 * partnerSite() with devices: lobby (t1 face-card-reader, t2 card-reader in hex format),
 * gym (g1 face-card-reader with a location), annexGate (a1, another project) and
 * staffOnly (s1, a group the partner app does not grant).
 */
export function deviceSite() {
  const doc = partnerSite();
  doc.accessGroups = [
    { key: 'lobby', project: 'tower', name: 'Lobby turnstiles', devices: [
      { key: 't1', name: 'Turnstile 1', kind: 'face-card-reader' },
      { key: 't2', name: 'Turnstile 2', kind: 'card-reader', cardFormat: 'hex' },
    ] },
    { key: 'gym', project: 'tower', name: 'Gym door', devices: [
      { key: 'g1', name: 'Gym reader', kind: 'face-card-reader', location: { en: 'Gym, 5th floor', th: 'ฟิตเนส ชั้น 5' } },
    ] },
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
