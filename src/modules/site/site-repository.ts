/** Persistence for declarative site apply: look-ups by key/identity, change-only upserts, derived-column cascades. */
import { sql, type Kysely, type Transaction } from 'kysely';
import { IN_CHUNK, inChunks } from '../../platform/db/in-chunks.js';
import type { Db } from '../../platform/db/db.js';
import type { Database } from '../../platform/db/schema.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sealedTable } from '../../platform/db/sealed-table-repository.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';

/** Tables whose rows carry a caller-chosen `key` unique across the table. */
export type KeyedTable =
  | 'brands'
  | 'projects'
  | 'zones'
  | 'floors'
  | 'rooms'
  | 'desks'
  | 'users'
  | 'access_groups'
  | 'devices'
  | 'webhooks'
  | 'promo_codes'
  | 'payment_providers'
  | 'calendar_connections';

export type Row<T extends keyof Database> = Database[T];
// Dynamic table names: Kysely cannot type a table chosen at run time; the typed wrappers below restore the row types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

async function selectIn<T extends keyof Database>(db: Db, table: T, column: string, values: Iterable<string>): Promise<Row<T>[]> {
  const out: Row<T>[] = [];
  let asked = 0;
  for (const part of inChunks(values)) {
    if (part.length === 0) continue;
    if (asked++ > 0) await nextTurn(); // a large look-up lets other requests run between chunks
    const rows = await (db as AnyDb).selectFrom(table).selectAll().where(column, 'in', part).execute();
    out.push(...(rows as Row<T>[]));
  }
  return out;
}

/** A point of a room's outline on its floor plan, in percent of the plan's width and height. */
export interface PolygonPoint {
  xPct: number;
  yPct: number;
}

/** The console's site overview, parsed: a room's flag as a boolean, its outline as points. */
export interface SiteOverviewRecord {
  projects: Pick<Row<'projects'>, 'id' | 'key' | 'name' | 'timezone' | 'currency'>[];
  floors: (Pick<Row<'floors'>, 'id' | 'key' | 'name' | 'project_id' | 'zone_id'> & { zone_name: string })[];
  rooms: (Pick<Row<'rooms'>, 'id' | 'key' | 'name' | 'floor_id' | 'project_id' | 'capacity' | 'status'> & {
    is_public: boolean;
    polygon: PolygonPoint[] | null;
  })[];
  desks: Pick<Row<'desks'>, 'id' | 'key' | 'name' | 'floor_id' | 'project_id' | 'desk_index' | 'status'>[];
  members: { id: string; name: string; email: string | null; project_id: string }[];
  /** Payment provider accounts, methods parsed; whether each secret is stored, never the secret. */
  paymentProviders: (Pick<Row<'payment_providers'>, 'id' | 'key' | 'project_id' | 'provider' | 'api_base_url'> & {
    methods: string[];
    has_secret_key: boolean;
    has_webhook_secret: boolean;
  })[];
  /** Calendar connections; whether the secret is stored, never the secret. */
  calendarConnections: (Omit<Row<'calendar_connections'>, 'secret_enc' | 'created_at' | 'updated_at'> & { has_secret: boolean })[];
}

/** A user as an organizer: the booking block as a boolean, the brand-staff list parsed; their membership of one project. */
export interface OrganizerRecord {
  user: Pick<Row<'users'>, 'id' | 'name' | 'email' | 'profile_name'> & { blocked_from_booking: boolean; brand_staff: string[] };
  membership: Pick<Row<'memberships'>, 'status' | 'user_type'> | undefined;
}

export interface AppRelations {
  projects: Row<'app_projects'>[];
  links: Row<'app_links'>[];
  accessGroups: Row<'app_access_groups'>[];
}

export type Outcome = 'inserted' | 'updated' | 'unchanged';

/** One row for upsertMany: its id, the stored row (undefined: insert), the wanted columns, and columns set only on insert. */
export interface UpsertEntry {
  id: string;
  stored: object | undefined;
  next: Record<string, unknown>;
  insertOnly?: Record<string, unknown>;
}

/**
 * Values one multi-row statement may carry: under PostgreSQL's 65,535 parameters
 * and SQLite's 32,766 host parameters.
 */
export const MAX_PARAMETERS = 30_000;
/** Rows one multi-row statement carries at most: each statement runs synchronously on SQLite, so it stays short. */
export const MAX_ROWS_PER_STATEMENT = 100;

/**
 * Rows split into chunks for multi-row statements: rows of one chunk have the
 * same columns (a multi-row VALUES list needs one column list, and SQLite has no
 * DEFAULT in VALUES), and each chunk stays within MAX_PARAMETERS values.
 */
export function sameColumnChunks<R extends Record<string, unknown>>(rows: readonly R[]): R[][] {
  const bySignature = new Map<string, R[]>();
  // Rows built by one piece of code list their keys in one order: sort each order once, not each row's keys.
  const sortedOf = new Map<string, string>();
  for (const row of rows) {
    const keys = Object.keys(row);
    const order = keys.join(',');
    let signature = sortedOf.get(order);
    if (signature === undefined) sortedOf.set(order, (signature = keys.sort().join(',')));
    const list = bySignature.get(signature);
    if (list) list.push(row);
    else bySignature.set(signature, [row]);
  }
  const out: R[][] = [];
  for (const list of bySignature.values()) {
    const perChunk = Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMETERS / Math.max(1, Object.keys(list[0]!).length))));
    for (let i = 0; i < list.length; i += perChunk) out.push(list.slice(i, i + perChunk));
  }
  return out;
}

/** Columns of `next` whose value differs from `stored` (null and undefined are the same). */
export function changedColumns(stored: object | undefined, next: Record<string, unknown>): Record<string, unknown> {
  const before = (stored ?? {}) as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(next)) {
    if ((before[column] ?? null) !== (value ?? null)) changes[column] = value ?? null;
  }
  return changes;
}

export class SiteRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Runs `work` in one transaction; pass the transaction to the write methods. */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }

  // -------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------

  /** Stored rows of a keyed table whose key is one of `keys`, by key. */
  async rowsByKey<T extends KeyedTable>(table: T, keys: Iterable<string>, db: Db = this.db): Promise<Map<string, Row<T>>> {
    const rows = await selectIn(db, table, 'key', keys);
    return new Map(rows.map((r) => [(r as { key: string }).key, r]));
  }

  /** Stored devices reached over the given transport kind. */
  async devicesWithTransport(kind: string, db: Db = this.db): Promise<Row<'devices'>[]> {
    return db.selectFrom('devices').selectAll().where('transport_kind', '=', kind).execute();
  }

  /** Stored rows of any table with an `id` column, by id. */
  async rowsById<T extends KeyedTable>(table: T, ids: Iterable<string>, db: Db = this.db): Promise<Map<string, Row<T>>> {
    const rows = await selectIn(db, table, 'id', ids);
    return new Map(rows.map((r) => [(r as { id: string }).id, r]));
  }

  /** Users holding one of the given lower-cased emails, phones or usernames. */
  async usersByIdentity(
    ids: { emailsLower: Iterable<string>; phones: Iterable<string>; usernames: Iterable<string> },
    db: Db = this.db,
  ): Promise<Row<'users'>[]> {
    return [
      ...(await selectIn(db, 'users', 'email_lower', ids.emailsLower)),
      ...(await selectIn(db, 'users', 'phone', ids.phones)),
      ...(await selectIn(db, 'users', 'username', ids.usernames)),
    ];
  }

  async membershipsOfUsers(userIds: Iterable<string>, db: Db = this.db): Promise<Row<'memberships'>[]> {
    return selectIn(db, 'memberships', 'user_id', userIds);
  }

  async membershipsByEmployeeId(employeeIds: Iterable<string>, db: Db = this.db): Promise<Row<'memberships'>[]> {
    return selectIn(db, 'memberships', 'employee_id', employeeIds);
  }

  /** Payment provider accounts of these projects (at most one each). */
  async paymentProvidersOfProjects(projectIds: Iterable<string>, db: Db = this.db): Promise<Row<'payment_providers'>[]> {
    return selectIn(db, 'payment_providers', 'project_id', projectIds);
  }

  /** Every stored calendar connection (a handful: at most two per project). */
  async allCalendarConnections(db: Db = this.db): Promise<Row<'calendar_connections'>[]> {
    return db.selectFrom('calendar_connections').selectAll().orderBy('id').execute();
  }

  /** Deletes calendar connections by id (the document's section left them out). */
  async deleteCalendarConnections(ids: readonly string[], db: Db = this.db): Promise<void> {
    if (ids.length > 0) await db.deleteFrom('calendar_connections').where('id', 'in', ids).execute();
  }

  async promoCodesByCode(codes: Iterable<string>, db: Db = this.db): Promise<Row<'promo_codes'>[]> {
    return selectIn(db, 'promo_codes', 'code', codes);
  }

  /** Apps of one environment by key and by client id. */
  async appsOfEnv(
    env: string,
    keys: Iterable<string>,
    clientIds: Iterable<string>,
    db: Db = this.db,
  ): Promise<{ byKey: Map<string, Row<'apps'>>; byClientId: Map<string, Row<'apps'>> }> {
    const byKey = new Map<string, Row<'apps'>>();
    const byClientId = new Map<string, Row<'apps'>>();
    for (const part of inChunks(keys)) {
      const rows = await db.selectFrom('apps').selectAll().where('env', '=', env).where('key', 'in', part).execute();
      for (const r of rows) byKey.set(r.key as string, r);
    }
    for (const part of inChunks(clientIds)) {
      const rows = await db.selectFrom('apps').selectAll().where('env', '=', env).where('client_id', 'in', part).execute();
      for (const r of rows) byClientId.set(r.client_id, r);
    }
    return { byKey, byClientId };
  }

  async appRelations(appIds: Iterable<string>, db: Db = this.db): Promise<AppRelations> {
    const ids = [...appIds];
    return {
      projects: await selectIn(db, 'app_projects', 'app_id', ids),
      links: await selectIn(db, 'app_links', 'app_id', ids),
      accessGroups: await selectIn(db, 'app_access_groups', 'app_id', ids),
    };
  }

  async hasAnyProject(db: Db = this.db): Promise<boolean> {
    return (await db.selectFrom('projects').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  /** Every project, floor (with its zone's name), room and desk: the console's site overview. */
  async overview(db: Db = this.db): Promise<SiteOverviewRecord> {
    const projects = await db
      .selectFrom('projects')
      .select(['id', 'key', 'name', 'timezone', 'currency'])
      .orderBy('name')
      .orderBy('id')
      .execute();
    const floors = await db
      .selectFrom('floors as f')
      .innerJoin('zones as z', 'z.id', 'f.zone_id')
      .select(['f.id', 'f.key', 'f.name', 'f.project_id', 'f.zone_id', 'z.name as zone_name'])
      .orderBy('f.name')
      .orderBy('f.id')
      .execute();
    const roomRows = await db
      .selectFrom('rooms')
      .select(['id', 'key', 'name', 'floor_id', 'project_id', 'capacity', 'status', 'is_public', 'polygon'])
      .orderBy('name')
      .orderBy('id')
      .execute();
    const rooms = roomRows.map((r) => ({
      ...r,
      is_public: r.is_public === 1,
      polygon: r.polygon === null ? null : (JSON.parse(r.polygon) as PolygonPoint[]),
    }));
    const desks = await db
      .selectFrom('desks')
      .select(['id', 'key', 'name', 'floor_id', 'project_id', 'desk_index', 'status'])
      .orderBy('desk_index')
      .orderBy('id')
      .execute();
    const members = await db
      .selectFrom('users as u')
      .innerJoin('memberships as m', 'm.user_id', 'u.id')
      .select(['u.id', 'u.name', 'u.email', 'm.project_id'])
      .where('m.status', '=', 'active')
      .where('m.user_type', '=', 'member')
      .orderBy('u.name')
      .orderBy('u.id')
      .orderBy('m.project_id')
      .execute();
    return {
      projects,
      floors,
      rooms,
      desks,
      members,
      paymentProviders: await this.paymentProviderOverview(db),
      calendarConnections: await this.calendarConnectionOverview(db),
    };
  }

  private async calendarConnectionOverview(db: Db): Promise<SiteOverviewRecord['calendarConnections']> {
    const rows = await db
      .selectFrom('calendar_connections')
      .select(['id', 'key', 'project_id', 'provider', 'tenant_id', 'client_id', 'service_account_email', 'subject'])
      .select(['api_base_url', 'token_url'])
      .select((eb) => eb.case().when('secret_enc', '<>', '').then(1).else(0).end().as('has_secret'))
      .orderBy('key')
      .orderBy('id')
      .execute();
    return rows.map(({ has_secret, ...r }) => ({ ...r, has_secret: Number(has_secret) === 1 }));
  }

  private async paymentProviderOverview(db: Db): Promise<SiteOverviewRecord['paymentProviders']> {
    const rows = await db
      .selectFrom('payment_providers')
      .select(['id', 'key', 'project_id', 'provider', 'api_base_url', 'methods'])
      .select((eb) => [
        eb.case().when('secret_key_enc', '<>', '').then(1).else(0).end().as('has_secret_key'),
        eb.case().when('webhook_secret_enc', '<>', '').then(1).else(0).end().as('has_webhook_secret'),
      ])
      .orderBy('key')
      .orderBy('id')
      .execute();
    return rows.map(({ methods, has_secret_key, has_webhook_secret, ...r }) => ({
      ...r,
      methods: JSON.parse(methods) as string[],
      has_secret_key: Number(has_secret_key) === 1,
      has_webhook_secret: Number(has_webhook_secret) === 1,
    }));
  }

  /** A project's name and IANA time zone. */
  async project(id: string, db: Db = this.db): Promise<{ id: string; name: string; timezone: string } | undefined> {
    return db.selectFrom('projects').select(['id', 'name', 'timezone']).where('id', '=', id).executeTakeFirst();
  }

  /** A user found by email (case-insensitive), with what booking for them depends on in one project. */
  async organizerByEmail(projectId: string, email: string, db: Db = this.db): Promise<OrganizerRecord | undefined> {
    const row = await db
      .selectFrom('users')
      .select(['id', 'name', 'email', 'profile_name', 'blocked_from_booking', 'brand_staff'])
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .executeTakeFirst();
    if (!row) return undefined;
    const membership = await db
      .selectFrom('memberships')
      .select(['status', 'user_type'])
      .where('user_id', '=', row.id)
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    const user = { ...row, blocked_from_booking: row.blocked_from_booking === 1, brand_staff: JSON.parse(row.brand_staff) as string[] };
    return { user, membership };
  }

  /** Users with one of these emails (case-insensitive). */
  async usersByEmails(emails: string[], db: Db = this.db): Promise<{ id: string; name: string; email: string | null }[]> {
    if (!emails.length) return [];
    return db
      .selectFrom('users')
      .select(['id', 'name', 'email'])
      .where((eb) =>
        eb(
          eb.fn('lower', ['email']),
          'in',
          emails.map((e) => e.toLowerCase()),
        ),
      )
      .execute();
  }

  /** A user's name and email. */
  async userContact(id: string, db: Db = this.db): Promise<{ id: string; name: string; email: string | null } | undefined> {
    return db.selectFrom('users').select(['id', 'name', 'email']).where('id', '=', id).executeTakeFirst();
  }

  /** A user with an active membership in the project (name and email), or undefined. */
  async projectMember(
    projectId: string,
    userId: string,
    db: Db = this.db,
  ): Promise<{ id: string; name: string; email: string | null } | undefined> {
    return db
      .selectFrom('users')
      .innerJoin('memberships', 'memberships.user_id', 'users.id')
      .select(['users.id', 'users.name', 'users.email'])
      .where('users.id', '=', userId)
      .where('memberships.project_id', '=', projectId)
      .where('memberships.status', '=', 'active')
      .executeTakeFirst();
  }

  // -------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------

  /**
   * Upserts many rows of one table, set-based, each row by id: a row with nothing
   * stored is inserted (with its `insertOnly` columns and both timestamps), a
   * stored one gets only its changed columns plus `updated_at`. New rows go in as
   * multi-row INSERTs, changed rows as multi-row `INSERT … ON CONFLICT (id) DO
   * UPDATE` of their changed columns (the stored row supplies the others, so
   * nothing else changes), unchanged rows are not touched. Statements hold at
   * most MAX_PARAMETERS values each, and the event loop gets a turn between them.
   * Two entries for one id are merged, the later one winning.
   */
  async upsertMany(
    table: KeyedTable | 'apps' | 'memberships',
    entries: readonly UpsertEntry[],
    now: number,
    db: Db = this.db,
  ): Promise<Record<Outcome, number>> {
    const counts: Record<Outcome, number> = { inserted: 0, updated: 0, unchanged: 0 };
    const merged = new Map<string, UpsertEntry>();
    for (const e of entries) {
      const prev = merged.get(e.id);
      merged.set(e.id, prev ? { ...prev, next: { ...prev.next, ...e.next }, insertOnly: { ...prev.insertOnly, ...e.insertOnly } } : e);
    }
    const inserts: Record<string, unknown>[] = [];
    const updates: { row: Record<string, unknown>; changed: string[] }[] = [];
    let seen = 0;
    for (const e of merged.values()) {
      if (++seen % IN_CHUNK === 0) await nextTurn();
      if (!e.stored) {
        inserts.push({ id: e.id, ...e.next, ...e.insertOnly, created_at: now, updated_at: now });
        continue;
      }
      const changes = changedColumns(e.stored, e.next);
      const changed = Object.keys(changes);
      if (changed.length === 0) {
        counts.unchanged++;
        continue;
      }
      updates.push({ row: { ...(e.stored as Record<string, unknown>), ...changes, id: e.id, updated_at: now }, changed });
    }
    let statements = 0;
    for (const rows of sameColumnChunks(inserts)) {
      if (statements++ > 0) await nextTurn();
      await (db as AnyDb).insertInto(table).values(rows).execute();
      counts.inserted += rows.length;
    }
    for (const rows of sameColumnChunks(updates.map((u) => u.row))) {
      if (statements++ > 0) await nextTurn();
      const inChunk = new Set(rows);
      const columns = new Set<string>(['updated_at']);
      for (const u of updates) if (inChunk.has(u.row)) for (const c of u.changed) columns.add(c);
      await (db as AnyDb)
        .insertInto(table)
        .values(rows)
        .onConflict((oc) => oc.column('id').doUpdateSet((eb) => Object.fromEntries([...columns].map((c) => [c, eb.ref(`excluded.${c}`)]))))
        .execute();
      counts.updated += rows.length;
    }
    return counts;
  }

  /** Inserts rows (every one new) as multi-row INSERTs within the parameter limit, a turn of the event loop between statements. */
  async insertMany<T extends 'app_links' | 'app_access_groups' | 'app_projects'>(
    table: T,
    rows: readonly Row<T>[],
    db: Db = this.db,
  ): Promise<void> {
    let statements = 0;
    for (const chunk of sameColumnChunks(rows as unknown as Record<string, unknown>[])) {
      if (statements++ > 0) await nextTurn();
      await (db as AnyDb).insertInto(table).values(chunk).execute();
    }
  }

  /** Sets an app's project binding (permissions JSON or null), writing only when it differs. */
  async upsertAppProject(stored: Row<'app_projects'> | undefined, next: Row<'app_projects'>, db: Db = this.db): Promise<Outcome> {
    if (!stored) {
      await db.insertInto('app_projects').values(next).execute();
      return 'inserted';
    }
    if (stored.permissions === next.permissions) return 'unchanged';
    await db
      .updateTable('app_projects')
      .set({ permissions: next.permissions })
      .where('app_id', '=', next.app_id)
      .where('project_id', '=', next.project_id)
      .execute();
    return 'updated';
  }

  /** Links a user to an app under an external id; an existing link of that user gets the new external id. */
  async upsertAppLink(stored: Row<'app_links'> | undefined, next: Row<'app_links'>, db: Db = this.db): Promise<Outcome> {
    if (!stored) {
      await db.insertInto('app_links').values(next).execute();
      return 'inserted';
    }
    if (stored.external_user_id === next.external_user_id) return 'unchanged';
    await db.updateTable('app_links').set({ external_user_id: next.external_user_id }).where('id', '=', stored.id).execute();
    return 'updated';
  }

  /**
   * Keeps derived columns consistent after zones, floors or projects were
   * re-parented: floors follow their zone's project, and rooms/desks follow their
   * floor's zone, project and that project's brand. Only differing rows are written.
   */
  async cascadeDerivedColumns(
    scope: { zones: { id: string; projectId: string }[]; floorIds: string[]; projectIds: string[] },
    now: number,
    db: Db = this.db,
  ): Promise<void> {
    for (const z of scope.zones) {
      await db
        .updateTable('floors')
        .set({ project_id: z.projectId, updated_at: now })
        .where('zone_id', '=', z.id)
        .where('project_id', '<>', z.projectId)
        .execute();
    }
    const floors = new Map<string, { id: string; zone_id: string; project_id: string }>();
    const zoneIds = scope.zones.map((z) => z.id);
    for (const [column, values] of [
      ['id', scope.floorIds],
      ['zone_id', zoneIds],
      ['project_id', scope.projectIds],
    ] as const) {
      for (const part of inChunks(values)) {
        const rows = await db.selectFrom('floors').select(['id', 'zone_id', 'project_id']).where(column, 'in', part).execute();
        for (const r of rows) floors.set(r.id, r);
      }
    }
    if (floors.size === 0) return;
    // Rooms and desks follow their floor: one set-based UPDATE per table and chunk of floors, only differing rows.
    const floorIds = [...floors.keys()];
    for (let i = 0; i < floorIds.length; i += IN_CHUNK) {
      if (i > 0) await nextTurn();
      const part = floorIds.slice(i, i + IN_CHUNK);
      for (const table of ['rooms', 'desks'] as const) {
        const t = sql.table(table);
        await sql`
          update ${t} set
            zone_id = (select f.zone_id from floors f where f.id = ${t}.floor_id),
            project_id = (select f.project_id from floors f where f.id = ${t}.floor_id),
            brand_id = (select p.brand_id from floors f join projects p on p.id = f.project_id where f.id = ${t}.floor_id),
            updated_at = ${now}
          where floor_id in (${sql.join(part)})
            and exists (
              select 1 from floors f join projects p on p.id = f.project_id
              where f.id = ${t}.floor_id and (f.zone_id <> ${t}.zone_id or f.project_id <> ${t}.project_id or p.brand_id <> ${t}.brand_id)
            )`.execute(db);
        await nextTurn();
      }
    }
  }
}

/**
 * The site's sealed columns (SECRETS_KEY rotation): webhook listeners' secrets and delivery auth, payment providers' keys,
 * calendar connections' client secrets and private keys, devices' ISAPI passwords and ZKTeco comm keys.
 */
export function sealedSiteColumns(db: Kysely<Database>): SealedTable[] {
  return [
    sealedTable(db, { table: 'webhooks', key: ['id'], sealed: ['secret_enc', 'auth_enc'] }),
    sealedTable(db, { table: 'payment_providers', key: ['id'], sealed: ['secret_key_enc', 'webhook_secret_enc'] }),
    sealedTable(db, { table: 'calendar_connections', key: ['id'], sealed: ['secret_enc'] }),
    sealedTable(db, { table: 'devices', key: ['id'], sealed: ['transport_secret_enc'] }),
  ];
}
