/**
 * A short-lived, bounded, in-process cache of resolved callers (bearer token →
 * Principal), so an authenticated request does not join tokens, families, apps
 * and the app's projects on every call.
 *
 * Freshness:
 * - an entry lives at most `ttlMs` of real time (CALLER_CACHE_MS, 2 s by default);
 *   that is how long a revocation or a scope change made by another instance can
 *   go unseen here;
 * - in this instance, revoking a token family drops its entries at once, and a
 *   site apply or a membership change drops every entry;
 * - token expiry is checked on every hit, against the token's own `expiresAt`.
 *
 * An entry is keyed by the token's id and keeps the token's secret hash: a hit
 * still compares the presented secret in constant time.
 */
import { safeEqual } from '../../platform/crypto/secrets.js';
import type { Principal } from './principal.js';

export interface CachedCaller {
  principal: Principal;
  secretHash: string;
  expiresAt: number;
}

interface Entry extends CachedCaller {
  /** Real time after which the entry is resolved again. */
  until: number;
}

export class CallerCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation: a caller resolved across one is not stored. */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached caller of token `tokenId` whose secret hashes to `secretHash`, if still fresh at `now`. */
  get(tokenId: string, secretHash: string, now: number): Principal | undefined {
    const entry = this.entries.get(tokenId);
    if (!entry) return undefined;
    if (entry.until <= now || entry.expiresAt <= now) {
      this.entries.delete(tokenId);
      return undefined;
    }
    return safeEqual(entry.secretHash, secretHash) ? entry.principal : undefined;
  }

  /** Taken before resolving a caller from the store, handed back to `set`. */
  mark(): number {
    return this.generation;
  }

  set(tokenId: string, caller: CachedCaller, now: number, mark: number): void {
    // An invalidation happened while this caller was being read: it may be stale.
    if (this.ttlMs <= 0 || mark !== this.generation) return;
    this.entries.delete(tokenId);
    if (this.entries.size >= this.maxEntries) {
      // Oldest insertion first out (entries are short-lived, so insertion order is age order).
      this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(tokenId, { ...caller, until: now + this.ttlMs });
  }

  /** Drops the entries of one token family (its tokens were revoked). */
  forgetFamily(familyId: string): void {
    this.generation++;
    for (const [id, entry] of this.entries) if (entry.principal.familyId === familyId) this.entries.delete(id);
  }

  /** Drops every entry (scopes may have changed: site apply, memberships). */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
