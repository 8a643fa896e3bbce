/** The private-asset rule (booking/rules/private-access.ts), shared by API bookings and calendar invitations. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mayBookPrivately } from '../../src/modules/booking/rules/private-access.js';

describe('mayBookPrivately', () => {
  it('lets anyone book a public asset', () => {
    expect(mayBookPrivately({ assetIsPublic: true, membership: null, brandStaff: false })).toBe(true);
  });

  it('on a private asset: members, brand staff and apps with a role; not visitors or strangers', () => {
    const priv = { assetIsPublic: false, brandStaff: false };
    expect(mayBookPrivately({ ...priv, membership: 'member' })).toBe(true);
    expect(mayBookPrivately({ ...priv, membership: 'visitor' })).toBe(false);
    expect(mayBookPrivately({ ...priv, membership: null })).toBe(false);
    expect(mayBookPrivately({ ...priv, membership: 'visitor', brandStaff: true })).toBe(true);
    expect(mayBookPrivately({ ...priv, membership: null, appHasRole: true })).toBe(true);
    expect(mayBookPrivately({ ...priv, membership: 'visitor', appHasRole: false })).toBe(false);
  });

  it('is exactly "public, or any one of the grounds"', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.constantFrom('member', 'visitor', null), fc.boolean(), fc.boolean(), (pub, membership, staff, role) => {
        const expected = pub || membership === 'member' || staff || role;
        expect(
          mayBookPrivately({
            assetIsPublic: pub,
            membership: membership as 'member' | 'visitor' | null,
            brandStaff: staff,
            appHasRole: role,
          }),
        ).toBe(expected);
      }),
    );
  });
});
