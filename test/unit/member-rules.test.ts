/** The pure rules of partner members: phone normalization, member resolution, unit role, card number. */
import { describe, expect, it } from 'vitest';
import { normalizePhone } from '../../src/modules/members/rules/phone.js';
import { pickUnit, residentRole, resolveMember } from '../../src/modules/members/rules/resolution.js';
import { cardNoOf as cardNoOfUid } from '../../src/modules/members/rules/card-codec.js';

describe('normalizePhone', () => {
  it.each([
    ['081-234-5678', '+66812345678'],
    ['081 234 5678', '+66812345678'],
    ['(081) 234.5678', '+66812345678'],
    ['66812345678', '+66812345678'],
    ['+66 81 234 5678', '+66812345678'],
    ['02-555-0101', '+6625550101'],
    ['+1 (415) 555-0100', '+14155550100'],
  ])('%s → %s', (raw, normalized) => expect(normalizePhone(raw)).toBe(normalized));
});

describe('resolveMember', () => {
  const none = new Map<string, string>();
  it('link first, then email, phone, employeeId; else provisioned', () => {
    expect(resolveMember({ externalUserId: 'x', linked: 'u1', byKey: { email: 'u1' }, linkOf: new Map([['u1', 'x']]) })).toEqual({
      kind: 'existing',
      userId: 'u1',
      matchedBy: 'link',
    });
    expect(resolveMember({ externalUserId: 'x', byKey: { email: 'u2', phone: 'u2' }, linkOf: none })).toEqual({
      kind: 'existing',
      userId: 'u2',
      matchedBy: 'email',
    });
    expect(resolveMember({ externalUserId: 'x', byKey: { phone: 'u3' }, linkOf: none })).toEqual({
      kind: 'existing',
      userId: 'u3',
      matchedBy: 'phone',
    });
    expect(resolveMember({ externalUserId: 'x', byKey: { employeeId: 'u4' }, linkOf: none })).toEqual({
      kind: 'existing',
      userId: 'u4',
      matchedBy: 'employeeId',
    });
    expect(resolveMember({ externalUserId: 'x', byKey: {}, linkOf: none })).toEqual({ kind: 'new', matchedBy: 'provisioned' });
  });
  it('conflicts: another member than the linked one, two people, a member managed under another id', () => {
    expect(resolveMember({ externalUserId: 'x', linked: 'u1', byKey: { phone: 'u2' }, linkOf: none })).toEqual({
      kind: 'conflict',
      conflict: { conflictKey: 'phone' },
    });
    expect(resolveMember({ externalUserId: 'x', byKey: { email: 'u1', employeeId: 'u2' }, linkOf: none })).toEqual({
      kind: 'conflict',
      conflict: { conflictKey: 'employeeId' },
    });
    expect(resolveMember({ externalUserId: 'x', byKey: { email: 'u1' }, linkOf: new Map([['u1', 'y']]) })).toEqual({
      kind: 'conflict',
      conflict: { conflictKey: 'email', linkedExternalUserId: 'y' },
    });
    expect(resolveMember({ externalUserId: 'x', linked: 'u1', byKey: { employeeId: 'u2' }, linkOf: new Map([['u2', 'z']]) })).toEqual({
      kind: 'conflict',
      conflict: { conflictKey: 'employeeId', linkedExternalUserId: 'z' },
    });
  });
});

describe('units and cards', () => {
  it('picks one room, none or ambiguous; first resident owns', () => {
    expect(pickUnit([])).toEqual({ kind: 'none' });
    expect(pickUnit(['a'])).toEqual({ kind: 'room', room: 'a' });
    expect(pickUnit(['a', 'b'])).toEqual({ kind: 'ambiguous' });
    expect(residentRole(0)).toBe('owner');
    expect(residentRole(2)).toBe('participant');
  });
  it('cardNo is the decimal-reversed UID, 10 digits', () => {
    expect(cardNoOfUid('04A32B1C')).toBe('0472621828');
    expect(cardNoOfUid('00000001')).toBe('0016777216');
  });
});
