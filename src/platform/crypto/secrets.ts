/**
 * Secret handling: one-way hashes for secrets we only need to verify (app secrets,
 * tokens), authenticated encryption for secrets we must use later (webhook
 * secrets), and constant-time comparison everywhere.
 */
import {
  createCipheriv,
  createDecipheriv,
  hash,
  createHmac,
  randomBytes,
  randomFillSync,
  scrypt as scryptCb,
  timingSafeEqual,
  type ScryptOptions,
} from 'node:crypto';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));

const SCRYPT = { N: 16384, r: 8, p: 1 };

/**
 * Fresh random 12-byte nonces for AES-GCM, cut from a pool the system's CSPRNG fills
 * 256 at a time (as Node's randomUUID does): one call into the RNG per 256 seals
 * instead of one per seal. Each nonce is copied out and its bytes never used again.
 */
const NONCE = 12;
const noncePool = Buffer.alloc(NONCE * 256);
let nonceAt = noncePool.length;

function freshNonce(): Buffer {
  if (nonceAt === noncePool.length) {
    randomFillSync(noncePool);
    nonceAt = 0;
  }
  const nonce = Buffer.from(noncePool.subarray(nonceAt, nonceAt + NONCE));
  nonceAt += NONCE;
  return nonce;
}

/** scrypt hash of a low-entropy-capable secret, self-describing: `scrypt$N$r$p$salt$hash`. */
export async function hashPassword(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(secret, salt, 32, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltB64, keyB64] = stored.split('$');
  if (scheme !== 'scrypt' || !saltB64 || !keyB64) return false;
  const expected = Buffer.from(keyB64, 'base64url');
  const actual = await scrypt(secret, Buffer.from(saltB64, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/** SHA-256 hex; enough for high-entropy random secrets such as tokens. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Constant-time string equality (length is not secret). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * AES-256-GCM sealed box: `v1.iv.tag.ciphertext`, base64url parts.
 *
 * One key seals and tags (SECRETS_KEY); earlier keys (SECRETS_KEY_PREVIOUS) still open
 * what they sealed and still count for tags, so a key can be rotated while serving:
 * `reseal` moves a value under the current key (npm run reseal-secrets does it for every
 * sealed column), after which the earlier key can be dropped (docs/operations.md).
 */
export class SecretBox {
  private readonly keys: readonly Buffer[];

  constructor(
    private readonly key: Buffer,
    previous: readonly Buffer[] = [],
  ) {
    for (const k of [key, ...previous]) if (k.length !== 32) throw new Error('SecretBox key must be 32 bytes');
    this.keys = [key, ...previous.filter((p) => !p.equals(key))];
  }

  seal(plain: string): string {
    const iv = freshNonce();
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  /**
   * An unforgeable tag of `text` for one `purpose` (HMAC-SHA256 under a key derived
   * from this box's current key), base64url: capability tokens that need no storage.
   */
  tag(purpose: string, text: string): string {
    return tagUnder(this.key, purpose, text);
  }

  /** The tags of `text` under every key this box knows, the current key's first: what a lookup or a check must accept. */
  tags(purpose: string, text: string): string[] {
    return this.keys.map((k) => tagUnder(k, purpose, text));
  }

  /** Whether `tag` is the tag of `text` under one of this box's keys (constant time per key). */
  tagMatches(purpose: string, text: string, tag: string): boolean {
    let ok = false;
    for (const t of this.tags(purpose, text)) ok = safeEqual(tag, t) || ok;
    return ok;
  }

  open(sealed: string): string {
    const [v, iv, tag, body] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    let failure: unknown;
    for (const key of this.keys) {
      try {
        return openUnder(key, iv, tag, body);
      } catch (err) {
        failure = err;
      }
    }
    throw failure instanceof Error ? failure : new Error('cannot open sealed secret');
  }

  /** `sealed` sealed again under the current key, or null when it already is. Throws when no key opens it. */
  reseal(sealed: string): string | null {
    const [v, iv, tag, body] = sealed.split('.');
    if (v === 'v1' && iv && tag && body !== undefined) {
      try {
        openUnder(this.key, iv, tag, body);
        return null;
      } catch {
        // sealed under an earlier key (or not at all): open below
      }
    }
    return this.seal(this.open(sealed));
  }
}

function tagUnder(key: Buffer, purpose: string, text: string): string {
  const derived = createHmac('sha256', key).update(`tag:${purpose}`).digest();
  return createHmac('sha256', derived).update(text).digest('base64url');
}

function openUnder(key: Buffer, iv: string, tag: string, body: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
