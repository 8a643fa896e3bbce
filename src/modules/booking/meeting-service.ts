/**
 * The booking lifecycle: create (with drafts, back-office bookings and recurring
 * series), list, read, update, cancel, check-in and check-out.
 *
 * Every time rule goes through the availability engine (src/modules/booking/rules), every
 * state rule through the meeting rules; this module loads, decides with those
 * pure functions, and writes. Conflict check and write happen under a per-asset
 * lock, and each change appends its history entry in the same transaction.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Principal } from '../auth/principal.js';
import { mayBookPrivately } from './rules/private-access.js';
import { safeEqual, type SecretBox } from '../../platform/crypto/secrets.js';
import { ServiceError, errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Database } from '../../platform/db/schema.js';
import { MAX_CLEANUP_MS, cleanupFor, type AssetInContext, type CatalogueService, type DeskRow, type ProjectRow, type RoomRow } from '../catalogue/catalogue-service.js';
import type { MeetingRepository, MeetingRow, NewSlot } from './meeting-repository.js';
import type { PeopleRepository, UserRow } from './people-repository.js';
import { checkBookingWindow, resolveTimePeriod, truncateToMinute } from './rules/availability.js';
import { checkedInAtCreate, isClosedStatus, resolveMeetingConfig, type AssetConfig } from './rules/asset-config.js';
import { expandRecurrence, parseRecurrence } from './rules/recurrence.js';
import { configProblems, conflictMessage, ruleViolationMessage } from './rules/window-refusals.js';
import { cancelRefusal, checkInRefusal, checkOutEnd, checkOutRefusal, updateRefusal } from './rules/meeting-rules.js';
import { MEETING_UPDATE, actor, callerOf, canSee, mayReadPin } from './meeting-access.js';
import { currentOccurrence, listedRows, meetingView, type MeetingView, parseAttendees, parseOrganizer, parseRecurrence as storedSeries, type StoredAttendee, type StoredOrganizer } from './meeting-view.js';
import { hasPermission } from '../auth/principal.js';
import { newPinCode, type BookingChange, type HistoryEntry } from './booking-change.js';
import { scopeOf, type BookingChanges, type LockedBooking } from './booking-changes.js';
import { billingWithStatus, type PaymentDesk } from './payment-port.js';
import { fromMinor, priceBooking, type ChargeRate, type Price } from '../payments/rules/pricing.js';
import { checkoutDeadline, holdDeadline, holdReminderAt } from '../payments/rules/deadlines.js';
import type { Static } from 'typebox';
import type { CreateMeetingBody, DraftResult, ListMeetingsQuery, UpdateMeetingBody } from '../../contract/meetings.js';
import { parseInstant } from '../../platform/time/instant.js';

type DraftView = Static<typeof DraftResult>;

export type CreateMeetingInput = Static<typeof CreateMeetingBody>;
export type UpdateMeetingInput = Static<typeof UpdateMeetingBody>;
export type ListMeetingsInput = Static<typeof ListMeetingsQuery>;

export const DEFAULT_MEETING_PAGE_SIZE = 100;
export const PIN_PATTERN = /^\d{4,8}$/;

type Asset = ({ kind: 'room'; row: RoomRow } | { kind: 'desk'; row: DeskRow }) & { ctx: AssetInContext };

interface Organizer {
  userId: string;
  snapshot: StoredOrganizer;
  blocked: boolean;
}

interface Window {
  start: number;
  end: number;
}

interface ChangeContext extends LockedBooking {
  now: number;
  appUser: string | null;
  /** undefined when no PIN was sent. */
  pinMatches?: boolean;
  asset: Asset;
  project: ProjectRow;
  organizerBlocked: boolean;
}

export interface MeetingServiceDeps {
  clock: Clock;
  secretBox: SecretBox;
  catalogue: CatalogueService;
  people: PeopleRepository;
  meetings: MeetingRepository;
  changes: BookingChanges;
  payments: PaymentDesk;
}

/** The price of a booking, and the promo code it used. */
interface Priced {
  price: Price;
  promoCodeId: string | null;
}

export class MeetingService {
  constructor(private readonly deps: MeetingServiceDeps) {}

  // -------------------------------------------------------------------------
  // Create
  // -------------------------------------------------------------------------

  async create(p: Principal, input: CreateMeetingInput) {
    this.validateCreate(input);
    const asset = await this.loadAsset(input.meetingRoomId ? 'room' : 'desk', (input.meetingRoomId ?? input.deskId)!, p);
    const project = asset.ctx.project;
    const now = this.deps.clock.now();
    const appUser = await this.appUserForWrite(p, now);
    const { organizer, usersByEmail } = await this.resolveOrganizer(p, input, project, appUser);
    await this.checkPrivateAccess(p, asset, organizer, project);
    if (organizer.blocked) throw new ServiceError(403, 'MEETING_049', 'The organizer has been blocked from booking by an administrator');
    if (isClosedStatus(asset.kind, asset.row.status)) throw new ServiceError(409, 'MEETING_006', `This ${asset.kind} is ${asset.row.status} and cannot be booked`);

    const config = JSON.parse(asset.row.config) as AssetConfig;
    const first = this.requestedWindow(input, config, project, now);
    if (input.draft) return { draft: true as const, data: await this.draft(input, asset, config, project, first, now) };

    const windows = this.occurrences(input.recurrence, first, project.timezone);
    this.checkRules(windows, config, project, asset.kind, now, input.timePeriod === 'allDay');
    const quote = await this.price(input, asset, project, first, now);
    // A total of zero books like a free asset (but still takes a use of its promo code).
    const priced = quote && quote.price.minor.total > 0 ? quote : null;
    if (priced && windows.length > 1) throw errors.validation(['body.recurrence: a recurring series cannot be booked on a paid asset; book each occurrence']);
    const attendees = this.attendeesOf(input.attendees ?? [], usersByEmail);
    const pin = newPinCode();
    const id = newId(now);
    const who = actor(p, appUser);
    const startsCheckedIn = !priced && checkedInAtCreate(config, now, windows[0].start);
    const backoffice = input.organizerId !== undefined;
    const paymentDueAt = priced && backoffice
      ? holdDeadline({ now, start: windows[0].start, requestedMinutes: input.paymentDueMinutes, projectMinutes: project.backoffice_payment_due_minutes })
      : null;
    const series = input.recurrence ? { rule: input.recurrence.trim().replace(/^RRULE:/i, ''), occurrences: windows.map((w, i) => ({ id: i === 0 ? id : newId(now), ...w })) } : null;
    const histories: HistoryEntry[] = [{ action: 'create', actor: who, statusBefore: null, newStart: windows[0].start, newEnd: windows[0].end }];
    if (startsCheckedIn) histories.push({ action: 'check-in', actor: { by: 'system', source: 'system', sourceDetail: 'check-in not required' }, statusBefore: 'active' });
    const slots: NewSlot[] = (series?.occurrences ?? [{ id, ...windows[0] }]).map((o, i) => ({
      id: o.id, meeting_id: id, project_id: project.id, asset_id: asset.row.id, occurrence_index: i, start_at: o.start, end_at: o.end,
    }));

    const stored = await this.deps.changes.withLock(asset.kind, asset.row.id, async (trx) => {
      await this.checkConflicts(trx, windows, asset, project, null);
      // A promo code's use is taken with the booking (given back if its payment is voided or lapses).
      if (quote?.promoCodeId && !(await this.deps.payments.claimPromo(trx, quote.promoCodeId))) {
        throw errors.validation([`body.promoCode: the promo code ${input.promoCode} has been used up`]);
      }
      // A paid booking holds its slot unpaid, with a payment opened in the same transaction.
      const opened = priced
        ? await this.deps.payments.open(trx, {
          meetingId: id, projectId: project.id, kind: backoffice ? 'quote' : 'checkout', currency: priced.price.currency,
          amountMinor: priced.price.minor.total, summary: priced.price.summary,
          expiresAt: paymentDueAt ?? checkoutDeadline(now), nudgeAt: paymentDueAt === null ? null : holdReminderAt(now, paymentDueAt),
          redirectUrl: input.frontendRedirectUrl ?? null, promoCodeId: priced.promoCodeId, now,
        })
        : null;
      return this.deps.changes.writer.create(trx, scopeOf(asset.kind, asset.ctx), {
        meeting: {
          id, project_id: project.id, asset_kind: asset.kind, asset_id: asset.row.id,
          room_id: asset.kind === 'room' ? asset.row.id : null, desk_id: asset.kind === 'desk' ? asset.row.id : null,
          title: input.title ?? '', body: input.body ?? '',
          start_at: windows[0].start, end_at: windows[0].end, booked_end_at: windows[0].end, span_end_at: windows[windows.length - 1].end,
          all_day: input.timePeriod === 'allDay' ? 1 : 0, time_period: input.timePeriod ?? null,
          status: opened ? 'unpaid' : startsCheckedIn ? 'checked-in' : 'active', pin_enc: this.deps.secretBox.seal(pin), pin_failures: 0,
          organizer_user_id: organizer.userId,
          organizer: JSON.stringify({ ...organizer.snapshot, checkInAt: startsCheckedIn ? now : null, checkOutAt: null }),
          attendees: JSON.stringify(attendees), app_id: p.appId,
          booked_via: input.organizerId ? 'backoffice' : null,
          booked_by_user_id: input.organizerId ? who.by : null,
          payment: opened ? JSON.stringify(opened.snapshot) : null, payment_due_at: paymentDueAt,
          billing_summaries: JSON.stringify(opened ? [opened.billing] : []),
          recurrence: series ? JSON.stringify(series) : null, cancel_reason: null, created_at: now, updated_at: now,
        },
        slots,
        attendees,
        histories,
        // A paid booking is booked (*_BOOK) when it is paid; a back-office hold is announced with *_PAYMENT_DUE.
        event: !opened
          ? { window: windows[0], detail: { kind: 'BOOK' } }
          : paymentDueAt !== null
            ? { window: windows[0], detail: { kind: 'PAYMENT_DUE', amount: priced!.price.summary.total, currency: priced!.price.currency, paymentDueAt } }
            : undefined,
        timersFor: windows[0],
      });
    });
    const data = forCaller(p, stored.meeting, meetingView(stored.meeting, {
      assetName: asset.row.name, histories: stored.histories, pinCode: mayReadPin(p, stored.meeting, appUser) ? pin : null, now: this.deps.clock.now(),
    }));
    return { draft: false as const, data };
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

  /** The asset with its project and floor (one read), or 404 when the caller cannot see it. */
  private async loadAsset(kind: 'room' | 'desk', id: string, p: Principal): Promise<Asset> {
    const ctx = await this.deps.catalogue.assetInContext(kind, id);
    if (!ctx || !p.projects.has(ctx.asset.project_id)) throw errors.notFound(kind === 'room' ? 'Meeting room not found' : 'Desk not found');
    return kind === 'room' ? { kind, row: ctx.asset as RoomRow, ctx } : { kind, row: ctx.asset as DeskRow, ctx };
  }

  /** The app's service user for reads: known from the token, never created here. */
  private appUserForRead(p: Principal): string | null {
    return p.kind === 'app' ? p.appServiceUserId : null;
  }

  /** The app's service user for changes: created on the app's first write. */
  private async appUserForWrite(p: Principal, now: number): Promise<string | null> {
    if (p.kind !== 'app') return null;
    return p.appServiceUserId ?? this.deps.people.appServiceUser(p.appId, now);
  }

  /** The organizer, and the attendees' accounts found by email in the same read. */
  private async resolveOrganizer(p: Principal, input: CreateMeetingInput, project: ProjectRow, appUser: string | null) {
    let userId: string;
    if (input.organizerId !== undefined) {
      if (!hasPermission(p, project.id, MEETING_UPDATE)) throw errors.forbidden('Booking for a member needs the MEETING_UPDATE permission on the project');
      const m = await this.deps.people.membership(input.organizerId, project.id);
      if (!m || m.status !== 'active') throw errors.validation(['body.organizerId must be an active member of the asset\'s project']);
      userId = input.organizerId;
    } else {
      userId = p.kind === 'member' ? p.userId! : appUser!;
    }
    const found = await this.deps.people.userAndEmails(userId, input.draft ? [] : (input.attendees ?? []).map((a) => a.email));
    const user = found.user!;
    const organizer: Organizer & { user: UserRow } = {
      userId,
      user,
      blocked: user.blocked_from_booking === 1,
      snapshot: { email: user.email, name: user.name, displayName: user.profile_name || user.name },
    };
    return { organizer, usersByEmail: found.byEmail };
  }

  /** Private assets: members of the project (not visitors), brand staff, or an app with a role on the project. */
  private async checkPrivateAccess(p: Principal, asset: Asset, organizer: Organizer & { user: UserRow }, project: ProjectRow): Promise<void> {
    const assetIsPublic = asset.row.is_public === 1;
    const appHasRole = p.projects.get(project.id)?.hasRole === true;
    if (mayBookPrivately({ assetIsPublic, appHasRole, membership: null, brandStaff: false })) return;
    const m = await this.deps.people.membership(organizer.userId, project.id);
    const membership = m && m.status === 'active' ? (m.user_type === 'visitor' ? 'visitor' : 'member') : null;
    const brandStaff = (JSON.parse(organizer.user.brand_staff) as string[]).includes(project.brand_id);
    if (mayBookPrivately({ assetIsPublic, appHasRole, membership, brandStaff })) return;
    throw errors.forbidden(`This ${asset.kind} is private to the members of its project`);
  }

  private requestedWindow(input: CreateMeetingInput, config: AssetConfig, project: ProjectRow, now: number): Window {
    const start = parseInstant(input.startDateTime, 'body.startDateTime');
    if (input.timePeriod) {
      const resolved = resolveTimePeriod({ start, period: input.timePeriod, timeZone: project.timezone, config, now });
      if (!resolved) throw errors.validation([`The desk is not open for the ${input.timePeriod} of that day (closed, or the period is over)`]);
      return resolved;
    }
    const end = parseInstant(input.endDateTime!, 'body.endDateTime');
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
    const problems = configProblems(windows, { config, timeZone: project.timezone, asset: kind, now, allDay, ignoreLeadTime });
    if (problems.length) throw errors.validation(problems);
  }

  /**
   * Prices windows of this asset for one request: the project's currency and zone,
   * the asset's charge rate and, when the request names one, the project's promo
   * code judged now. A refused code is 400 KS001. The one place bookings are priced.
   */
  private async pricer(input: { promoCode?: string }, asset: Asset, project: ProjectRow, allDay: boolean, now: number) {
    const chargeRate = JSON.parse(asset.row.charge_rate) as ChargeRate;
    const code = input.promoCode;
    const promo = code !== undefined ? await this.deps.payments.findPromo(project.id, code) : undefined;
    return {
      /** A free asset without a promo code: nothing to price. */
      free: code === undefined && !chargeRate.perHour && !chargeRate.perDay && !chargeRate.amount,
      promoCodeId: promo?.id ?? null,
      at: (w: Window): Price => {
        const r = priceBooking({
          chargeRate, currency: project.currency, start: w.start, end: w.end, timeZone: project.timezone, allDay, now,
          ...(code !== undefined ? { promo: { code, terms: promo ?? null } } : {}),
        });
        if (!r.ok) throw errors.validation([`body.promoCode: ${r.refusal.message}`]);
        return r.price;
      },
    };
  }

  /** The price of a new booking's window (null for a free asset without a promo code). A total of zero books like a free asset. */
  private async price(input: CreateMeetingInput, asset: Asset, project: ProjectRow, w: Window, now: number): Promise<Priced | null> {
    const pricer = await this.pricer(input, asset, project, input.timePeriod === 'allDay', now);
    return pricer.free ? null : { price: pricer.at(w), promoCodeId: pricer.promoCodeId };
  }

  /** What moving a booking to `to` costs on top of its current window (null when nothing; shortening refunds nothing). */
  private async extensionCharge(asset: Asset, project: ProjectRow, m: MeetingRow, to: Window, now: number): Promise<{ minor: number; amount: number } | null> {
    const pricer = await this.pricer({}, asset, project, m.all_day === 1, now);
    if (pricer.free) return null;
    const minor = pricer.at(to).minor.subtotal - pricer.at({ start: m.start_at, end: m.end_at }).minor.subtotal;
    return minor > 0 ? { minor, amount: fromMinor(minor, project.currency) } : null;
  }

  /** Slot and cleaning conflicts for every window, read inside the asset lock; 409 KS012 naming each clash. */
  private async checkConflicts(trx: Kysely<Database>, windows: Window[], asset: Asset, project: ProjectRow, excludeMeetingId: string | null): Promise<void> {
    const found = await this.deps.changes.clashes(trx, asset.kind, asset.ctx, windows, excludeMeetingId);
    const clashes: string[] = [];
    windows.forEach((w, i) => {
      const c = found[i];
      if (!c) return;
      const msg = conflictMessage(c, project.timezone, asset.kind, w);
      clashes.push(windows.length > 1 ? `occurrence ${i + 1} (${new Date(w.start).toISOString()}): ${msg}` : msg);
    });
    if (clashes.length) throw errors.slotConflict(clashes.join('; '));
  }

  private async draft(input: CreateMeetingInput, asset: Asset, config: AssetConfig, project: ProjectRow, first: Window, now: number) {
    const ends = [first.end, ...(input.draftEndDateTimes ?? []).map((e, i) => truncateToMinute(parseInstant(e, `body.draftEndDateTimes[${i}]`)))];
    const pricer = await this.pricer(input, asset, project, input.timePeriod === 'allDay', now);
    const priceOf = (end: number) => {
      if (end <= first.start) return {};
      const price = pricer.at({ start: first.start, end });
      return { amount: price.summary.total, currency: price.currency, summary: price.summary };
    };
    const cleanup = cleanupFor(project, asset.row, asset.kind === 'desk');
    const latest = Math.max(...ends);
    const slots = await this.deps.catalogue.holdsNear(asset.row.id, first.start - MAX_CLEANUP_MS, latest + MAX_CLEANUP_MS, project.max_hold_ms);
    const bookings = slots.map((s) => ({ id: s.meeting_id, start: s.start_at, end: s.end_at }));
    const draftInfo = ends.map((end): DraftView['draftInfo'][number] => {
      const window = { startDateTime: new Date(first.start).toISOString(), endDateTime: new Date(end).toISOString() };
      const r = checkBookingWindow({
        start: first.start, end, now, timeZone: project.timezone, config, allDay: input.timePeriod === 'allDay', cleanupMinutes: cleanup, bookings,
      });
      if (r.ok) return { ...window, isAvailable: true, ...priceOf(end) };
      const message = r.reason === 'CONFLICT' ? conflictMessage(r.conflictWith, project.timezone, asset.kind, { start: first.start, end }) : ruleViolationMessage(r, project.timezone, asset.kind);
      return { ...window, isAvailable: false, reason: r.reason, message, ...priceOf(end) };
    });
    const result: DraftView = { draft: true, ...(asset.kind === 'room' ? { meetingRoomId: asset.row.id } : { deskId: asset.row.id }), draftInfo };
    return result;
  }

  /** Attendees as stored: one per email (first wins), linked to an account where one has that email. */
  private attendeesOf(list: { email: string; type?: string }[], users: Map<string, UserRow>): StoredAttendee[] {
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

  private async resolveAttendees(list: { email: string; type?: string }[]): Promise<StoredAttendee[]> {
    return this.attendeesOf(list, await this.deps.people.usersByEmail(list.map((a) => a.email)));
  }

  // -------------------------------------------------------------------------
  // Read
  // -------------------------------------------------------------------------

  private async assetName(m: MeetingRow): Promise<string> {
    const ctx = await this.deps.catalogue.assetInContext(m.asset_kind as 'room' | 'desk', m.asset_id);
    return ctx?.asset.name ?? '';
  }

  private async view(p: Principal, m: MeetingRow, appUser: string | null, assetName?: string) {
    const histories = (await this.deps.meetings.histories([m.id])).get(m.id) ?? [];
    const pinCode = mayReadPin(p, m, appUser) ? this.deps.secretBox.open(m.pin_enc) : null;
    return forCaller(p, m, meetingView(m, { assetName: assetName ?? (await this.assetName(m)), histories, pinCode, now: this.deps.clock.now() }));
  }

  /** Loads a meeting the caller may see, or 404 KS005. */
  private async visible(p: Principal, id: string, appUser: string | null): Promise<MeetingRow> {
    const m = await this.deps.meetings.byId(id);
    if (!m || !canSee(p, m, appUser)) throw errors.notFound('Meeting not found');
    return m;
  }

  async get(p: Principal, id: string) {
    const appUser = this.appUserForRead(p);
    return this.view(p, await this.visible(p, id, appUser), appUser);
  }

  async list(p: Principal, q: ListMeetingsInput) {
    const from = parseInstant(q.from, 'query.from');
    const to = parseInstant(q.to, 'query.to');
    if (to <= from) throw errors.validation(['query.to must be after query.from']);
    if (q.projectId && !p.projects.has(q.projectId)) throw errors.forbidden('You do not have access to this project');
    const appUser = this.appUserForRead(p);
    const assetIds = [q.meetingRoomId, q.deskId, ...(q.meetingRoomIds ?? []), ...(q.deskIds ?? [])].filter((x): x is string => !!x);
    const rows = await this.deps.meetings.list({
      from, to,
      projectIds: q.projectId ? [q.projectId] : [...p.projects.keys()],
      participantUserId: p.kind === 'member' ? p.userId! : undefined,
      unrestrictedProjectIds: [...p.projects.keys()].filter((id) => hasPermission(p, id, MEETING_UPDATE)),
      assetIds: assetIds.length ? assetIds : undefined,
      organizerIds: q.organizerId ? [q.organizerId] : undefined,
      organizerEmails: q.organizerEmails, attendeeEmails: q.attendeeEmails, statuses: q.statuses,
    });
    const visibleRows = rows.filter((m) => canSee(p, m, appUser));
    // Every occurrence of a series, held or cancelled on its own, under its own status.
    const now = this.deps.clock.now();
    const expanded = listedRows(visibleRows, { from, to }, q.statuses, now);
    const limit = q.limit ?? DEFAULT_MEETING_PAGE_SIZE;
    const offset = q.offset ?? 0;
    const page = expanded.slice(offset, offset + limit);
    const ids = [...new Set(page.map((r) => r.m.id))];
    const histories = await this.deps.meetings.histories(ids);
    const names = new Map<string, string>();
    for (const r of page) if (!names.has(r.m.asset_id)) names.set(r.m.asset_id, await this.assetName(r.m));
    const items = page.map((r) =>
      forCaller(p, r.m, meetingView(r.m, {
        assetName: names.get(r.m.asset_id)!,
        histories: histories.get(r.m.id) ?? [],
        pinCode: mayReadPin(p, r.m, appUser) ? this.deps.secretBox.open(r.m.pin_enc) : null,
        now,
        occurrence: r.occurrence,
      })),
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
    work: (ctx: ChangeContext) => Promise<BookingChange | null>,
  ) {
    const now = this.deps.clock.now();
    const appUser = await this.appUserForWrite(p, now);
    const before = await this.visibleForAction(p, id);
    // Everything but the meeting itself is read before the lock: inside it only `trx` may be used.
    const asset = await this.loadAsset(before.asset_kind as 'room' | 'desk', before.asset_id, p);
    const project = asset.ctx.project;
    const organizer = (await this.deps.people.user(before.organizer_user_id))!;
    let after: MeetingRow;
    try {
      after = await this.deps.changes.underLock(id, asset.kind, asset.ctx, async (locked) => {
        const m = locked.meeting;
        const pinMatches = pinCode === undefined ? undefined : safeEqual(pinCode, this.deps.secretBox.open(m.pin_enc));
        const change = await work({ ...locked, now, appUser, pinMatches, asset, project, organizerBlocked: organizer.blocked_from_booking === 1 });
        return change ? locked.write(change) : m;
      });
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'MEETING_042') await this.deps.meetings.countWrongPin(id);
      throw err;
    }
    return this.view(p, after, appUser, asset.row.name);
  }

  /**
   * A meeting of the caller's projects they may act on. Whether they may (role or
   * PIN) is decided by the action's rules, after the state checks, so the refusals
   * come in the spec's order (cancelled, ended, too early … before MEETING_003).
   */
  private async visibleForAction(p: Principal, id: string): Promise<MeetingRow> {
    const m = await this.deps.meetings.byId(id);
    if (!m || !p.projects.has(m.project_id)) throw errors.notFound('Meeting not found');
    return m;
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
    return this.change(p, id, authPin, async ({ trx, meeting: m, now, appUser, pinMatches, asset, project, organizerBlocked }) => {
      const caller = callerOf(p, m, appUser, pinMatches);
      const newStart = input.startDateTime !== undefined ? truncateToMinute(parseInstant(input.startDateTime, 'body.startDateTime')) : m.start_at;
      const newEnd = input.endDateTime !== undefined ? truncateToMinute(parseInstant(input.endDateTime, 'body.endDateTime')) : m.end_at;
      const changesTimes = newStart !== m.start_at || newEnd !== m.end_at;
      const current = this.facts(m, now);
      const refusal = updateRefusal(current, caller, { movesStart: newStart !== m.start_at, changesTimes, organizerBlocked });
      if (refusal) throw refusal;
      if (changesTimes && m.recurrence) throw errors.conflict('The times of a recurring series cannot be changed; cancel it and book a new one');
      if (caller.isOrganizer && input.pinCode !== undefined && !PIN_PATTERN.test(input.pinCode)) {
        throw errors.validation(['body.pinCode must be 4 to 8 digits']);
      }

      const who = actor(p, appUser);
      const set: Record<string, unknown> = { updated_at: now };
      const change: BookingChange = { at: now, set };
      if (changesTimes) {
        if (newEnd <= newStart) throw errors.validation(['body.endDateTime must be after body.startDateTime']);
        const config = JSON.parse(asset.row.config) as AssetConfig;
        // Lead time and advance days concern the start; they do not apply when only the end moves.
        this.checkRules([{ start: newStart, end: newEnd }], config, project, asset.kind, now, m.all_day === 1, newStart === m.start_at);
        await this.checkConflicts(trx, [{ start: newStart, end: newEnd }], asset, project, m.id);
        Object.assign(set, { start_at: newStart, end_at: newEnd, booked_end_at: newEnd, span_end_at: newEnd });
        change.slots = { replace: { start: newStart, end: newEnd } };
        change.history = { action: 'update', actor: who, oldStart: m.start_at, oldEnd: m.end_at, newStart, newEnd };
        change.timers = { window: { start: newStart, end: newEnd } };
        const extra = await this.extensionCharge(asset, project, m, { start: newStart, end: newEnd }, now);
        if (extra) {
          // The new window costs more: the booking waits unpaid for the difference, holding both windows,
          // and a lapse puts the old times and status back (payments module).
          const opened = await this.deps.payments.open(trx, {
            meetingId: m.id, projectId: project.id, kind: 'extension', currency: project.currency, amountMinor: extra.minor,
            summary: { subtotal: extra.amount, total: extra.amount, discounts: [] }, expiresAt: checkoutDeadline(now), nudgeAt: null,
            redirectUrl: null, promoCodeId: null, restore: { status: m.status, start: m.start_at, end: m.end_at }, now,
          });
          const billing = [...(JSON.parse(m.billing_summaries) as object[]), opened.billing];
          Object.assign(set, { status: 'unpaid', payment: JSON.stringify(opened.snapshot), billing_summaries: JSON.stringify(billing) });
          const inside = m.start_at >= newStart && m.end_at <= newEnd;
          change.slots = inside ? { replace: { start: newStart, end: newEnd } } : { hold: [{ start: m.start_at, end: m.end_at }, { start: newStart, end: newEnd }] };
        }
      }
      if (input.title !== undefined) set.title = input.title;
      if (input.body !== undefined) set.body = input.body;
      if (attendees !== undefined) change.attendees = attendees;
      if (caller.isOrganizer && input.pinCode !== undefined) Object.assign(set, { pin_enc: this.deps.secretBox.seal(input.pinCode), pin_failures: 0 });
      if (!change.history && (Object.keys(set).length > 1 || attendees !== undefined)) change.history = { action: 'update', actor: who };
      const window = changesTimes ? { start: newStart, end: newEnd } : { start: current.start, end: current.end };
      change.event = { window, detail: { kind: 'MODIFY', oldStart: current.start, oldEnd: current.end } };
      return change;
    });
  }

  /** The caller's relation to a meeting, before any lock (decides how a pinCode is read). */
  private async peek(p: Principal, id: string) {
    const appUser = await this.appUserForWrite(p, this.deps.clock.now());
    const m = await this.deps.meetings.byId(id);
    if (!m || !p.projects.has(m.project_id)) throw errors.notFound('Meeting not found');
    return callerOf(p, m, appUser);
  }

  async cancel(p: Principal, id: string, input: { pinCode?: string; paymentId?: string }) {
    return this.change(p, id, input.pinCode, async ({ trx, meeting: m, now, appUser, pinMatches }) => {
      const refusal = cancelRefusal(this.facts(m, now), callerOf(p, m, appUser, pinMatches), now);
      if (refusal) throw refusal;
      return this.cancelChange(trx, m, now, actor(p, appUser), input.paymentId);
    });
  }

  /**
   * Staff cancel from the operator console: the same state rules as a project
   * admin's cancel, through the same writer, recorded as actor `ops`, source
   * `console` (with the staff's reason). Returns the booking after it; 404 when unknown.
   */
  async staffCancel(id: string, input: { reason?: string }): Promise<MeetingRow> {
    const staff = { isOrganizer: false, isAttendee: false, isProjectAdmin: true };
    const after = await this.deps.changes.change(id, async ({ trx, meeting: m, write }) => {
      const now = this.deps.clock.now();
      const refusal = cancelRefusal(this.facts(m, now), staff, now);
      if (refusal) throw refusal;
      const change = await this.cancelChange(trx, m, now, { by: 'ops', source: 'console', sourceDetail: null });
      const reason = input.reason?.trim() || null;
      if (reason) {
        change.set = { ...change.set, cancel_reason: reason };
        change.history = { ...change.history!, reason };
      }
      return write(change);
    });
    if (!after) throw errors.notFound('Meeting not found');
    return after;
  }

  /** The change that cancels booking `m` (voiding a pending payment, refunding a paid one before its start). */
  private async cancelChange(trx: Kysely<Database>, m: MeetingRow, now: number, who: HistoryEntry['actor'], paymentId?: string): Promise<BookingChange> {
    const f = this.facts(m, now);
    let billing = m.billing_summaries;
    if (m.status === 'unpaid') {
      // The pending payment is voided; a paymentId sent with the cancel must be that payment.
      const pending = await this.deps.payments.pendingOf(m.id, trx);
      if (paymentId !== undefined && pending?.id !== paymentId) {
        throw errors.validation(['body.paymentId is not the pending payment of this booking']);
      }
      billing = billingWithStatus(billing, await this.deps.payments.voidPending(trx, m.id, now), 'voided');
    } else if (now < f.start) {
      // A paid booking cancelled before it starts is refunded in full (docs/decisions.md).
      billing = billingWithStatus(billing, await this.deps.payments.refundSettled(trx, m.id, now), 'refunded');
    }
    return {
      at: now,
      set: { status: 'cancelled', updated_at: now, ...(billing !== m.billing_summaries ? { billing_summaries: billing } : {}) },
      slots: { release: true },
      history: { action: 'cancel', actor: who },
      event: { window: { start: f.start, end: f.end }, detail: { kind: 'CANCEL' } },
      timers: { window: null },
    };
  }

  async checkIn(p: Principal, id: string, input: { pinCode?: string }) {
    return this.change(p, id, input.pinCode, async ({ meeting: m, now, appUser, pinMatches, asset, project }) => {
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
      return {
        at: now,
        set: { status: 'checked-in', organizer: JSON.stringify(organizer), attendees: JSON.stringify(attendees), updated_at: now },
        history: { action: 'check-in', actor: actor(p, appUser) },
      };
    });
  }

  async checkOut(p: Principal, id: string, input: { pinCode?: string }) {
    return this.change(p, id, input.pinCode, async ({ meeting: m, now, appUser, pinMatches }) => {
      const refusal = checkOutRefusal(this.facts(m, now), callerOf(p, m, appUser, pinMatches));
      if (refusal) throw refusal;
      const facts = this.facts(m, now);
      const end = checkOutEnd(facts, now);
      const organizer = { ...parseOrganizer(m), checkOutAt: now };
      const series = storedSeries(m);
      const history: HistoryEntry = { action: 'check-out', actor: actor(p, appUser), oldEnd: facts.end, newEnd: end };
      if (series) {
        // The occurrence ends now; a later occurrence keeps the series active.
        const current = currentOccurrence(series, now);
        current.end = end;
        const next = series.occurrences.find((o) => o.start > current.start);
        return {
          at: now,
          set: {
            recurrence: JSON.stringify(series), status: next ? 'active' : 'done', updated_at: now,
            organizer: JSON.stringify(next ? { ...organizer, checkInAt: null, checkOutAt: null } : organizer),
          },
          slots: { endSlot: { id: current.id, end } },
          history,
          timers: { window: next ?? null },
        };
      }
      return {
        at: now,
        set: { status: 'done', organizer: JSON.stringify(organizer), end_at: end, span_end_at: end, updated_at: now },
        slots: { endSlot: { id: m.id, end } },
        history,
        timers: { window: null },
      };
    });
  }
}

/**
 * A back-office hold's payment page is the member's: only the organizer (acting
 * through the app) sees its link; the staff who booked see the quote without it.
 */
function forCaller(p: Principal, m: MeetingRow, view: MeetingView): MeetingView {
  if (m.booked_via !== 'backoffice' || !view.payment?.webPaymentUrl) return view;
  if (p.kind === 'member' && p.userId === m.organizer_user_id) return view;
  const { webPaymentUrl: _url, webPaymentQr: _qr, ...payment } = view.payment;
  return { ...view, payment };
}

