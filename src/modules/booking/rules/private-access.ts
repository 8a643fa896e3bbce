/**
 * Who may book a private asset (isPublic false): an active member of its project who is not a visitor,
 * the brand's staff, or an app with a role on the project. The one rule the API and calendar sync apply.
 */
export interface PrivateAccessFacts {
  /** The asset is public: anyone who may book in the project may book it. */
  assetIsPublic: boolean;
  /** The organizer's membership of the asset's project, when active ('visitor' or 'member'). */
  membership: 'member' | 'visitor' | null;
  /** The organizer is staff of the project's brand. */
  brandStaff: boolean;
  /** The calling app holds a role on the project (API bookings only). */
  appHasRole?: boolean;
}

export function mayBookPrivately(f: PrivateAccessFacts): boolean {
  return f.assetIsPublic || f.appHasRole === true || f.membership === 'member' || f.brandStaff;
}
