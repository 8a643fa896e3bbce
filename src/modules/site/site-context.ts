/** Loads everything already stored that a site document names (by key, identity or parent), before validation. */
import type { AppRelations, Row, SiteRepository } from './site-repository.js';
import type { SiteDocument } from '../../contract/site-document.js';

export interface StoredSite {
  brands: Map<string, Row<'brands'>>;
  projects: Map<string, Row<'projects'>>;
  zones: Map<string, Row<'zones'>>;
  floors: Map<string, Row<'floors'>>;
  rooms: Map<string, Row<'rooms'>>;
  desks: Map<string, Row<'desks'>>;
  users: Map<string, Row<'users'>>;
  accessGroups: Map<string, Row<'access_groups'>>;
  devices: Map<string, Row<'devices'>>;
  /** The project of each stored device's access group (by group id), for devices rooms and desks name. */
  projectOfStoredGroup: Map<string, string>;
  /** Stored devices reached over ZKTeco PUSH (their serial numbers must stay unique); read only when the document names one. */
  zktecoDevices: Row<'devices'>[];
  webhooks: Map<string, Row<'webhooks'>>;
  promoCodes: Map<string, Row<'promo_codes'>>;
  paymentProviders: Map<string, Row<'payment_providers'>>;
  /** Payment providers already stored for the stored projects the document's providers name (one per project). */
  paymentProvidersOfProjects: Row<'payment_providers'>[];
  /** Stored calendar connections by key, and all of them: read only when the document has the section (it is the whole list). */
  calendarConnections: Map<string, Row<'calendar_connections'>>;
  allCalendarConnections: Row<'calendar_connections'>[];
  /** Apps of this environment by key and by client id. */
  apps: Map<string, Row<'apps'>>;
  appsByClientId: Map<string, Row<'apps'>>;
  /** Users holding an email, phone or username the document uses. */
  usersByIdentity: Row<'users'>[];
  /** Memberships of every stored user the document may touch. */
  memberships: Row<'memberships'>[];
  /** Memberships holding an employee id the document uses. */
  employeeIds: Row<'memberships'>[];
  /** Promo codes (any project) whose code the document uses. */
  promoCodesByCode: Row<'promo_codes'>[];
  /** Projects (by id) that stored zones and floors hang under, for derived brand ids. */
  projectsById: Map<string, Row<'projects'>>;
  appRelations: AppRelations;
}

const keysOf = (items: { key: string }[] | undefined) => (items ?? []).map((i) => i.key);

export async function loadStoredSite(repo: SiteRepository, doc: SiteDocument, env: string): Promise<StoredSite> {
  const users = doc.users ?? [];
  const apps = doc.apps ?? [];
  const groups = doc.accessGroups ?? [];
  const projectRefs = [
    ...(doc.zones ?? []).map((z) => z.project),
    ...users.flatMap((u) => (u.memberships ?? []).map((m) => m.project)),
    ...apps.flatMap((a) => [...a.projects, ...(a.projectRoles ?? []).map((r) => r.project)]),
    ...groups.map((g) => g.project),
    ...(doc.webhooks ?? []).map((w) => w.project),
    ...(doc.promoCodes ?? []).map((p) => p.project),
    ...(doc.paymentProviders ?? []).map((p) => p.project),
    ...(doc.calendarConnections ?? []).map((c) => c.project),
  ];
  const floorRefs = [...(doc.rooms ?? []), ...(doc.desks ?? [])].map((a) => a.floor);

  const stored = {
    brands: await repo.rowsByKey('brands', [
      ...keysOf(doc.brands),
      ...(doc.projects ?? []).map((p) => p.brand),
      ...users.flatMap((u) => u.brandStaff ?? []),
    ]),
    projects: await repo.rowsByKey('projects', [...keysOf(doc.projects), ...projectRefs]),
    zones: await repo.rowsByKey('zones', [...keysOf(doc.zones), ...(doc.floors ?? []).map((f) => f.zone)]),
    floors: await repo.rowsByKey('floors', [...keysOf(doc.floors), ...floorRefs]),
    rooms: await repo.rowsByKey('rooms', keysOf(doc.rooms)),
    desks: await repo.rowsByKey('desks', keysOf(doc.desks)),
    users: await repo.rowsByKey('users', [...keysOf(users), ...apps.flatMap((a) => (a.links ?? []).map((l) => l.user))]),
    accessGroups: await repo.rowsByKey('access_groups', [...keysOf(groups), ...apps.flatMap((a) => a.accessGroups ?? [])]),
    devices: await repo.rowsByKey('devices', [
      ...groups.flatMap((g) => keysOf(g.devices)),
      ...[...(doc.rooms ?? []), ...(doc.desks ?? [])].flatMap((a) => a.accessDevices ?? []),
    ]),
    webhooks: await repo.rowsByKey('webhooks', keysOf(doc.webhooks)),
    promoCodes: await repo.rowsByKey('promo_codes', keysOf(doc.promoCodes)),
    paymentProviders: await repo.rowsByKey('payment_providers', keysOf(doc.paymentProviders)),
  };
  const allCalendarConnections = doc.calendarConnections ? await repo.allCalendarConnections() : [];
  const providerProjectIds = (doc.paymentProviders ?? []).flatMap((p) => stored.projects.get(p.project)?.id ?? []);

  const identities = await repo.usersByIdentity({
    emailsLower: users.flatMap((u) => (u.email ? [u.email.toLowerCase()] : [])),
    phones: users.flatMap((u) => (u.phone ? [u.phone] : [])),
    usernames: users.flatMap((u) => (u.username ? [u.username] : [])),
  });
  const userIds = [...[...stored.users.values()].map((u) => u.id), ...identities.map((u) => u.id)];

  const appRows = await repo.appsOfEnv(
    env,
    keysOf(apps),
    apps.map((a) => a.appId),
  );

  const parentProjectIds = [
    ...[...stored.zones.values()].map((z) => z.project_id),
    ...[...stored.floors.values()].map((f) => f.project_id),
  ];

  const storedGroups = await repo.rowsById(
    'access_groups',
    [...stored.devices.values()].map((d) => d.access_group_id),
  );
  const namesZkteco = groups.some((g) => (g.devices ?? []).some((d) => d.transport?.kind === 'zkteco-push'));
  return {
    ...stored,
    projectOfStoredGroup: new Map([...storedGroups.values()].map((g) => [g.id, g.project_id])),
    zktecoDevices: namesZkteco ? await repo.devicesWithTransport('zkteco-push') : [],
    apps: appRows.byKey,
    appsByClientId: appRows.byClientId,
    usersByIdentity: identities,
    memberships: await repo.membershipsOfUsers(userIds),
    employeeIds: await repo.membershipsByEmployeeId(
      users.flatMap((u) => (u.memberships ?? []).flatMap((m) => (m.employeeId ? [m.employeeId] : []))),
    ),
    paymentProvidersOfProjects: await repo.paymentProvidersOfProjects(providerProjectIds),
    calendarConnections: new Map(allCalendarConnections.flatMap((c) => (c.key === null ? [] : [[c.key, c] as const]))),
    allCalendarConnections,
    promoCodesByCode: await repo.promoCodesByCode((doc.promoCodes ?? []).map((p) => p.code)),
    projectsById: await repo.rowsById('projects', parentProjectIds),
    appRelations: await repo.appRelations([...appRows.byKey.values()].map((a) => a.id)),
  };
}
