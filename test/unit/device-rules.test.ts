/**
 * The devices module's pure rules: a subject's state is canonical (equal sets
 * serialize equally), what each kind of device holds, the retry schedule, and
 * what a device refuses as bad input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalState, EMPTY_STATE, parseState, stateJson, type SubjectState } from '../../src/modules/devices/rules/subject-state.js';
import { holdsFaces, isPlateCamera, retryDelayMs } from '../../src/modules/devices/rules/device-kinds.js';
import { checkCommand, DEVICE_FACE_MAX_BYTES } from '../../src/modules/devices/rules/device-command-check.js';
import type { WireCommand } from '../../src/contract/device-wire.js';

const uid = fc.stringMatching(/^[0-9A-F]{8}$/);
const state = fc.record({
  cards: fc.array(uid, { maxLength: 6 }),
  face: fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: null }),
  qr: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: null }),
  plates: fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 3 }),
  validFrom: fc.option(fc.integer({ min: 0, max: 2 ** 42 }), { nil: null }),
  validUntil: fc.option(fc.integer({ min: 0, max: 2 ** 42 }), { nil: null }),
}) as fc.Arbitrary<SubjectState>;

describe('subject state', () => {
  it('serializes the same set the same way, whatever the order or repeats', () => {
    fc.assert(
      fc.property(state, fc.integer(), (s, seed) => {
        const shuffled = {
          ...s,
          cards: [...s.cards, ...s.cards.slice(0, 1)].sort(() => (seed % 2 ? 1 : -1)),
          plates: [...s.plates].reverse(),
        };
        expect(stateJson(shuffled)).toBe(stateJson(s));
      }),
    );
  });

  it('round-trips through JSON', () => {
    fc.assert(
      fc.property(state, (s) => {
        expect(parseState(stateJson(s))).toEqual(canonicalState(s));
      }),
    );
  });

  it('differs when any credential differs', () => {
    const base: SubjectState = { ...EMPTY_STATE, cards: ['0A0B0C0D'] };
    for (const other of [
      { ...base, cards: [] },
      { ...base, face: 'ab' },
      { ...base, qr: 'q' },
      { ...base, plates: ['1กข1234'] },
      { ...base, validUntil: 1 },
    ]) {
      expect(stateJson(other)).not.toBe(stateJson(base));
    }
  });
});

describe('device kinds', () => {
  it('licence-plate cameras hold plates only; plain card readers hold no face', () => {
    expect(isPlateCamera('lpr-camera')).toBe(true);
    expect(isPlateCamera('Plate reader')).toBe(true);
    expect(isPlateCamera('face-card-reader')).toBe(false);
    expect(holdsFaces('face-card-reader')).toBe(true);
    expect(holdsFaces('turnstile')).toBe(true);
    expect(holdsFaces('card-reader')).toBe(false);
    expect(holdsFaces('lpr-camera')).toBe(false);
  });

  it('retries an unreachable device after 1 s, doubling up to a minute', () => {
    expect([1, 2, 3, 4, 7, 8, 50].map(retryDelayMs)).toEqual([1000, 2000, 4000, 8000, 60_000, 60_000, 60_000]);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), (n) => {
        expect(retryDelayMs(n + 1)).toBeGreaterThanOrEqual(retryDelayMs(n));
        expect(retryDelayMs(n)).toBeLessThanOrEqual(60_000);
      }),
    );
  });
});

describe('what a device refuses', () => {
  /** A PNG-typed picture of `size` bytes whose header says 480x640 (or w x h). */
  const png = (size: number, w = 480, h = 640) => {
    const head = Buffer.alloc(24);
    head.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    head.writeUInt32BE(w, 16);
    head.writeUInt32BE(h, 20);
    return Buffer.concat([head, Buffer.alloc(size - 24, 1)]).toString('base64');
  };
  /** A baseline (SOF0) or progressive (SOF2) JPEG header of h x w pixels. */
  const jpeg = (w: number, h: number, sof = 0xc0) =>
    Buffer.from([
      0xff,
      0xd8,
      0xff,
      sof,
      0x00,
      0x11,
      0x08,
      h >> 8,
      h & 0xff,
      w >> 8,
      w & 0xff,
      3,
      1,
      0x22,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
    ]).toString('base64');
  const cmd = (extra: Partial<WireCommand>): WireCommand => ({
    v: 1,
    deviceId: 'd',
    seq: 1,
    op: 'upsert',
    subject: { kind: 'member', id: 'm' },
    stateHash: 'h',
    cards: [],
    face: null,
    ...extra,
  });

  it('takes a JPEG or PNG face up to the device limit', () => {
    expect(checkCommand(cmd({ face: { mime: 'image/png', sha256: 'x', data: png(DEVICE_FACE_MAX_BYTES) } }), 'face-card-reader')).toEqual({
      ok: true,
    });
    expect(checkCommand(cmd({ face: { mime: 'image/jpeg', sha256: 'x', data: jpeg(480, 640) } }), 'x').ok).toBe(true);
  });

  it("refuses a picture beyond the kind's pixels, a progressive JPEG, or one whose header cannot be read", () => {
    expect(checkCommand(cmd({ face: { mime: 'image/png', sha256: 'x', data: png(1000, 481, 640) } }), 'face-card-reader')).toEqual({
      ok: false,
      message: expect.stringMatching(/481x640/),
    });
    expect(checkCommand(cmd({ face: { mime: 'image/jpeg', sha256: 'x', data: jpeg(480, 641) } }), 'face-card-reader').ok).toBe(false);
    expect(checkCommand(cmd({ face: { mime: 'image/jpeg', sha256: 'x', data: jpeg(100, 100, 0xc2) } }), 'face-card-reader')).toEqual({
      ok: false,
      message: expect.stringMatching(/progressive/),
    });
    expect(
      checkCommand(
        cmd({ face: { mime: 'image/jpeg', sha256: 'x', data: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2]).toString('base64') } }),
        'x',
      ).ok,
    ).toBe(false);
  });

  it('refuses a face over the limit, or one that is not what it claims', () => {
    const big = checkCommand(cmd({ face: { mime: 'image/png', sha256: 'x', data: png(DEVICE_FACE_MAX_BYTES + 1) } }), 'face-card-reader');
    expect(big).toEqual({ ok: false, message: expect.stringMatching(/at most 200 KB/) });
    expect(checkCommand(cmd({ face: { mime: 'image/jpeg', sha256: 'x', data: png(100) } }), 'r').ok).toBe(false);
  });

  it('refuses a card the device format cannot carry, and a visitor pass with nothing on it', () => {
    expect(checkCommand(cmd({ cards: [{ uid: 'AABBCCDD', cardNo: '', format: 'decimal-3byte' }] }), 'r').ok).toBe(false);
    expect(checkCommand(cmd({ subject: { kind: 'visitor', id: 'i' }, qrCode: null, plates: [] }), 'r').ok).toBe(false);
    expect(checkCommand(cmd({ subject: { kind: 'visitor', id: 'i' }, qrCode: 'ABC' }), 'r').ok).toBe(true);
  });

  it('never refuses a removal', () => {
    expect(checkCommand({ v: 1, deviceId: 'd', seq: 2, op: 'remove', subject: { kind: 'member', id: 'm' }, stateHash: '' }, 'r')).toEqual({
      ok: true,
    });
  });
});
