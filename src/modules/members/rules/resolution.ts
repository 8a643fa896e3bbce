/**
 * Which member a partner PUT is about (api-spec "PUT /partner/members/{externalUserId}",
 * resolution and conflicts), decided over the candidate look-ups alone. First hit
 * wins: the link of this externalUserId, then email, phone, employeeId; otherwise a
 * new member. Every other key that resolves to a different user is a conflict, and
 * so is a key that resolves to a member the app manages under another externalUserId.
 */
export type IdentityKey = 'email' | 'phone' | 'employeeId';
export type MatchedBy = 'link' | IdentityKey | 'provisioned';

export interface Candidates {
  externalUserId: string;
  /** The user linked by this app to externalUserId. */
  linked?: string;
  /** The user each key sent in the body names (absent when the key was not sent or matches nobody). */
  byKey: Partial<Record<IdentityKey, string>>;
  /** externalUserId under which this app manages a user, by user id (for the candidates). */
  linkOf: ReadonlyMap<string, string>;
}

export interface KeyConflict {
  conflictKey: IdentityKey;
  linkedExternalUserId?: string;
}

export type Resolution =
  | { kind: 'existing'; userId: string; matchedBy: Exclude<MatchedBy, 'provisioned'> }
  | { kind: 'new'; matchedBy: 'provisioned' }
  | { kind: 'conflict'; conflict: KeyConflict };

const ORDER: IdentityKey[] = ['email', 'phone', 'employeeId'];

export function resolveMember(c: Candidates): Resolution {
  let target: string | undefined = c.linked;
  let matchedBy: Exclude<MatchedBy, 'provisioned'> | undefined = c.linked ? 'link' : undefined;
  if (!target) {
    for (const key of ORDER) {
      const hit = c.byKey[key];
      if (!hit) continue;
      const managedAs = c.linkOf.get(hit);
      // The app already manages this person under another externalUserId.
      if (managedAs !== undefined && managedAs !== c.externalUserId) {
        return { kind: 'conflict', conflict: { conflictKey: key, linkedExternalUserId: managedAs } };
      }
      target = hit;
      matchedBy = key;
      break;
    }
  }
  for (const key of ORDER) {
    const hit = c.byKey[key];
    if (!hit || hit === target) continue;
    const managedAs = c.linkOf.get(hit);
    return {
      kind: 'conflict',
      conflict:
        managedAs !== undefined && managedAs !== c.externalUserId
          ? { conflictKey: key, linkedExternalUserId: managedAs }
          : { conflictKey: key },
    };
  }
  if (target && matchedBy) return { kind: 'existing', userId: target, matchedBy };
  return { kind: 'new', matchedBy: 'provisioned' };
}

/** The unit a binding names, decided over the rooms its keys match. */
export type UnitPick<R> = { kind: 'room'; room: R } | { kind: 'none' } | { kind: 'ambiguous' };

export function pickUnit<R>(rooms: readonly R[]): UnitPick<R> {
  if (rooms.length === 0) return { kind: 'none' };
  if (rooms.length > 1) return { kind: 'ambiguous' };
  return { kind: 'room', room: rooms[0]! };
}

/** A new resident of a unit owns it when nobody else lives there yet; others participate. */
export function residentRole(othersInUnit: number): 'owner' | 'participant' {
  return othersInUnit === 0 ? 'owner' : 'participant';
}
