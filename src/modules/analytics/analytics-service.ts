/**
 * The analytics service: keeps the figures (the `analytics` job's pass: assets' hours per day,
 * then the bookings whose history has entries not yet taken in, then walk-ins), answers the
 * utilisation and per-organizer questions from the rollups, and rebuilds everything from the
 * bookings. One instance refreshes at a time (a lease); answers are read by any instance.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { AnalyticsStatus, OrganizerRow, OrganizersQuery, UtilisationQuery, UtilisationRow } from '../../contract/analytics.js';
import { ANALYTICS_MAX_DAYS } from '../../contract/analytics.js';
import type { Clock } from '../../platform/clock/clock.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import { writeTransaction } from '../../platform/db/transactions.js';
import type { Db } from '../../platform/db/db.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { dayNumber, instantAtLocalTime, isoDate, localDayOf, zoneOf } from '../../platform/time/wall-clock.js';
import type { AssetConfig } from '../booking/rules/asset-config.js';
import {
  FIGURE_NAMES,
  localHourOf,
  occurrenceBuckets,
  occurrenceOutcomes,
  walkInBucket,
  type AssetTime,
  type BookingInput,
  type HistoryInput,
} from './rules/booking-figures.js';
import { countsAsActive, versionSignature, weekHours, type HoursVersion, type WeekHours } from './rules/opening-hours.js';
import { addBuckets, nonZero, plan, type RollupDelta, type Scope, type TimeGrain } from './rules/rollup-levels.js';
import { foldRows, groupColumns, type AssetInfo } from './rules/utilisation-rows.js';
import type {
  AnalyticsRepository,
  AssetRecord,
  BookingRecord,
  OccurrenceRecord,
  RollupRecord,
  VersionRecord,
  WalkInRecord,
} from './analytics-repository.js';

export interface AnalyticsServiceDeps {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  /** Real time, for the lease. */
  realClock: Clock;
  repo: AnalyticsRepository;
  /** Bookings per batch (one transaction each). */
  batchSize?: number;
}

const LEASE_MS = 60_000;
const I = Object.fromEntries(FIGURE_NAMES.map((n, i) => [n, i])) as Record<(typeof FIGURE_NAMES)[number], number>;

/** Deltas per project and asset kind. */
type DeltaSets = Map<string, Map<string, RollupDelta>>;

function deltasOf(sets: DeltaSets, projectId: string, kind: string): Map<string, RollupDelta> {
  const key = `${projectId}\u0000${kind}`;
  let m = sets.get(key);
  if (!m) sets.set(key, (m = new Map<string, RollupDelta>()));
  return m;
}

function splitKey(key: string): [string, string] {
  const [projectId, kind] = key.split('\u0000');
  return [projectId, kind];
}

/** Adds `d` into the set's row of the same key. */
function mergeDelta(into: Map<string, RollupDelta>, d: RollupDelta): void {
  const id = `${d.level}|${d.assetId}|${d.period}|${d.slot}`;
  const row = into.get(id);
  if (!row) into.set(id, { ...d, figures: [...d.figures] });
  else for (let i = 0; i < row.figures.length; i++) row.figures[i] += d.figures[i];
}

function parseConfig(text: string | null): AssetConfig | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as AssetConfig;
  } catch {
    return null;
  }
}

function versionOf(r: VersionRecord): HoursVersion {
  return { fromDay: dayNumber(r.from_day), hours: JSON.parse(r.hours) as WeekHours, timezone: r.timezone, active: r.active === 1 };
}

/** The hours an asset has now, as a version from `fromDay`. */
function currentVersion(a: AssetRecord, fromDay: number): HoursVersion {
  return { fromDay, hours: weekHours(parseConfig(a.config)), timezone: a.timezone, active: countsAsActive(a.kind, a.status) };
}

const markOf = (a: AssetRecord) => `${a.updated_at}:${a.project_updated_at}`;

/** Assets whose hours one transaction of `syncAssets` records (each with the bookings it judges again). */
const SYNC_CHUNK = 100;

export class AnalyticsService {
  private readonly owner = newId();
  private readonly seenMarks = new Map<string, string>();

  constructor(private readonly deps: AnalyticsServiceDeps) {}

  // ---------------------------------------------------------------------------------------------
  // Keeping the figures
  // ---------------------------------------------------------------------------------------------

  /** Whether a pass has anything to take in: a pending history entry or walk-in, or an asset changed. */
  async hasWork(): Promise<boolean> {
    const { repo } = this.deps;
    if ((await repo.pendingHistories(1)).length || (await repo.pendingWalkIns(1)).length) return true;
    return (await repo.assetMarks()).some((m) => this.seenMarks.get(m.id) !== m.mark);
  }

  /** One pass of the job: true when it did something (more may be pending). */
  async refresh(maxBatches = 20): Promise<boolean> {
    const { repo, realClock } = this.deps;
    const realNow = realClock.now();
    if (!(await repo.claimLease(this.owner, realNow, realNow + LEASE_MS))) return false;
    let did = false;
    try {
      did = (await this.syncAssets()) || did;
      for (let i = 0; i < maxBatches; i++) {
        const more = await this.refreshBatch();
        did = did || more;
        if (!more) break;
        await repo.claimLease(this.owner, realClock.now(), realClock.now() + LEASE_MS);
      }
      did = (await this.countWalkIns()) || did;
    } finally {
      await repo.releaseLease(this.owner);
    }
    return did;
  }

  /**
   * Records each asset's hours, zone and status per local day they took effect, and judges again
   * the bookings a change touches, in the same transaction (no answer sees new hours with old figures).
   */
  async syncAssets(): Promise<boolean> {
    const { repo } = this.deps;
    const marks = await repo.assetMarks();
    const changed = marks.filter((m) => this.seenMarks.get(m.id) !== m.mark).map((m) => m.id);
    if (!changed.length) return false;
    // A hundred assets at a time (read, then recorded in one transaction), the event loop getting a turn between
    // them: a site apply that adds ten thousand rooms must not hold SQLite's one connection (and every request).
    for (let at = 0; at < changed.length; at += SYNC_CHUNK) {
      if (at > 0) await nextTurn();
      const ids = changed.slice(at, at + SYNC_CHUNK);
      const chunk = await repo.assets({ ids });
      const latest = new Map<string, VersionRecord>();
      for (const v of await repo.versions(ids)) latest.set(v.asset_id, v);
      await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
        for (const a of chunk) {
          const from = await this.syncAsset(a, latest.get(a.id), trx);
          if (from === null) continue;
          const bookings = await repo.bookingIdsOfAssets([a.id], from, trx);
          for (let i = 0; i < bookings.length; i += this.batchSize())
            await this.refreshIn(trx, bookings.slice(i, i + this.batchSize()), []);
        }
      });
      for (const a of chunk) this.seenMarks.set(a.id, markOf(a));
    }
    return true;
  }

  /** Stores the asset's version if it changed; returns the instant from which its bookings must be judged again, or null. */
  private async syncAsset(a: AssetRecord, latest: VersionRecord | undefined, trx: Db): Promise<number | null> {
    const zone = zoneOf(a.timezone);
    const mark = markOf(a);
    if (!latest) {
      const created = localDayOf(zone, a.created_at);
      const v = currentVersion(a, created);
      await this.deps.repo.putVersion(this.record(a, v, mark), trx);
      return null;
    }
    const today = localDayOf(zone, this.deps.clock.now());
    const v = currentVersion(a, today);
    if (versionSignature(v) === versionSignature(versionOf(latest))) {
      if (latest.source_mark !== mark) await this.deps.repo.markVersion(a.id, latest.from_day, mark, trx);
      return null;
    }
    await this.deps.repo.putVersion(this.record(a, { ...v, fromDay: Math.max(today, dayNumber(latest.from_day)) }, mark), trx);
    return instantAtLocalTime(zone, today, 0);
  }

  private record(a: AssetRecord, v: HoursVersion, mark: string): VersionRecord {
    return {
      asset_id: a.id,
      from_day: isoDate(v.fromDay),
      project_id: a.project_id,
      asset_kind: a.kind,
      hours: JSON.stringify(v.hours),
      timezone: v.timezone,
      active: v.active ? 1 : 0,
      source_mark: mark,
    };
  }

  private batchSize(): number {
    return this.deps.batchSize ?? 250;
  }

  /** Takes in the bookings of one batch of pending history entries; false when none was pending. */
  private async refreshBatch(): Promise<boolean> {
    const pending = await this.deps.repo.pendingHistories(this.batchSize() * 4);
    if (!pending.length) return false;
    const meetings = [...new Set(pending.map((p) => p.meeting_id))].slice(0, this.batchSize());
    const chosen = new Set(meetings);
    await this.refreshBookings(
      meetings,
      pending.filter((p) => chosen.has(p.meeting_id)).map((p) => p.id),
    );
    return true;
  }

  /**
   * Judges the bookings again from what is stored and moves the rollups by the difference, in one
   * transaction, then marks the history entries read before (a change committed meanwhile has an
   * entry of its own and is taken in by the next batch).
   */
  async refreshBookings(meetingIds: readonly string[], historyIds: readonly string[]): Promise<void> {
    await writeTransaction(this.deps.db, this.deps.engine, (trx) => this.refreshIn(trx, meetingIds, historyIds));
  }

  private async refreshIn(trx: Db, meetingIds: readonly string[], historyIds: readonly string[]): Promise<void> {
    const { repo } = this.deps;
    const bookings = await repo.bookings(meetingIds, trx);
    const histories = await repo.histories(meetingIds, trx);
    const old = await repo.occurrences(meetingIds, trx);
    const times = await this.assetTimes([...bookings.map((b) => b.asset_id), ...old.map((o) => o.asset_id)], trx);
    const sets: DeltaSets = new Map();
    for (const o of old) addBuckets(deltasOf(sets, o.project_id, o.asset_kind), o.asset_id, o.buckets, -1);
    const rows = this.judge(bookings, histories, times, sets);
    await repo.replaceOccurrences(meetingIds, rows, trx);
    await this.applySets(sets, trx);
    await repo.markHistories(historyIds, this.deps.clock.now(), trx);
  }

  /** What the bookings add now: their occurrence rows, and their buckets added into `sets`. */
  private judge(
    bookings: readonly BookingRecord[],
    histories: Map<string, HistoryInput[]>,
    times: Map<string, AssetTime>,
    sets: DeltaSets,
  ): OccurrenceRecord[] {
    const rows: OccurrenceRecord[] = [];
    for (const b of bookings) {
      const time = times.get(b.asset_id);
      if (!time) continue;
      const input: BookingInput = {
        id: b.id,
        status: b.status,
        start: b.start_at,
        bookedEnd: b.booked_end_at,
        series: b.recurrence ? (JSON.parse(b.recurrence) as BookingInput['series']) : null,
      };
      for (const o of occurrenceOutcomes(input, histories.get(b.id) ?? [])) {
        const buckets = occurrenceBuckets(o, time);
        addBuckets(deltasOf(sets, b.project_id, b.asset_kind), b.asset_id, buckets, 1);
        rows.push({
          meeting_id: b.id,
          occurrence_id: o.id,
          project_id: b.project_id,
          asset_kind: b.asset_kind,
          asset_id: b.asset_id,
          organizer_user_id: b.organizer_user_id,
          start_at: o.start,
          held: o.cancelledBeforeStart ? 0 : 1,
          booked: buckets.reduce((sum, x) => sum + x[2 + I.booked], 0),
          no_show: o.noShow ? 1 : 0,
          checked_in: o.checkIn !== null && !o.cancelledBeforeStart ? 1 : 0,
          buckets,
        });
      }
    }
    return rows;
  }

  private async applySets(sets: DeltaSets, trx: Db): Promise<void> {
    for (const [key, deltas] of [...sets.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      await this.deps.repo.applyDeltas(...splitKey(key), nonZero(deltas), trx);
    }
  }

  /** Each asset's zone and recorded hours (an asset not recorded yet: its hours now, from its creation day). */
  private async assetTimes(assetIds: readonly string[], db: Db): Promise<Map<string, AssetTime>> {
    const ids = [...new Set(assetIds)];
    if (!ids.length) return new Map();
    return this.timesOf(await this.deps.repo.assets({ ids }, db), db);
  }

  /** Zones and recorded hours of assets already read (an asset not recorded yet: its hours now, from its creation day). */
  private async timesOf(assets: readonly AssetRecord[], db: Db): Promise<Map<string, AssetTime>> {
    const out = new Map<string, AssetTime>();
    const byAsset = new Map<string, HoursVersion[]>();
    for (const v of await this.deps.repo.versions(
      assets.map((a) => a.id),
      db,
    )) {
      const list = byAsset.get(v.asset_id) ?? [];
      list.push(versionOf(v));
      byAsset.set(v.asset_id, list);
    }
    for (const a of assets) {
      const zone = zoneOf(a.timezone);
      out.set(a.id, { zone, versions: byAsset.get(a.id) ?? [currentVersion(a, localDayOf(zone, a.created_at))] });
    }
    return out;
  }

  /** Adds the walk-ins to the rollups (each at its asset, local day and hour). */
  private async addWalkIns(entries: readonly WalkInRecord[], trx: Db): Promise<void> {
    const times = await this.assetTimes(
      entries.map((e) => e.asset_id),
      trx,
    );
    const sets: DeltaSets = new Map();
    for (const e of entries) {
      const time = times.get(e.asset_id);
      if (time) addBuckets(deltasOf(sets, e.project_id, e.asset_kind), e.asset_id, [walkInBucket(time.zone, e.device_at)], 1);
    }
    await this.applySets(sets, trx);
  }

  /** Counts the walk-ins not yet counted; false when there were none. */
  private async countWalkIns(): Promise<boolean> {
    const { repo } = this.deps;
    const entries = await repo.pendingWalkIns(this.batchSize() * 4);
    if (!entries.length) return false;
    await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      await this.addWalkIns(entries, trx);
      await repo.markWalkIns(
        entries.map((e) => e.id),
        this.deps.clock.now(),
        trx,
      );
    });
    return true;
  }

  /** Recomputes every figure (of one project, or all) from the bookings and the entry log. */
  async rebuild(projectId: string | null = null): Promise<{ bookings: number; walkIns: number }> {
    const { repo, realClock } = this.deps;
    for (let tries = 0; !(await repo.claimLease(this.owner, realClock.now(), realClock.now() + LEASE_MS)); tries++) {
      if (tries > 600) throw new Error('the analytics lease stays taken by another instance');
      await new Promise((r) => setTimeout(r, 200));
    }
    try {
      await this.syncAssets();
      // Slices of a few thousand rows, each its own transaction: no statement runs long, and requests
      // are not held up behind one big write (answers meanwhile show the figures being rebuilt).
      const at = this.deps.clock.now();
      const slice = async (work: (trx: Db) => Promise<number>) => {
        await repo.claimLease(this.owner, realClock.now(), realClock.now() + LEASE_MS);
        return writeTransaction(this.deps.db, this.deps.engine, work);
      };
      while ((await slice((trx) => repo.markSomeTaken(projectId, at, 20_000, trx))) > 0);
      while ((await slice((trx) => repo.clearSome(projectId, 20_000, trx))) > 0);
      const bookings = await this.rebuildBookings(projectId);
      const walkIns = await this.recountWalkIns(projectId);
      return { bookings, walkIns };
    } finally {
      await repo.releaseLease(this.owner);
    }
  }

  /**
   * The rebuild's bookings, asset by asset (a hundred at a time): each asset's rollup rows are
   * summed in memory and written once (plain inserts into the emptied table), the project's rows at the end.
   */
  private async rebuildBookings(projectId: string | null): Promise<number> {
    const { repo, realClock } = this.deps;
    const assets = await repo.assets(projectId ? { projectId } : {});
    const projectLevel: DeltaSets = new Map();
    let count = 0;
    for (let i = 0; i < assets.length; i += 100) {
      const chunk = assets.slice(i, i + 100);
      const times = await this.timesOf(chunk, this.deps.db);
      const ids = await repo.bookingIdsOfAssets(
        chunk.map((a) => a.id),
        0,
      );
      const assetLevel: DeltaSets = new Map();
      for (let j = 0; j < ids.length; j += 2000) {
        const part = ids.slice(j, j + 2000);
        const sets: DeltaSets = new Map();
        const rows = this.judge(await repo.bookings(part), await repo.histories(part), times, sets);
        for (const [key, deltas] of sets) {
          for (const d of deltas.values()) mergeDelta(deltasOf(d.assetId ? assetLevel : projectLevel, ...splitKey(key)), d);
        }
        await writeTransaction(this.deps.db, this.deps.engine, (trx) => repo.insertOccurrences(rows, trx));
        count += part.length;
      }
      await writeTransaction(this.deps.db, this.deps.engine, (trx) => this.insertSets(assetLevel, trx));
      await repo.claimLease(this.owner, realClock.now(), realClock.now() + LEASE_MS);
    }
    await writeTransaction(this.deps.db, this.deps.engine, (trx) => this.insertSets(projectLevel, trx));
    return count;
  }

  private async insertSets(sets: DeltaSets, trx: Db): Promise<void> {
    for (const [key, deltas] of sets) await this.deps.repo.insertRollups(...splitKey(key), nonZero(deltas), trx);
  }

  private async recountWalkIns(projectId: string | null): Promise<number> {
    let n = 0;
    for (let after = ''; ;) {
      const entries = (await this.deps.repo.walkInsAfter(after, 2000, projectId)).filter((e) => e.asset_id);
      if (!entries.length) break;
      await writeTransaction(this.deps.db, this.deps.engine, (trx) => this.addWalkIns(entries, trx));
      n += entries.length;
      after = entries[entries.length - 1].id;
    }
    return n;
  }

  // ---------------------------------------------------------------------------------------------
  // Answering
  // ---------------------------------------------------------------------------------------------

  private async projectOf(id: string) {
    const p = await this.deps.repo.project(id);
    if (!p) throw errors.notFound('Project not found');
    return p;
  }

  /** The range's day numbers, refused when reversed or too long. */
  private range(q: { from: string; to: string }): { from: number; to: number } {
    const from = dayNumber(q.from);
    const to = dayNumber(q.to);
    const problems: string[] = [];
    if (!Number.isFinite(from) || isoDate(from) !== q.from) problems.push('querystring.from is not a valid date');
    if (!Number.isFinite(to) || isoDate(to) !== q.to) problems.push('querystring.to is not a valid date');
    if (!problems.length && to < from) problems.push('querystring.to must not be before querystring.from');
    if (!problems.length && to - from + 1 > ANALYTICS_MAX_DAYS) problems.push(`the range may hold at most ${ANALYTICS_MAX_DAYS} days`);
    if (problems.length) throw errors.validation(problems);
    return { from, to };
  }

  async utilisation(q: UtilisationQuery): Promise<UtilisationRow[]> {
    const { from, to } = this.range(q);
    const project = await this.projectOf(q.project);
    const kind = q.assetKind ?? 'room';
    const groupBy = q.groupBy ?? 'project';
    const zone = zoneOf(project.timezone);
    const now = this.deps.clock.now();
    const today = localDayOf(zone, now);
    const records = (await this.deps.repo.assets({ projectId: project.id, kind })).filter(
      (a) => (!q.floor || a.floor_id === q.floor) && (!q.zone || a.zone_id === q.zone) && (!q.asset || a.id === q.asset),
    );
    const filtered = q.floor !== undefined || q.zone !== undefined || q.asset !== undefined;
    const scope: Scope = !filtered && ['project', 'day', 'week', 'month', 'hourOfWeek'].includes(groupBy) ? 'project' : 'asset';
    const grain: TimeGrain = groupBy === 'hourOfWeek' ? 'hour' : groupBy === 'day' || groupBy === 'week' ? 'day' : 'all';
    const assetIds = records.map((a) => a.id);
    const rows: RollupRecord[] = [];
    for (const read of plan(scope, grain, from, to, today)) {
      const by = groupColumns(groupBy, read.level === 'amw');
      rows.push(...(await this.deps.repo.rollups(project.id, kind, [read], scope === 'project' ? null : assetIds, by, isoDate(today))));
    }
    const startedToday =
      today >= from && today <= to
        ? await this.startedToday(project.id, kind, zone, today, now, scope === 'project' ? null : assetIds)
        : [];
    const times = await this.timesOf(records, this.deps.db);
    const assets: AssetInfo[] = records.map((a) => ({
      id: a.id,
      name: a.name,
      floorId: a.floor_id,
      floorName: a.floor_name,
      zoneId: a.zone_id,
      zoneName: a.zone_name,
      versions: times.get(a.id)?.versions ?? [],
    }));
    return foldRows({
      groupBy,
      project: { id: project.id, name: project.name },
      zone,
      assets,
      from,
      to,
      today,
      rows: rows.map((r) => ({
        level: r.level,
        assetId: r.asset_id,
        period: r.period,
        slot: r.slot,
        figures: r.figures,
        reached: r.reached,
      })),
      startedToday,
    });
  }

  private async startedToday(
    projectId: string,
    kind: string,
    zone: ReturnType<typeof zoneOf>,
    today: number,
    now: number,
    assetIds: string[] | null,
  ) {
    const dayStart = instantAtLocalTime(zone, today, 0);
    const starts = await this.deps.repo.heldStarts(projectId, kind, dayStart, now + 1, assetIds);
    return starts.map((s) => ({ assetId: s.assetId, ...localHourOf(zone, s.start) }));
  }

  async status(projectId: string): Promise<AnalyticsStatus> {
    await this.projectOf(projectId);
    const p = await this.deps.repo.pending(projectId);
    return { pendingBookings: p.bookings, pendingWalkIns: p.walkIns, pendingAssets: await this.assetsPending(projectId) };
  }

  /** Assets of the project whose hours, status or zone changed (or that are new) since the job last recorded them. */
  private async assetsPending(projectId: string): Promise<number> {
    const marks = await this.deps.repo.assetMarks(projectId);
    const recorded = new Map<string, string>();
    for (const v of await this.deps.repo.versions(marks.map((m) => m.id))) recorded.set(v.asset_id, v.source_mark);
    return marks.filter((m) => recorded.get(m.id) !== m.mark).length;
  }

  /** Per organizer: only when the project turned named reports on. */
  async organizers(q: OrganizersQuery): Promise<OrganizerRow[]> {
    const { from, to } = this.range(q);
    const project = await this.projectOf(q.project);
    if (project.analytics_named_reports !== 1) {
      throw errors.forbidden('Named reports are off for this project (site document: projects[].analytics.namedReports)');
    }
    const zone = zoneOf(project.timezone);
    const start = instantAtLocalTime(zone, from, 0);
    const end = instantAtLocalTime(zone, to + 1, 0);
    const now = this.deps.clock.now();
    const sums = await this.deps.repo.organizerSums(project.id, q.assetKind ?? 'room', start, end, now);
    const acc = new Map(sums.map((r) => [r.userId, r]));
    const users = await this.deps.repo.users([...acc.keys()]);
    return [...acc.entries()]
      .map(([userId, a]) => ({
        userId,
        name: users.get(userId)?.name ?? null,
        email: users.get(userId)?.email ?? null,
        bookings: a.bookings,
        reachedStart: a.reached,
        noShows: a.noShows,
        ghostMeetings: a.ghosts,
        bookedMinutes: a.booked,
        noShowRate: a.reached > 0 ? a.noShows / a.reached : null,
      }))
      .sort((x, y) => y.noShows - x.noShows || y.ghostMeetings - x.ghostMeetings || (x.userId < y.userId ? -1 : 1))
      .slice(0, q.limit ?? 50);
  }
}
