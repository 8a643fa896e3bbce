/**
 * The operator console's booking reads and the staff cancel (ops routes): bookings
 * across every project (never a PIN), one booking with its history and payment,
 * a floor's state now and an asset's day, both decided by the pure rules
 * (rules/asset-now.ts over the availability and cleaning rules) at service time.
 * The staff cancel is an actor like any other: MeetingService.staffCancel, through
 * the one booking-change writer.
 */
import type { Clock } from '../../platform/clock/clock.js';
import { errors } from '../../platform/errors.js';
import { parseInstant } from '../../platform/time/instant.js';
import { MAX_CLEANUP_MS, cleanupFor, type CatalogueService, type DeskRow, type ProjectRow, type RoomRow } from '../catalogue/index.js';
import type { AssetDay, BookingSummary, FloorNow, OpsListMeetingsQuery, OpsMeeting, OpsMeetingDetail } from '../../contract/ops-console.js';
import type { MeetingRepository, MeetingRow } from './meeting-repository.js';
import type { MeetingService } from './meeting-service.js';
import { DEFAULT_MEETING_PAGE_SIZE } from './meeting-service.js';
import type { PaymentDesk } from './payment-port.js';
import type { PeopleRepository } from './people-repository.js';
import { historyActor } from './rules/history-actor.js';
import { resolveMeetingConfig } from './rules/asset-config.js';
import { allOccurrences, listedRows, meetingView, occurrenceStatus } from './meeting-view.js';
import {
  assetNow,
  daySchedule,
  localDate,
  localDayBounds,
  occupiedByBadge,
  WALK_IN_PRESENCE_MS,
  type AssetBooking,
} from './rules/asset-now.js';

const iso = (ms: number) => new Date(ms).toISOString();
/** How far ahead a floor view looks for each asset's next booking. */
const NEXT_HORIZON_MS = 7 * 24 * 3_600_000;

interface Occurrence extends AssetBooking {
  title: string;
  organizerName: string;
  assetId: string;
}

/** Port: the latest granted door entry per asset since an instant (service time); the devices module's entry log answers. */
export interface BadgePresence {
  lastGrantedByAsset(assetIds: readonly string[], since: number): Promise<Map<string, number>>;
}

export interface OpsBookingsDeps {
  /** Late-bound: the entry log (built after booking). */
  presence?: () => BadgePresence | undefined;
  clock: Clock;
  meetings: MeetingRepository;
  catalogue: CatalogueService;
  payments: PaymentDesk;
  service: MeetingService;
  people: PeopleRepository;
}

export class OpsBookings {
  constructor(private readonly deps: OpsBookingsDeps) {}

  private async assetNames(rows: MeetingRow[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    for (const m of rows) {
      if (names.has(m.asset_id)) continue;
      const ctx = await this.deps.catalogue.assetInContext(m.asset_kind as 'room' | 'desk', m.asset_id);
      names.set(m.asset_id, ctx?.asset.name ?? '');
    }
    return names;
  }

  /** GET /ops/v1/meetings: the public list's filters across every project, plus assetId and search. */
  async list(q: OpsListMeetingsQuery): Promise<{ items: OpsMeeting[]; meta: { limit: number; offset: number; total: number } }> {
    const from = parseInstant(q.from, 'query.from');
    const to = parseInstant(q.to, 'query.to');
    if (to <= from) throw errors.validation(['query.to must be after query.from']);
    const assetIds = [q.assetId, q.meetingRoomId, q.deskId, ...(q.meetingRoomIds ?? []), ...(q.deskIds ?? [])].filter(
      (x): x is string => !!x,
    );
    const rows = await this.deps.meetings.list({
      from,
      to,
      projectIds: q.projectId ? [q.projectId] : [],
      anyProject: !q.projectId,
      assetIds: assetIds.length ? assetIds : undefined,
      organizerIds: q.organizerId ? [q.organizerId] : undefined,
      organizerEmails: q.organizerEmails,
      attendeeEmails: q.attendeeEmails,
      statuses: q.statuses,
    });
    const needle = q.search?.trim().toLowerCase();
    const matching = needle
      ? rows.filter((m) => {
          const o = m.organizer;
          return [m.title, o.name, o.email ?? ''].some((text) => text.toLowerCase().includes(needle));
        })
      : rows;
    const now = this.deps.clock.now();
    const expanded = listedRows(matching, { from, to }, q.statuses, now);
    const limit = q.limit ?? DEFAULT_MEETING_PAGE_SIZE;
    const offset = q.offset ?? 0;
    const page = expanded.slice(offset, offset + limit);
    const histories = await this.deps.meetings.histories([...new Set(page.map((r) => r.m.id))]);
    const names = await this.assetNames(page.map((r) => r.m));
    const items = page.map((r) =>
      withoutPin(
        meetingView(r.m, {
          assetName: names.get(r.m.asset_id) ?? '',
          histories: histories.get(r.m.id) ?? [],
          pinCode: null,
          now,
          occurrence: r.occurrence,
        }),
      ),
    );
    return { items, meta: { limit, offset, total: expanded.length } };
  }

  /** GET /ops/v1/meetings/{id}: the booking (no PIN), its history and its newest payment. */
  async detail(id: string): Promise<OpsMeetingDetail> {
    const m = await this.deps.meetings.byId(id);
    if (!m) throw errors.notFound('Meeting not found');
    return this.render(m);
  }

  /** POST /ops/v1/meetings/{id}/cancel: the staff cancel (actor ops, source console). */
  async cancel(id: string, input: { reason?: string }): Promise<OpsMeetingDetail> {
    return this.render(await this.deps.service.staffCancel(id, input));
  }

  private async render(m: MeetingRow): Promise<OpsMeetingDetail> {
    const histories = (await this.deps.meetings.histories([m.id])).get(m.id) ?? [];
    const names = await this.assetNames([m]);
    const view = withoutPin(
      meetingView(m, { assetName: names.get(m.asset_id) ?? '', histories, pinCode: null, now: this.deps.clock.now() }),
    );
    const payment = await this.deps.payments.paymentOf(m.id);
    const known = await this.deps.people.actorNames(
      histories.map((h) => h.by).filter((by) => by !== 'ops' && by !== 'system' && by !== 'calendar'),
    );
    const { payment: _snapshot, ...rest } = view;
    return {
      ...rest,
      history: histories.map((h) => ({
        action: h.action,
        actor: h.by,
        ...historyActor(h.by, h.source, known),
        source: h.source,
        reason: h.reason,
        at: iso(h.at),
      })),
      payment: payment
        ? {
            status: payment.status,
            amount: payment.amount,
            currency: payment.currency,
            dueAt: payment.dueAt === null ? null : iso(payment.dueAt),
          }
        : null,
    };
  }

  /** The bookings (occurrences) of `assets` overlapping [from, to), cancelled and rejected ones left out. */
  private async occurrences(project: ProjectRow, assetIds: string[], from: number, to: number): Promise<Occurrence[]> {
    if (!assetIds.length) return [];
    const rows = await this.deps.meetings.list({ from, to, projectIds: [project.id], assetIds });
    const now = this.deps.clock.now();
    const out: Occurrence[] = [];
    for (const m of rows) {
      const organizerName = m.organizer.name;
      const series = m.recurrence;
      const windows = series
        ? allOccurrences(series).map((o) => ({ id: m.id, start: o.start, end: o.end, status: occurrenceStatus(m, series, o, now).status }))
        : [{ id: m.id, start: m.start_at, end: m.end_at, status: m.status }];
      for (const w of windows) {
        if (w.status === 'cancelled' || w.status === 'rejected' || w.start >= to || w.end <= from) continue;
        out.push({ ...w, title: m.title, organizerName, assetId: m.asset_id });
      }
    }
    return out.sort((a, b) => a.start - b.start);
  }

  /** GET /ops/v1/floors/{floorId}/now. */
  async floorNow(floorId: string): Promise<FloorNow> {
    const floor = await this.deps.catalogue.floorAssets(floorId);
    if (!floor) throw errors.notFound('Floor not found');
    const now = this.deps.clock.now();
    const { project } = floor;
    const assets: { kind: 'room' | 'desk'; row: RoomRow | DeskRow }[] = [
      ...floor.rooms.map((row) => ({ kind: 'room' as const, row })),
      ...floor.desks.map((row) => ({ kind: 'desk' as const, row })),
    ];
    const bookings = await this.occurrences(
      project,
      assets.map((a) => a.row.id),
      now - MAX_CLEANUP_MS,
      now + NEXT_HORIZON_MS,
    );
    // Door entries since the earliest instant occupiedByBadge looks back to: a current booking's check-in window, or the walk-in span.
    const withDoors = assets.filter((a) => a.row.access_devices);
    const lookBack = withDoors.flatMap(({ row }) => {
      const pre = Math.max(0, resolveMeetingConfig(row.config).preStartMinutes) * 60_000;
      return bookings.filter((b) => b.assetId === row.id && b.start <= now && now < b.end).map((b) => b.start - pre);
    });
    const presence = withDoors.length ? this.deps.presence?.() : undefined;
    const badges = presence
      ? await presence.lastGrantedByAsset(
          withDoors.map((a) => a.row.id),
          Math.min(now - WALK_IN_PRESENCE_MS, ...lookBack),
        )
      : new Map<string, number>();
    return {
      floorId,
      at: iso(now),
      timeZone: project.timezone,
      assets: assets.map(({ kind, row }) => {
        const r = assetNow({
          now,
          kind,
          status: row.status,
          config: row.config,
          timeZone: project.timezone,
          cleanupMinutes: cleanupFor(project, row, kind === 'desk'),
          bookings: bookings.filter((b) => b.assetId === row.id),
        });
        const lastEntryAt = badges.get(row.id) ?? null;
        const badged = occupiedByBadge({
          now,
          current: r.current,
          preStartMinutes: resolveMeetingConfig(row.config).preStartMinutes,
          lastEntryAt,
        });
        return {
          _id: row.id,
          kind,
          name: row.name,
          state: r.state,
          current: summary(r.current),
          next: summary(r.next),
          occupiedByBadge: badged,
          lastBadgeAt: badged && lastEntryAt !== null ? iso(Math.min(lastEntryAt, now)) : null,
        };
      }),
    };
  }

  /** GET /ops/v1/assets/{assetId}/day?date=: hours, breaks and bookings (with cleaning) of a property-local day. */
  async assetDay(assetId: string, date: string | undefined): Promise<AssetDay> {
    const ctx = await this.deps.catalogue.anyAssetInContext(assetId);
    if (!ctx) throw errors.notFound('Room or desk not found');
    const zone = ctx.project.timezone;
    const day = date ?? localDate(this.deps.clock.now(), zone);
    let bounds: { start: number; end: number };
    let schedule: ReturnType<typeof daySchedule>;
    try {
      bounds = localDayBounds(day, zone);
      schedule = daySchedule(ctx.asset.config, zone, day);
    } catch {
      throw errors.validation([`query.date is not a calendar date: ${day}`]);
    }
    const cleanupMs = cleanupFor(ctx.project, ctx.asset, ctx.kind === 'desk') * 60_000;
    const bookings = await this.occurrences(ctx.project, [ctx.asset.id], bounds.start - cleanupMs, bounds.end);
    const span = (s: { start: number; end: number }) => ({ start: iso(s.start), end: iso(s.end) });
    return {
      asset: { _id: ctx.asset.id, kind: ctx.kind, name: ctx.asset.name },
      date: day,
      timeZone: zone,
      open: schedule.open.map(span),
      breaks: schedule.breaks.map(span),
      bookings: bookings.map((b) => ({
        _id: b.id,
        title: b.title,
        status: b.status,
        startDateTime: iso(b.start),
        endDateTime: iso(b.end),
        cleaningEndsAt: iso(b.end + cleanupMs),
        organizerName: b.organizerName,
      })),
    };
  }
}

function summary(b: Occurrence | null): BookingSummary | null {
  return (
    b && {
      _id: b.id,
      title: b.title,
      status: b.status,
      startDateTime: iso(b.start),
      endDateTime: iso(b.end),
      organizerName: b.organizerName,
    }
  );
}

/** A Meeting without its PIN (the ops view never shows it). */
function withoutPin<T extends { pinCode?: string }>(view: T): Omit<T, 'pinCode'> {
  const { pinCode: _pin, ...rest } = view;
  return rest;
}
