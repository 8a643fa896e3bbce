/**
 * Credential rules: the physical card plan, the virtual card rule and UID, face
 * photo decoding (size limit, magic bytes, data URIs, bad base64) and phone
 * normalization.
 */
import { describe, expect, it } from 'vitest';
import { decodeCard, encodeCard } from '../../src/modules/members/rules/card-codec.js';
import {
  MAX_CARDS,
  MAX_FACE_BYTES,
  decodeFace,
  needsVirtualCard,
  newVirtualUid,
  planCards,
  type CurrentCard,
} from '../../src/modules/members/rules/credentials.js';
import { normalizePhone } from '../../src/modules/members/rules/phone.js';

const real = (id: string, uid: string, over: Partial<CurrentCard> = {}): CurrentCard => ({
  id,
  uid,
  type: 'real',
  generated: false,
  status: 'active',
  ...over,
});
const virtual = (id: string, uid: string): CurrentCard => ({ id, uid, type: 'virtual', generated: true, status: 'active' });
const uidOf = (cardNo: string, format: string) => {
  const r = decodeCard(cardNo, format);
  if (!r.ok) throw new Error(r.reason);
  return r.uid;
};

describe('planCards', () => {
  it('enrolls missing cards, revokes absent ones, keeps common ones', () => {
    const plan = planCards([real('c1', '04A32B1C'), real('c2', '11111111')], [{ uid: '04A32B1C' }, { uid: '22222222', label: 'Lobby' }]);
    expect(plan).toEqual({ enroll: [{ uid: '22222222', label: 'Lobby' }], revoke: ['c2'], keep: ['c1'], relabel: [] });
  });

  it('[] revokes every physical card and leaves the virtual card alone', () => {
    const plan = planCards([real('c1', '04A32B1C'), virtual('v1', '9ABCDEF0'), real('c2', '11111111')], []);
    expect(plan).toEqual({ enroll: [], revoke: ['c1', 'c2'], keep: [], relabel: [] });
  });

  it('one card in two formats is one card', () => {
    const submitted = [
      { uid: uidOf('0472621828', 'decimal-reversed') },
      { uid: uidOf('0077802268', 'decimal'), label: 'Blue fob' },
      { uid: uidOf('1c2ba304', 'hex-reversed') },
    ];
    expect(planCards([], submitted).enroll).toEqual([{ uid: '04A32B1C', label: 'Blue fob' }]);
    expect(planCards([real('c1', '04A32B1C')], submitted)).toMatchObject({ enroll: [], revoke: [], keep: ['c1'] });
  });

  it('the first given label wins for a duplicated UID; a blank label counts as none', () => {
    const plan = planCards(
      [],
      [
        { uid: '04a32b1c', label: '  ' },
        { uid: '04A32B1C', label: 'A' },
        { uid: '04A32B1C', label: 'B' },
      ],
    );
    expect(plan.enroll).toEqual([{ uid: '04A32B1C', label: 'A' }]);
  });

  it('a card without a label gets the default label', () => {
    expect(planCards([], [{ uid: '04a32b1c' }]).enroll).toEqual([{ uid: '04A32B1C', label: 'Card 04A32B1C' }]);
  });

  it('ignores revoked rows: a re-submitted revoked card is enrolled again', () => {
    const plan = planCards([real('old', '04A32B1C', { status: 'revoked' })], [{ uid: '04A32B1C' }]);
    expect(plan).toEqual({ enroll: [{ uid: '04A32B1C', label: 'Card 04A32B1C' }], revoke: [], keep: [], relabel: [] });
  });

  it('a physical card with the virtual card UID is still a physical card of its own', () => {
    const plan = planCards([virtual('v1', '9ABCDEF0')], [{ uid: '9ABCDEF0' }]);
    expect(plan.enroll).toEqual([{ uid: '9ABCDEF0', label: 'Card 9ABCDEF0' }]);
    expect(plan.revoke).toEqual([]);
  });

  it('matches UIDs whatever their case and revokes a duplicate active row', () => {
    const plan = planCards([real('c1', '04a32b1c'), real('c2', '04A32B1C')], [{ uid: '04A32B1C' }]);
    expect(plan).toEqual({ enroll: [], revoke: ['c2'], keep: ['c1'], relabel: [] });
  });

  it('relabels a kept card when a different label is submitted', () => {
    const plan = planCards(
      [real('c1', '04A32B1C', { label: 'Old' }), real('c2', '11111111', { label: 'Same' })],
      [
        { uid: '04A32B1C', label: 'New' },
        { uid: '11111111', label: 'Same' },
      ],
    );
    expect(plan.relabel).toEqual([{ id: 'c1', label: 'New' }]);
    expect(plan.keep).toEqual(['c1', 'c2']);
  });

  it('the card limit is 20', () => expect(MAX_CARDS).toBe(20));
});

describe('needsVirtualCard', () => {
  const table: [boolean, number, boolean, boolean][] = [
    // hasFace, activePhysicalCount, hasActiveVirtual, mint
    [true, 0, false, true],
    [true, 0, true, false], // never twice
    [true, 1, false, false],
    [true, 3, true, false], // later physical cards: keep it, mint nothing
    [false, 0, false, false],
    [false, 0, true, false],
    [false, 2, false, false],
  ];
  it.each(table)('face %s, %i physical, virtual %s -> %s', (hasFace, activePhysicalCount, hasActiveVirtual, mint) => {
    expect(needsVirtualCard({ hasFace, activePhysicalCount, hasActiveVirtual })).toBe(mint);
  });
});

describe('newVirtualUid', () => {
  const source = (...draws: string[]) => {
    let i = 0;
    return (size: number) => {
      expect(size).toBe(4);
      return Buffer.from(draws[i++ % draws.length], 'hex');
    };
  };

  it('takes the first free draw', () => {
    expect(newVirtualUid(source('9abcdef0'), () => false)).toBe('9ABCDEF0');
  });

  it('skips taken UIDs, UIDs starting 00 and FFFFFFFF', () => {
    const taken = new Set(['12345678']);
    expect(newVirtualUid(source('12345678', '00ABCDEF', 'FFFFFFFF', '87654321'), (u) => taken.has(u))).toBe('87654321');
  });

  it('gives up with null when nothing free turns up', () => {
    expect(newVirtualUid(source('12345678'), () => true)).toBeNull();
  });

  it('a virtual UID is a valid card in every 4-byte format', () => {
    const uid = newVirtualUid(source('9abcdef0'), () => false)!;
    expect(decodeCard(encodeCard(uid, 'decimal-reversed'))).toEqual({ ok: true, uid });
  });
});

describe('decodeFace', () => {
  const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]);
  const image = (magic: Buffer, size: number) => {
    const b = Buffer.alloc(size, 0x41);
    magic.copy(b);
    return b;
  };
  const reasonOf = (input: string) => {
    const r = decodeFace(input);
    if (r.ok) throw new Error('accepted');
    return r.reason;
  };

  it('10 MB is 10 * 1024 * 1024 bytes', () => expect(MAX_FACE_BYTES).toBe(10_485_760));

  it('reads bare base64 JPEG and PNG by their magic bytes', () => {
    expect(decodeFace(JPEG.toString('base64'))).toEqual({ ok: true, bytes: JPEG, mime: 'image/jpeg' });
    expect(decodeFace(PNG.toString('base64'))).toEqual({ ok: true, bytes: PNG, mime: 'image/png' });
  });

  it('reads data URIs whose type agrees', () => {
    expect(decodeFace(`data:image/jpeg;base64,${JPEG.toString('base64')}`)).toMatchObject({ ok: true, mime: 'image/jpeg' });
    expect(decodeFace(`data:image/jpg;base64,${JPEG.toString('base64')}`)).toMatchObject({ ok: true, mime: 'image/jpeg' });
    expect(decodeFace(`DATA:Image/PNG;base64,${PNG.toString('base64')}`)).toMatchObject({ ok: true, mime: 'image/png' });
  });

  it('refuses a data URI type that disagrees with the bytes', () => {
    expect(reasonOf(`data:image/png;base64,${JPEG.toString('base64')}`)).toMatch(/says image\/png but the image is image\/jpeg/);
    expect(reasonOf(`data:image/jpeg;base64,${PNG.toString('base64')}`)).toMatch(/says image\/jpeg but the image is image\/png/);
  });

  it('refuses other types, non-base64 data URIs and malformed headers', () => {
    expect(reasonOf(`data:image/gif;base64,${JPEG.toString('base64')}`)).toMatch(/unsupported image type 'image\/gif'/);
    expect(reasonOf(`data:image/jpeg,${JPEG.toString('base64')}`)).toMatch(/must be base64/);
    expect(reasonOf('data:image/jpeg;base64')).toMatch(/malformed data URI/);
    expect(reasonOf(Buffer.from('GIF89a-------').toString('base64'))).toMatch(/not a JPEG or PNG/);
    expect(reasonOf(Buffer.from([0xff, 0xd8]).toString('base64'))).toMatch(/not a JPEG or PNG/);
  });

  it('refuses invalid base64', () => {
    expect(reasonOf('')).toMatch(/empty/);
    expect(reasonOf('/9j/4A*B')).toMatch(/unexpected character at position 6/);
    expect(reasonOf('/9j/4-_B')).toMatch(/unexpected character/);
    expect(reasonOf('/9j/4A==QQ')).toMatch(/after the = padding/);
    expect(reasonOf('/9j/4===')).toMatch(/too much = padding/);
    expect(reasonOf('/9j/4A=')).toMatch(/wrong padding/);
    expect(reasonOf('/9j/4')).toMatch(/wrong length/);
  });

  it('accepts unpadded and line-wrapped base64', () => {
    const b64 = image(JPEG, 200).toString('base64');
    expect(decodeFace(b64.replace(/=+$/, ''))).toMatchObject({ ok: true, mime: 'image/jpeg' });
    const wrapped = b64.replace(/(.{76})/g, '$1\r\n');
    const r = decodeFace(`  ${wrapped}\n`);
    expect(r.ok && r.bytes.equals(image(JPEG, 200))).toBe(true);
  });

  it('accepts exactly 10 MB and refuses 10 MB + 1 byte, quickly', () => {
    const max = image(PNG, MAX_FACE_BYTES).toString('base64');
    const over = image(PNG, MAX_FACE_BYTES + 1).toString('base64');
    let t = performance.now();
    const r = decodeFace(`data:image/png;base64,${max}`);
    const acceptMs = performance.now() - t;
    expect(r.ok && r.bytes.length).toBe(MAX_FACE_BYTES);
    t = performance.now();
    expect(reasonOf(over)).toMatch(/10485761 bytes; at most 10485760/);
    const refuseMs = performance.now() - t;
    // A scan of ~14 M characters plus one decode; generous for a busy CI box.
    expect(acceptMs).toBeLessThan(1000);
    expect(refuseMs).toBeLessThan(1000);
  });

  it('refuses a body far past the limit before scanning it', () => {
    expect(reasonOf('A'.repeat(30_000_000))).toMatch(/larger than 10485760/);
  });
});

describe('normalizePhone', () => {
  it.each([
    ['081-234-5678', '+66812345678'],
    ['081 234 5678', '+66812345678'],
    ['(081) 234.5678', '+66812345678'],
    ['02-123-4567', '+6621234567'], // Bangkok landline, 9 digits
    ['66812345678', '+66812345678'],
    ['+66 81 234 5678', '+66812345678'],
    ['+66 (0)81-234-5678', '+66812345678'],
    ['0066812345678', '+66812345678'],
    ['+1 (415) 555-0100', '+14155550100'],
    ['+44 20 7946 0958', '+442079460958'],
    ['1234', '1234'], // too short for any rule: only stripped
    ['', ''],
  ])('%j -> %j', (input, out) => expect(normalizePhone(input)).toBe(out));

  it('is idempotent', () => {
    for (const p of ['081-234-5678', '66812345678', '+1 415 555 0100', '02 123 4567']) {
      expect(normalizePhone(normalizePhone(p))).toBe(normalizePhone(p));
    }
  });
});
