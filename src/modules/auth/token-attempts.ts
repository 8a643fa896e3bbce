/**
 * Brute-force guard of the token endpoint: failed app_secret attempts are counted
 * per (app_id, client address) and per client address, in fixed windows shared by
 * every instance (platform/rate-limit.ts, real time). Once a count reaches its
 * limit, that address answers 429 KS036 with Retry-After for that app (or, past the
 * per-address limit, for every app) until the window ends, even with the right
 * secret: an attacker who hits the right secret while limited learns nothing.
 *
 * An IPv6 client counts by its /64 (addressBucket). There is no lock per app alone: failures from one address never refuse the right
 * secret from another, so knowing an app_id is not enough to lock its owner out.
 * Guessing from many addresses is bounded per address, and app secrets are at least
 * 32 characters, stored as scrypt hashes.
 */
import { errors, ServiceError } from '../../platform/errors.js';
import { addressBucket, type RateLimiter } from '../../platform/rate-limit.js';
import { sha256Hex } from '../../platform/crypto/secrets.js';

export class LockedOut extends ServiceError {
  constructor(retryAfterSeconds: number) {
    super(429, 'KS036', 'Too many failed app_secret attempts; retry after the Retry-After seconds', undefined, retryAfterSeconds);
  }
}

export class TokenAttempts {
  constructor(
    private readonly perAppAddress: RateLimiter,
    private readonly perAddress: RateLimiter,
  ) {}

  /** Throws LockedOut when this address has used up its failures for the app, or for all apps, in this window. */
  async check(appId: string, address: string): Promise<void> {
    const decisions = await store(() =>
      Promise.all([this.perAppAddress.peek(pairKey(appId, address)), this.perAddress.peek(addressKey(address))]),
    );
    const locked = decisions.filter((d) => !d.allowed);
    if (locked.length) throw new LockedOut(Math.max(...locked.map((d) => d.retryAfterSeconds)));
  }

  /** Counts one failed attempt against the (app, address) pair and the address. */
  async failed(appId: string, address: string): Promise<void> {
    await store(() => Promise.all([this.perAppAddress.hit(pairKey(appId, address)), this.perAddress.hit(addressKey(address))]));
  }
}

/** The counters live in the database: when it cannot be reached the grant is not decided (503 KS234), never let through uncounted. */
async function store<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    throw errors.authUnavailable();
  }
}

// The app_id is hashed into the key: any string may be presented, the key stays short.
const pairKey = (appId: string, address: string) => `token-fail:app-addr:${sha256Hex(appId).slice(0, 32)}:${addressBucket(address)}`;
const addressKey = (address: string) => `token-fail:addr:${addressBucket(address)}`;

/** Whether `err` is the token endpoint's refusal of an app_id/app_secret pair (401 KS002). */
export function isBadCredentials(err: unknown): boolean {
  return err instanceof ServiceError && err.status === 401 && err.code === 'KS002';
}
