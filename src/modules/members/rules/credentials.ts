/**
 * Credential decisions (pure): which physical cards to enroll, revoke or keep for a
 * declarative card set, when to mint the virtual card, a fresh virtual UID, reading
 * a face photo, and the phone normalization used for member matching.
 */
import { defaultCardLabel } from './card-codec.js';

export const MAX_CARDS = 20;
/** 10 MB means 10 MiB: 10 * 1024 * 1024 = 10,485,760 decoded bytes. */
export const MAX_FACE_BYTES = 10 * 1024 * 1024;

export type FaceMime = 'image/jpeg' | 'image/png';

export interface CurrentCard {
  id: string;
  uid: string;
  type: string; // real | virtual
  generated: boolean;
  status: string; // active | revoked
  label?: string;
}

export interface SubmittedCard {
  uid: string;
  label?: string;
}

export interface CardPlan {
  enroll: { uid: string; label: string }[];
  revoke: string[];
  keep: string[];
  /** Kept cards whose submitted label differs from the stored one (only when `current` carries labels). */
  relabel: { id: string; label: string }[];
}

/**
 * Plans the physical card set. Only active `real` cards take part: virtual cards and
 * revoked rows are left alone. Matching is on the UID (either case); a UID submitted
 * twice counts once and takes its first given label. The caller checks MAX_CARDS.
 */
export function planCards(current: readonly CurrentCard[], submitted: readonly SubmittedCard[]): CardPlan {
  const wanted = new Map<string, string | undefined>();
  for (const s of submitted) {
    const uid = s.uid.toUpperCase();
    const label = s.label?.trim() || undefined;
    if (!wanted.has(uid)) wanted.set(uid, label);
    else if (wanted.get(uid) === undefined && label !== undefined) wanted.set(uid, label);
  }

  const plan: CardPlan = { enroll: [], revoke: [], keep: [], relabel: [] };
  const held = new Set<string>();
  for (const c of current) {
    if (c.type !== 'real' || c.status !== 'active') continue;
    const uid = c.uid.toUpperCase();
    // A second active row for one UID should not exist; if it does, it goes.
    if (!wanted.has(uid) || held.has(uid)) {
      plan.revoke.push(c.id);
      continue;
    }
    held.add(uid);
    plan.keep.push(c.id);
    const label = wanted.get(uid);
    if (label !== undefined && c.label !== undefined && c.label !== label) plan.relabel.push({ id: c.id, label });
  }
  for (const [uid, label] of wanted) {
    if (!held.has(uid)) plan.enroll.push({ uid, label: label ?? defaultCardLabel(uid) });
  }
  return plan;
}

/**
 * Whether to mint the virtual card after a credentials change: the member has a face,
 * holds no active physical card and has no active virtual card yet.
 */
export function needsVirtualCard(s: { hasFace: boolean; activePhysicalCount: number; hasActiveVirtual: boolean }): boolean {
  return s.hasFace && s.activePhysicalCount === 0 && !s.hasActiveVirtual;
}

export const VIRTUAL_UID_ATTEMPTS = 16;

/**
 * A random UID for a virtual card, drawn from `random` (e.g. node:crypto randomBytes).
 * It skips UIDs `taken` in the project, and UIDs whose first byte is 00 so no card
 * entered in a 3-byte format can ever collide with one, and FFFFFFFF.
 * Null after VIRTUAL_UID_ATTEMPTS draws without a free one.
 */
export function newVirtualUid(random: (size: number) => Uint8Array, taken: (uid: string) => boolean): string | null {
  for (let i = 0; i < VIRTUAL_UID_ATTEMPTS; i++) {
    const b = random(4);
    if (b.length < 4) throw new RangeError('The random source gave fewer than 4 bytes');
    const uid = Buffer.from(b.subarray(0, 4)).toString('hex').toUpperCase();
    if (b[0] === 0 || uid === 'FFFFFFFF' || taken(uid)) continue;
    return uid;
  }
  return null;
}

export type FaceDecode = { ok: true; bytes: Buffer; mime: FaceMime } | { ok: false; reason: string };

const JPEG_MAGIC = [0xff, 0xd8, 0xff];
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const DATA_URI_TYPES: Record<string, FaceMime> = { 'image/jpeg': 'image/jpeg', 'image/jpg': 'image/jpeg', 'image/png': 'image/png' };
/** Longest data URI header we read before the comma. */
const MAX_HEADER = 100;

/**
 * Reads a face photo: bare base64 or a `data:image/...;base64,` URI. Whitespace
 * (line wrapping) is ignored; padding is optional. The type is set by the magic
 * bytes (JPEG or PNG); a data URI naming another type is refused.
 */
export function decodeFace(input: string): FaceDecode {
  let body = input;
  let declared: FaceMime | undefined;
  if (startsWithCi(input.trimStart(), 'data:')) {
    const s = input.trimStart();
    const comma = s.indexOf(',', 0);
    if (comma < 0 || comma > MAX_HEADER)
      return fail('malformed data URI: expected data:image/jpeg;base64,... or data:image/png;base64,...');
    const params = s
      .slice(5, comma)
      .split(';')
      .map((p) => p.trim().toLowerCase());
    if (params[params.length - 1] !== 'base64') return fail('the data URI must be base64 (data:image/...;base64,...)');
    const media = DATA_URI_TYPES[params[0]];
    if (!media) return fail(`unsupported image type '${params[0]}'; use JPEG or PNG`);
    declared = media;
    body = s.slice(comma + 1);
  }

  // Rough bound before scanning: base64 is 4 chars per 3 bytes; allow whitespace.
  if (body.length > Math.ceil(MAX_FACE_BYTES / 3) * 4 * 2) return fail(`image is larger than ${MAX_FACE_BYTES} bytes`);

  const scan = scanBase64(body);
  if (typeof scan === 'string') return fail(scan);
  if (scan.size === 0) return fail('image is empty');
  if (scan.size > MAX_FACE_BYTES) return fail(`image is ${scan.size} bytes; at most ${MAX_FACE_BYTES} (10 MB)`);

  // Node's decoder skips whitespace itself; the scan has vetted every other character.
  const bytes = Buffer.from(body, 'base64');
  const mime = startsWith(bytes, PNG_MAGIC) ? 'image/png' : startsWith(bytes, JPEG_MAGIC) ? 'image/jpeg' : undefined;
  if (!mime) return fail('not a JPEG or PNG image');
  if (declared && declared !== mime) return fail(`the data URI says ${declared} but the image is ${mime}`);
  return { ok: true, bytes, mime };
}

/** Checks the base64 alphabet and padding in one pass and counts the decoded bytes. */
function scanBase64(s: string): { size: number } | string {
  let chars = 0;
  let padding = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) {
      continue;
    } else if (c === 61) {
      padding++;
    } else if (padding > 0) {
      return 'invalid base64: data after the = padding';
    } else if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47) {
      chars++;
    } else {
      return `invalid base64: unexpected character at position ${i}`;
    }
  }
  if (padding > 2) return 'invalid base64: too much = padding';
  if (padding > 0 && (chars + padding) % 4 !== 0) return 'invalid base64: wrong padding';
  if (chars % 4 === 1) return 'invalid base64: wrong length';
  return { size: Math.floor((chars * 3) / 4) };
}

function startsWith(b: Buffer, magic: readonly number[]): boolean {
  return b.length >= magic.length && magic.every((m, i) => b[i] === m);
}

function startsWithCi(s: string, prefix: string): boolean {
  return s.slice(0, prefix.length).toLowerCase() === prefix;
}

function fail(reason: string): FaceDecode {
  return { ok: false, reason };
}
