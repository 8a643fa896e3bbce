/**
 * Which IP addresses a server-side connection (a webhook delivery) may reach in
 * production. Pure: classifies an address text; no DNS, no I/O.
 *
 * Refused: loopback, private (RFC 1918), link-local (incl. the cloud metadata
 * address 169.254.169.254), unique-local IPv6, CGNAT (100.64/10), unspecified,
 * multicast, broadcast and other reserved ranges (also the local-use NAT64 prefix
 * 64:ff9b:1::/48), and every IPv6 form that carries a refused IPv4 address:
 * IPv4-mapped, -compatible and -translated, NAT64 64:ff9b::/96, 6to4 (2002::/16)
 * and Teredo (2001::/32, server and client). CIDR matching uses node's net.BlockList.
 */
import { BlockList, isIP } from 'node:net';

/** The class a refused address falls in (named in refusals). */
export type AddressClass =
  'loopback' | 'private' | 'link-local' | 'unique-local' | 'shared (CGNAT)' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved';

const RANGES: [AddressClass, 'ipv4' | 'ipv6', string, number][] = [
  ['broadcast', 'ipv4', '255.255.255.255', 32],
  ['unspecified', 'ipv4', '0.0.0.0', 8],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['link-local', 'ipv4', '169.254.0.0', 16],
  ['shared (CGNAT)', 'ipv4', '100.64.0.0', 10],
  ['reserved', 'ipv4', '192.0.0.0', 24],
  ['reserved', 'ipv4', '192.0.2.0', 24],
  ['reserved', 'ipv4', '198.18.0.0', 15],
  ['reserved', 'ipv4', '198.51.100.0', 24],
  ['reserved', 'ipv4', '203.0.113.0', 24],
  ['multicast', 'ipv4', '224.0.0.0', 4],
  ['reserved', 'ipv4', '240.0.0.0', 4],
  ['unspecified', 'ipv6', '::', 128],
  ['loopback', 'ipv6', '::1', 128],
  ['link-local', 'ipv6', 'fe80::', 10],
  ['unique-local', 'ipv6', 'fc00::', 7],
  ['multicast', 'ipv6', 'ff00::', 8],
  ['reserved', 'ipv6', '2001:db8::', 32],
  ['reserved', 'ipv6', '100::', 64],
  // Local-use NAT64 (RFC 8215): a translator inside the network, not globally reachable.
  ['reserved', 'ipv6', '64:ff9b:1::', 48],
  // Deprecated site-local.
  ['private', 'ipv6', 'fec0::', 10],
];

const LISTS = new Map<AddressClass, BlockList>();
for (const [cls, family, net, prefix] of RANGES) {
  let list = LISTS.get(cls);
  if (!list) LISTS.set(cls, (list = new BlockList()));
  list.addSubnet(net, prefix, family);
}

/**
 * The IPv4 addresses an IPv6 address carries: IPv4-mapped ::ffff:a.b.c.d,
 * -compatible ::a.b.c.d, -translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002:AABB:CCDD::/48 (the relay reaches AABBCCDD), and Teredo 2001:0::/32 (the
 * server in the next 32 bits, the client in the last 32, inverted). Empty when none.
 */
export function embeddedIPv4s(v6: string): string[] {
  const words = ipv6Words(v6);
  if (!words) return [];
  const [a, b, c, d, e, f, g, h] = words as [number, number, number, number, number, number, number, number];
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && (f === 0xffff || f === 0)) {
    // ::ffff:x (mapped) or ::x (compatible; :: and ::1 themselves are IPv6 classes)
    if (f === 0 && g === 0) return [];
    return [v4(g, h)];
  }
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0xffff && f === 0) return [v4(g, h)]; // ::ffff:0:x (translated)
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return [v4(g, h)];
  if (a === 0x2002) return [v4(b, c)];
  if (a === 0x2001 && b === 0) return [v4(c, d), v4(g ^ 0xffff, h ^ 0xffff)];
  return [];
}

/** The first IPv4 address an IPv6 address carries (embeddedIPv4s), if any. */
export function embeddedIPv4(v6: string): string | null {
  return embeddedIPv4s(v6)[0] ?? null;
}

/** Eight 16-bit words of an IPv6 address text (brackets and a zone allowed), or null when it is not one. */
export function ipv6Words(text: string): number[] | null {
  let s = text.replace(/^\[|\]$/g, '').split('%')[0]!;
  if (isIP(s) !== 6) return null;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [p, q, r, t] = dotted.slice(1).map(Number) as [number, number, number, number];
    s = s.slice(0, dotted.index) + `${((p << 8) | q).toString(16)}:${((r << 8) | t).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = tail === undefined ? 0 : 8 - h.length - t.length;
  const words = [...h, ...Array<string>(zeros).fill('0'), ...t].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

/**
 * The class of a refused address, or null when it is a public address a
 * production service may connect to. Throws nothing: text that is not an IP
 * address is `reserved` (refused).
 */
export function blockedAddressClass(address: string): AddressClass | null {
  const text = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const family = isIP(text);
  if (family === 0) return 'reserved';
  if (family === 6) {
    const carried = embeddedIPv4s(text);
    for (const v4 of carried) {
      const cls = blockedAddressClass(v4);
      if (cls) return cls;
    }
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [cls, list] of LISTS) if (list.check(text, type)) return cls;
  return null;
}
