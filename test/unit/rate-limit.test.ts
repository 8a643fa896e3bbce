import { describe, expect, it } from 'vitest';
import { addressBucket } from '../../src/platform/rate-limit.js';

describe('addressBucket: the client a per-address limit counts', () => {
  it('an IPv4 address is itself, also IPv4-mapped', () => {
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('::FFFF:203.0.113.7')).toBe('203.0.113.7');
  });

  it('an IPv6 address counts by its /64, however it is written', () => {
    const b = addressBucket('2001:db8:1:2::1');
    expect(b).toBe('2001:db8:1:2::/64');
    for (const same of ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002::abcd', '2001:DB8:1:2:0:0:0:9'])
      expect(addressBucket(same)).toBe(b);
    expect(addressBucket('2001:db8:1:3::1')).not.toBe(b);
    expect(addressBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('fe80::1:2:3:4')).toBe('fe80:0:0:0::/64');
  });

  it('anything else is left as it is', () => {
    expect(addressBucket('unknown')).toBe('unknown');
    expect(addressBucket('')).toBe('');
  });
});
