/**
 * Who is calling. Every authenticated route receives one Principal, resolved from
 * the bearer token by the authentication layer.
 *
 * - kind `app`: a plain app_credentials token. Its scope is the app's projects;
 *   its permissions are the app's project roles.
 * - kind `member`: a delegated (act_as) token. The member acts through the app, and
 *   the authority is the intersection of the member's scope and the app's scope.
 */
export const ALL_PERMISSIONS = '*';

export interface ProjectScope {
  /** Permission names held on the project; contains ALL_PERMISSIONS for admins. */
  permissions: ReadonlySet<string>;
  /** The app holds a role on the project (not just visibility). */
  hasRole: boolean;
  /**
   * May book (and see) the project's private assets: an app with a role on the
   * project, or a member of the project (not a visitor), or brand staff.
   */
  canBookPrivate: boolean;
}

export interface Principal {
  kind: 'app' | 'member';
  grant: 'app_credentials' | 'act_as';
  appId: string;
  clientId: string;
  userId: string | null;
  tokenId: string;
  familyId: string;
  /** The user the app books as with its own token; null until the app's first booking. */
  appServiceUserId: string | null;
  projects: ReadonlyMap<string, ProjectScope>;
}

export function inProjectScope(p: Principal, projectId: string): boolean {
  return p.projects.has(projectId);
}

export function hasPermission(p: Principal, projectId: string, permission: string): boolean {
  const scope = p.projects.get(projectId);
  if (!scope) return false;
  return scope.permissions.has(ALL_PERMISSIONS) || scope.permissions.has(permission);
}

/** Intersection of two permission sets where ALL_PERMISSIONS stands for every permission. */
export function intersectPermissions(a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> {
  if (a.has(ALL_PERMISSIONS)) return new Set(b);
  if (b.has(ALL_PERMISSIONS)) return new Set(a);
  return new Set([...a].filter((x) => b.has(x)));
}
