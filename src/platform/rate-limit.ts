/**
 * Fixed-window request limits shared by all instances: each key may make `limit`
 * requests per window of `windowMs` (windows aligned to the epoch, counted on the
 * real clock, never the sandbox clock). A refused request is answered 429 KS036
 * with the seconds until the window ends.
 */
import type { Clock } from './clock/clock.js';
import type { RateLimitRepository } from './db/rate-limit-repository.js';
import { ipv6Words } from './net/address-guard.js';

export interface RateDecision {
  allowed: boolean;
  count: number;
  /** Whole seconds until the current window ends (at least 1). */
  retryAfterSeconds: number;
}

export class RateLimiter {
  constructor(
    private readonly repo: RateLimitRepository,
    private readonly realClock: Clock,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Whether the key has used up its window already (nothing counted). */
  async peek(key: string): Promise<RateDecision> {
    const now = this.realClock.now();
    const windowStart = now - (now % this.windowMs);
    const count = await this.repo.count(key, windowStart);
    return {
      allowed: count < this.limit,
      count,
      retryAfterSeconds: Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000)),
    };
  }

  async hit(key: string): Promise<RateDecision> {
    const now = this.realClock.now();
    const windowStart = now - (now % this.windowMs);
    const count = await this.repo.hit(key, windowStart);
    // The first request of a window clears the key's old windows (lazy purge).
    if (count === 1) await this.repo.purgeBefore(key, windowStart);
    return {
      allowed: count <= this.limit,
      count,
      retryAfterSeconds: Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000)),
    };
  }
}

/**
 * The client a per-address limit counts: an IPv4 address as it is (also when
 * IPv4-mapped, `::ffff:a.b.c.d`), an IPv6 address by its /64 prefix, since one
 * client commonly holds a whole /64 and could otherwise take a fresh address per try.
 */
export function addressBucket(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const words = ipv6Words(ip);
  if (!words) return ip;
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}
