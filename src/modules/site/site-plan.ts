/**
 * Turns a site document plus what is already stored into a write plan: assigns
 * ids (stored by key, else new), resolves every key reference, derives parent
 * columns, and collects every problem (one message each) instead of stopping.
 */
import { createPrivateKey } from 'node:crypto';
import { DateTime, IANAZone } from 'luxon';
import { newId } from '../../platform/ids.js';
import { flatMapPaced, pacer, type Pacer } from './pace.js';
import type { AppRelations, Row } from './site-repository.js';
import type { StoredSite } from './site-context.js';
import {
  SECTIONS,
  type AccessGroupDoc,
  type AppDoc,
  type BrandDoc,
  type CalendarConnectionDoc,
  type DeskDoc,
  type DeviceDoc,
  type DeviceTransportDoc,
  type FloorDoc,
  type PaymentProviderDoc,
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
  /** Ids of the devices at the asset's door (its accessDevices), once resolved. */
  accessDeviceIds?: string[];
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
  paymentProviders: (Entry<PaymentProviderDoc, Row<'payment_providers'>> & { projectId: string })[];
  calendarConnections: (Entry<CalendarConnectionDoc, Row<'calendar_connections'>> & { projectId: string })[];
  /** Ids of stored calendar connections the document's section leaves out (deleted). */
  removedCalendarConnections: string[];
  /** Every key of the document to its id (the first section wins when kinds share a key). */
  ids: Record<string, string>;
  idsByKind: Record<Section, Record<string, string>>;
  /** Stored project bindings, links and access groups of the document's apps. */
  storedAppRelations: AppRelations;
}

const RESERVED_HEADER = /^(content-type|content-length|host|x-service-.*|webhook-(id|timestamp|signature)|connection|transfer-encoding)$/i;

type ProjectPlan = SitePlan['projects'][number];
type ZonePlan = SitePlan['zones'][number];
type FloorPlan = SitePlan['floors'][number];
type UserPlan = SitePlan['users'][number];

/**
 * Builds the plan, or returns the problems that prevent applying the document.
 * Asynchronous only to let other requests run between chunks of a large document.
 * Each section has its planner below; the order they run in is the order problems are reported in.
 */
export async function planSite(
  doc: SiteDocument,
  stored: StoredSite,
  now: number,
  env: string,
): Promise<{ plan: SitePlan; problems: string[] }> {
  const ctx = new PlanContext(stored, now);
  const keyed = await assignIds(ctx, doc);
  const projects = await planProjects(ctx, keyed.projects);
  const zones = await planZones(ctx, keyed.zones);
  const floors = await planFloors(ctx, keyed.floors);
  const rooms = await ctx.each(keyed.rooms, (e) => {
    const at = placeAsset(ctx, 'rooms', e);
    return at ? [{ ...e, ...at }] : [];
  });
  const desks = await ctx.each(keyed.desks, (e, i) => {
    const at = placeAsset(ctx, 'desks', e);
    return at ? [{ ...e, ...at, index: e.doc.index ?? i + 1 }] : [];
  });
  const accessGroups = await planAccessGroups(ctx, keyed.accessGroups, keyed.devices);
  planAccessDevices(ctx, [...rooms.map((r) => ['rooms', r] as const), ...desks.map((d) => ['desks', d] as const)], accessGroups);
  const webhooks = await ctx.each(keyed.webhooks, (e) => planWebhook(ctx, e));
  const promoCodes = await planPromoCodes(ctx, keyed.promoCodes);
  const paymentProviders = await planPaymentProviders(ctx, keyed.paymentProviders, env);
  const calendar = await planCalendarConnections(ctx, keyed.calendarConnections, env);
  const users = await ctx.each(keyed.users, (u) => planUser(ctx, u));
  const apps = await ctx.each(keyed.apps, (a) => planApp(ctx, a, users));
  return {
    problems: ctx.problems,
    plan: {
      brands: keyed.brands,
      projects,
      zones,
      floors,
      rooms,
      desks,
      users,
      accessGroups,
      apps,
      webhooks,
      promoCodes,
      paymentProviders,
      ...calendar,
      ids: firstIdPerKey(ctx.idsByKind),
      idsByKind: ctx.idsByKind,
      storedAppRelations: stored.appRelations,
    },
  };
}

/**
 * What every section planner shares: the problems found so far (in order), the ids assigned per kind,
 * what is stored (indexed once: a document of thousands of users must not compare each with each),
 * and the parents of what is stored or planned so far.
 */
class PlanContext {
  readonly problems: string[] = [];
  readonly pace: Pacer = pacer();
  readonly idsByKind = Object.fromEntries(SECTIONS.map((s) => [s, {} as Record<string, string>])) as SitePlan['idsByKind'];
  readonly storedIdentity;
  readonly storedMembership;
  readonly storedEmployeeIds;
  readonly storedPromoCodes;
  readonly storedAppProjects;
  readonly storedLinkByExternal;
  /** `${projectId}|${employeeId}` to the user id claiming it in this document. */
  readonly plannedEmployeeIds = new Map<string, string>();
  readonly brandOfProject = new Map<string, string>();
  readonly projectOfZone = new Map<string, string>();
  readonly floorParents = new Map<string, { zoneId: string; projectId: string }>();
  readonly projectOfGroup = new Map<string, string>();
  /** Built by projectsOfUser on first use, once every user is planned. */
  private memberProjects: Map<string, Set<string>> | undefined;

  constructor(
    readonly stored: StoredSite,
    readonly now: number,
  ) {
    this.storedIdentity = {
      email: indexBy(stored.usersByIdentity, (r) => r.email_lower),
      phone: indexBy(stored.usersByIdentity, (r) => r.phone),
      username: indexBy(stored.usersByIdentity, (r) => r.username),
    };
    this.storedMembership = new Map(stored.memberships.map((m) => [`${m.user_id}|${m.project_id}`, m]));
    this.storedEmployeeIds = indexBy(stored.employeeIds, (m) => `${m.project_id}|${m.employee_id}`);
    this.storedPromoCodes = indexBy(stored.promoCodesByCode, (p) => `${p.project_id}|${p.code}`);
    this.storedAppProjects = indexBy(stored.appRelations.projects, (p) => p.app_id);
    this.storedLinkByExternal = indexBy(stored.appRelations.links, (l) => `${l.app_id}|${l.external_user_id}`);
  }

  each<T, U>(items: readonly T[], fn: (item: T, index: number) => U[]): Promise<U[]> {
    return flatMapPaced(items, fn, this.pace);
  }

  /** Ids for one section: stored by key, else new; duplicate keys reported once each. */
  assign<D extends { key: string }, R extends { id: string }>(
    section: Section,
    items: D[],
    storedByKey: Map<string, R>,
    where: string = section,
  ): Promise<Entry<D, R>[]> {
    const reported = new Set<string>();
    return this.each(items, (doc) => {
      const known = this.idsByKind[section][doc.key];
      if (known !== undefined && !reported.has(doc.key)) {
        reported.add(doc.key);
        this.problems.push(`${where}: key "${doc.key}" is used more than once`);
      }
      const row = storedByKey.get(doc.key);
      const id = known ?? row?.id ?? newId(this.now);
      this.idsByKind[section][doc.key] = id;
      return [{ doc, id, stored: row }];
    });
  }

  /** Epoch ms of an optional ISO date-time; reports one that cannot be read. */
  instant(text: string | undefined, where: string): number | null {
    if (text === undefined) return null;
    const t = DateTime.fromISO(text, { setZone: true });
    if (!t.isValid) this.problems.push(`${where} "${text}" is not a valid ISO 8601 date-time`);
    return t.isValid ? t.toMillis() : null;
  }

  /** Id of the entity `key` names, in this document or stored; reports an unknown reference. */
  ref(section: Section, label: string, stored: Map<string, { id: string }>, key: string, where: string): string | undefined {
    const id = this.idsByKind[section][key] ?? stored.get(key)?.id;
    if (id === undefined) this.problems.push(`${where} references unknown ${label} "${key}"`);
    return id;
  }

  /** Project ids each user will be an active member of after the apply (built once, on first use). */
  projectsOfUser(userId: string, plannedUsers: UserPlan[]): Set<string> {
    if (!this.memberProjects) {
      const all = new Map<string, Set<string>>();
      const add = (user: string, project: string) => (all.get(user) ?? all.set(user, new Set()).get(user)!).add(project);
      for (const m of this.stored.memberships) if (m.status === 'active') add(m.user_id, m.project_id);
      for (const u of plannedUsers) for (const m of u.memberships) add(u.id, m.projectId);
      this.memberProjects = all;
    }
    return this.memberProjects.get(userId) ?? new Set();
  }
}

// --- ids of every keyed section -------------------------------------------------

/** Assigns the id of every entity of the document, section by section (duplicate keys and identities reported). */
async function assignIds(ctx: PlanContext, doc: SiteDocument) {
  const stored = ctx.stored;
  const brands = await ctx.assign('brands', doc.brands ?? [], stored.brands);
  const projects = await ctx.assign('projects', doc.projects ?? [], stored.projects);
  const zones = await ctx.assign('zones', doc.zones ?? [], stored.zones);
  const floors = await ctx.assign('floors', doc.floors ?? [], stored.floors);
  const rooms = await ctx.assign('rooms', doc.rooms ?? [], stored.rooms);
  const desks = await ctx.assign('desks', doc.desks ?? [], stored.desks);
  const users = await assignUsers(ctx, doc.users ?? []);
  const accessGroups = await ctx.assign('accessGroups', doc.accessGroups ?? [], stored.accessGroups);
  const devices: Entry<DeviceDoc, Row<'devices'>>[][] = [];
  for (const g of accessGroups) {
    devices.push(await ctx.assign('devices', g.doc.devices ?? [], stored.devices, `accessGroups[${g.doc.key}].devices`));
  }
  const webhooks = await ctx.assign('webhooks', doc.webhooks ?? [], stored.webhooks);
  const promoCodes = await ctx.assign('promoCodes', doc.promoCodes ?? [], stored.promoCodes);
  const paymentProviders = await ctx.assign('paymentProviders', doc.paymentProviders ?? [], stored.paymentProviders);
  const calendarConnections = await ctx.assign('calendarConnections', doc.calendarConnections ?? [], stored.calendarConnections);
  const apps = await assignApps(ctx, doc.apps ?? []);
  return {
    ...{ brands, projects, zones, floors, rooms, desks, users, accessGroups, devices, webhooks, promoCodes },
    ...{ paymentProviders, calendarConnections, apps },
  };
}

/** Users: id by key, else adopt an unkeyed stored user with the same email; identities unique. */
async function assignUsers(ctx: PlanContext, items: UserDoc[]): Promise<Entry<UserDoc, Row<'users'>>[]> {
  const { stored, storedIdentity, problems } = ctx;
  const owners = { email: new Map<string, string>(), phone: new Map<string, string>(), username: new Map<string, string>() };
  const adopt = new Map<string, Row<'users'>>();
  for (const u of items) {
    await ctx.pace();
    const byEmail = u.email ? storedIdentity.email.get(u.email.toLowerCase())?.[0] : undefined;
    if (!stored.users.has(u.key) && byEmail && byEmail.key === null) adopt.set(u.key, byEmail);
  }
  const entries = await ctx.assign('users', items, new Map([...adopt, ...stored.users]));
  for (const e of entries) {
    await ctx.pace();
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

/** Apps: keyed per environment; client id unique per environment. */
async function assignApps(ctx: PlanContext, items: AppDoc[]): Promise<Entry<AppDoc, Row<'apps'>>[]> {
  const entries = await ctx.assign('apps', items, ctx.stored.apps);
  const clientOwners = new Map<string, string>();
  for (const e of entries) {
    const owner = clientOwners.get(e.doc.appId);
    if (owner !== undefined && owner !== e.doc.key)
      ctx.problems.push(`apps[${e.doc.key}].appId "${e.doc.appId}" is also used by apps[${owner}]`);
    clientOwners.set(e.doc.appId, owner ?? e.doc.key);
    const holder = ctx.stored.appsByClientId.get(e.doc.appId);
    if (holder && holder.id !== e.id) ctx.problems.push(`apps[${e.doc.key}].appId "${e.doc.appId}" is already used by another app`);
  }
  return entries;
}

// --- site hierarchy ---------------------------------------------------------------

async function planProjects(ctx: PlanContext, entries: Entry<ProjectDoc, Row<'projects'>>[]): Promise<ProjectPlan[]> {
  for (const p of [...ctx.stored.projectsById.values(), ...ctx.stored.projects.values()]) ctx.brandOfProject.set(p.id, p.brand_id);
  return ctx.each(entries, (e) => {
    const where = `projects[${e.doc.key}]`;
    if (!IANAZone.isValidZone(e.doc.timezone)) ctx.problems.push(`${where}.timezone "${e.doc.timezone}" is not a valid IANA time zone`);
    const brandId = ctx.ref('brands', 'brand', ctx.stored.brands, e.doc.brand, `${where}.brand`);
    if (brandId === undefined) return [];
    ctx.brandOfProject.set(e.id, brandId);
    return [{ ...e, brandId }];
  });
}

async function planZones(ctx: PlanContext, entries: Entry<ZoneDoc, Row<'zones'>>[]): Promise<ZonePlan[]> {
  for (const z of ctx.stored.zones.values()) ctx.projectOfZone.set(z.id, z.project_id);
  return ctx.each(entries, (e) => {
    const projectId = ctx.ref('projects', 'project', ctx.stored.projects, e.doc.project, `zones[${e.doc.key}].project`);
    if (projectId === undefined) return [];
    ctx.projectOfZone.set(e.id, projectId);
    return [{ ...e, projectId }];
  });
}

async function planFloors(ctx: PlanContext, entries: Entry<FloorDoc, Row<'floors'>>[]): Promise<FloorPlan[]> {
  for (const f of ctx.stored.floors.values()) {
    ctx.floorParents.set(f.id, { zoneId: f.zone_id, projectId: ctx.projectOfZone.get(f.zone_id) ?? f.project_id });
  }
  return ctx.each(entries, (e) => {
    const zoneId = ctx.ref('zones', 'zone', ctx.stored.zones, e.doc.zone, `floors[${e.doc.key}].zone`);
    const projectId = zoneId === undefined ? undefined : ctx.projectOfZone.get(zoneId);
    if (zoneId === undefined || projectId === undefined) return [];
    ctx.floorParents.set(e.id, { zoneId, projectId });
    return [{ ...e, zoneId, projectId }];
  });
}

/** A room's or desk's floor, zone, project and brand; undefined (reported) when its floor is unknown. */
function placeAsset<D extends { key: string; floor: string }>(
  ctx: PlanContext,
  section: 'rooms' | 'desks',
  e: { doc: D },
): AssetParents | undefined {
  const floorId = ctx.ref('floors', 'floor', ctx.stored.floors, e.doc.floor, `${section}[${e.doc.key}].floor`);
  const parents = floorId === undefined ? undefined : ctx.floorParents.get(floorId);
  const brandId = parents && ctx.brandOfProject.get(parents.projectId);
  return floorId && parents && brandId ? { floorId, ...parents, brandId } : undefined;
}

// --- access groups, webhooks, promo codes ------------------------------------------

async function planAccessGroups(
  ctx: PlanContext,
  entries: Entry<AccessGroupDoc, Row<'access_groups'>>[],
  devices: Entry<DeviceDoc, Row<'devices'>>[][],
): Promise<SitePlan['accessGroups']> {
  for (const g of ctx.stored.accessGroups.values()) ctx.projectOfGroup.set(g.id, g.project_id);
  // Serial numbers held by stored devices this document does not restate (those it lists get theirs from it).
  const listed = new Set(devices.flat().map((d) => d.id));
  const serials = new Map(
    ctx.stored.zktecoDevices
      .filter((d) => !listed.has(d.id))
      .map((d) => [(JSON.parse(d.transport_json ?? '{}') as { serialNumber?: string }).serialNumber, d.id] as const),
  );
  const plannedSerials = new Map<string, string>();
  return ctx.each(entries, (e, i) => {
    for (const d of devices[i]!) {
      const where = `accessGroups[${e.doc.key}].devices[${d.doc.key}].transport`;
      if (d.doc.transport) checkDeviceTransport(ctx.problems, d.doc.transport, where);
      const serial = d.doc.transport?.kind === 'zkteco-push' ? d.doc.transport.serialNumber : undefined;
      if (serial === undefined) continue;
      const other = plannedSerials.get(serial);
      if (other !== undefined) ctx.problems.push(`${where}.serialNumber "${serial}" is also used by device "${other}"`);
      else if (serials.has(serial)) ctx.problems.push(`${where}.serialNumber "${serial}" is already used by another device`);
      plannedSerials.set(serial, d.doc.key);
    }
    const projectId = ctx.ref('projects', 'project', ctx.stored.projects, e.doc.project, `accessGroups[${e.doc.key}].project`);
    if (projectId === undefined) return [];
    ctx.projectOfGroup.set(e.id, projectId);
    return [{ ...e, projectId, devices: devices[i]! }];
  });
}

const TRANSPORT_FIELDS = { isapi: ['baseUrl', 'username', 'password'], 'zkteco-push': ['serialNumber', 'commKey'] } as const;
const REQUIRED_TRANSPORT_FIELDS = { isapi: ['baseUrl', 'username', 'password'], 'zkteco-push': ['serialNumber'] } as const;

/** A device's own transport: its kind's fields present, the other kind's absent, an ISAPI address that is http(s). */
function checkDeviceTransport(problems: string[], t: DeviceTransportDoc, where: string): void {
  for (const field of REQUIRED_TRANSPORT_FIELDS[t.kind]) {
    if (t[field] === undefined) problems.push(`${where}.${field} is required for a ${t.kind} device`);
  }
  const own = new Set<string>(TRANSPORT_FIELDS[t.kind]);
  for (const field of Object.keys(t)) {
    if (field !== 'kind' && !own.has(field)) problems.push(`${where}.${field} is not used by a ${t.kind} device`);
  }
  if (t.kind === 'isapi' && t.baseUrl !== undefined) {
    const url = URL.canParse(t.baseUrl) ? new URL(t.baseUrl) : null;
    if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash)
      problems.push(`${where}.baseUrl must be an http or https address without credentials, query or fragment, e.g. http://10.0.4.21`);
  }
}

/** Rooms' and desks' accessDevices: devices of this document or applied earlier, of the asset's own project. */
function planAccessDevices(
  ctx: PlanContext,
  assets: (readonly [
    'rooms' | 'desks',
    { doc: { key: string; accessDevices?: string[] }; projectId: string; accessDeviceIds?: string[] },
  ])[],
  groups: SitePlan['accessGroups'],
): void {
  const projectOfDevice = new Map<string, string>();
  for (const d of ctx.stored.devices.values()) {
    const projectId = ctx.projectOfGroup.get(d.access_group_id) ?? ctx.stored.projectOfStoredGroup.get(d.access_group_id);
    if (projectId) projectOfDevice.set(d.id, projectId);
  }
  for (const g of groups) for (const d of g.devices) projectOfDevice.set(d.id, g.projectId);
  for (const [section, a] of assets) {
    const ids: string[] = [];
    for (const key of a.doc.accessDevices ?? []) {
      const where = `${section}[${a.doc.key}].accessDevices`;
      const id = ctx.ref('devices', 'device', ctx.stored.devices, key, where);
      if (id === undefined) continue;
      if (projectOfDevice.get(id) !== a.projectId) ctx.problems.push(`${where}: device "${key}" belongs to another project`);
      else if (!ids.includes(id)) ids.push(id);
    }
    a.accessDeviceIds = ids;
  }
}

function planWebhook(ctx: PlanContext, e: Entry<WebhookDoc, Row<'webhooks'>>): SitePlan['webhooks'] {
  checkWebhookAuth(ctx, e.doc);
  const projectId = ctx.ref('projects', 'project', ctx.stored.projects, e.doc.project, `webhooks[${e.doc.key}].project`);
  return projectId === undefined ? [] : [{ ...e, projectId }];
}

function checkWebhookAuth(ctx: PlanContext, w: WebhookDoc): void {
  const problems = ctx.problems;
  const where = `webhooks[${w.key}].auth`;
  const auth = w.auth ?? { scheme: 'signature-only' as const };
  const headerNames = Object.keys(auth.headers ?? {});
  if (auth.scheme === 'bearer' && !auth.token) problems.push(`${where}.token is required for the bearer scheme`);
  if (auth.scheme !== 'bearer' && auth.token !== undefined) problems.push(`${where}.token is allowed only with the bearer scheme`);
  if (auth.scheme === 'custom-header' && headerNames.length === 0)
    problems.push(`${where}.headers must name at least one header for the custom-header scheme`);
  if (auth.scheme !== 'custom-header' && auth.headers !== undefined)
    problems.push(`${where}.headers is allowed only with the custom-header scheme`);
  for (const name of headerNames) {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) problems.push(`${where}.headers: "${name}" is not a valid header name`);
    else if (RESERVED_HEADER.test(name)) problems.push(`${where}.headers: "${name}" is set by the service and cannot be overridden`);
  }
}

async function planPromoCodes(ctx: PlanContext, entries: Entry<PromoCodeDoc, Row<'promo_codes'>>[]): Promise<SitePlan['promoCodes']> {
  const { problems } = ctx;
  const promoCodeOwners = new Map<string, string>();
  return ctx.each(entries, (e) => {
    const where = `promoCodes[${e.doc.key}]`;
    if ((e.doc.percentOff === undefined) === (e.doc.amountOff === undefined)) {
      problems.push(`${where} must give exactly one of percentOff or amountOff`);
    }
    const validFrom = ctx.instant(e.doc.validFrom, `${where}.validFrom`);
    const validUntil = ctx.instant(e.doc.validUntil, `${where}.validUntil`);
    if (validFrom !== null && validUntil !== null && validUntil <= validFrom) problems.push(`${where}.validUntil must be after validFrom`);
    const projectId = ctx.ref('projects', 'project', ctx.stored.projects, e.doc.project, `${where}.project`);
    if (projectId === undefined) return [];
    const owner = promoCodeOwners.get(`${projectId}|${e.doc.code}`);
    if (owner !== undefined && owner !== e.doc.key) problems.push(`${where}.code "${e.doc.code}" is also used by promoCodes[${owner}]`);
    promoCodeOwners.set(`${projectId}|${e.doc.code}`, owner ?? e.doc.key);
    const clash = (ctx.storedPromoCodes.get(`${projectId}|${e.doc.code}`) ?? []).find((p) => p.id !== e.id);
    if (clash) problems.push(`${where}.code "${e.doc.code}" is already used by another promo code of the project`);
    return [{ ...e, projectId, validFrom, validUntil }];
  });
}

/**
 * Payment providers: the project resolved, at most one provider per project (in this document and
 * with what is stored: the table holds one row per project), no other API host in production.
 * Like a webhook, a stored provider may be moved to another project that has none.
 */
async function planPaymentProviders(
  ctx: PlanContext,
  entries: Entry<PaymentProviderDoc, Row<'payment_providers'>>[],
  env: string,
): Promise<SitePlan['paymentProviders']> {
  const { problems } = ctx;
  const storedHolder = new Map(ctx.stored.paymentProvidersOfProjects.map((r) => [r.project_id, r]));
  const planned = new Map<string, string>();
  return ctx.each(entries, (e) => {
    const where = `paymentProviders[${e.doc.key}]`;
    if (e.doc.apiBaseUrl !== undefined && env === 'production') {
      problems.push(`${where}.apiBaseUrl is not allowed in production (the provider's own API is always used there)`);
    }
    const projectId = ctx.ref('projects', 'project', ctx.stored.projects, e.doc.project, `${where}.project`);
    if (projectId === undefined) return [];
    const other = planned.get(projectId);
    if (other !== undefined) {
      problems.push(
        `${where}.project "${e.doc.project}" already has paymentProviders[${other}] in this document; a project has at most one`,
      );
      return [];
    }
    planned.set(projectId, e.doc.key);
    const holder = storedHolder.get(projectId);
    if (holder && holder.id !== e.id) {
      problems.push(
        `${where}.project "${e.doc.project}" already has payment provider "${holder.key ?? holder.id}"; a project has at most one (change that entry instead)`,
      );
      return [];
    }
    return [{ ...e, projectId }];
  });
}

/** Each calendar provider's credential fields; an entry gives its own provider's, never the other's. */
const CALENDAR_FIELDS = {
  microsoft: ['tenantId', 'clientId', 'clientSecret'],
  google: ['serviceAccountEmail', 'privateKey', 'subject'],
} as const;

/**
 * Calendar connections: the section is the whole list (a stored connection it leaves out is removed, so
 * only the document can hold two for one project and provider), the provider's own credentials, a private
 * key that opens, no other hosts in production.
 */
async function planCalendarConnections(
  ctx: PlanContext,
  entries: Entry<CalendarConnectionDoc, Row<'calendar_connections'>>[],
  env: string,
): Promise<Pick<SitePlan, 'calendarConnections' | 'removedCalendarConnections'>> {
  const { problems } = ctx;
  const planned = new Map<string, string>();
  const calendarConnections = await ctx.each(entries, (e) => {
    const where = `calendarConnections[${e.doc.key}]`;
    checkCalendarCredentials(problems, e.doc, where);
    for (const field of ['apiBaseUrl', 'tokenUrl'] as const) {
      if (e.doc[field] !== undefined && env === 'production') {
        problems.push(`${where}.${field} is not allowed in production (the provider's own endpoints are always used there)`);
      }
    }
    const projectId = ctx.ref('projects', 'project', ctx.stored.projects, e.doc.project, `${where}.project`);
    if (projectId === undefined) return [];
    const slot = `${projectId}|${e.doc.provider}`;
    const other = planned.get(slot);
    if (other !== undefined) {
      problems.push(
        `${where}.project "${e.doc.project}" already has a ${e.doc.provider} connection, calendarConnections[${other}]; a project has at most one per provider`,
      );
      return [];
    }
    planned.set(slot, e.doc.key);
    return [{ ...e, projectId }];
  });
  const kept = new Set(entries.map((e) => e.id));
  const removedCalendarConnections = ctx.stored.allCalendarConnections.filter((r) => !kept.has(r.id)).map((r) => r.id);
  return { calendarConnections, removedCalendarConnections };
}

/** Every missing own field and every field of the other provider, one message each; the key is never quoted. */
function checkCalendarCredentials(problems: string[], doc: CalendarConnectionDoc, where: string): void {
  const otherProvider = doc.provider === 'microsoft' ? 'google' : 'microsoft';
  for (const field of CALENDAR_FIELDS[doc.provider]) {
    if (doc[field] === undefined) problems.push(`${where}.${field} is required for a ${doc.provider} connection`);
  }
  for (const field of CALENDAR_FIELDS[otherProvider]) {
    if (doc[field] !== undefined) {
      problems.push(`${where}.${field} belongs to a ${otherProvider} connection, not a ${doc.provider} one`);
    }
  }
  if (doc.provider === 'google' && doc.privateKey !== undefined && !isRsaPrivateKey(doc.privateKey)) {
    problems.push(
      `${where}.privateKey is not an RSA private key in PEM form (give private_key of the service account's JSON key file, ` +
        'from -----BEGIN PRIVATE KEY----- to its END line, newlines included)',
    );
  }
}

/** Whether node:crypto reads the text as an RSA private key (Google signs service-account assertions with RS256). */
function isRsaPrivateKey(pem: string): boolean {
  try {
    return createPrivateKey({ key: pem, format: 'pem' }).asymmetricKeyType === 'rsa';
  } catch {
    return false;
  }
}

// --- users and apps -------------------------------------------------------------------

/** A user's brand-staff list and memberships, references resolved. */
function planUser(ctx: PlanContext, e: Entry<UserDoc, Row<'users'>>): UserPlan[] {
  const where = `users[${e.doc.key}]`;
  const brandStaff = [
    ...new Set((e.doc.brandStaff ?? []).flatMap((b) => ctx.ref('brands', 'brand', ctx.stored.brands, b, `${where}.brandStaff`) ?? [])),
  ];
  const seen = new Set<string>();
  const memberships: PlannedMembership[] = [];
  for (const m of e.doc.memberships ?? []) {
    const projectId = ctx.ref('projects', 'project', ctx.stored.projects, m.project, `${where}.memberships`);
    if (projectId === undefined) continue;
    if (seen.has(projectId)) {
      ctx.problems.push(`${where}.memberships lists project "${m.project}" more than once`);
      continue;
    }
    seen.add(projectId);
    if (m.employeeId !== undefined) checkEmployeeId(ctx, where, m.project, projectId, m.employeeId, e.id);
    memberships.push({
      projectId,
      role: m.role ?? 'member',
      employeeId: m.employeeId,
      stored: ctx.storedMembership.get(`${e.id}|${projectId}`),
    });
  }
  return [{ ...e, brandStaff, memberships }];
}

function checkEmployeeId(ctx: PlanContext, where: string, projectKey: string, projectId: string, employeeId: string, userId: string): void {
  const taken = ctx.plannedEmployeeIds.get(`${projectId}|${employeeId}`);
  if (taken !== undefined && taken !== userId) {
    ctx.problems.push(`${where}.memberships[${projectKey}].employeeId "${employeeId}" is also used by another user of this document`);
  }
  ctx.plannedEmployeeIds.set(`${projectId}|${employeeId}`, taken ?? userId);
  if ((ctx.storedEmployeeIds.get(`${projectId}|${employeeId}`) ?? []).some((m) => m.user_id !== userId)) {
    ctx.problems.push(`${where}.memberships[${projectKey}].employeeId "${employeeId}" is already used by another member of the project`);
  }
}

/** An app's project bindings (with their roles), access groups and member links. */
function planApp(ctx: PlanContext, e: Entry<AppDoc, Row<'apps'>>, users: UserPlan[]): PlannedApp[] {
  const where = `apps[${e.doc.key}]`;
  const { projectIds, permissions } = appProjects(ctx, e.doc, where);
  const bound = new Set([...projectIds, ...(ctx.storedAppProjects.get(e.id) ?? []).map((p) => p.project_id)]);
  const accessGroupIds = appAccessGroups(ctx, e.doc, where, bound);
  const links = appLinks(ctx, e, where, bound, users);
  return [
    {
      ...e,
      projects: projectIds.map((projectId) => ({ projectId, permissions: permissions.get(projectId) ?? null })),
      links,
      accessGroupIds,
    },
  ];
}

/** The projects an app lists, and the permissions its project roles give on each. */
function appProjects(ctx: PlanContext, doc: AppDoc, where: string): { projectIds: string[]; permissions: Map<string, string[]> } {
  const projectIdByKey = new Map<string, string>();
  for (const key of doc.projects) {
    const id = ctx.ref('projects', 'project', ctx.stored.projects, key, `${where}.projects`);
    if (id !== undefined) projectIdByKey.set(key, id);
  }
  const permissions = new Map<string, string[]>();
  for (const role of doc.projectRoles ?? []) {
    const id = ctx.ref('projects', 'project', ctx.stored.projects, role.project, `${where}.projectRoles`);
    if (id === undefined) continue;
    if (!doc.projects.includes(role.project)) {
      ctx.problems.push(`${where}.projectRoles names project "${role.project}", which is not listed in ${where}.projects`);
      continue;
    }
    permissions.set(id, [...new Set([...(permissions.get(id) ?? []), ...role.permissions])]);
  }
  return { projectIds: [...new Set(projectIdByKey.values())], permissions };
}

/** The access groups an app lists; each must belong to a project the app is bound to. */
function appAccessGroups(ctx: PlanContext, doc: AppDoc, where: string, bound: Set<string>): string[] {
  const accessGroupIds: string[] = [];
  for (const key of new Set(doc.accessGroups ?? [])) {
    const id = ctx.ref('accessGroups', 'access group', ctx.stored.accessGroups, key, `${where}.accessGroups`);
    if (id === undefined) continue;
    const projectId = ctx.projectOfGroup.get(id);
    if (projectId !== undefined && !bound.has(projectId)) {
      ctx.problems.push(`${where}.accessGroups: access group "${key}" belongs to a project the app is not bound to`);
    }
    accessGroupIds.push(id);
  }
  return accessGroupIds;
}

/** An app's links to users by external id: one per user and per external id, to members of the app's projects. */
function appLinks(
  ctx: PlanContext,
  e: Entry<AppDoc, Row<'apps'>>,
  where: string,
  bound: Set<string>,
  users: UserPlan[],
): PlannedApp['links'] {
  const { problems } = ctx;
  const links: PlannedApp['links'] = [];
  const linkedUsers = new Set<string>();
  const externalIds = new Set<string>();
  for (const link of e.doc.links ?? []) {
    const at = `${where}.links[${link.user}]`;
    const userId = ctx.ref('users', 'user', ctx.stored.users, link.user, at);
    if (externalIds.has(link.externalUserId))
      problems.push(`${at}.externalUserId "${link.externalUserId}" is used more than once in this app`);
    externalIds.add(link.externalUserId);
    if (userId === undefined) continue;
    if (linkedUsers.has(userId)) {
      problems.push(`${at} links the same user more than once`);
      continue;
    }
    linkedUsers.add(userId);
    const memberOf = ctx.projectsOfUser(userId, users);
    if (![...bound].some((p) => memberOf.has(p))) problems.push(`${at}: user "${link.user}" is not a member of any project of the app`);
    if ((ctx.storedLinkByExternal.get(`${e.id}|${link.externalUserId}`) ?? []).some((l) => l.user_id !== userId)) {
      problems.push(`${at}.externalUserId "${link.externalUserId}" is already linked to another user of the app`);
    }
    links.push({ userId, externalUserId: link.externalUserId });
  }
  return links;
}

/** Every key of the document to its id (the first section wins when kinds share a key). */
function firstIdPerKey(idsByKind: SitePlan['idsByKind']): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const section of SECTIONS) {
    for (const [key, id] of Object.entries(idsByKind[section])) if (!(key in ids)) ids[key] = id;
  }
  return ids;
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
