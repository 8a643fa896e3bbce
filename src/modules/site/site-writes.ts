/** Writes a site plan: maps document entries to table rows (spec defaults applied) and upserts them, changed columns only. */
import { newId } from '../../platform/ids.js';
import type { Db } from '../../platform/db/db.js';
import type { Row, SiteRepository, UpsertEntry } from './site-repository.js';

type UpsertTable = Parameters<SiteRepository['upsertMany']>[0];
import type { DeskDoc, DeviceTransportDoc, RoomDoc } from '../../contract/site-document.js';
import type { AssetParents, SitePlan } from './site-plan.js';
import { pacer } from './pace.js';

/** Secret columns computed before the transaction (hashing is slow); keyed by entity id. */
export interface PreparedSecrets {
  appSecretHash: Map<string, string>;
  webhookSecretEnc: Map<string, string>;
  webhookAuthEnc: Map<string, string>;
  providerSecretKeyEnc: Map<string, string>;
  providerWebhookSecretEnc: Map<string, string>;
  calendarSecretEnc: Map<string, string>;
  /** Devices' ISAPI passwords and ZKTeco comm keys, sealed. */
  deviceSecretEnc: Map<string, string>;
}

/** JSON with object keys sorted, so equal values always give equal text (and unchanged rows stay unwritten). */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sort(value));
}

const bool = (v: boolean) => (v ? 1 : 0);

function assetColumns(doc: RoomDoc | DeskDoc, at: AssetParents) {
  const rate = doc.chargeRate ?? { perHour: 0, perDay: 0 };
  return {
    key: doc.key,
    brand_id: at.brandId,
    project_id: at.projectId,
    zone_id: at.zoneId,
    floor_id: at.floorId,
    name: doc.name,
    email: doc.email ?? null,
    capacity: doc.capacity ?? 1,
    status: doc.status ?? 'active',
    is_public: bool(doc.isPublic ?? true),
    facilities: canonicalJson(doc.facilities ?? []),
    picture_urls: canonicalJson(doc.pictureUrls ?? []),
    charge_rate: canonicalJson(rate.amount === undefined ? { perHour: rate.perHour, perDay: rate.perDay } : rate),
    config: canonicalJson(doc.config ?? {}),
    polygon: doc.polygon === undefined ? null : canonicalJson(doc.polygon),
  };
}

/**
 * Columns a migration added, written only when they hold something or held something before: an apply that uses
 * none of them touches only the columns the previous release knew (rolling upgrades: test/http/upgrade-compat.test.ts).
 */
function added<T extends Record<string, unknown>>(next: T, stored: object | undefined): Partial<T> {
  return Object.fromEntries(
    Object.entries(next).filter(([k, v]) => v !== null || ((stored as Record<string, unknown> | undefined)?.[k] ?? null) !== null),
  ) as Partial<T>;
}

function accessDevicesColumn(at: AssetParents, stored: { access_devices?: string | null } | undefined) {
  return added({ access_devices: at.accessDeviceIds?.length ? canonicalJson(at.accessDeviceIds) : null }, stored);
}

function roomColumns(doc: RoomDoc, at: AssetParents) {
  const eq = doc.equipmentsAvailability ?? {};
  return {
    ...assetColumns(doc, at),
    type: doc.type ?? 'normal',
    cleanup_minutes: doc.cleanupMinutes ?? null,
    equipments: canonicalJson({
      camera: eq.camera ?? false,
      display: eq.display ?? false,
      mic: eq.mic ?? false,
      projector: eq.projector ?? false,
      speaker: eq.speaker ?? false,
    }),
    address_no: doc.addressNo ?? null,
    unit_id: doc.unitId ?? null,
  };
}

/**
 * Rows are collected per table and written set-based (repo.upsertMany: multi-row statements, the event
 * loop getting a turn between them), parents before children. Building each row first lets other
 * requests run now and then (see pace.ts).
 */
class RowWriter {
  readonly pace = pacer();
  private pending: { table: UpsertTable; entries: UpsertEntry[] } | undefined;

  constructor(
    private readonly repo: SiteRepository,
    readonly now: number,
    readonly trx: Db,
  ) {}

  async flush(): Promise<void> {
    if (this.pending) await this.repo.upsertMany(this.pending.table, this.pending.entries, this.now, this.trx);
    this.pending = undefined;
  }

  async upsert(
    table: UpsertTable,
    id: string,
    stored: object | undefined,
    next: Record<string, unknown>,
    insertOnly?: Record<string, unknown>,
  ): Promise<void> {
    await this.pace();
    if (this.pending && this.pending.table !== table) await this.flush();
    this.pending ??= { table, entries: [] };
    this.pending.entries.push({ id, stored, next, insertOnly });
  }
}

/** Writes every entity of the plan, parents first, in the transaction `trx`. */
export async function writePlan(
  repo: SiteRepository,
  plan: SitePlan,
  secrets: PreparedSecrets,
  opts: { env: string; now: number },
  trx: Db,
): Promise<void> {
  const w = new RowWriter(repo, opts.now, trx);
  await writeHierarchy(w, plan);
  await writeUsers(w, plan);
  await writeAccessGroups(w, plan, secrets);
  await writeApps(w, repo, plan, secrets, opts.env);
  await writeWebhooks(w, plan, secrets);
  await writePromoCodes(w, plan);
  await writePaymentProviders(w, plan, secrets);
  await w.flush();
  // Removed first: a kept or new connection may take the project and provider a removed one held.
  await repo.deleteCalendarConnections(plan.removedCalendarConnections, trx);
  await writeCalendarConnections(w, plan, secrets);
  await w.flush();
  await repo.cascadeDerivedColumns(
    {
      zones: plan.zones.map((z) => ({ id: z.id, projectId: z.projectId })),
      floorIds: plan.floors.map((f) => f.id),
      projectIds: plan.projects.map((p) => p.id),
    },
    opts.now,
    trx,
  );
}

/** Brands, projects, zones, floors, rooms and desks. */
async function writeHierarchy(w: RowWriter, plan: SitePlan): Promise<void> {
  for (const e of plan.brands) await w.upsert('brands', e.id, e.stored, { key: e.doc.key, name: e.doc.name });

  for (const e of plan.projects) {
    await w.upsert('projects', e.id, e.stored, {
      key: e.doc.key,
      brand_id: e.brandId,
      name: e.doc.name,
      timezone: e.doc.timezone,
      currency: e.doc.currency,
      default_cleanup_minutes: e.doc.defaultCleanupMinutes ?? null,
      booking_grid_minutes: e.doc.bookingGridMinutes ?? null,
      backoffice_payment_due_minutes: e.doc.backofficePaymentDueMinutes ?? null,
      ...added({ analytics_named_reports: e.doc.analytics?.namedReports === true ? 1 : null }, e.stored),
    });
  }

  for (const e of plan.zones) {
    await w.upsert('zones', e.id, e.stored, { key: e.doc.key, project_id: e.projectId, name: e.doc.name });
  }
  for (const e of plan.floors) {
    await w.upsert('floors', e.id, e.stored, { key: e.doc.key, project_id: e.projectId, zone_id: e.zoneId, name: e.doc.name });
  }
  for (const e of plan.rooms) await w.upsert('rooms', e.id, e.stored, { ...roomColumns(e.doc, e), ...accessDevicesColumn(e, e.stored) });
  for (const e of plan.desks) {
    await w.upsert('desks', e.id, e.stored, { ...assetColumns(e.doc, e), desk_index: e.index, ...accessDevicesColumn(e, e.stored) });
  }
}

/** Users, then their memberships (after every user exists). */
async function writeUsers(w: RowWriter, plan: SitePlan): Promise<void> {
  for (const e of plan.users) {
    await w.upsert('users', e.id, e.stored, {
      key: e.doc.key,
      email: e.doc.email ?? null,
      email_lower: e.doc.email?.toLowerCase() ?? null,
      phone: e.doc.phone ?? null,
      username: e.doc.username ?? null,
      name: e.doc.name,
      first_name: e.doc.firstName ?? null,
      last_name: e.doc.lastName ?? null,
      profile_name: e.doc.profileName ?? null,
      blocked_from_booking: bool(e.doc.blockedFromBooking ?? false),
      brand_staff: canonicalJson(e.brandStaff),
    });
  }
  // Memberships after every user exists.
  for (const e of plan.users) {
    for (const m of e.memberships) {
      // The origin (`source`) of an existing membership is history and is kept; an
      // employee id is only written when the document gives one.
      const next: Record<string, unknown> = { user_id: e.id, project_id: m.projectId, role: m.role, user_type: 'member', status: 'active' };
      if (m.employeeId !== undefined) next.employee_id = m.employeeId;
      await w.upsert('memberships', m.stored?.id ?? newId(w.now), m.stored, next, { source: 'admin' });
    }
  }
}

/** A device's own transport: its kind, its non-secret settings (JSON) and its sealed secret; all null for the default. */
function deviceTransportColumns(t: DeviceTransportDoc | undefined, secretEnc: string | undefined) {
  if (!t) return { transport_kind: null, transport_json: null, transport_secret_enc: null };
  const settings = t.kind === 'isapi' ? { baseUrl: t.baseUrl, username: t.username } : { serialNumber: t.serialNumber };
  return { transport_kind: t.kind, transport_json: canonicalJson(settings), transport_secret_enc: secretEnc ?? null };
}

/** Access groups, then their devices (after every access group exists). */
async function writeAccessGroups(w: RowWriter, plan: SitePlan, secrets: PreparedSecrets): Promise<void> {
  for (const g of plan.accessGroups) {
    await w.upsert('access_groups', g.id, g.stored, { key: g.doc.key, project_id: g.projectId, name: g.doc.name });
  }
  // Devices after every access group exists.
  for (const g of plan.accessGroups) {
    for (const d of g.devices) {
      await w.upsert('devices', d.id, d.stored, {
        key: d.doc.key,
        access_group_id: g.id,
        name: d.doc.name,
        kind: d.doc.kind,
        location_en: d.doc.location?.en ?? null,
        location_th: d.doc.location?.th ?? null,
        card_format: d.doc.cardFormat ?? null,
        ...added(deviceTransportColumns(d.doc.transport, secrets.deviceSecretEnc.get(d.id)), d.stored),
      });
    }
  }
}

/** Apps, then (everything written so far flushed) their project bindings, access groups and links. */
async function writeApps(w: RowWriter, repo: SiteRepository, plan: SitePlan, secrets: PreparedSecrets, env: string): Promise<void> {
  for (const a of plan.apps) {
    await w.upsert('apps', a.id, a.stored, {
      key: a.doc.key,
      env,
      client_id: a.doc.appId,
      secret_hash: secrets.appSecretHash.get(a.id),
      name: a.doc.name,
      act_as: bool(a.doc.actAs ?? false),
    });
  }
  await w.flush();
  // Relations after every app, user and access group exists.
  for (const a of plan.apps) await writeAppRelations(repo, plan, a, w.now, w.trx, w.pace);
}

async function writeWebhooks(w: RowWriter, plan: SitePlan, secrets: PreparedSecrets): Promise<void> {
  for (const h of plan.webhooks) {
    await w.upsert(
      'webhooks',
      h.id,
      h.stored,
      {
        key: h.doc.key,
        project_id: h.projectId,
        url: h.doc.url,
        secret_enc: secrets.webhookSecretEnc.get(h.id),
        events: canonicalJson(h.doc.events),
        auth_enc: secrets.webhookAuthEnc.get(h.id),
      },
      { enabled: 1, consecutive_failures: 0 },
    );
  }
}

async function writePromoCodes(w: RowWriter, plan: SitePlan): Promise<void> {
  for (const p of plan.promoCodes) {
    await w.upsert('promo_codes', p.id, p.stored, {
      key: p.doc.key,
      project_id: p.projectId,
      code: p.doc.code,
      name: p.doc.name,
      percent_off: p.doc.percentOff ?? null,
      amount_off: p.doc.amountOff ?? null,
      active: bool(p.doc.active ?? true),
      valid_from: p.validFrom,
      valid_until: p.validUntil,
      max_uses: p.doc.maxUses ?? null,
    });
  }
}

async function writePaymentProviders(w: RowWriter, plan: SitePlan, secrets: PreparedSecrets): Promise<void> {
  for (const p of plan.paymentProviders) {
    await w.upsert('payment_providers', p.id, p.stored, {
      key: p.doc.key,
      project_id: p.projectId,
      provider: p.doc.provider,
      secret_key_enc: secrets.providerSecretKeyEnc.get(p.id),
      webhook_secret_enc: secrets.providerWebhookSecretEnc.get(p.id),
      methods: canonicalJson(p.doc.methods ?? ['promptpay']),
      api_base_url: p.doc.apiBaseUrl ?? null,
    });
  }
}

async function writeCalendarConnections(w: RowWriter, plan: SitePlan, secrets: PreparedSecrets): Promise<void> {
  for (const c of plan.calendarConnections) {
    await w.upsert('calendar_connections', c.id, c.stored, {
      key: c.doc.key,
      project_id: c.projectId,
      provider: c.doc.provider,
      tenant_id: c.doc.tenantId ?? null,
      client_id: c.doc.clientId ?? null,
      service_account_email: c.doc.serviceAccountEmail ?? null,
      subject: c.doc.subject ?? null,
      secret_enc: secrets.calendarSecretEnc.get(c.id),
      api_base_url: c.doc.apiBaseUrl ?? null,
      token_url: c.doc.tokenUrl ?? null,
    });
  }
}

async function writeAppRelations(
  repo: SiteRepository,
  plan: SitePlan,
  a: SitePlan['apps'][number],
  now: number,
  trx: Db,
  pace: () => Promise<void>,
): Promise<void> {
  const stored = plan.storedAppRelations;
  const storedLinks = new Map(stored.links.filter((s) => s.app_id === a.id).map((s) => [s.user_id, s]));
  const storedGroups = new Set(stored.accessGroups.filter((s) => s.app_id === a.id).map((s) => s.access_group_id));
  for (const p of a.projects) {
    await repo.upsertAppProject(
      stored.projects.find((s) => s.app_id === a.id && s.project_id === p.projectId),
      { app_id: a.id, project_id: p.projectId, permissions: p.permissions === null ? null : canonicalJson(p.permissions) },
      trx,
    );
  }
  const newGroups = a.accessGroupIds
    .filter((groupId) => !storedGroups.has(groupId))
    .map((groupId) => ({ app_id: a.id, access_group_id: groupId }));
  await repo.insertMany('app_access_groups', newGroups, trx);
  // New links go in set-based; a link whose external id changed is rewritten alone.
  const newLinks: Row<'app_links'>[] = [];
  for (const link of a.links) {
    await pace();
    const existing = storedLinks.get(link.userId);
    const row = {
      id: existing?.id ?? newId(now),
      app_id: a.id,
      user_id: link.userId,
      external_user_id: link.externalUserId,
      created_at: existing?.created_at ?? now,
    };
    if (existing) await repo.upsertAppLink(existing, row, trx);
    else newLinks.push(row);
  }
  await repo.insertMany('app_links', newLinks, trx);
}
