import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { SecretBox, hashPassword, safeEqual, sha256Hex, verifyPassword } from '../../src/platform/crypto/secrets.js';
import { isObjectId, newId } from '../../src/platform/ids.js';
import { resealRow } from '../../src/platform/crypto/reseal.js';

describe('secret hashing', () => {
  it('verifies the right secret and rejects others', async () => {
    const stored = await hashPassword('correct horse battery staple, 32+ chars');
    expect(stored).not.toContain('correct horse');
    expect(await verifyPassword('correct horse battery staple, 32+ chars', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery staple, 32+ chars!', stored)).toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
  });

  it('rejects a malformed stored hash', async () => {
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
  });

  it('safeEqual matches string equality', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => safeEqual(a, b) === (a === b)));
  });

  it('sha256Hex is the hex digest', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips any string and never stores it in clear', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (plain) => {
        const sealed = box.seal(plain);
        expect(box.open(sealed)).toBe(plain);
        if (plain.length > 3) expect(sealed.includes(plain)).toBe(false);
      }),
    );
  });

  it('never reuses a nonce, across many refills of its pool', () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 2000; i++) nonces.add(box.seal('1234').split('.')[1]);
    expect(nonces.size).toBe(2000);
    for (const n of nonces) expect(Buffer.from(n, 'base64url')).toHaveLength(12);
  });

  it('detects tampering and a wrong key', () => {
    const sealed = box.seal('webhook-secret-value-0123456789abcdef');
    const parts = sealed.split('.');
    // Flip one bit of the ciphertext (always a change, whatever the first byte was).
    const body = Buffer.from(parts[3], 'base64url');
    body[0] ^= 0x01;
    const tampered = [...parts.slice(0, 3), body.toString('base64url')].join('.');
    expect(() => box.open(tampered)).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });
});

describe('SecretBox key rotation', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  const before = new SecretBox(oldKey);
  const during = new SecretBox(newKey, [oldKey]);
  const after = new SecretBox(newKey);

  it('an earlier key opens what it sealed; sealing always uses the current key', () => {
    const sealed = before.seal('pin-1234');
    expect(during.open(sealed)).toBe('pin-1234');
    expect(() => after.open(sealed)).toThrow();
    const fresh = during.seal('pin-5678');
    expect(after.open(fresh)).toBe('pin-5678');
    expect(() => before.open(fresh)).toThrow();
  });

  it('reseal moves a value under the current key once, and refuses what no key opens', () => {
    const sealed = before.seal('face-bytes');
    const moved = during.reseal(sealed);
    expect(moved).not.toBeNull();
    expect(after.open(moved!)).toBe('face-bytes');
    expect(during.reseal(moved!)).toBeNull();
    expect(() => after.reseal(sealed)).toThrow();
  });

  it('tags: the current key tags, every known key is accepted', () => {
    const oldTag = before.tag('visitor-qr', 'CODE1');
    expect(during.tag('visitor-qr', 'CODE1')).toBe(after.tag('visitor-qr', 'CODE1'));
    expect(during.tags('visitor-qr', 'CODE1')).toEqual([after.tag('visitor-qr', 'CODE1'), oldTag]);
    expect(during.tagMatches('visitor-qr', 'CODE1', oldTag)).toBe(true);
    expect(after.tagMatches('visitor-qr', 'CODE1', oldTag)).toBe(false);
    expect(during.tagMatches('visitor-qr', 'CODE2', oldTag)).toBe(false);
    expect(during.tagMatches('room-feed', 'CODE1', oldTag)).toBe(false);
  });

  it('resealRow re-seals sealed columns and recomputes tags from the plain text, and leaves current rows alone', () => {
    const table = { tags: [{ column: 'qr_tag', of: 'qr_enc', purpose: 'visitor-qr' }] };
    const row = { key: ['i1'], values: { qr_enc: before.seal('CODE9'), qr_tag: before.tag('visitor-qr', 'CODE9'), note_enc: null } };
    const next = resealRow(row, table, during)!;
    expect(Object.keys(next).sort()).toEqual(['qr_enc', 'qr_tag']);
    expect(after.open(next.qr_enc!)).toBe('CODE9');
    expect(next.qr_tag).toBe(after.tag('visitor-qr', 'CODE9'));
    expect(resealRow({ key: ['i1'], values: { ...row.values, ...next } }, table, during)).toBeNull();
  });
});

describe('object ids', () => {
  it('are 24 lowercase hex characters and unique', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newId()));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(isObjectId(id)).toBe(true);
  });

  it('start with the creation time in seconds', () => {
    const id = newId(Date.UTC(2026, 10, 21, 12, 0, 0));
    expect(parseInt(id.slice(0, 8), 16)).toBe(Date.UTC(2026, 10, 21, 12, 0, 0) / 1000);
  });

  it('isObjectId rejects other strings', () => {
    expect(isObjectId('ABCDEF0123456789abcdef01')).toBe(false);
    expect(isObjectId('abc')).toBe(false);
    expect(isObjectId(42)).toBe(false);
  });
});
