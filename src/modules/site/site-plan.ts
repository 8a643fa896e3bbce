/**
 * Turns a site document plus what is already stored into a write plan: assigns
 * ids (stored by key, else new), resolves every key reference, derives parent
 * columns, and collects every problem (one message each) instead of stopping.
 */
import { DateTime, IANAZone } from 'luxon';
import { newId } from '../../platform/ids.js';
import { flatMapPaced, pacer } from './pace.js';
import type { AppRelations, Row } from './site-repository.js';
import type { StoredSite } from './site-context.js';
import {
  SECTIONS,
  type AccessGroupDoc,
  type AppDoc,
  type BrandDoc,
  type DeskDoc,
  type DeviceDoc,
  type FloorDoc,
  type ProjectDoc,
  type PromoCodeDoc,
  type RoomDoc,
  type Section,
  type SiteDocument,
  type UserDoc,
  type WebhookDoc,
  type ZoneDoc,
} from '../../contract/site-document.js';

export interface Entry<D, R> {
  doc: D;
  id: string;
  /** The stored row this entry updates; undefined when it is inserted. */
  stored: R | undefined;
}

export interface AssetParents {
  floorId: string;
  zoneId: string;
  projectId: string;
  brandId: string;
}

export interface PlannedMembership {
  projectId: string;
  role: 'member' | 'admin';
  employeeId: string | undefined;
  stored: Row<'memberships'> | undefined;
}

export interface PlannedApp extends Entry<AppDoc, Row<'apps'>> {
  projects: { projectId: string; permissions: string[] | null }[];
  links: { userId: string; externalUserId: string }[];
  accessGroupIds: string[];
}

export interface SitePlan {
  brands: Entry<BrandDoc, Row<'brands'>>[];
  projects: (Entry<ProjectDoc, Row<'projects'>> & { brandId: string })[];
  zones: (Entry<ZoneDoc, Row<'zones'>> & { projectId: string })[];
  floors: (Entry<FloorDoc, Row<'floors'>> & { zoneId: string; projectId: string })[];
  rooms: (Entry<RoomDoc, Row<'rooms'>> & AssetParents)[];
  desks: (Entry<DeskDoc, Row<'desks'>> & AssetParents & { index: number })[];
  users: (Entry<UserDoc, Row<'users'>> & { brandStaff: string[]; memberships: PlannedMembership[] })[];
  accessGroups: (Entry<AccessGroupDoc, Row<'access_groups'>> & { projectId: string; devices: Entry<DeviceDoc, Row<'devices'>>[] })[];
  apps: PlannedApp[];
  webhooks: (Entry<WebhookDoc, Row<'webhooks'>> & { projectId: string })[];
  /** Validity instants in epoch ms (null = open). */
  promoCodes: (Entry<PromoCodeDoc, Row<'promo_codes'>> & { projectId: string; validFrom: number | null; validUntil: number | null })[];
  /** Every key of the document to its id (the first section wins when kinds share a key). */
  ids: Record<string, string>;
  idsByKind: Record<Section, Record<string, string>>;
  /** Stored project bindings, links and access groups of the document's apps. */
  storedAppRelations: AppRelations;
}

const RESERVED_HEADER = /^(content-type|content-length|host|x-service-.*|webhook-(id|timestamp|signature)|connection|transfer-encoding)$/i;

/**
 * Builds the plan, or returns the problems that prevent applying the document.
 * Asynchronous only to let other requests run between chunks of a large document.
 */
export async function planSite(doc: SiteDocument, stored: StoredSite, now: number): Promise<{ plan: SitePlan; problems: string[] }> {
  const problems: string[] = [];
  const pace = pacer();
  const each = <T, U>(items: readonly T[], fn: (item: T, index: number) => U[]) => flatMapPaced(items, fn, pace);
  /** `${projectId}|${employeeId}` to the user id claiming it in this document. */
  const plannedEmployeeIds = new Map<string, string>();
  const idsByKind = Object.fromEntries(SECTIONS.map((s) => [s, {} as Record<string, string>])) as SitePlan['idsByKind'];
  // Look-ups over what is stored, indexed once: a document of thousands of users must not compare each with each.
  const storedIdentity = {
    email: indexBy(stored.usersByIdentity, (r) => r.email_lower),
    phone: indexBy(stored.usersByIdentity, (r) => r.phone),
    username: indexBy(stored.usersByIdentity, (r) => r.username),
  };
  const storedMembership = new Map(stored.memberships.map((m) => [`${m.user_id}|${m.project_id}`, m]));
  const storedEmployeeIds = indexBy(stored.employeeIds, (m) => `${m.project_id}|${m.employee_id}`);
  const storedPromoCodes = indexBy(stored.promoCodesByCode, (p) => `${p.project_id}|${p.code}`);
  const storedAppProjects = indexBy(stored.appRelations.projects, (p) => p.app_id);
  const storedLinkByExternal = indexBy(stored.appRelations.links, (l) => `${l.app_id}|${l.external_user_id}`);
  /** Built by projectsOfUser on first use, once every user is planned. */
  let memberProjects: Map<string, Set<string>> | undefined;

  /** Ids for one section: stored by key, else new; duplicate keys reported once each. */
  function assign<D extends { key: string }, R extends { id: string }>(
    section: Section,
    items: D[],
    storedByKey: Map<string, R>,
    where: string = section,
  ): Promise<Entry<D, R>[]> {
    const reported = new Set<string>();
    return each(items, (doc) => {
      const known = idsByKind[section][doc.key];
      if (known !== undefined && !reported.has(doc.key)) {
        reported.add(doc.key);
        problems.push(`${where}: key "${doc.key}" is used more than once`);
      }
      const row = storedByKey.get(doc.key);
      const id = known ?? row?.id ?? newId(now);
      idsByKind[section][doc.key] = id;
      return [{ doc, id, stored: row }];
    });
  }

  /** Epoch ms of an optional ISO date-time; reports one that cannot be read. */
  function instant(text: string | undefined, where: string): number | null {
    if (text === undefined) return null;
    const t = DateTime.fromISO(text, { setZone: true });
    if (!t.isValid) problems.push(`${where} "${text}" is not a valid ISO 8601 date-time`);
    return t.isValid ? t.toMillis() : null;
  }

  /** Id of the entity `key` names, in this document or stored; reports an unknown reference. */
  function ref(section: Section, label: string, stored: Map<string, { id: string }>, key: string, where: string): string | undefined {
    const id = idsByKind[section][key] ?? stored.get(key)?.id;
    if (id === undefined) problems.push(`${where} references unknown ${label} "${key}"`);
    return id;
  }

  // --- ids of the plain keyed sections --------------------------------------------
  const brands = await assign('brands', doc.brands ?? [], stored.brands);
  const projectEntries = await assign('projects', doc.projects ?? [], stored.projects);
  const zoneEntries = await assign('zones', doc.zones ?? [], stored.zones);
  const floorEntries = await assign('floors', doc.floors ?? [], stored.floors);
  const roomEntries = await assign('rooms', doc.rooms ?? [], stored.rooms);
  const deskEntries = await assign('desks', doc.desks ?? [], stored.desks);
  const users = await planUsers(doc.users ?? []);
  const groupEntries = await assign('accessGroups', doc.accessGroups ?? [], stored.accessGroups);
  const deviceEntries: Entry<DeviceDoc, Row<'devices'>>[][] = [];
  for (const g of groupEntries) {
    deviceEntries.push(await assign('devices', g.doc.devices ?? [], stored.devices, `accessGroups[${g.doc.key}].devices`));
  }
  const webhookEntries = await assign('webhooks', doc.webhooks ?? [], stored.webhooks);
  const promoEntries = await assign('promoCodes', doc.promoCodes ?? [], stored.promoCodes);
  const appIds = await assignApps(doc.apps ?? []);

  // --- site hierarchy -----------------------------------------------------------
  const brandOfProject = new Map<string, string>();
  for (const p of [...stored.projectsById.values(), ...stored.projects.values()]) brandOfProject.set(p.id, p.brand_id);
  const projects = await each(projectEntries, (e) => {
    const where = `projects[${e.doc.key}]`;
    if (!IANAZone.isValidZone(e.doc.timezone)) problems.push(`${where}.timezone "${e.doc.timezone}" is not a valid IANA time zone`);
    const brandId = ref('brands', 'brand', stored.brands, e.doc.brand, `${where}.brand`);
    if (brandId === undefined) return [];
    brandOfProject.set(e.id, brandId);
    return [{ ...e, brandId }];
  });

  const projectOfZone = new Map<string, string>();
  for (const z of stored.zones.values()) projectOfZone.set(z.id, z.project_id);
  const zones = await each(zoneEntries, (e) => {
    const projectId = ref('projects', 'project', stored.projects, e.doc.project, `zones[${e.doc.key}].project`);
    if (projectId === undefined) return [];
    projectOfZone.set(e.id, projectId);
    return [{ ...e, projectId }];
  });

  const floorParents = new Map<string, { zoneId: string; projectId: string }>();
  for (const f of stored.floors.values()) {
    floorParents.set(f.id, { zoneId: f.zone_id, projectId: projectOfZone.get(f.zone_id) ?? f.project_id });
  }
  const floors = await each(floorEntries, (e) => {
    const zoneId = ref('zones', 'zone', stored.zones, e.doc.zone, `floors[${e.doc.key}].zone`);
    const projectId = zoneId === undefined ? undefined : projectOfZone.get(zoneId);
    if (zoneId === undefined || projectId === undefined) return [];
    floorParents.set(e.id, { zoneId, projectId });
    return [{ ...e, zoneId, projectId }];
  });

  const placeAsset = <D extends { key: string; floor: string }>(section: 'rooms' | 'desks', e: { doc: D }): AssetParents | undefined => {
    const floorId = ref('floors', 'floor', stored.floors, e.doc.floor, `${section}[${e.doc.key}].floor`);
    const parents = floorId === undefined ? undefined : floorParents.get(floorId);
    const brandId = parents && brandOfProject.get(parents.projectId);
    return floorId && parents && brandId ? { floorId, ...parents, brandId } : undefined;
  };
  const rooms = await each(roomEntries, (e) => {
    const at = placeAsset('rooms', e);
    return at ? [{ ...e, ...at }] : [];
  });
  const desks = await each(deskEntries, (e, i) => {
    const at = placeAsset('desks', e);
    return at ? [{ ...e, ...at, index: e.doc.index ?? i + 1 }] : [];
  });

  // --- access groups, webhooks, promo codes -----------------------------------------
  const projectOfGroup = new Map<string, string>();
  for (const g of stored.accessGroups.values()) projectOfGroup.set(g.id, g.project_id);
  const accessGroups = await each(groupEntries, (e, i) => {
    const projectId = ref('projects', 'project', stored.projects, e.doc.project, `accessGroups[${e.doc.key}].project`);
    if (projectId === undefined) return [];
    projectOfGroup.set(e.id, projectId);
    return [{ ...e, projectId, devices: deviceEntries[i] }];
  });

  const webhooks = await each(webhookEntries, (e) => {
    checkWebhookAuth(e.doc);
    const projectId = ref('projects', 'project', stored.projects, e.doc.project, `webhooks[${e.doc.key}].project`);
    return projectId === undefined ? [] : [{ ...e, projectId }];
  });

  const promoCodeOwners = new Map<string, string>();
  const promoCodes = await each(promoEntries, (e) => {
    const where = `promoCodes[${e.doc.key}]`;
    if ((e.doc.percentOff === undefined) === (e.doc.amountOff === undefined)) {
      problems.push(`${where} must give exactly one of percentOff or amountOff`);
    }
    const validFrom = instant(e.doc.validFrom, `${where}.validFrom`);
    const validUntil = instant(e.doc.validUntil, `${where}.validUntil`);
    if (validFrom !== null && validUntil !== null && validUntil <= validFrom) problems.push(`${where}.validUntil must be after validFrom`);
    const projectId = ref('projects', 'project', stored.projects, e.doc.project, `${where}.project`);
    if (projectId === undefined) return [];
    const owner = promoCodeOwners.get(`${projectId}|${e.doc.code}`);
    if (owner !== undefined && owner !== e.doc.key) problems.push(`${where}.code "${e.doc.code}" is also used by promoCodes[${owner}]`);
    promoCodeOwners.set(`${projectId}|${e.doc.code}`, owner ?? e.doc.key);
    const clash = (storedPromoCodes.get(`${projectId}|${e.doc.code}`) ?? []).find((p) => p.id !== e.id);
    if (clash) problems.push(`${where}.code "${e.doc.code}" is already used by another promo code of the project`);
    return [{ ...e, projectId, validFrom, validUntil }];
  });

  // --- users and apps -------------------------------------------------------------------
  const plannedUsers = await each(users, (u) => resolveUser(u));
  const apps = await each(appIds, (a) => resolveApp(a));

  const ids: Record<string, string> = {};
  for (const section of SECTIONS) {
    for (const [key, id] of Object.entries(idsByKind[section])) if (!(key in ids)) ids[key] = id;
  }

  return {
    problems,
    plan: { brands, projects, zones, floors, rooms, desks, users: plannedUsers, accessGroups, apps, webhooks, promoCodes, ids, idsByKind,
      storedAppRelations: stored.appRelations },
  };

  // ---------------------------------------------------------------------------
  // Users: id by key, else adopt an unkeyed stored user with the same email.
  // ---------------------------------------------------------------------------
  async function planUsers(items: UserDoc[]): Promise<Entry<UserDoc, Row<'users'>>[]> {
    const owners = { email: new Map<string, string>(), phone: new Map<string, string>(), username: new Map<string, string>() };
    const adopt = new Map<string, Row<'users'>>();
    for (const u of items) {
      await pace();
      const byEmail = u.email ? storedIdentity.email.get(u.email.toLowerCase())?.[0] : undefined;
      if (!stored.users.has(u.key) && byEmail && byEmail.key === null) adopt.set(u.key, byEmail);
    }
    const entries = await assign('users', items, new Map([...adopt, ...stored.users]));
    for (const e of entries) {
      await pace();
      const where = `users[${e.doc.key}]`;
      const identities: [keyof typeof owners, string | undefined][] = [
        ['email', e.doc.email?.toLowerCase()],
        ['phone', e.doc.phone],
        ['username', e.doc.username],
      ];
      for (const [field, value] of identities) {
        if (value === undefined) continue;
        const shown = field === 'email' ? e.doc.email : value;
        const owner = owners[field].get(value);
        if (owner !== undefined && owner !== e.doc.key) problems.push(`${where}.${field} "${shown}" is also used by users[${owner}]`);
        owners[field].set(value, owner ?? e.doc.key);
        if ((storedIdentity[field].get(value) ?? []).some((r) => r.id !== e.id)) {
          problems.push(`${where}.${field} "${shown}" is already used by another user`);
        }
      }
    }
    return entries;
  }

  function resolveUser(e: Entry<UserDoc, Row<'users'>>): SitePlan['users'] {
    const where = `users[${e.doc.key}]`;
    const brandStaff = [...new Set((e.doc.brandStaff ?? []).flatMap((b) => ref('brands', 'brand', stored.brands, b, `${where}.brandStaff`) ?? []))];
    const seen = new Set<string>();
    const memberships: PlannedMembership[] = [];
    for (const m of e.doc.memberships ?? []) {
      const projectId = ref('projects', 'project', stored.projects, m.project, `${where}.memberships`);
      if (projectId === undefined) continue;
      if (seen.has(projectId)) {
        problems.push(`${where}.memberships lists project "${m.project}" more than once`);
        continue;
      }
      seen.add(projectId);
      if (m.employeeId !== undefined) checkEmployeeId(where, m.project, projectId, m.employeeId, e.id);
      memberships.push({
        projectId,
        role: m.role ?? 'member',
        employeeId: m.employeeId,
        stored: storedMembership.get(`${e.id}|${projectId}`),
      });
    }
    return [{ ...e, brandStaff, memberships }];
  }

  function checkEmployeeId(where: string, projectKey: string, projectId: string, employeeId: string, userId: string): void {
    const taken = plannedEmployeeIds.get(`${projectId}|${employeeId}`);
    if (taken !== undefined && taken !== userId) {
      problems.push(`${where}.memberships[${projectKey}].employeeId "${employeeId}" is also used by another user of this document`);
    }
    plannedEmployeeIds.set(`${projectId}|${employeeId}`, taken ?? userId);
    if ((storedEmployeeIds.get(`${projectId}|${employeeId}`) ?? []).some((m) => m.user_id !== userId)) {
      problems.push(`${where}.memberships[${projectKey}].employeeId "${employeeId}" is already used by another member of the project`);
    }
  }

  /** Project ids each user will be an active member of after the apply (built once, on first use). */
  function projectsOfUser(userId: string): Set<string> {
    if (!memberProjects) {
      const all = new Map<string, Set<string>>();
      const add = (user: string, project: string) => (all.get(user) ?? all.set(user, new Set()).get(user)!).add(project);
      for (const m of stored.memberships) if (m.status === 'active') add(m.user_id, m.project_id);
      for (const u of plannedUsers) for (const m of u.memberships) add(u.id, m.projectId);
      memberProjects = all;
    }
    return memberProjects.get(userId) ?? new Set();
  }

  // ---------------------------------------------------------------------------
  // Apps: keyed per environment; client id unique per environment.
  // ---------------------------------------------------------------------------
  async function assignApps(items: AppDoc[]): Promise<Entry<AppDoc, Row<'apps'>>[]> {
    const entries = await assign('apps', items, stored.apps);
    const clientOwners = new Map<string, string>();
    for (const e of entries) {
      const owner = clientOwners.get(e.doc.appId);
      if (owner !== undefined && owner !== e.doc.key) problems.push(`apps[${e.doc.key}].appId "${e.doc.appId}" is also used by apps[${owner}]`);
      clientOwners.set(e.doc.appId, owner ?? e.doc.key);
      const holder = stored.appsByClientId.get(e.doc.appId);
      if (holder && holder.id !== e.id) problems.push(`apps[${e.doc.key}].appId "${e.doc.appId}" is already used by another app`);
    }
    return entries;
  }

  function resolveApp(e: Entry<AppDoc, Row<'apps'>>): PlannedApp[] {
    const where = `apps[${e.doc.key}]`;
    const projectIdByKey = new Map<string, string>();
    for (const key of e.doc.projects) {
      const id = ref('projects', 'project', stored.projects, key, `${where}.projects`);
      if (id !== undefined) projectIdByKey.set(key, id);
    }
    const permissions = new Map<string, string[]>();
    for (const role of e.doc.projectRoles ?? []) {
      const id = ref('projects', 'project', stored.projects, role.project, `${where}.projectRoles`);
      if (id === undefined) continue;
      if (!e.doc.projects.includes(role.project)) {
        problems.push(`${where}.projectRoles names project "${role.project}", which is not listed in ${where}.projects`);
        continue;
      }
      permissions.set(id, [...new Set([...(permissions.get(id) ?? []), ...role.permissions])]);
    }
    const projectIds = [...new Set(projectIdByKey.values())];
    const bound = new Set([...projectIds, ...(storedAppProjects.get(e.id) ?? []).map((p) => p.project_id)]);

    const accessGroupIds: string[] = [];
    for (const key of new Set(e.doc.accessGroups ?? [])) {
      const id = ref('accessGroups', 'access group', stored.accessGroups, key, `${where}.accessGroups`);
      if (id === undefined) continue;
      const projectId = projectOfGroup.get(id);
      if (projectId !== undefined && !bound.has(projectId)) {
        problems.push(`${where}.accessGroups: access group "${key}" belongs to a project the app is not bound to`);
      }
      accessGroupIds.push(id);
    }

    const links: PlannedApp['links'] = [];
    const linkedUsers = new Set<string>();
    const externalIds = new Set<string>();
    for (const link of e.doc.links ?? []) {
      const at = `${where}.links[${link.user}]`;
      const userId = ref('users', 'user', stored.users, link.user, at);
      if (externalIds.has(link.externalUserId)) problems.push(`${at}.externalUserId "${link.externalUserId}" is used more than once in this app`);
      externalIds.add(link.externalUserId);
      if (userId === undefined) continue;
      if (linkedUsers.has(userId)) {
        problems.push(`${at} links the same user more than once`);
        continue;
      }
      linkedUsers.add(userId);
      const memberOf = projectsOfUser(userId);
      if (![...bound].some((p) => memberOf.has(p))) problems.push(`${at}: user "${link.user}" is not a member of any project of the app`);
      if ((storedLinkByExternal.get(`${e.id}|${link.externalUserId}`) ?? []).some((l) => l.user_id !== userId)) {
        problems.push(`${at}.externalUserId "${link.externalUserId}" is already linked to another user of the app`);
      }
      links.push({ userId, externalUserId: link.externalUserId });
    }

    return [{ ...e, projects: projectIds.map((projectId) => ({ projectId, permissions: permissions.get(projectId) ?? null })), links, accessGroupIds }];
  }

  function checkWebhookAuth(w: WebhookDoc): void {
    const where = `webhooks[${w.key}].auth`;
    const auth = w.auth ?? { scheme: 'signature-only' as const };
    const headerNames = Object.keys(auth.headers ?? {});
    if (auth.scheme === 'bearer' && !auth.token) problems.push(`${where}.token is required for the bearer scheme`);
    if (auth.scheme !== 'bearer' && auth.token !== undefined) problems.push(`${where}.token is allowed only with the bearer scheme`);
    if (auth.scheme === 'custom-header' && headerNames.length === 0) problems.push(`${where}.headers must name at least one header for the custom-header scheme`);
    if (auth.scheme !== 'custom-header' && auth.headers !== undefined) problems.push(`${where}.headers is allowed only with the custom-header scheme`);
    for (const name of headerNames) {
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) problems.push(`${where}.headers: "${name}" is not a valid header name`);
      else if (RESERVED_HEADER.test(name)) problems.push(`${where}.headers: "${name}" is set by the service and cannot be overridden`);
    }
  }
}

/** Rows grouped by a derived value (rows whose value is null are left out). */
function indexBy<R>(rows: R[], value: (row: R) => string | null): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of rows) {
    const v = value(r);
    if (v === null) continue;
    const list = out.get(v);
    if (list) list.push(r);
    else out.set(v, [r]);
  }
  return out;
}
