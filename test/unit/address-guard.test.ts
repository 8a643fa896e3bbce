/**
 * The SSRF guard's pure address classification (platform/net/address-guard.ts)
 * and the URL guard's decisions with an injected resolver (no real DNS).
 */
import { describe, expect, it } from 'vitest';
import { blockedAddressClass, embeddedIPv4, embeddedIPv4s } from '../../src/platform/net/address-guard.js';
import { UrlGuard, type ResolvedAddress } from '../../src/platform/net/url-guard.js';

describe('blockedAddressClass', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd00::', 'unique-local'],
    ['fdff:ffff::1', 'unique-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['2001:db8::1', 'reserved'],
    // IPv4-mapped and NAT64 forms of refused IPv4 addresses, dotted and hex
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:100.64.0.1', 'shared (CGNAT)'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['[::1]', 'loopback'],
    // IPv4-translated, 6to4, Teredo (client inverted) and local-use NAT64 (issue 23)
    ['::ffff:0:7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:a00:1:1::5', 'private'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['2001:0:4136:e378::f5ff:fffe', 'private'],
    ['2001:0:7f00:1::1', 'loopback'],
    ['64:ff9b:1::a00:1', 'reserved'],
    ['64:ff9b:1:ffff::808:808', 'reserved'],
    ['not-an-address', 'reserved'],
  ];
  it.each(refused)('%s is refused as %s', (address, cls) => {
    expect(blockedAddressClass(address)).toBe(cls);
  });

  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '2001:4860::1',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
    '64:ff9b::808:808',
  ];
  it.each(allowed)('%s is public', (address) => {
    expect(blockedAddressClass(address)).toBeNull();
  });

  it('reads the IPv4 address embedded in mapped, compatible and NAT64 IPv6 forms only', () => {
    expect(embeddedIPv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIPv4('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(embeddedIPv4('64:ff9b::0a00:0001')).toBe('10.0.0.1');
    expect(embeddedIPv4('::1')).toBeNull();
    expect(embeddedIPv4('::')).toBeNull();
    expect(embeddedIPv4('2001:db8::1')).toBeNull();
    expect(embeddedIPv4('10.0.0.1')).toBeNull();
    expect(embeddedIPv4s('2002:7f00:1::')).toEqual(['127.0.0.1']);
    expect(embeddedIPv4s('::ffff:0:a00:1')).toEqual(['10.0.0.1']);
    // Teredo: the server, then the client (its bits inverted).
    expect(embeddedIPv4s('2001:0:4136:e378:8000:63bf:80ff:fffe')).toEqual(['65.54.227.120', '127.0.0.1']);
    expect(embeddedIPv4s('2001:4860::1')).toEqual([]);
  });
});

describe('UrlGuard', () => {
  const dns: Record<string, ResolvedAddress[]> = {
    'public.example': [{ address: '93.184.215.14', family: 4 }],
    'mixed.example': [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ],
    'v6local.example': [{ address: 'fd00::1', family: 6 }],
  };
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const found = dns[host];
    if (!found) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  const prod = new UrlGuard({ enforce: true, resolve });
  const dev = new UrlGuard({ enforce: false, resolve });

  it('production: https and public addresses only, literal addresses checked without DNS', async () => {
    asked.length = 0;
    expect(await prod.checkUrl('https://public.example/hook')).toBeNull();
    expect(await prod.checkUrl('http://public.example/hook')).toBe('must use https in production');
    expect(await prod.checkUrl('https://127.0.0.1/hook')).toMatch(/127\.0\.0\.1, a loopback address/);
    expect(await prod.checkUrl('https://[::ffff:169.254.169.254]/')).toMatch(/link-local/);
    expect(await prod.checkUrl('https://localhost:8443/')).toMatch(/loopback/);
    expect(await prod.checkUrl('https://mixed.example/')).toMatch(/private address .*10\.0\.0\.7/);
    expect(await prod.checkUrl('https://v6local.example/')).toMatch(/unique-local address .*fd00::1/);
    // A name that does not resolve publicly is refused (it was accepted before issue 23).
    expect(await prod.checkUrl('https://later.example/')).toBe('must resolve to a public address (later.example does not resolve)');
    expect(asked).toEqual(['public.example', 'mixed.example', 'v6local.example', 'later.example']);
  });

  it('production: local and metadata names are refused without DNS, in any spelling', async () => {
    asked.length = 0;
    for (const url of [
      'https://localhost./',
      'https://LOCALHOST/',
      'https://ip6-localhost/',
      'https://ip6-loopback/',
      'https://app.localhost/',
    ]) {
      expect(await prod.checkUrl(url), url).toMatch(/a loopback name, in production$/);
    }
    for (const url of ['https://metadata/', 'https://metadata.google.internal./', 'https://Metadata.Google.Internal/']) {
      expect(await prod.checkUrl(url), url).toMatch(/a cloud metadata name/);
    }
    expect(await prod.checkUrl('https://intranet/')).toMatch(/single-label/);
    expect(await prod.checkUrl('https://printer.local/')).toMatch(/local to a network/);
    expect(await prod.checkUrl('https://db.corp.internal/')).toMatch(/local to a network/);
    expect(await prod.checkUrl('https://[2002:7f00:1::]/')).toMatch(/loopback address/);
    expect(asked).toEqual([]);
  });

  it('uat: the same guard, loopback allowed (over http too) only with allowLoopback', async () => {
    const uat = new UrlGuard({ enforce: true, resolve, environment: 'uat' });
    const uatLoop = new UrlGuard({ enforce: true, resolve, environment: 'uat', allowLoopback: true });
    expect(await uat.checkUrl('http://127.0.0.1:8080/')).toBe('must use https in uat');
    expect(await uat.checkUrl('https://127.0.0.1:8080/')).toBe('must not be 127.0.0.1, a loopback address, in uat');
    expect(await uatLoop.checkUrl('http://127.0.0.1:8080/')).toBeNull();
    expect(await uatLoop.checkUrl('http://[::1]:8080/')).toBeNull();
    expect(await uatLoop.checkUrl('http://localhost:8080/')).toBeNull();
    expect(await uatLoop.checkUrl('https://10.0.0.1/')).toMatch(/private address, in uat/);
    expect(await uatLoop.checkUrl('http://public.example/')).toBe('must use https in uat');
    expect(await uatLoop.checkUrl('https://mixed.example/')).toMatch(/private address in uat/);
  });

  it('development allows everything and resolves nothing', async () => {
    asked.length = 0;
    expect(await dev.checkUrl('http://127.0.0.1:8080/hook')).toBeNull();
    expect(await dev.checkUrl('http://mixed.example/')).toBeNull();
    expect(dev.lookup).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('the connect-time lookup refuses a host with any refused address, and passes public ones on', async () => {
    const lookup = prod.lookup!;
    const call = (host: string, options: { all?: boolean; family?: number } = {}) =>
      new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((done) =>
        lookup(
          host,
          options as never,
          ((err: NodeJS.ErrnoException | null, address: unknown, family?: number) => done({ err, address, family })) as never,
        ),
      );
    const ok = await call('public.example');
    expect(ok).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    const all = await call('public.example', { all: true });
    expect(all.address).toEqual([{ address: '93.184.215.14', family: 4 }]);
    const refused = await call('mixed.example');
    expect(refused.err?.code).toBe('EADDRBLOCKED');
    expect(refused.err?.message).toMatch(/^refused before connecting: the URL must not resolve to a private address/);
    expect((await call('nowhere.example')).err?.code).toBe('ENOTFOUND');
  });
});
