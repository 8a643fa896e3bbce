/**
 * Reads of the catalogue (projects, rooms, desks, floors). The holds on them are
 * the booking module's: read through the BusySlots port (busy-slots.ts).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import { assetTable } from '../../platform/db/transactions.js';
import { PreparedStatements, slot } from '../../platform/db/statements.js';
import type { Database, DeskTable, ProjectTable, RoomTable } from '../../platform/db/schema.js';
import type { AssetConfig } from '../../contract/asset-config.js';
import type { Vertex } from '../../contract/catalogue.js';
import type { ChargeRate } from '../../contract/site-document.js';

/** Rooms per read of `projectRooms`. */
export const ROOM_PAGE = 500;

export type ProjectRow = Omit<ProjectTable, 'max_hold_ms' | 'analytics_named_reports'> & { max_hold_ms: number };

/** An asset's stored JSON columns parsed, and its 0/1 flag as a boolean. */
interface ParsedAssetColumns {
  is_public: boolean;
  facilities: string[];
  picture_urls: string[];
  charge_rate: ChargeRate;
  config: AssetConfig;
  polygon: Vertex[] | null;
}

/** A room as the repository returns it (typed, parsed once). */
export type RoomRow = Omit<RoomTable, keyof ParsedAssetColumns | 'equipments'> &
  ParsedAssetColumns & { equipments: Record<string, boolean> };
/** A desk as the repository returns it (typed, parsed once). */
export type DeskRow = Omit<DeskTable, keyof ParsedAssetColumns> & ParsedAssetColumns;

/** JSON.parse, or a stand-in that returns one shared value per distinct text (ParsedTexts). */
type ParseJson = (text: string) => unknown;

/**
 * Parsed JSON texts shared by identical texts: assets of a site mostly share their
 * config (and equipment, facilities, prices), so listings parse a handful of texts,
 * and the availability search's per-config memo compares configs by identity. The
 * values are shared, so they are read-only. Bounded: past `max` texts it starts over.
 */
class ParsedTexts {
  private readonly values = new Map<string, unknown>();

  constructor(private readonly max = 10_000) {}

  readonly parse: ParseJson = (text) => {
    let value = this.values.get(text); // JSON.parse never yields undefined, so undefined means "not seen"
    if (value === undefined) {
      if (this.values.size >= this.max) this.values.clear();
      value = JSON.parse(text) as unknown;
      this.values.set(text, value);
    }
    return value;
  };
}

function assetColumns(a: RoomTable | DeskTable, parse: ParseJson): ParsedAssetColumns {
  return {
    is_public: a.is_public === 1,
    facilities: parse(a.facilities) as string[],
    picture_urls: parse(a.picture_urls) as string[],
    charge_rate: parse(a.charge_rate) as ChargeRate,
    config: parse(a.config) as AssetConfig,
    polygon: a.polygon === null ? null : (parse(a.polygon) as Vertex[] | null),
  };
}

function roomRecord(r: RoomTable, parse: ParseJson): RoomRow {
  return { ...r, ...assetColumns(r, parse), equipments: parse(r.equipments) as Record<string, boolean> };
}

function deskRecord(d: DeskTable, parse: ParseJson): DeskRow {
  return { ...d, ...assetColumns(d, parse) };
}

/** A listed desk and the version of its stored row. */
export interface DeskVersion {
  id: string;
  updated_at: number;
}

export interface DeskFilter {
  /** Projects the caller may see; the listing never leaves them. */
  projectIds: string[];
  /** Projects whose private desks the caller may see. */
  privateProjectIds: string[];
  brandId?: string;
  zoneId?: string;
  floorId?: string;
  locationId?: string;
  ids?: string[];
  name?: string;
  email?: string;
  statuses?: string[];
}

export interface AssetInContext {
  asset: RoomRow | DeskRow;
  project: ProjectRow;
  floorName: string;
}

const PROJECT_COLUMNS = [
  'id',
  'key',
  'brand_id',
  'name',
  'timezone',
  'currency',
  'default_cleanup_minutes',
  'booking_grid_minutes',
  'backoffice_payment_due_minutes',
  'max_hold_ms',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ProjectTable)[];

/** Ids per `in (…)` list when reading rows by id (well under either engine's bound on parameters). */
const ID_CHUNK = 500;

/** Longest cleaning time an asset can have (minutes); bounds overlap look-ups. */
export const MAX_CLEANUP_MS = 60 * 60_000;

function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

// Rooms and desks share the filtered columns; the selection is whatever the caller picked (any: Kysely's own output type).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AssetQuery<T extends 'rooms' | 'desks'> = SelectQueryBuilder<Database, T, any>;

function commonFilters<T extends 'rooms' | 'desks'>(
  q: AssetQuery<T>,
  f: { zoneId?: string; floorId?: string; locationId?: string; ids?: string[]; name?: string; statuses?: string[] },
): AssetQuery<T> {
  // The filters name columns both tables have; Kysely cannot see that through the union of table names.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let out = q as AssetQuery<any>;
  if (f.zoneId) out = out.where('zone_id', '=', f.zoneId);
  if (f.floorId) out = out.where('floor_id', '=', f.floorId);
  if (f.locationId) out = out.where((eb) => eb.or([eb('zone_id', '=', f.locationId!), eb('floor_id', '=', f.locationId!)]));
  if (f.ids) out = f.ids.length ? out.where('id', 'in', f.ids) : out.where((eb) => eb.val(1), '=', 0);
  // ESCAPE is explicit: SQLite has no default escape character for LIKE (PostgreSQL's is the backslash).
  if (f.name) out = out.where(sql<boolean>`lower(${sql.ref('name')}) like ${likePattern(f.name)} escape '\\'`);
  if (f.statuses?.length) out = out.where('status', 'in', f.statuses);
  return out as AssetQuery<T>;
}

export class CatalogueRepository {
  /** Listings (rooms of a project, desks by id, a floor) share parsed values; single reads parse afresh. */
  private readonly shared = new ParsedTexts();
  private readonly statements: PreparedStatements;

  constructor(private readonly db: Kysely<Database>) {
    this.statements = new PreparedStatements(db);
  }

  async project(id: string, db: Db = this.db): Promise<ProjectRow | undefined> {
    return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst() as Promise<ProjectRow | undefined>;
  }

  async projects(ids: string[], db: Db = this.db): Promise<ProjectRow[]> {
    if (!ids.length) return [];
    return db.selectFrom('projects').selectAll().where('id', 'in', ids).execute() as Promise<ProjectRow[]>;
  }

  /** Every room of a project. */
  /**
   * Every room of the project, by name (then id), read ROOM_PAGE rooms at a time with a turn of the event loop
   * between pages: one read of 10,000 rooms and their parsing held SQLite's synchronous driver (and this
   * process) for a few hundred milliseconds.
   */
  async projectRooms(projectId: string, db: Db = this.db): Promise<RoomRow[]> {
    const rooms: RoomRow[] = [];
    const page = (after: { name: string; id: string } | null) =>
      db
        .selectFrom('rooms')
        .selectAll()
        .where('project_id', '=', projectId)
        .$if(after !== null, (q) => q.where((eb) => eb(eb.refTuple('name', 'id'), '>', eb.tuple(after!.name, after!.id))))
        .orderBy('name')
        .orderBy('id')
        .limit(ROOM_PAGE)
        .execute();
    for (let rows = await page(null); ; rows = await page(rows[rows.length - 1]!)) {
      for (const r of rows) rooms.push(roomRecord(r, this.shared.parse));
      if (rows.length < ROOM_PAGE) return rooms;
      await nextTurn();
    }
  }

  /** Changes whenever a room of the project is added or changed (apply never deletes). */
  async roomsVersion(projectId: string, db: Db = this.db): Promise<string> {
    const row = await db
      .selectFrom('rooms')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('updated_at').as('latest'), eb.fn.sum('updated_at').as('total')])
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return `${Number(row.n)}:${Number(row.latest ?? 0)}:${String(row.total ?? 0)}`;
  }

  async room(id: string, db: Db = this.db): Promise<RoomRow | undefined> {
    const row = await db.selectFrom('rooms').selectAll().where('id', '=', id).executeTakeFirst();
    return row && roomRecord(row, JSON.parse);
  }

  /** Changes whenever a desk of one of the projects is added, changed or moved in or out (apply never deletes). */
  async desksVersion(projectIds: string[], db: Db = this.db): Promise<string> {
    if (!projectIds.length) return '';
    const row = await db
      .selectFrom('desks')
      // The sum as text: exact on both engines however many desks (a number would round past 2^53).
      .select((eb) => [
        eb.fn.countAll<number>().as('n'),
        eb.fn.max('updated_at').as('latest'),
        eb.cast<string>(eb.fn.sum('updated_at'), 'text').as('total'),
      ])
      .where('project_id', 'in', projectIds)
      .executeTakeFirstOrThrow();
    return `${Number(row.n)}:${Number(row.latest ?? 0)}:${String(row.total ?? 0)}`;
  }

  /**
   * The desks matching the filter, in listing order (project, index, name, id): only
   * their ids and `updated_at`, so a search reads whole rows only when they changed
   * (see desk-snapshots.ts).
   */
  async deskVersions(f: DeskFilter, db: Db = this.db): Promise<DeskVersion[]> {
    if (!f.projectIds.length) return [];
    let q = commonFilters(db.selectFrom('desks').select(['id', 'updated_at']).where('project_id', 'in', f.projectIds), f);
    if (f.brandId) q = q.where('brand_id', '=', f.brandId);
    if (f.email) q = q.where((eb) => eb(eb.fn('lower', ['email']), '=', f.email!.toLowerCase()));
    q = q.where((eb) =>
      f.privateProjectIds.length ? eb.or([eb('is_public', '=', 1), eb('project_id', 'in', f.privateProjectIds)]) : eb('is_public', '=', 1),
    );
    return (await q.orderBy('project_id').orderBy('desk_index').orderBy('name').orderBy('id').execute()) as DeskVersion[];
  }

  /** Whole desk rows by id, in no particular order (ids that do not exist are left out). */
  async desksByIds(ids: readonly string[], db: Db = this.db): Promise<DeskRow[]> {
    const out: DeskRow[] = [];
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const rows = await db
        .selectFrom('desks')
        .selectAll()
        .where('id', 'in', ids.slice(i, i + ID_CHUNK))
        .execute();
      out.push(...rows.map((d) => deskRecord(d, this.shared.parse)));
    }
    return out;
  }

  async desk(id: string, db: Db = this.db): Promise<DeskRow | undefined> {
    const row = await db.selectFrom('desks').selectAll().where('id', '=', id).executeTakeFirst();
    return row && deskRecord(row, JSON.parse);
  }

  /**
   * An asset with its project and its floor's name, in one read (what a booking
   * change is written against).
   */
  /** Ids of the rooms with one of these emails (case-insensitive), with their lower-cased email. */
  /** The project's rooms that have an email (their calendars can be connected). */
  async roomIdsWithEmail(projectId: string, db: Db = this.db): Promise<{ id: string; email: string }[]> {
    const rows = await db
      .selectFrom('rooms')
      .innerJoin('floors', 'floors.id', 'rooms.floor_id')
      .select(['rooms.id', 'rooms.email'])
      .where('floors.project_id', '=', projectId)
      .where('rooms.email', 'is not', null)
      .where('rooms.email', '!=', '')
      .orderBy('rooms.id')
      .execute();
    return rows.map((r) => ({ id: r.id, email: (r.email ?? '').toLowerCase() }));
  }

  async roomIdsByEmail(emails: string[], db: Db = this.db): Promise<{ id: string; email: string }[]> {
    if (!emails.length) return [];
    const rows = await db
      .selectFrom('rooms')
      .select(['id', 'email'])
      .where((eb) =>
        eb(
          eb.fn('lower', ['email']),
          'in',
          emails.map((e) => e.toLowerCase()),
        ),
      )
      .execute();
    return rows.map((r) => ({ id: r.id, email: (r.email ?? '').toLowerCase() }));
  }

  /** A floor with its project and every room and desk on it (the console's floor view). */
  async floorAssets(floorId: string, db: Db = this.db): Promise<{ project: ProjectRow; rooms: RoomRow[]; desks: DeskRow[] } | undefined> {
    const floor = await db.selectFrom('floors').select(['id', 'project_id']).where('id', '=', floorId).executeTakeFirst();
    if (!floor) return undefined;
    const project = await this.project(floor.project_id, db);
    if (!project) return undefined;
    const rooms = await db.selectFrom('rooms').selectAll().where('floor_id', '=', floorId).orderBy('name').orderBy('id').execute();
    const desks = await db.selectFrom('desks').selectAll().where('floor_id', '=', floorId).orderBy('desk_index').orderBy('id').execute();
    return {
      project,
      rooms: rooms.map((r) => roomRecord(r, this.shared.parse)),
      desks: desks.map((d) => deskRecord(d, this.shared.parse)),
    };
  }

  async assetInContext(kind: 'room' | 'desk', id: string, db: Db = this.db): Promise<AssetInContext | undefined> {
    const table = assetTable(kind);
    // A table chosen at run time (rooms or desks): Kysely cannot type it; the select list below is checked by the tests.
    const [row] = await this.statements.rows<Record<string, unknown>>(
      db,
      `assetInContext:${table}`,
      (root) =>
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        (root as Kysely<any>)
          .selectFrom(`${table} as a`)
          .innerJoin('projects as p', 'p.id', 'a.project_id')
          .leftJoin('floors as f', 'f.id', 'a.floor_id')
          .selectAll('a')
          .select(PROJECT_COLUMNS.map((c) => `p.${c} as p_${c}`))
          .select('f.name as floor_name')
          .where('a.id', '=', slot(0))
          .compile(),
      [id],
    );
    if (!row) return undefined;
    // One pass over the joined row: `p_*` columns are the project's, `floor_name` the floor's, the rest the asset's.
    const project: Record<string, unknown> = {};
    const stored: Record<string, unknown> = {};
    for (const k in row) {
      if (k.startsWith('p_')) project[k.slice(2)] = row[k];
      else if (k !== 'floor_name') stored[k] = row[k];
    }
    const asset =
      kind === 'room' ? roomRecord(stored as unknown as RoomTable, JSON.parse) : deskRecord(stored as unknown as DeskTable, JSON.parse);
    return { asset, project: project as unknown as ProjectRow, floorName: (row.floor_name as string | null) ?? '' };
  }
}
