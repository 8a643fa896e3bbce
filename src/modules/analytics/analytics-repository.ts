/**
 * The analytics module's SQL: what is pending (history entries and walk-ins not yet taken in),
 * the bookings and histories to judge, the occurrences' stored buckets, the rollups (additive
 * upserts), the assets' hours per day, the job's lease, and the reads a question makes.
 */
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import { chunked } from '../../platform/db/in-chunks.js';
import type { Db } from '../../platform/db/db.js';
import type { AnalyticsAssetTable, AnalyticsOccurrenceTable, Database, RoomTable } from '../../platform/db/schema.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type RoomsFrom = SelectQueryBuilder<Database & { a: RoomTable }, 'a', {}>;
import type { Level, LevelRead, RollupDelta } from './rules/rollup-levels.js';
import { FIGURE_NAMES, type Bucket, type HistoryInput } from './rules/booking-figures.js';

export interface BookingRecord {
  id: string;
  project_id: string;
  asset_kind: string;
  asset_id: string;
  organizer_user_id: string;
  status: string;
  start_at: number;
  booked_end_at: number;
  recurrence: string | null;
}

/** A stored occurrence, its buckets parsed. */
export type OccurrenceRecord = Omit<Selectable<AnalyticsOccurrenceTable>, 'buckets'> & { buckets: Bucket[] };

export interface WalkInRecord {
  id: string;
  project_id: string;
  asset_kind: string;
  asset_id: string;
  device_at: number;
}

export interface AssetRecord {
  id: string;
  kind: 'room' | 'desk';
  project_id: string;
  name: string;
  status: string;
  config: string | null;
  created_at: number;
  updated_at: number;
  floor_id: string | null;
  floor_name: string | null;
  zone_id: string | null;
  zone_name: string | null;
  timezone: string;
  project_updated_at: number;
}

export type VersionRecord = Selectable<AnalyticsAssetTable>;

export interface RollupRecord {
  level: Level;
  /** '' when the rows were not grouped by asset. */
  asset_id: string;
  /** '' when the rows were not grouped by period. */
  period: string;
  /** -1 when the rows were not grouped by slot. */
  slot: number;
  figures: number[];
  /** `held` of the rows wholly before today. */
  reached: number;
}

export type RollupGroupColumn = 'asset_id' | 'period' | 'slot';

/** Rows per multi-row statement (SQLite's parameter limit is far above 15 × this). */
const CHUNK = 400;
const LEASE = 'refresh';

function rollupRows(projectId: string, kind: string, deltas: readonly RollupDelta[]): Database['analytics_rollups'][] {
  return deltas.map((d) => {
    const row: Record<string, string | number> = {
      project_id: projectId,
      asset_kind: kind,
      level: d.level,
      asset_id: d.assetId,
      period: d.period,
      slot: d.slot,
    };
    FIGURE_NAMES.forEach((n, i) => (row[n] = d.figures[i]));
    return row as unknown as Database['analytics_rollups'];
  });
}

export class AnalyticsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** History entries not yet taken in (ids and their bookings), at most `limit`. */
  async pendingHistories(limit: number, db: Db = this.db): Promise<{ id: string; meeting_id: string }[]> {
    return db.selectFrom('meeting_histories').select(['id', 'meeting_id']).where('analytics_at', 'is', null).limit(limit).execute();
  }

  async markHistories(ids: readonly string[], at: number, db: Db = this.db): Promise<void> {
    for (const part of chunked(ids, 900)) {
      await db.updateTable('meeting_histories').set({ analytics_at: at }).where('id', 'in', part).execute();
    }
  }

  async bookings(ids: readonly string[], db: Db = this.db): Promise<BookingRecord[]> {
    if (!ids.length) return [];
    const out: BookingRecord[] = [];
    for (const part of chunked(ids, 900)) {
      out.push(
        ...(await db
          .selectFrom('meetings')
          .select(['id', 'project_id', 'asset_kind', 'asset_id', 'organizer_user_id', 'status', 'start_at', 'booked_end_at', 'recurrence'])
          .where('id', 'in', part)
          .execute()),
      );
    }
    return out.map((r) => ({ ...r, start_at: Number(r.start_at), booked_end_at: Number(r.booked_end_at) }));
  }

  /** Bookings of assets whose span reaches `from` or later (to refresh after a change of hours). */
  async bookingIdsOfAssets(assetIds: readonly string[], from: number, db: Db = this.db): Promise<string[]> {
    if (!assetIds.length) return [];
    const rows = await db.selectFrom('meetings').select('id').where('asset_id', 'in', assetIds).where('span_end_at', '>=', from).execute();
    return rows.map((r) => r.id);
  }

  async histories(meetingIds: readonly string[], db: Db = this.db): Promise<Map<string, HistoryInput[]>> {
    const out = new Map<string, HistoryInput[]>();
    for (const part of chunked(meetingIds, 900)) {
      const rows = await db
        .selectFrom('meeting_histories')
        .select(['meeting_id', 'action', 'at', 'source', 'reason', 'status_before', 'old_end_at', 'new_end_at'])
        .where('meeting_id', 'in', part)
        .orderBy('meeting_id')
        .orderBy('seq')
        .execute();
      for (const r of rows) {
        const h: HistoryInput = {
          action: r.action,
          at: Number(r.at),
          source: r.source,
          reason: r.reason,
          statusBefore: r.status_before,
          oldEnd: r.old_end_at === null ? null : Number(r.old_end_at),
          newEnd: r.new_end_at === null ? null : Number(r.new_end_at),
        };
        const list = out.get(r.meeting_id);
        if (list) list.push(h);
        else out.set(r.meeting_id, [h]);
      }
    }
    return out;
  }

  async occurrences(meetingIds: readonly string[], db: Db = this.db): Promise<OccurrenceRecord[]> {
    const out: OccurrenceRecord[] = [];
    for (const part of chunked(meetingIds, 900)) {
      const rows = await db.selectFrom('analytics_occurrences').selectAll().where('meeting_id', 'in', part).execute();
      for (const r of rows) {
        out.push({ ...r, start_at: Number(r.start_at), booked: Number(r.booked), buckets: JSON.parse(r.buckets) as Bucket[] });
      }
    }
    return out;
  }

  async replaceOccurrences(meetingIds: readonly string[], rows: readonly OccurrenceRecord[], db: Db = this.db): Promise<void> {
    for (const part of chunked(meetingIds, 900)) await db.deleteFrom('analytics_occurrences').where('meeting_id', 'in', part).execute();
    await this.insertOccurrences(rows, db);
  }

  async insertOccurrences(rows: readonly OccurrenceRecord[], db: Db = this.db): Promise<void> {
    for (const part of chunked(rows, 200)) {
      await db
        .insertInto('analytics_occurrences')
        .values(part.map((r) => ({ ...r, buckets: JSON.stringify(r.buckets) })))
        .execute();
    }
  }

  /** New rollup rows (the rebuild, into an emptied table). */
  async insertRollups(projectId: string, kind: string, deltas: readonly RollupDelta[], db: Db = this.db): Promise<void> {
    for (const part of chunked(deltas, CHUNK))
      await db
        .insertInto('analytics_rollups')
        .values(rollupRows(projectId, kind, part))
        .execute();
  }

  /** Adds each delta to its rollup row (created at zero when missing). */
  async applyDeltas(projectId: string, kind: string, deltas: readonly RollupDelta[], db: Db = this.db): Promise<void> {
    for (const part of chunked(deltas, CHUNK)) {
      await db
        .insertInto('analytics_rollups')
        .values(rollupRows(projectId, kind, part))
        .onConflict((oc) =>
          oc
            .columns(['project_id', 'asset_kind', 'level', 'asset_id', 'period', 'slot'])
            .doUpdateSet((eb) =>
              Object.fromEntries(FIGURE_NAMES.map((n) => [n, eb(eb.ref(`analytics_rollups.${n}`), '+', eb.ref(`excluded.${n}`))])),
            ),
        )
        .execute();
    }
  }

  async pendingWalkIns(limit: number, db: Db = this.db): Promise<WalkInRecord[]> {
    const rows = await db
      .selectFrom('access_entries')
      .select(['id', 'project_id', 'asset_kind', 'asset_id', 'device_at'])
      .where('outcome', '=', 'walk-in')
      .where('analytics_at', 'is', null)
      .where('asset_id', 'is not', null)
      .limit(limit)
      .execute();
    return rows
      .filter((r) => r.asset_id !== null && r.asset_kind !== null)
      .map((r) => ({ ...r, asset_kind: r.asset_kind!, asset_id: r.asset_id!, device_at: Number(r.device_at) }));
  }

  /** Every walk-in (the rebuild), optionally of one project. */
  async walkInsAfter(after: string, limit: number, projectId: string | null, db: Db = this.db): Promise<WalkInRecord[]> {
    let q = db
      .selectFrom('access_entries')
      .select(['id', 'project_id', 'asset_kind', 'asset_id', 'device_at'])
      .where('outcome', '=', 'walk-in')
      .where('id', '>', after);
    if (projectId) q = q.where('project_id', '=', projectId);
    const rows = await q.orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ ...r, asset_kind: r.asset_kind ?? '', asset_id: r.asset_id ?? '', device_at: Number(r.device_at) }));
  }

  async markWalkIns(ids: readonly string[], at: number, db: Db = this.db): Promise<void> {
    for (const part of chunked(ids, 900))
      await db.updateTable('access_entries').set({ analytics_at: at }).where('id', 'in', part).execute();
  }

  /** Rooms and desks (with floor, zone and the project's zone), of one project and kind, or all. */
  async assets(
    filter: { projectId?: string; kind?: 'room' | 'desk'; ids?: readonly string[] } = {},
    db: Db = this.db,
  ): Promise<AssetRecord[]> {
    const out: AssetRecord[] = [];
    for (const kind of ['room', 'desk'] as const) {
      if (filter.kind && filter.kind !== kind) continue;
      // Rooms and desks share every column read here; the desks query is typed as the rooms one.
      const from = kind === 'room' ? db.selectFrom('rooms as a') : (db.selectFrom('desks as a') as unknown as RoomsFrom);
      let q = from
        .innerJoin('projects as p', 'p.id', 'a.project_id')
        .leftJoin('floors as f', 'f.id', 'a.floor_id')
        .leftJoin('zones as z', 'z.id', 'a.zone_id')
        .select([
          'a.id',
          'a.project_id',
          'a.name',
          'a.status',
          'a.config',
          'a.created_at',
          'a.updated_at',
          'a.floor_id',
          'f.name as floor_name',
          'a.zone_id',
          'z.name as zone_name',
          'p.timezone',
          'p.updated_at as project_updated_at',
        ]);
      if (filter.projectId) q = q.where('a.project_id', '=', filter.projectId);
      if (filter.ids) {
        if (!filter.ids.length) continue;
        q = q.where('a.id', 'in', filter.ids);
      }
      for (const r of await q.orderBy('a.id').execute()) {
        out.push({
          ...r,
          kind,
          config: r.config as string | null,
          created_at: Number(r.created_at),
          updated_at: Number(r.updated_at),
          project_updated_at: Number(r.project_updated_at),
        });
      }
    }
    return out;
  }

  /** Every room's and desk's change mark (its and its project's updated_at): what the job compares each pass. */
  async assetMarks(projectId: string | null = null, db: Db = this.db): Promise<{ id: string; mark: string }[]> {
    const out: { id: string; mark: string }[] = [];
    for (const table of ['rooms', 'desks'] as const) {
      let q = db
        .selectFrom(`${table} as a` as 'rooms as a')
        .innerJoin('projects as p', 'p.id', 'a.project_id')
        .select(['a.id', 'a.updated_at', 'p.updated_at as project_updated_at']);
      if (projectId) q = q.where('a.project_id', '=', projectId);
      const rows = await q.execute();
      for (const r of rows) out.push({ id: r.id, mark: `${Number(r.updated_at)}:${Number(r.project_updated_at)}` });
    }
    return out;
  }

  async versions(assetIds: readonly string[] | null, db: Db = this.db): Promise<VersionRecord[]> {
    if (assetIds && !assetIds.length) return [];
    if (!assetIds) return db.selectFrom('analytics_assets').selectAll().orderBy('asset_id').orderBy('from_day').execute();
    const out: VersionRecord[] = [];
    for (const part of chunked(assetIds, 900)) {
      out.push(...(await db.selectFrom('analytics_assets').selectAll().where('asset_id', 'in', part).orderBy('from_day').execute()));
    }
    return out;
  }

  async putVersion(v: VersionRecord, db: Db = this.db): Promise<void> {
    await db
      .insertInto('analytics_assets')
      .values(v)
      .onConflict((oc) =>
        oc
          .columns(['asset_id', 'from_day'])
          .doUpdateSet({ hours: v.hours, timezone: v.timezone, active: v.active, source_mark: v.source_mark }),
      )
      .execute();
  }

  async markVersion(assetId: string, fromDay: string, mark: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable('analytics_assets')
      .set({ source_mark: mark })
      .where('asset_id', '=', assetId)
      .where('from_day', '=', fromDay)
      .execute();
  }

  /** Takes (or renews) the refresh lease for `owner` until `until`; false while another holds it. */
  async claimLease(owner: string, now: number, until: number, db: Db = this.db): Promise<boolean> {
    await db
      .insertInto('analytics_state')
      .values({ name: LEASE, lease_until: 0, lease_owner: '' })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const r = await db
      .updateTable('analytics_state')
      .set({ lease_until: until, lease_owner: owner })
      .where('name', '=', LEASE)
      .where((w) => w.or([w('lease_until', '<', now), w('lease_owner', '=', owner)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async releaseLease(owner: string, db: Db = this.db): Promise<void> {
    await db.updateTable('analytics_state').set({ lease_until: 0 }).where('name', '=', LEASE).where('lease_owner', '=', owner).execute();
  }

  /**
   * Sums of the rollup rows of the reads, grouped by `by` (one statement per read, each a range of the
   * primary key), for the project-level rows (assetIds null) or those assets. `reached` sums `held`
   * over the rows wholly before `today` (a day row before it; a month row before its month).
   */
  async rollups(
    projectId: string,
    kind: string,
    reads: readonly LevelRead[],
    assetIds: readonly string[] | null,
    by: readonly RollupGroupColumn[],
    today: string,
    db: Db = this.db,
  ): Promise<RollupRecord[]> {
    if (assetIds && !assetIds.length) return [];
    const out: RollupRecord[] = [];
    for (const read of reads) {
      const before = read.level === 'am' || read.level === 'amw' ? today.slice(0, 7) : today;
      for (const part of assetIds ? chunked(assetIds, 2000) : [null]) {
        let q = db
          .selectFrom('analytics_rollups')
          .select((eb) => [
            ...by,
            ...FIGURE_NAMES.map((n) => eb.fn.sum<number>(n).as(n)),
            eb.fn.sum<number>(eb.case().when('period', '<', before).then(eb.ref('held')).else(0).end()).as('reached'),
          ])
          .where('project_id', '=', projectId)
          .where('asset_kind', '=', kind)
          .where('level', '=', read.level)
          .where((w) => (part ? w('asset_id', 'in', part) : w('asset_id', '=', '')))
          .where('period', '>=', read.from)
          .where('period', '<=', read.to);
        if (by.length) q = q.groupBy([...by]);
        for (const r of (await q.execute()) as Record<string, unknown>[]) {
          out.push({
            level: read.level,
            asset_id: typeof r.asset_id === 'string' ? r.asset_id : '',
            period: typeof r.period === 'string' ? r.period : '',
            slot: r.slot === undefined ? -1 : Number(r.slot),
            figures: FIGURE_NAMES.map((n) => Number(r[n] ?? 0)),
            reached: Number(r.reached ?? 0),
          });
        }
      }
    }
    return out;
  }

  /** Held occurrences starting in [from, to) (instants), of one project and kind (optionally those assets). */
  async heldStarts(projectId: string, kind: string, from: number, to: number, assetIds: readonly string[] | null, db: Db = this.db) {
    if (to <= from || (assetIds && !assetIds.length)) return [];
    let q = db
      .selectFrom('analytics_occurrences')
      .select(['asset_id', 'start_at'])
      .where('project_id', '=', projectId)
      .where('asset_kind', '=', kind)
      .where('start_at', '>=', from)
      .where('start_at', '<', to)
      .where('held', '=', 1);
    if (assetIds) q = q.where('asset_id', 'in', assetIds);
    return (await q.execute()).map((r) => ({ assetId: r.asset_id, start: Number(r.start_at) }));
  }

  /** Per organizer, sums over the occurrences starting in [from, to) of one project and kind (the named report). */
  async organizerSums(projectId: string, kind: string, from: number, to: number, now: number, db: Db = this.db) {
    const rows = await db
      .selectFrom('analytics_occurrences')
      .select((eb) => {
        const reached = eb.and([eb('held', '=', 1), eb('start_at', '<=', now)]);
        return [
          'organizer_user_id',
          eb.fn.countAll<number>().as('bookings'),
          eb.fn.sum<number>('booked').as('booked'),
          eb.fn.sum<number>('no_show').as('no_shows'),
          eb.fn.sum<number>(eb.case().when(reached).then(1).else(0).end()).as('reached'),
          eb.fn
            .sum<number>(
              eb
                .case()
                .when(eb.and([reached, eb('checked_in', '=', 0)]))
                .then(1)
                .else(0)
                .end(),
            )
            .as('ghosts'),
        ];
      })
      .where('project_id', '=', projectId)
      .where('asset_kind', '=', kind)
      .where('start_at', '>=', from)
      .where('start_at', '<', to)
      .groupBy('organizer_user_id')
      .execute();
    return rows.map((r) => ({
      userId: r.organizer_user_id,
      bookings: Number(r.bookings),
      booked: Number(r.booked),
      noShows: Number(r.no_shows),
      reached: Number(r.reached),
      ghosts: Number(r.ghosts),
    }));
  }

  async users(ids: readonly string[], db: Db = this.db): Promise<Map<string, { name: string | null; email: string | null }>> {
    const out = new Map<string, { name: string | null; email: string | null }>();
    for (const part of chunked(ids, 900)) {
      const rows = await db.selectFrom('users').select(['id', 'name', 'email']).where('id', 'in', part).execute();
      for (const r of rows) out.set(r.id, { name: r.name, email: r.email });
    }
    return out;
  }

  async project(id: string, db: Db = this.db) {
    return db.selectFrom('projects').select(['id', 'name', 'timezone', 'analytics_named_reports']).where('id', '=', id).executeTakeFirst();
  }

  /** What the figures have not taken in yet (the status route). */
  async pending(projectId: string, db: Db = this.db): Promise<{ bookings: number; walkIns: number }> {
    const b = await db
      .selectFrom('meeting_histories as h')
      .innerJoin('meetings as m', 'm.id', 'h.meeting_id')
      .select(sql<number>`count(distinct h.meeting_id)`.as('n'))
      .where('h.analytics_at', 'is', null)
      .where('m.project_id', '=', projectId)
      .executeTakeFirst();
    const w = await db
      .selectFrom('access_entries')
      .select(sql<number>`count(*)`.as('n'))
      .where('outcome', '=', 'walk-in')
      .where('analytics_at', 'is', null)
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return { bookings: Number(b?.n ?? 0), walkIns: Number(w?.n ?? 0) };
  }

  /** Backlog for /metrics: bookings waiting to be taken in. */
  async pendingCount(db: Db = this.db): Promise<number> {
    const r = await db
      .selectFrom('meeting_histories')
      .select(sql<number>`count(distinct meeting_id)`.as('n'))
      .where('analytics_at', 'is', null)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /**
   * Empties a slice of the figures (all, or one project's) before a rebuild: at most `limit` rows of
   * each table per call, so no statement runs long; returns how many rows went.
   */
  async clearSome(projectId: string | null, limit: number, db: Db = this.db): Promise<number> {
    const where = projectId ? sql`where project_id = ${projectId}` : sql``;
    const occ = await sql`delete from analytics_occurrences where (meeting_id, occurrence_id) in
      (select meeting_id, occurrence_id from analytics_occurrences ${where} limit ${limit})`.execute(db);
    const roll = await sql`delete from analytics_rollups where (project_id, asset_kind, level, asset_id, period, slot) in
      (select project_id, asset_kind, level, asset_id, period, slot from analytics_rollups ${where} limit ${limit})`.execute(db);
    return Number(occ.numAffectedRows ?? 0) + Number(roll.numAffectedRows ?? 0);
  }

  /** Marks a slice of what is pending as taken in (after a rebuild started), all or one project's; returns how many. */
  async markSomeTaken(projectId: string | null, at: number, limit: number, db: Db = this.db): Promise<number> {
    let pick = db.selectFrom('meeting_histories').select('id').where('analytics_at', 'is', null);
    if (projectId) pick = pick.where('meeting_id', 'in', db.selectFrom('meetings').select('id').where('project_id', '=', projectId));
    const h = await db.updateTable('meeting_histories').set({ analytics_at: at }).where('id', 'in', pick.limit(limit)).executeTakeFirst();
    let walk = db.selectFrom('access_entries').select('id').where('outcome', '=', 'walk-in').where('analytics_at', 'is', null);
    if (projectId) walk = walk.where('project_id', '=', projectId);
    const e = await db.updateTable('access_entries').set({ analytics_at: at }).where('id', 'in', walk.limit(limit)).executeTakeFirst();
    return Number(h.numUpdatedRows) + Number(e.numUpdatedRows);
  }
}
