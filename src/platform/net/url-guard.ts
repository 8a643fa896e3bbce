/**
 * The SSRF guard of addresses the service connects to on someone else's behalf
 * (webhook listeners). In production and uat (`enforce`) such a URL must be https
 * and every address its host resolves to must be public (address-guard.ts, which
 * also unwraps IPv4 carried in IPv6 forms):
 *
 * - at registration (`checkUrl`): a literal IP is classified without DNS; a host
 *   name is normalized (case, trailing dot), refused outright when it is a local
 *   name (localhost, ip6-localhost, metadata, single-label names, .local,
 *   .internal, …), else resolved (never connected to). A name that does not
 *   resolve, or resolves to any non-public address, is refused.
 * - at connect time (`checkTarget` for the URL, `lookup` as the HTTP request's
 *   lookup function): every address the name resolves to at that moment is
 *   checked before any connection is opened, so a name re-pointed at an internal
 *   address after registration (DNS rebinding) is refused.
 *
 * development allows everything (receivers on localhost are normal there). With
 * `allowLoopback` (uat with WEBHOOK_ALLOW_LOOPBACK=1) loopback addresses and
 * localhost names are allowed, over http too; nothing else changes.
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
  /** Refuse non-https and non-public addresses (production and uat). */
  enforce: boolean;
  /** Allow loopback addresses and localhost names, over http too (uat: WEBHOOK_ALLOW_LOOPBACK=1). */
  allowLoopback?: boolean;
  /** The environment named in refusals (default production). */
  environment?: string;
  resolve?: Resolver;
}

/** Names that only ever mean this machine. */
const LOOPBACK_NAMES = new Set(['localhost', 'ip6-localhost', 'ip6-loopback', 'localhost.localdomain']);
/** Names of cloud metadata services. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);
/** Suffixes of names that resolve only inside a network (RFC 6761, RFC 8375, ICANN's .internal). */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.localdomain', '.home.arpa', '.internal', '.intranet', '.lan'];

/** A host name as DNS compares it: lower case, without the trailing root dot(s). */
export function normalizeHostname(host: string): string {
  return host.toLowerCase().replace(/\.+$/, '');
}

/** Why a host name is refused without resolving it (a local or metadata name), or null. */
export function localNameReason(hostname: string): { loopback: boolean; reason: string } | null {
  const host = normalizeHostname(hostname);
  if (LOOPBACK_NAMES.has(host) || host.endsWith('.localhost'))
    return { loopback: true, reason: `must not be ${hostname}, a loopback name` };
  if (METADATA_NAMES.has(host)) return { loopback: false, reason: `must not be ${hostname}, a cloud metadata name` };
  if (!host.includes('.'))
    return { loopback: false, reason: `must not be ${hostname}, a single-label (local) name; use a fully qualified public name` };
  if (LOCAL_SUFFIXES.some((s) => host.endsWith(s)))
    return { loopback: false, reason: `must not be ${hostname}, a name local to a network` };
  return null;
}

export class UrlGuard {
  readonly enforce: boolean;
  readonly allowLoopback: boolean;
  private readonly where: string;
  /** Replaceable (tests inject a resolver); read on every lookup. */
  resolve: Resolver;

  constructor(options: UrlGuardOptions) {
    this.enforce = options.enforce;
    this.allowLoopback = options.allowLoopback ?? false;
    this.where = `in ${options.environment ?? 'production'}`;
    this.resolve = options.resolve ?? systemResolver;
  }

  /** Why `url` may not be registered, or null. Never connects; may resolve the host name. */
  async checkUrl(url: string): Promise<string | null> {
    const target = this.checkTarget(url);
    if (target.refused) return target.refused;
    // A literal address is already classified; an allowed loopback name is resolved at connect time.
    if (!this.enforce || target.literal || (this.allowLoopback && localNameReason(target.host)?.loopback)) return null;
    let addresses: ResolvedAddress[];
    try {
      addresses = await withTimeout(this.resolve(target.host), REGISTRATION_LOOKUP_MS);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) return `must resolve to a public address (${target.host} does not resolve)`;
    return refusal(target.host, addresses, this.allowLoopback, this.where);
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
    const cls = literal ? blockedAddressClass(host) : null;
    const local = literal ? null : localNameReason(host);
    const loopbackAllowed = this.allowLoopback && (literal ? cls === 'loopback' : local?.loopback === true);
    if (u.protocol !== 'https:' && !loopbackAllowed) return { host, literal, refused: `must use https ${this.where}` };
    if (loopbackAllowed) return { host, literal, refused: null };
    if (literal) return { host, literal, refused: cls ? `must not be ${host}, a ${cls} address, ${this.where}` : null };
    if (local) return { host, literal, refused: `${local.reason}, ${this.where}` };
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
        const reason = refusal(hostname, all, this.allowLoopback, this.where);
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
function refusal(host: string, addresses: ResolvedAddress[], allowLoopback: boolean, where: string): string | null {
  for (const a of addresses) {
    const cls = blockedAddressClass(a.address);
    if (cls && !(allowLoopback && cls === 'loopback'))
      return `must not resolve to a ${cls} address ${where} (${host} resolves to ${a.address})`;
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
