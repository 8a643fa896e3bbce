/**
 * The booking lifecycle: create (with drafts, back-office bookings and recurring
 * series), list, read, update, cancel, check-in and check-out.
 *
 * Every time rule goes through the availability engine (src/modules/booking/rules), every
 * state rule through the meeting rules; this module loads, decides with those
 * pure functions, and writes. Conflict check and write happen under a per-asset
 * lock, and each change appends its history entry in the same transaction.
 */
import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Principal } from '../auth/principal.js';
import { safeEqual, type SecretBox } from '../../platform/crypto/secrets.js';
import { ServiceError, errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Database } from '../../platform/db/schema.js';
import type { Engine } from '../../platform/db/database.js';
import { withAssetLock } from '../../platform/db/transactions.js';
import { MAX_CLEANUP_MS, type CatalogueRepository, type DeskRow, type ProjectRow, type RoomRow } from '../catalogue/catalogue-repository.js';
import { MeetingQueries, meetingWrites, type MeetingRow, type NewHistory } from './meeting-repository.js';
import type { PeopleRepository } from './people-repository.js';
import { checkBookingWindow, checkConfigRules, findConflict, resolveTimePeriod, truncateToMinute } from './rules/availability.js';
import { isClosedStatus, resolveMeetingConfig, type AssetConfig } from './rules/asset-config.js';
import { expandRecurrence, parseRecurrence } from './rules/recurrence.js';
import { conflictMessage, ruleViolationMessage } from './rules/window-refusals.js';
import { cleanupFor } from '../catalogue/catalogue-service.js';
import { MEETING_UPDATE, actor, callerOf, canSee, mayReadPin } from './meeting-access.js';
import { currentOccurrence, meetingView, parseAttendees, parseOrganizer, parseRecurrence as storedSeries, type StoredAttendee, type StoredOccurrence, type StoredOrganizer } from './meeting-view.js';
import { hasPermission } from '../auth/principal.js';
import { emitBookingEvent } from '../webhooks/outbox.js';
import { rescheduleTimers } from '../lifecycle/scheduling.js';
import { timerWrites } from '../lifecycle/timer-repository.js';
import type { Static } from 'typebox';
import type { CreateMeetingBody, DraftResult, ListMeetingsQuery, UpdateMeetingBody } from '../../contract/meetings.js';

type DraftView = Static<typeof DraftResult>;
import { cancelRefusal, checkInRefusal, checkOutEnd, checkOutRefusal, updateRefusal } from './rules/meeting-rules.js';

export type CreateMeetingInput = Static<typeof CreateMeetingBody>;
export type UpdateMeetingInput = Static<typeof UpdateMeetingBody>;
export type ListMeetingsInput = Static<typeof ListMeetingsQuery>;

export const DEFAULT_MEETING_PAGE_SIZE = 100;
export const PIN_PATTERN = /^\d{4,8}$/;

type Asset = { kind: 'room'; row: RoomRow } | { kind: 'desk'; row: DeskRow };

interface Organizer {
  userId: string;
  snapshot: StoredOrganizer;
  blocked: boolean;
}

interface Window {
  start: number;
  end: number;
}

interface ChangeContext {
  trx: Kysely<Database>;
  /** The meeting as read inside the lock. */
  m: MeetingRow;
  now: number;
  appUser: string | null;
  /** undefined when no PIN was sent. */
  pinMatches?: boolean;
  asset: Asset;
  project: ProjectRow;
  organizerBlocked: boolean;
}

export interface MeetingServiceDeps {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  secretBox: SecretBox;
  catalogue: CatalogueRepository;
  people: PeopleRepository;
}

export class MeetingService {
  private readonly queries: MeetingQueries;

  constructor(private readonly deps: MeetingServiceDeps) {
    this.queries = new MeetingQueries(deps.db);
  }

  // -------------------------------------------------------------------------
  // Create
  // -------------------------------------------------------------------------

  async create(p: Principal, input: CreateMeetingInput) {
    this.validateCreate(input);
    const asset = await this.loadAsset(input.meetingRoomId ? 'room' : 'desk', (input.meetingRoomId ?? input.deskId)!, p);
    const project = (await this.deps.catalogue.project(asset.row.project_id))!;
    const now = this.deps.clock.now();
    const appUser = await this.appUserFor(p, now);
    const organizer = await this.resolveOrganizer(p, input, project, appUser);
    await this.checkPrivateAccess(p, asset, organizer, project);
    if (organizer.blocked) throw new ServiceError(403, 'MEETING_049', 'The organizer has been blocked from booking by an administrator');
    if (isClosedStatus(asset.kind, asset.row.status)) throw new ServiceError(409, 'MEETING_006', `This ${asset.kind} is ${asset.row.status} and cannot be booked`);

    const config = JSON.parse(asset.row.config) as AssetConfig;
    const first = this.requestedWindow(input, asset, config, project);
    if (input.draft) return { draft: true as const, data: await this.draft(input, asset, config, project, first, now) };

    const windows = this.occurrences(input.recurrence, first, project.timezone);
    this.checkRules(windows, config, project, asset.kind, now, input.timePeriod === 'allDay');
    const attendees = await this.resolveAttendees(input.attendees ?? []);
    const pin = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const meetingConfig = resolveMeetingConfig(config);
    const id = newId(now);
    const who = actor(p, appUser);
    const startsCheckedIn = meetingConfig.postStartExpireMinutes === 0 && meetingConfig.preStartMinutes >= 0
      && now >= windows[0].start - meetingConfig.preStartMinutes * 60_000;
    const series = input.recurrence ? { rule: input.recurrence.trim().replace(/^RRULE:/i, ''), occurrences: windows.map((w, i) => ({ id: i === 0 ? id : newId(now), ...w })) } : null;

    await withAssetLock(this.deps.db, this.deps.engine, { table: asset.kind === 'room' ? 'rooms' : 'desks', id: asset.row.id }, async (trx) => {
      await this.checkConflicts(trx, windows, asset, project, null);
      const histories: NewHistory[] = [
        { id: newId(now), meeting_id: id, action: 'create', at: now, by: who.by, source: who.source, source_detail: who.sourceDetail, reason: null, status_before: null, old_start_at: null, old_end_at: null, new_start_at: windows[0].start, new_end_at: windows[0].end },
      ];
      if (startsCheckedIn) {
        histories.push({ id: newId(now), meeting_id: id, action: 'check-in', at: now, by: 'system', source: 'system', source_detail: 'check-in not required', reason: null, status_before: 'active', old_start_at: null, old_end_at: null, new_start_at: null, new_end_at: null });
      }
      await meetingWrites.insert(
        trx,
        {
          id, project_id: project.id, asset_kind: asset.kind, asset_id: asset.row.id,
          room_id: asset.kind === 'room' ? asset.row.id : null, desk_id: asset.kind === 'desk' ? asset.row.id : null,
          title: input.title ?? '', body: input.body ?? '',
          start_at: windows[0].start, end_at: windows[0].end, booked_end_at: windows[0].end, span_end_at: windows[windows.length - 1].end,
          all_day: input.timePeriod === 'allDay' ? 1 : 0, time_period: input.timePeriod ?? null,
          status: startsCheckedIn ? 'checked-in' : 'active', pin_enc: this.deps.secretBox.seal(pin), pin_failures: 0,
          organizer_user_id: organizer.userId,
          organizer: JSON.stringify({ ...organizer.snapshot, checkInAt: startsCheckedIn ? now : null, checkOutAt: null }),
          attendees: JSON.stringify(attendees), app_id: p.appId,
          booked_via: input.organizerId ? 'backoffice' : null,
          booked_by_user_id: input.organizerId ? who.by : null,
          payment: null, payment_due_at: null, billing_summaries: '[]',
          recurrence: series ? JSON.stringify(series) : null, cancel_reason: null, created_at: now, updated_at: now,
        },
        (series?.occurrences ?? [{ id, ...windows[0] }]).map((o, i) => ({
          id: o.id, meeting_id: id, project_id: project.id, asset_id: asset.row.id, occurrence_index: i, start_at: o.start, end_at: o.end,
        })),
        histories,
      );
      await meetingWrites.replaceAttendees(trx, id, attendees);
      const created = (await this.queries.byId(id, trx))!;
      await emitBookingEvent(trx, created, windows[0], { kind: 'BOOK' }, now);
      await rescheduleTimers(trx, created, windows[0], now);
    });
    return { draft: false as const, data: await this.view(p, (await this.queries.byId(id))!, appUser) };
  }

  private validateCreate(input: CreateMeetingInput): void {
    const problems: string[] = [];
    if ((input.meetingRoomId === undefined) === (input.deskId === undefined)) problems.push('body must contain exactly one of meetingRoomId or deskId');
    if (input.meetingRoomId !== undefined) {
      if (input.endDateTime === undefined) problems.push('body.endDateTime is required for a room booking');
      if (input.timePeriod !== undefined) problems.push('body.timePeriod is for desk bookings; rooms use endDateTime');
    }
    if (input.deskId !== undefined && (input.endDateTime === undefined) === (input.timePeriod === undefined)) {
      problems.push('body must contain exactly one of endDateTime or timePeriod for a desk booking');
    }
    if (input.paymentDueMinutes !== undefined && input.organizerId === undefined) problems.push('body.paymentDueMinutes is allowed only with organizerId (back-office booking)');
    if (input.draftEndDateTimes !== undefined && !input.draft) problems.push('body.draftEndDateTimes is allowed only with draft: true');
    if (problems.length) throw errors.validation(problems);
  }

  private async loadAsset(kind: 'room' | 'desk', id: string, p: Principal): Promise<Asset> {
    const row = kind === 'room' ? await this.deps.catalogue.room(id) : await this.deps.catalogue.desk(id);
    if (!row || !p.projects.has(row.project_id)) throw errors.notFound(kind === 'room' ? 'Meeting room not found' : 'Desk not found');
    return kind === 'room' ? { kind, row: row as RoomRow } : { kind, row: row as DeskRow };
  }

  private async appUserFor(p: Principal, now: number): Promise<string | null> {
    return p.kind === 'app' ? this.deps.people.appServiceUser(p.appId, now) : null;
  }

  private async resolveOrganizer(p: Principal, input: CreateMeetingInput, project: ProjectRow, appUser: string | null): Promise<Organizer> {
    let userId: string;
    if (input.organizerId !== undefined) {
      if (!hasPermission(p, project.id, MEETING_UPDATE)) throw errors.forbidden('Booking for a member needs the MEETING_UPDATE permission on the project');
      const m = await this.deps.people.membership(input.organizerId, project.id);
      if (!m || m.status !== 'active') throw errors.validation(['body.organizerId must be an active member of the asset\'s project']);
      userId = input.organizerId;
    } else {
      userId = p.kind === 'member' ? p.userId! : appUser!;
    }
    const user = (await this.deps.people.user(userId))!;
    return {
      userId,
      blocked: user.blocked_from_booking === 1,
      snapshot: { email: user.email, name: user.name, displayName: user.profile_name || user.name },
    };
  }

  /** Private assets: members of the project (not visitors), brand staff, or an app with a role on the project. */
  private async checkPrivateAccess(p: Principal, asset: Asset, organizer: Organizer, project: ProjectRow): Promise<void> {
    if (asset.row.is_public === 1) return;
    if (p.projects.get(project.id)?.hasRole) return;
    const membership = await this.deps.people.membership(organizer.userId, project.id);
    if (membership && membership.status === 'active' && membership.user_type !== 'visitor') return;
    const user = await this.deps.people.user(organizer.userId);
    if (user && (JSON.parse(user.brand_staff) as string[]).includes(project.brand_id)) return;
    throw errors.forbidden(`This ${asset.kind} is private to the members of its project`);
  }

  private requestedWindow(input: CreateMeetingInput, asset: Asset, config: AssetConfig, project: ProjectRow): Window {
    const start = Date.parse(input.startDateTime);
    if (input.timePeriod) {
      const resolved = resolveTimePeriod({ start, period: input.timePeriod, timeZone: project.timezone, config });
      if (!resolved) throw errors.validation([`The desk is not open for the ${input.timePeriod} of that day`]);
      return resolved;
    }
    const end = Date.parse(input.endDateTime!);
    const w = { start: truncateToMinute(start), end: truncateToMinute(end) };
    if (w.end <= w.start) throw errors.validation(['body.endDateTime must be after body.startDateTime']);
    return w;
  }

  private occurrences(rule: string | undefined, first: Window, timeZone: string): Window[] {
    if (!rule) return [first];
    const parsed = parseRecurrence(rule, timeZone);
    if (!parsed.ok) throw errors.validation(parsed.errors.map((e) => `body.${e}`));
    const expanded = expandRecurrence(parsed.rule, first, timeZone);
    if (!expanded.ok) throw errors.validation(expanded.errors.map((e) => `body.${e}`));
    return expanded.occurrences.map((o) => ({ start: o.start, end: o.end }));
  }

  /** Configuration rules for every window; 400 KS001 naming each refused one. */
  private checkRules(windows: Window[], config: AssetConfig, project: ProjectRow, kind: string, now: number, allDay: boolean, ignoreLeadTime = false): void {
    const problems: string[] = [];
    windows.forEach((w, i) => {
      const r = checkConfigRules({ start: w.start, end: w.end, now, timeZone: project.timezone, config, allDay });
      if (r.ok || (ignoreLeadTime && (r.reason === 'LEAD_TIME' || r.reason === 'ADVANCE_DAYS'))) return;
      const msg = ruleViolationMessage(r, project.timezone, kind);
      problems.push(windows.length > 1 ? `occurrence ${i + 1}: ${msg}` : msg);
    });
    if (problems.length) throw errors.validation(problems);
  }

  /** Slot and cleaning conflicts for every window, read inside the asset lock; 409 KS012 naming each clash. */
  private async checkConflicts(trx: Kysely<Database>, windows: Window[], asset: Asset, project: ProjectRow, excludeMeetingId: string | null): Promise<void> {
    const fresh = (await trx.selectFrom('projects').select('max_hold_ms').where('id', '=', project.id).executeTakeFirstOrThrow()).max_hold_ms;
    const cleanup = cleanupFor(project, asset.row, asset.kind === 'desk');
    const from = Math.min(...windows.map((w) => w.start)) - MAX_CLEANUP_MS;
    const to = Math.max(...windows.map((w) => w.end)) + MAX_CLEANUP_MS;
    const slots = await this.deps.catalogue.assetSlots(asset.row.id, from, to, fresh, trx);
    const bookings = slots.map((s) => ({ id: s.meeting_id, start: s.start_at, end: s.end_at }));
    const clashes: string[] = [];
    windows.forEach((w, i) => {
      const c = findConflict({ start: w.start, end: w.end, cleanupMinutes: cleanup, bookings, excludeBookingId: excludeMeetingId ?? undefined });
      if (!c) return;
      const msg = conflictMessage(c, project.timezone, asset.kind);
      clashes.push(windows.length > 1 ? `occurrence ${i + 1} (${new Date(w.start).toISOString()}): ${msg}` : msg);
    });
    if (clashes.length) throw errors.slotConflict(clashes.join('; '));
  }

  private async draft(input: CreateMeetingInput, asset: Asset, config: AssetConfig, project: ProjectRow, first: Window, now: number) {
    const ends = [first.end, ...(input.draftEndDateTimes ?? []).map((e) => truncateToMinute(Date.parse(e)))];
    const cleanup = cleanupFor(project, asset.row, asset.kind === 'desk');
    const latest = Math.max(...ends);
    const slots = await this.deps.catalogue.assetSlots(asset.row.id, first.start - MAX_CLEANUP_MS, latest + MAX_CLEANUP_MS, project.max_hold_ms);
    const bookings = slots.map((s) => ({ id: s.meeting_id, start: s.start_at, end: s.end_at }));
    const draftInfo = ends.map((end): DraftView['draftInfo'][number] => {
      const window = { startDateTime: new Date(first.start).toISOString(), endDateTime: new Date(end).toISOString() };
      const r = checkBookingWindow({
        start: first.start, end, now, timeZone: project.timezone, config, allDay: input.timePeriod === 'allDay', cleanupMinutes: cleanup, bookings,
      });
      if (r.ok) return { ...window, isAvailable: true };
      const message = r.reason === 'CONFLICT' ? conflictMessage(r.conflictWith, project.timezone, asset.kind) : ruleViolationMessage(r, project.timezone, asset.kind);
      return { ...window, isAvailable: false, reason: r.reason, message };
    });
    const result: DraftView = { draft: true, ...(asset.kind === 'room' ? { meetingRoomId: asset.row.id } : { deskId: asset.row.id }), draftInfo };
    return result;
  }

  private async resolveAttendees(list: { email: string; type?: string }[]): Promise<StoredAttendee[]> {
    const users = await this.deps.people.usersByEmail(list.map((a) => a.email));
    const seen = new Set<string>();
    const out: StoredAttendee[] = [];
    for (const a of list) {
      const key = a.email.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      const u = users.get(key);
      out.push({ userId: u?.id ?? null, email: a.email, name: u?.name ?? a.email, type: a.type ?? 'required', responseStatus: 'accepted', checkInAt: null });
    }
    return out;
  }

  // -------------------------------------------------------------------------
  // Read
  // -------------------------------------------------------------------------

  private async assetName(m: MeetingRow): Promise<string> {
    const row = m.asset_kind === 'room' ? await this.deps.catalogue.room(m.asset_id) : await this.deps.catalogue.desk(m.asset_id);
    return row?.name ?? '';
  }

  private async view(p: Principal, m: MeetingRow, appUser: string | null, occurrence?: StoredOccurrence) {
    const histories = (await this.queries.histories([m.id])).get(m.id) ?? [];
    const pinCode = mayReadPin(p, m, appUser) ? this.deps.secretBox.open(m.pin_enc) : null;
    return meetingView(m, { assetName: await this.assetName(m), histories, pinCode, now: this.deps.clock.now(), occurrence });
  }

  /** Loads a meeting the caller may see, or 404 KS005. */
  private async visible(p: Principal, id: string, appUser: string | null): Promise<MeetingRow> {
    const m = await this.queries.byId(id);
    if (!m || !canSee(p, m, appUser)) throw errors.notFound('Meeting not found');
    return m;
  }

  async get(p: Principal, id: string) {
    const appUser = await this.appUserFor(p, this.deps.clock.now());
    return this.view(p, await this.visible(p, id, appUser), appUser);
  }

  async list(p: Principal, q: ListMeetingsInput) {
    const from = Date.parse(q.from);
    const to = Date.parse(q.to);
    if (to <= from) throw errors.validation(['query.to must be after query.from']);
    if (q.projectId && !p.projects.has(q.projectId)) throw errors.forbidden('You do not have access to this project');
    const appUser = await this.appUserFor(p, this.deps.clock.now());
    const assetIds = [q.meetingRoomId, q.deskId, ...(q.meetingRoomIds ?? []), ...(q.deskIds ?? [])].filter((x): x is string => !!x);
    const rows = await this.queries.list({
      from, to,
      projectIds: q.projectId ? [q.projectId] : [...p.projects.keys()],
      participantUserId: p.kind === 'member' ? p.userId! : undefined,
      unrestrictedProjectIds: [...p.projects.keys()].filter((id) => hasPermission(p, id, MEETING_UPDATE)),
      assetIds: assetIds.length ? assetIds : undefined,
      organizerIds: q.organizerId ? [q.organizerId] : undefined,
      organizerEmails: q.organizerEmails, attendeeEmails: q.attendeeEmails, statuses: q.statuses,
    });
    const visibleRows = rows.filter((m) => canSee(p, m, appUser));
    const expanded: { m: MeetingRow; occurrence?: StoredOccurrence; start: number }[] = [];
    for (const m of visibleRows) {
      const series = storedSeries(m);
      if (!series) expanded.push({ m, start: m.start_at });
      else for (const o of series.occurrences) if (o.start < to && o.end > from) expanded.push({ m, occurrence: o, start: o.start });
    }
    expanded.sort((a, b) => a.start - b.start || (a.m.id < b.m.id ? -1 : 1));
    const limit = q.limit ?? DEFAULT_MEETING_PAGE_SIZE;
    const offset = q.offset ?? 0;
    const page = expanded.slice(offset, offset + limit);
    const ids = [...new Set(page.map((r) => r.m.id))];
    const histories = await this.queries.histories(ids);
    const names = new Map<string, string>();
    for (const r of page) if (!names.has(r.m.asset_id)) names.set(r.m.asset_id, await this.assetName(r.m));
    const now = this.deps.clock.now();
    const items = page.map((r) =>
      meetingView(r.m, {
        assetName: names.get(r.m.asset_id)!,
        histories: histories.get(r.m.id) ?? [],
        pinCode: mayReadPin(p, r.m, appUser) ? this.deps.secretBox.open(r.m.pin_enc) : null,
        now,
        occurrence: r.occurrence,
      }),
    );
    return { items, meta: { limit, offset, total: expanded.length } };
  }

  // -------------------------------------------------------------------------
  // Changes to an existing booking
  // -------------------------------------------------------------------------

  /**
   * Runs a state change on a visible meeting under its asset's lock, re-reading
   * the meeting inside the transaction so concurrent changes cannot interleave.
   * A wrong PIN is counted even though the change is refused.
   */
  private async change(
    p: Principal,
    id: string,
    pinCode: string | undefined,
    work: (ctx: ChangeContext) => Promise<void>,
  ) {
    const now = this.deps.clock.now();
    const appUser = await this.appUserFor(p, now);
    const before = await this.visibleForAction(p, id);
    // Everything but the meeting itself is read before the lock: inside it only `trx` may be used.
    const asset = await this.loadAsset(before.asset_kind as 'room' | 'desk', before.asset_id, p);
    const project = (await this.deps.catalogue.project(before.project_id))!;
    const organizer = (await this.deps.people.user(before.organizer_user_id))!;
    try {
      await withAssetLock(this.deps.db, this.deps.engine, { table: asset.kind === 'room' ? 'rooms' : 'desks', id: asset.row.id }, async (trx) => {
        const m = (await this.queries.byId(id, trx))!;
        const pinMatches = pinCode === undefined ? undefined : safeEqual(pinCode, this.deps.secretBox.open(m.pin_enc));
        await work({ trx, m, now, appUser, pinMatches, asset, project, organizerBlocked: organizer.blocked_from_booking === 1 });
      });
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'MEETING_042') await this.countWrongPin(id);
      throw err;
    }
    return this.view(p, (await this.queries.byId(id))!, appUser);
  }

  private async countWrongPin(id: string): Promise<void> {
    await this.deps.db.updateTable('meetings').set((eb) => ({ pin_failures: eb('pin_failures', '+', 1) })).where('id', '=', id).execute();
  }

  /**
   * A meeting of the caller's projects they may act on. Whether they may (role or
   * PIN) is decided by the action's rules, after the state checks, so the refusals
   * come in the spec's order (cancelled, ended, too early … before MEETING_003).
   */
  private async visibleForAction(p: Principal, id: string): Promise<MeetingRow> {
    const m = await this.queries.byId(id);
    if (!m || !p.projects.has(m.project_id)) throw errors.notFound('Meeting not found');
    return m;
  }

  private history(m: MeetingRow, p: Principal, appUser: string | null, now: number, action: string, extra: Partial<NewHistory> = {}): NewHistory {
    const who = actor(p, appUser);
    return {
      id: newId(now), meeting_id: m.id, action, at: now, by: who.by, source: who.source, source_detail: who.sourceDetail,
      reason: null, status_before: m.status, old_start_at: null, old_end_at: null, new_start_at: null, new_end_at: null, ...extra,
    };
  }

  private facts(m: MeetingRow, now: number) {
    const series = storedSeries(m);
    const w = series ? currentOccurrence(series, now) : { start: m.start_at, end: m.end_at };
    return { status: m.status as never, start: w.start, end: w.end, pinFailures: m.pin_failures };
  }

  async update(p: Principal, id: string, input: UpdateMeetingInput) {
    const caller0 = await this.peek(p, id);
    // The organizer's pinCode sets a new PIN; anyone else's authorizes the change.
    const authPin = caller0.isOrganizer ? undefined : input.pinCode;
    const attendees = input.attendees !== undefined ? await this.resolveAttendees(input.attendees) : undefined;
    return this.change(p, id, authPin, async ({ trx, m, now, appUser, pinMatches, asset, project, organizerBlocked }) => {
      const caller = callerOf(p, m, appUser, pinMatches);
      const newStart = input.startDateTime !== undefined ? truncateToMinute(Date.parse(input.startDateTime)) : m.start_at;
      const newEnd = input.endDateTime !== undefined ? truncateToMinute(Date.parse(input.endDateTime)) : m.end_at;
      const changesTimes = newStart !== m.start_at || newEnd !== m.end_at;
      const current = this.facts(m, now);
      const refusal = updateRefusal(current, caller, { movesStart: newStart !== m.start_at, changesTimes, organizerBlocked });
      if (refusal) throw refusal;
      if (changesTimes && m.recurrence) throw errors.conflict('The times of a recurring series cannot be changed; cancel it and book a new one');
      if (caller.isOrganizer && input.pinCode !== undefined && !PIN_PATTERN.test(input.pinCode)) {
        throw errors.validation(['body.pinCode must be 4 to 8 digits']);
      }

      const changes: Record<string, unknown> = { updated_at: now };
      let history: NewHistory | null = null;
      if (changesTimes) {
        if (newEnd <= newStart) throw errors.validation(['body.endDateTime must be after body.startDateTime']);
        const config = JSON.parse(asset.row.config) as AssetConfig;
        // Lead time and advance days concern the start; they do not apply when only the end moves.
        this.checkRules([{ start: newStart, end: newEnd }], config, project, asset.kind, now, m.all_day === 1, newStart === m.start_at);
        await this.checkConflicts(trx, [{ start: newStart, end: newEnd }], asset, project, m.id);
        Object.assign(changes, { start_at: newStart, end_at: newEnd, booked_end_at: newEnd, span_end_at: newEnd });
        await meetingWrites.replaceSlots(trx, m.id, [
          { id: m.id, meeting_id: m.id, project_id: m.project_id, asset_id: m.asset_id, occurrence_index: 0, start_at: newStart, end_at: newEnd },
        ]);
        await meetingWrites.recordLongestHold(trx, m.project_id, [{ start_at: newStart, end_at: newEnd }]);
        history = this.history(m, p, appUser, now, 'update', { old_start_at: m.start_at, old_end_at: m.end_at, new_start_at: newStart, new_end_at: newEnd });
      }
      if (input.title !== undefined) changes.title = input.title;
      if (input.body !== undefined) changes.body = input.body;
      if (attendees !== undefined) {
        changes.attendees = JSON.stringify(attendees);
        await meetingWrites.replaceAttendees(trx, m.id, attendees);
      }
      if (caller.isOrganizer && input.pinCode !== undefined) Object.assign(changes, { pin_enc: this.deps.secretBox.seal(input.pinCode), pin_failures: 0 });
      await meetingWrites.update(trx, m.id, changes);
      if (history || Object.keys(changes).length > 1) await meetingWrites.appendHistory(trx, history ?? this.history(m, p, appUser, now, 'update'));
      const updated = (await this.queries.byId(m.id, trx))!;
      const window = changesTimes ? { start: newStart, end: newEnd } : { start: current.start, end: current.end };
      await emitBookingEvent(trx, updated, window, { kind: 'MODIFY', oldStart: current.start, oldEnd: current.end }, now);
      if (changesTimes) await rescheduleTimers(trx, updated, window, now);
    });
  }

  /** The caller's relation to a meeting, before any lock (decides how a pinCode is read). */
  private async peek(p: Principal, id: string) {
    const appUser = await this.appUserFor(p, this.deps.clock.now());
    const m = await this.queries.byId(id);
    if (!m || !p.projects.has(m.project_id)) throw errors.notFound('Meeting not found');
    return callerOf(p, m, appUser);
  }

  async cancel(p: Principal, id: string, input: { pinCode?: string; paymentId?: string }) {
    return this.change(p, id, input.pinCode, async ({ trx, m, now, appUser, pinMatches }) => {
      const refusal = cancelRefusal(this.facts(m, now), callerOf(p, m, appUser, pinMatches), now);
      if (refusal) throw refusal;
      await meetingWrites.update(trx, m.id, { status: 'cancelled', updated_at: now });
      await meetingWrites.releaseSlots(trx, m.id);
      await meetingWrites.appendHistory(trx, this.history(m, p, appUser, now, 'cancel'));
      const f = this.facts(m, now);
      await emitBookingEvent(trx, m, { start: f.start, end: f.end }, { kind: 'CANCEL' }, now);
      await timerWrites.cancelPending(trx, m.id);
    });
  }

  async checkIn(p: Principal, id: string, input: { pinCode?: string }) {
    return this.change(p, id, input.pinCode, async ({ trx, m, now, appUser, pinMatches, asset, project }) => {
      const preStartMinutes = resolveMeetingConfig(JSON.parse(asset.row.config) as AssetConfig).preStartMinutes;
      const caller = callerOf(p, m, appUser, pinMatches);
      const refusal = checkInRefusal(this.facts(m, now), caller, { now, preStartMinutes, timeZone: project.timezone });
      if (refusal) throw refusal;
      const organizer = parseOrganizer(m);
      const attendees = parseAttendees(m);
      if (caller.isAttendee && !caller.isOrganizer) {
        for (const a of attendees) if (p.kind === 'member' && a.userId === p.userId) a.checkInAt = now;
      } else {
        organizer.checkInAt = now;
      }
      await meetingWrites.update(trx, m.id, {
        status: 'checked-in', organizer: JSON.stringify(organizer), attendees: JSON.stringify(attendees), updated_at: now,
      });
      await meetingWrites.appendHistory(trx, this.history(m, p, appUser, now, 'check-in'));
    });
  }

  async checkOut(p: Principal, id: string, input: { pinCode?: string }) {
    return this.change(p, id, input.pinCode, async ({ trx, m, now, appUser, pinMatches }) => {
      const refusal = checkOutRefusal(this.facts(m, now), callerOf(p, m, appUser, pinMatches));
      if (refusal) throw refusal;
      const facts = this.facts(m, now);
      const end = checkOutEnd(facts, now);
      const organizer = { ...parseOrganizer(m), checkOutAt: now };
      const series = storedSeries(m);
      const changes: Record<string, unknown> = { status: 'done', organizer: JSON.stringify(organizer), updated_at: now };
      if (series) {
        // The occurrence ends now; a later occurrence keeps the series active.
        const current = currentOccurrence(series, now);
        current.end = end;
        const next = series.occurrences.find((o) => o.start > current.start);
        Object.assign(changes, { recurrence: JSON.stringify(series), status: next ? 'active' : 'done' });
        if (next) Object.assign(changes, { organizer: JSON.stringify({ ...organizer, checkInAt: null, checkOutAt: null }) });
        await meetingWrites.updateSlotEnd(trx, current.id, end);
        await rescheduleTimers(trx, m, next ?? null, now);
      } else {
        Object.assign(changes, { end_at: end, span_end_at: end });
        await meetingWrites.updateSlotEnd(trx, m.id, end);
        await timerWrites.cancelPending(trx, m.id);
      }
      await meetingWrites.update(trx, m.id, changes);
      await meetingWrites.appendHistory(trx, this.history(m, p, appUser, now, 'check-out', { old_end_at: facts.end, new_end_at: end }));
    });
  }
}
