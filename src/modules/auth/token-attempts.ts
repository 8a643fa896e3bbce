/**
 * Brute-force guard of the token endpoint: failed app_secret attempts are counted
 * per app_id and per client address in fixed windows shared by every instance
 * (platform/rate-limit.ts, real time). Once either count reaches its limit, every
 * grant presenting an app_secret for that app, or from that address, answers 429
 * KS036 with Retry-After until the window ends, even with the right secret (an
 * attacker who hits the right secret while locked learns nothing).
 */
import { errors, ServiceError } from '../../platform/errors.js';
import type { RateLimiter } from '../../platform/rate-limit.js';

export class LockedOut extends ServiceError {
  constructor(retryAfterSeconds: number) {
    super(429, 'KS036', 'Too many failed app_secret attempts; retry after the Retry-After seconds', undefined, retryAfterSeconds);
  }
}

export class TokenAttempts {
  constructor(
    private readonly perApp: RateLimiter,
    private readonly perAddress: RateLimiter,
  ) {}

  /** Throws LockedOut when the app or the address has used up its failures in this window. */
  async check(appId: string, address: string): Promise<void> {
    const [app, addr] = await store(() => Promise.all([this.perApp.peek(appKey(appId)), this.perAddress.peek(addressKey(address))]));
    const locked = [app, addr].filter((d) => !d.allowed);
    if (locked.length) throw new LockedOut(Math.max(...locked.map((d) => d.retryAfterSeconds)));
  }

  /** Counts one failed attempt against the app and the address. */
  async failed(appId: string, address: string): Promise<void> {
    await store(() => Promise.all([this.perApp.hit(appKey(appId)), this.perAddress.hit(addressKey(address))]));
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

const appKey = (appId: string) => `token-fail:app:${appId}`;
const addressKey = (address: string) => `token-fail:addr:${address}`;

/** Whether `err` is the token endpoint's refusal of an app_id/app_secret pair (401 KS002). */
export function isBadCredentials(err: unknown): boolean {
  return err instanceof ServiceError && err.status === 401 && err.code === 'KS002';
}
