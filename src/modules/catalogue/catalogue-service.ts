/**
 * Room and desk catalogue: searches with availability, and single reads with
 * the asset's booking calendar. Decides visibility (project scope, private
 * assets) and hands every time rule to the availability engine.
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { Db } from '../../platform/db/db.js';
import type { Principal, ProjectScope } from '../auth/index.js';
import { errors } from '../../platform/errors.js';
import { effectiveCleanupMinutes } from '../booking/rules/cleaning-time.js';
import { isClosedStatus } from '../booking/rules/asset-config.js';
import { busyIntervals, truncateToMinute, type TimePeriod } from '../booking/rules/availability.js';
import type { AssetInContext, CatalogueRepository, DeskRow, ProjectRow, RoomRow } from './catalogue-repository.js';
import type { BusySlots, MeetingSummary } from './busy-slots.js';
import { assessAssets, type Hold, type SearchWindow, type Verdict } from './availability-search.js';
import { deskView, roomView } from './asset-views.js';
import { DeskSnapshots } from './desk-snapshots.js';
import { RoomSnapshots, filterRooms, withUnavailableReason } from './room-snapshots.js';
import type { CalendarQuery, DeskQuery, RoomQuery } from '../../contract/catalogue.js';
import { parseInstant } from '../../platform/time/instant.js';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Rooms assessed between two turns of the event loop in a windowed search. */
const ASSESS_SLICE = 2000;

export type { AssetInContext, DeskRow, ProjectRow, RoomRow } from './catalogue-repository.js';
export { MAX_CLEANUP_MS } from './catalogue-repository.js';

const DAY_MS = 86_400_000;
/** Default span of the calendar on single reads, and the longest span accepted. */
export const CALENDAR_DEFAULT_DAYS = 7;
export const CALENDAR_MAX_DAYS = 62;
export const DEFAULT_DESK_PAGE_SIZE = 100;

function optionalInstant(value: string | undefined, field: string): number | undefined {
  return value === undefined ? undefined : parseInstant(value, field);
}

/** Effective cleaning time of an asset of the project (rooms may carry their own). */
export function cleanupFor(project: ProjectRow, asset: RoomRow | DeskRow, isDesk: boolean): number {
  return effectiveCleanupMinutes({
    assetCleanupMinutes: 'cleanup_minutes' in asset ? asset.cleanup_minutes : null,
    propertyDefaultMinutes: project.default_cleanup_minutes,
    bookingGridMinutes: project.booking_grid_minutes,
    isDesk,
  });
}

export class CatalogueService {
  private readonly roomSnapshots: RoomSnapshots;
  private readonly deskSnapshots: DeskSnapshots;

  constructor(
    private readonly repo: CatalogueRepository,
    private readonly clock: Clock,
    /** The holds on assets: the booking module's, through this port. */
    private readonly busySlots: BusySlots,
  ) {
    this.roomSnapshots = new RoomSnapshots(repo);
    this.deskSnapshots = new DeskSnapshots(repo);
  }
  /** An asset with its project and floor name, as a booking is written against it. */
  /** The rooms whose email is one of `emails` (case-insensitive), each with its context, in the order of `emails`. */
  async roomsByEmail(emails: string[]): Promise<(AssetInContext & { email: string })[]> {
    const found = await this.repo.roomIdsByEmail(emails);
    const out: (AssetInContext & { email: string })[] = [];
    for (const e of emails.map((x) => x.toLowerCase())) {
      for (const r of found.filter((f) => f.email === e)) {
        const ctx = await this.repo.assetInContext('room', r.id);
        if (ctx && !out.some((o) => o.asset.id === r.id)) out.push({ ...ctx, email: e });
      }
    }
    return out;
  }

  /** The project's rooms with an email, each with its context (connected room calendars). */
  async roomsWithEmail(projectId: string): Promise<(AssetInContext & { email: string })[]> {
    const out: (AssetInContext & { email: string })[] = [];
    for (const r of await this.repo.roomIdsWithEmail(projectId)) {
      const ctx = await this.repo.assetInContext('room', r.id);
      if (ctx) out.push({ ...ctx, email: r.email });
    }
    return out;
  }

  /** A floor's project, rooms and desks; undefined for an unknown floor. */
  floorAssets(floorId: string) {
    return this.repo.floorAssets(floorId);
  }

  /** A room or desk by id (whichever it is), with its context. */
  async anyAssetInContext(id: string): Promise<(AssetInContext & { kind: 'room' | 'desk' }) | undefined> {
    const room = await this.repo.assetInContext('room', id);
    if (room) return { ...room, kind: 'room' };
    const desk = await this.repo.assetInContext('desk', id);
    return desk && { ...desk, kind: 'desk' };
  }

  /** The asset with its project and floor; `db`: a connection the caller holds (platform/db/transactions.ts `oneConnection`). */
  assetInContext(kind: 'room' | 'desk', id: string, db?: Db): Promise<AssetInContext | undefined> {
    return this.repo.assetInContext(kind, id, db);
  }

  private scope(principal: Principal, projectId: string): ProjectScope {
    const scope = principal.projects.get(projectId);
    if (!scope) throw errors.forbidden('You do not have access to this project');
    return scope;
  }

  /** The matching rooms as MeetingRoom JSON (UTF-8), in name order (see room-snapshots.ts). */
  async searchRooms(principal: Principal, q: RoomQuery): Promise<Buffer[]> {
    const scope = this.scope(principal, q.projectId);
    const start = optionalInstant(q.startDateTime, 'query.startDateTime');
    const end = optionalInstant(q.endDateTime, 'query.endDateTime');
    const problems: string[] = [];
    if ((start === undefined) !== (end === undefined)) problems.push('query.startDateTime and query.endDateTime must be given together');
    if (start !== undefined && end !== undefined && truncateToMinute(end) <= truncateToMinute(start)) {
      problems.push('query.endDateTime must be after query.startDateTime');
    }
    if (problems.length) throw errors.validation(problems);

    // Independent reads: on PostgreSQL they go out together (SQLite runs them one after the other).
    const [project, snapshots, holds] = await Promise.all([
      this.repo.project(q.projectId),
      this.roomSnapshots.of(q.projectId),
      start === undefined ? [] : this.holds([q.projectId], start, end!),
    ]);
    if (!project) throw errors.notFound('Project not found');
    const rooms = filterRooms(snapshots, {
      zoneId: q.zoneId,
      floorId: q.floorId,
      locationId: q.locationId,
      ids: q.ids,
      name: q.name,
      statuses: q.status,
      type: q.type,
      minCapacity: q.minCapacity,
      publicOnly: !scope.canBookPrivate,
    });
    if (start === undefined) return rooms.map((r) => r.json);

    const open = rooms.filter((r) => !isClosedStatus('room', r.row.status)); // closed assets drop out of windowed searches
    // Assessed in slices with a turn of the event loop between them: a site of tens of thousands of rooms never holds the loop.
    const window = { start, end, now: this.clock.now(), timeZone: project.timezone };
    const verdicts: Verdict[] = [];
    for (let i = 0; i < open.length; i += ASSESS_SLICE) {
      if (i > 0) await nextTurn();
      const slice = open.slice(i, i + ASSESS_SLICE);
      verdicts.push(
        ...assessAssets(
          slice.map(({ row: r }) => ({ id: r.id, config: r.config, cleanupMinutes: cleanupFor(project, r, false) })),
          window,
          holds,
        ),
      );
    }
    const out: Buffer[] = [];
    for (let i = 0; i < open.length; i++) {
      const r = open[i];
      const v = verdicts[i];
      if (v.status === 'booked') continue;
      out.push(v.status === 'unbookable' ? withUnavailableReason(r.json, v.reason) : r.json);
    }
    return out;
  }

  async searchDesks(principal: Principal, q: DeskQuery) {
    if (q.projectId) this.scope(principal, q.projectId);
    const start = optionalInstant(q.startDateTime, 'query.startDateTime');
    const end = optionalInstant(q.endDateTime, 'query.endDateTime');
    const problems: string[] = [];
    if (start !== undefined && (end === undefined) === (q.timePeriod === undefined)) {
      problems.push('query.startDateTime needs exactly one of query.endDateTime or query.timePeriod');
    }
    if (start === undefined && (end !== undefined || q.timePeriod !== undefined)) {
      problems.push('query.endDateTime and query.timePeriod need query.startDateTime');
    }
    if (start !== undefined && end !== undefined && truncateToMinute(end) <= truncateToMinute(start)) {
      problems.push('query.endDateTime must be after query.startDateTime');
    }
    if (problems.length) throw errors.validation(problems);

    const projectIds = q.projectId ? [q.projectId] : [...principal.projects.keys()];
    const privateProjectIds = projectIds.filter((id) => principal.projects.get(id)?.canBookPrivate);
    const statuses = [...(q.statuses ?? []), ...(q.status ? [q.status] : [])];
    const filter = {
      projectIds,
      privateProjectIds,
      brandId: q.brandId,
      zoneId: q.zoneId,
      floorId: q.floorId,
      locationId: q.locationId,
      ids: q.ids,
      name: q.name,
      email: q.email,
      statuses: statuses.length ? statuses : undefined,
    };
    let rows: DeskRow[];
    if (start === undefined) rows = await this.deskSnapshots.listing(filter);
    else {
      // The projects (zones, cleaning) and the holds are read alongside the listing. A timePeriod
      // never reaches past the start's local day (plus a DST hour).
      const [listed, projects, holds] = await Promise.all([
        this.deskSnapshots.listing(filter),
        this.repo.projects(projectIds),
        this.holds(projectIds, start, end ?? start + DAY_MS + 2 * 3_600_000),
      ]);
      rows = this.freeDesks(listed, projects, holds, { start, end, timePeriod: q.timePeriod });
    }

    const limit = q.limit ?? DEFAULT_DESK_PAGE_SIZE;
    const offset = q.offset ?? 0;
    const items = rows.slice(offset, offset + limit).map((d) => this.deskSnapshots.view(d));
    return { items, meta: { limit, offset, total: rows.length } };
  }

  /** Desks bookable for the window: free of holds and cleaning, and open by their config. */
  private freeDesks(
    rows: DeskRow[],
    candidates: ProjectRow[],
    holds: Hold[],
    w: { start: number; end?: number; timePeriod?: TimePeriod },
  ): DeskRow[] {
    const open = rows.filter((d) => !isClosedStatus('desk', d.status));
    const used = new Set(open.map((d) => d.project_id));
    const projects = candidates.filter((p) => used.has(p.id));
    const free = new Set<DeskRow>();
    const now = this.clock.now();
    for (const project of projects) {
      const desks = open.filter((d) => d.project_id === project.id);
      const window: SearchWindow = { start: w.start, end: w.end, timePeriod: w.timePeriod, now, timeZone: project.timezone };
      const verdicts = assessAssets(
        desks.map((d) => ({ id: d.id, config: d.config, cleanupMinutes: cleanupFor(project, d, true) })),
        window,
        holds,
      );
      desks.forEach((d, i) => verdicts[i].status === 'free' && free.add(d));
    }
    return open.filter((d) => free.has(d));
  }

  /** Holds in the projects that could clash with [start, end) once cleaning is counted. */
  private async holds(projectIds: string[], start: number, end: number): Promise<Hold[]> {
    const slots = await this.busySlots.inProjects(projectIds, start, end);
    return slots.map((s) => ({ assetId: s.asset_id, start: s.start_at, end: s.end_at }));
  }

  async getRoom(principal: Principal, id: string, range: CalendarQuery) {
    const room = await this.repo.room(id);
    const project = room && (await this.visibleProject(principal, room));
    if (!room || !project) throw errors.notFound('Meeting room not found');
    return { ...roomView(room), calendar: await this.calendar(principal, project, room, cleanupFor(project, room, false), range) };
  }

  async getDesk(principal: Principal, id: string, range: CalendarQuery) {
    const desk = await this.repo.desk(id);
    const project = desk && (await this.visibleProject(principal, desk));
    if (!desk || !project) throw errors.notFound('Desk not found');
    return { ...deskView(desk), calendar: await this.calendar(principal, project, desk, cleanupFor(project, desk, true), range) };
  }

  private async visibleProject(principal: Principal, asset: RoomRow | DeskRow): Promise<ProjectRow | undefined> {
    const scope = principal.projects.get(asset.project_id);
    if (!scope || (!asset.is_public && !scope.canBookPrivate)) return undefined;
    return this.repo.project(asset.project_id);
  }

  /**
   * The asset's busy intervals in [from, to), each with the instant its cleaning
   * ends. Only participants (organizer or attendee acting through a delegated
   * token, or the app that booked) see the meeting id and title.
   */
  private async calendar(
    principal: Principal,
    project: ProjectRow,
    asset: RoomRow | DeskRow,
    cleanupMinutes: number,
    range: CalendarQuery,
  ) {
    const now = truncateToMinute(this.clock.now());
    const from = optionalInstant(range.from, 'query.from') ?? now;
    const to = optionalInstant(range.to, 'query.to') ?? from + CALENDAR_DEFAULT_DAYS * DAY_MS;
    if (to <= from) throw errors.validation(['query.to must be after query.from']);
    if (to - from > CALENDAR_MAX_DAYS * DAY_MS)
      throw errors.validation([`query.to must be at most ${CALENDAR_MAX_DAYS} days after query.from`]);

    const slots = await this.busySlots.onAsset(asset.id, from - cleanupMinutes * 60_000, to, project.max_hold_ms);
    const busy = busyIntervals(
      slots.map((s) => ({ id: s.meeting_id, start: s.start_at, end: s.end_at })),
      cleanupMinutes,
    ).filter((b) => b.cleaningEndsAt > from);
    const summaries = new Map((await this.busySlots.summaries([...new Set(busy.map((b) => b.id!))])).map((m) => [m.id, m]));
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      from: iso(from),
      to: iso(to),
      timeZone: project.timezone,
      cleanupMinutes,
      busy: busy.map((b) => {
        const m = summaries.get(b.id!);
        const entry = { startDateTime: iso(b.start), endDateTime: iso(b.end), cleaningEndsAt: iso(b.cleaningEndsAt) };
        return m && isParticipant(principal, m) ? { ...entry, meetingId: m.id, title: m.title } : entry;
      }),
    };
  }
}

function isParticipant(p: Principal, m: MeetingSummary): boolean {
  if (p.kind === 'app') return m.appId === p.appId;
  if (m.organizerUserId === p.userId) return true;
  return m.attendeeUserIds.some((id) => id === p.userId);
}

export type { Verdict };
