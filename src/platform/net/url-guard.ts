/**
 * The SSRF guard of addresses the service connects to on someone else's behalf
 * (webhook listeners). In production (`enforce`) such a URL must be https and
 * every address its host resolves to must be public (address-guard.ts):
 *
 * - at registration (`checkUrl`): a literal IP is classified without DNS; a host
 *   name is resolved (never connected to). A name that does not resolve now is
 *   accepted (the receiver may not be deployed yet): the connect-time check still
 *   guards it.
 * - at connect time (`checkTarget` for the URL, `lookup` as the HTTP request's
 *   lookup function): every address the name resolves to at that moment is
 *   checked before any connection is opened, so a name re-pointed at an internal
 *   address after registration (DNS rebinding) is refused.
 *
 * development and uat allow everything (receivers on localhost are normal there).
 * The DNS resolver is injectable (`resolve`), so tests never do real DNS.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { blockedAddressClass } from './address-guard.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (dns.lookup with `all: true` by default). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** How long a registration-time lookup may take before the name counts as not resolving (it is checked again at connect time). */
const REGISTRATION_LOOKUP_MS = 3_000;

/** A refusal of the guard (its message names the host, the address and its class). */
export class BlockedAddressError extends Error {
  readonly code = 'EADDRBLOCKED';
}

export interface UrlGuardOptions {
  /** Refuse non-https and non-public addresses (production). */
  enforce: boolean;
  resolve?: Resolver;
}

export class UrlGuard {
  readonly enforce: boolean;
  /** Replaceable (tests inject a resolver); read on every lookup. */
  resolve: Resolver;

  constructor(options: UrlGuardOptions) {
    this.enforce = options.enforce;
    this.resolve = options.resolve ?? systemResolver;
  }

  /** Why `url` may not be registered, or null. Never connects; may resolve the host name. */
  async checkUrl(url: string): Promise<string | null> {
    const target = this.checkTarget(url);
    if (target.refused) return target.refused;
    if (!this.enforce || target.literal) return null;
    let addresses: ResolvedAddress[];
    try {
      addresses = await withTimeout(this.resolve(target.host), REGISTRATION_LOOKUP_MS);
    } catch {
      return null; // not resolvable now: checked again when connecting
    }
    return refusal(target.host, addresses);
  }

  /**
   * The connect-time check of the URL itself (scheme, and a literal IP address,
   * which the HTTP stack connects to without a lookup). `refused` is the reason,
   * `literal` whether the host is an IP address.
   */
  checkTarget(url: string): { host: string; literal: boolean; refused: string | null } {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return { host: '', literal: false, refused: 'is not a valid URL' };
    }
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const literal = isIP(host) !== 0;
    if (!this.enforce) return { host, literal, refused: null };
    if (u.protocol !== 'https:') return { host, literal, refused: 'must use https in production' };
    if (literal) {
      const cls = blockedAddressClass(host);
      return { host, literal, refused: cls ? `must not be ${host}, a ${cls} address, in production` : null };
    }
    if (host === 'localhost' || host.endsWith('.localhost')) return { host, literal, refused: `must not be ${host}, a loopback name, in production` };
    return { host, literal, refused: null };
  }

  /**
   * A `lookup` for node:http/https requests (and agents): resolves with the
   * injected resolver and fails the connection, before it is opened, when any
   * address is refused. Undefined when the guard does not enforce (node's own
   * lookup is used).
   */
  get lookup(): LookupFunction | undefined {
    if (!this.enforce) return undefined;
    return this.connectLookup;
  }

  private readonly connectLookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname).then(
      (all) => {
        const f = options.family as number | string | undefined;
        const family = f === 4 || f === 'IPv4' ? 4 : f === 6 || f === 'IPv6' ? 6 : 0;
        const usable = family ? all.filter((a) => a.family === family) : all;
        const reason = refusal(hostname, all);
        if (reason) return callback(new BlockedAddressError(`refused before connecting: the URL ${reason}`), '', 0);
        if (usable.length === 0) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
          return callback(err, '', 0);
        }
        if (options.all) return (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, usable);
        callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** Why connecting to `host` at these addresses is refused (any refused address refuses the host), or null. */
function refusal(host: string, addresses: ResolvedAddress[]): string | null {
  for (const a of addresses) {
    const cls = blockedAddressClass(a.address);
    if (cls) return `must not resolve to a ${cls} address in production (${host} resolves to ${a.address})`;
  }
  return null;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('lookup timed out')), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
