/**
 * POST /meetings: a booking (or a draft preview), in the spec's steps: resolve the
 * asset and its project, the organizer, private access, the requested window, the
 * rules for every occurrence, the price, and the write under the asset's lock.
 */
import type { Kysely } from 'kysely';
import type { Principal } from '../auth/index.js';
import { hasPermission } from '../auth/index.js';
import { mayBookPrivately } from './rules/private-access.js';
import { ServiceError, errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Database } from '../../platform/db/schema.js';
import { MAX_CLEANUP_MS, cleanupFor, type ProjectRow } from '../catalogue/index.js';
import type { NewMeeting, NewSlot } from './meeting-repository.js';
import type { UserAndEmails, UserRow } from './people-repository.js';
import type { Db } from '../../platform/db/db.js';
import { checkBookingWindow, resolveTimePeriod, truncateToMinute } from './rules/availability.js';
import { checkedInAtCreate, isClosedStatus, type AssetConfig } from './rules/asset-config.js';
import { expandRecurrence, parseRecurrence } from './rules/recurrence.js';
import { conflictMessage, ruleViolationMessage } from './rules/window-refusals.js';
import { MEETING_UPDATE, actor, mayReadPin } from './meeting-access.js';
import { meetingView, type StoredAttendee } from './meeting-view.js';
import { newPinCode, type Actor, type HistoryEntry, type NewBooking } from './booking-change.js';
import { scopeOf } from './booking-changes.js';
import type { PaymentDesk, PreparedCheckout } from './payment-port.js';
import { checkoutDeadline, holdDeadline, holdReminderAt } from '../payments/rules/deadlines.js';
import type { Static } from 'typebox';
import type { CreateMeetingBody, DraftResult } from '../../contract/meetings.js';
import { parseInstant } from '../../platform/time/instant.js';
import { forCaller, type Asset, type MeetingSupport, type Organizer, type Priced, type Window } from './meeting-support.js';

type DraftView = Static<typeof DraftResult>;
/** A payment just opened: what the Meeting shows and its billing entry. */
type Opened = Awaited<ReturnType<PaymentDesk['open']>>;

export type CreateMeetingInput = Static<typeof CreateMeetingBody>;

/** The organizer with their account (private access reads its brand-staff list). */
type ResolvedOrganizer = Organizer & { user: UserRow };

/** Everything a new booking is written with, decided before the lock. */
interface NewBookingPlan {
  id: string;
  pin: string;
  /** The PIN sealed with the secret box, as stored. */
  pinEnc: string;
  who: Actor;
  windows: Window[];
  /** The quote, when the request is priced (a promo code's use is taken even at a total of zero). */
  quote: Priced | null;
  /** The quote when there is something to pay. */
  priced: Priced | null;
  backoffice: boolean;
  paymentDueAt: number | null;
  startsCheckedIn: boolean;
  series: { rule: string; occurrences: { id: string; start: number; end: number }[] } | null;
  attendees: StoredAttendee[];
  histories: HistoryEntry[];
  slots: NewSlot[];
}

export class MeetingCreateService {
  constructor(private readonly s: MeetingSupport) {}

  async create(p: Principal, input: CreateMeetingInput) {
    validateCreate(input);
    // The caller's own account and the attendees' are read beside the asset (one message on PostgreSQL)
    // when the caller books for itself.
    const { early, asset } = await this.s.deps.changes.readTogether(async (db) => {
      const early = await this.earlyUsers(p, input, db);
      const asset = await this.s.loadAsset(input.meetingRoomId ? 'room' : 'desk', (input.meetingRoomId ?? input.deskId)!, p, db);
      return { early, asset };
    });
    const project = asset.ctx.project;
    const now = this.s.deps.clock.now();
    const appUser = await this.s.appUserForWrite(p, now);
    const { organizer, usersByEmail } = await this.resolveOrganizer(p, input, project, appUser, early);
    await this.checkPrivateAccess(p, asset, organizer, project);
    checkBookable(asset, organizer);

    const config = asset.row.config;
    const first = requestedWindow(input, config, project, now);
    if (input.draft) return { draft: true as const, data: await this.draft(input, asset, config, project, first, now) };

    const windows = occurrences(input.recurrence, first, project.timezone);
    this.s.checkRules(windows, config, project, asset.kind, now, input.timePeriod === 'allDay');
    const quote = await this.price(input, asset, project, first, now);
    const plan = this.plan(p, input, {
      asset,
      project,
      config,
      organizer,
      appUser,
      now,
      windows,
      quote,
      attendees: this.s.attendeesOf(input.attendees ?? [], usersByEmail),
    });
    const stored = await this.write(p, input, plan, asset, project, organizer, now);
    const data = forCaller(
      p,
      stored.meeting,
      meetingView(stored.meeting, {
        assetName: asset.row.name,
        histories: stored.histories,
        pinCode: mayReadPin(p, stored.meeting, appUser) ? plan.pin : null,
        now: this.s.deps.clock.now(),
      }),
    );
    return { draft: false as const, data };
  }

  /**
   * The read of the organizer's and attendees' accounts, started on `db` to go out with the asset's
   * read when the organizer is the caller and known without a write (a member, or an app whose
   * service user exists).
   */
  private async earlyUsers(p: Principal, input: CreateMeetingInput, db: Db): Promise<UsersRead | null> {
    if (input.organizerId !== undefined) return null;
    const userId = p.kind === 'member' ? p.userId : p.kind === 'app' ? p.appServiceUserId : undefined;
    if (!userId) return null;
    const { found: read } = await this.s.deps.people.userAndEmailsAhead(userId, attendeeEmails(input), db);
    // Awaited later unless the asset read fails first: a failure then is not left unhandled.
    read.catch(() => {});
    return { userId, read };
  }

  /** The organizer, and the attendees' accounts found by email in the same read. */
  private async resolveOrganizer(
    p: Principal,
    input: CreateMeetingInput,
    project: ProjectRow,
    appUser: string | null,
    early: UsersRead | null,
  ) {
    let userId: string;
    if (input.organizerId !== undefined) {
      if (!hasPermission(p, project.id, MEETING_UPDATE))
        throw errors.forbidden('Booking for a member needs the MEETING_UPDATE permission on the project');
      const m = await this.s.deps.people.membership(input.organizerId, project.id);
      if (!m || m.status !== 'active') throw errors.validation(["body.organizerId must be an active member of the asset's project"]);
      userId = input.organizerId;
    } else {
      userId = p.kind === 'member' ? p.userId! : appUser!;
    }
    const found =
      early && early.userId === userId ? await early.read : await this.s.deps.people.userAndEmails(userId, attendeeEmails(input));
    const user = found.user!;
    const organizer: ResolvedOrganizer = {
      userId,
      user,
      blocked: user.blocked_from_booking,
      snapshot: { email: user.email, name: user.name, displayName: user.profile_name || user.name },
    };
    return { organizer, usersByEmail: found.byEmail };
  }

  /** Private assets: members of the project (not visitors), brand staff, or an app with a role on the project. */
  private async checkPrivateAccess(p: Principal, asset: Asset, organizer: ResolvedOrganizer, project: ProjectRow): Promise<void> {
    const assetIsPublic = asset.row.is_public;
    const appHasRole = p.projects.get(project.id)?.hasRole === true;
    if (mayBookPrivately({ assetIsPublic, appHasRole, membership: null, brandStaff: false })) return;
    const m = await this.s.deps.people.membership(organizer.userId, project.id);
    const membership = m && m.status === 'active' ? (m.user_type === 'visitor' ? 'visitor' : 'member') : null;
    const brandStaff = organizer.user.brand_staff.includes(project.brand_id);
    if (mayBookPrivately({ assetIsPublic, appHasRole, membership, brandStaff })) return;
    throw errors.forbidden(`This ${asset.kind} is private to the members of its project`);
  }

  /** The price of a new booking's window (null for a free asset without a promo code). */
  private async price(input: CreateMeetingInput, asset: Asset, project: ProjectRow, w: Window, now: number): Promise<Priced | null> {
    const pricer = await this.s.pricer(input, asset, project, input.timePeriod === 'allDay', now);
    return pricer.free ? null : { price: pricer.at(w), promoCodeId: pricer.promoCodeId };
  }

  /** The new booking's ids, PIN, status, payment deadline, series, first history entries and slots. */
  private plan(
    p: Principal,
    input: CreateMeetingInput,
    c: {
      asset: Asset;
      project: ProjectRow;
      config: AssetConfig;
      organizer: Organizer;
      appUser: string | null;
      now: number;
      windows: Window[];
      quote: Priced | null;
      attendees: StoredAttendee[];
    },
  ): NewBookingPlan {
    const { asset, project, now, windows, quote } = c;
    // A total of zero books like a free asset (but still takes a use of its promo code).
    const priced = quote && quote.price.minor.total > 0 ? quote : null;
    if (priced && windows.length > 1)
      throw errors.validation(['body.recurrence: a recurring series cannot be booked on a paid asset; book each occurrence']);
    const pin = newPinCode();
    const id = newId(now);
    const who = actor(p, c.appUser);
    const startsCheckedIn = !priced && checkedInAtCreate(c.config, now, windows[0].start);
    const backoffice = input.organizerId !== undefined;
    const paymentDueAt =
      priced && backoffice
        ? holdDeadline({
            now,
            start: windows[0].start,
            requestedMinutes: input.paymentDueMinutes,
            projectMinutes: project.backoffice_payment_due_minutes,
          })
        : null;
    const series = input.recurrence
      ? {
          rule: input.recurrence.trim().replace(/^RRULE:/i, ''),
          occurrences: windows.map((w, i) => ({ id: i === 0 ? id : newId(now), ...w })),
        }
      : null;
    const histories: HistoryEntry[] = [
      { action: 'create', actor: who, statusBefore: null, newStart: windows[0].start, newEnd: windows[0].end },
    ];
    if (startsCheckedIn)
      histories.push({
        action: 'check-in',
        actor: { by: 'system', source: 'system', sourceDetail: 'check-in not required' },
        statusBefore: 'active',
      });
    const slots: NewSlot[] = (series?.occurrences ?? [{ id, ...windows[0] }]).map((o, i) => ({
      id: o.id,
      meeting_id: id,
      project_id: project.id,
      asset_id: asset.row.id,
      occurrence_index: i,
      start_at: o.start,
      end_at: o.end,
    }));
    return {
      id,
      pin,
      pinEnc: this.s.deps.secretBox.seal(pin),
      who,
      windows,
      quote,
      priced,
      backoffice,
      paymentDueAt,
      startsCheckedIn,
      series,
      attendees: c.attendees,
      histories,
      slots,
    };
  }

  /**
   * Under the asset's lock: the conflict read, the promo code's use, the payment, and the writer's create.
   * A paid booking's provider object is made first, outside the lock (a provider's latency never holds
   * the asset, or SQLite's one writer), and cancelled at the provider if the booking is then not made.
   */
  private async write(
    p: Principal,
    input: CreateMeetingInput,
    plan: NewBookingPlan,
    asset: Asset,
    project: ProjectRow,
    organizer: Organizer,
    now: number,
  ) {
    const prepared = plan.priced
      ? await this.s.deps.payments.prepare({
          projectId: project.id,
          meetingId: plan.id,
          currency: plan.priced.price.currency,
          amountMinor: plan.priced.price.minor.total,
          expiresAt: plan.paymentDueAt ?? checkoutDeadline(now),
          payerEmail: organizer.snapshot.email,
          now,
        })
      : null;
    try {
      return await this.writeLocked(p, input, plan, asset, project, organizer, prepared, now);
    } catch (err) {
      if (prepared) await this.s.deps.payments.discard(prepared);
      throw err;
    }
  }

  private writeLocked(
    p: Principal,
    input: CreateMeetingInput,
    plan: NewBookingPlan,
    asset: Asset,
    project: ProjectRow,
    organizer: Organizer,
    prepared: PreparedCheckout | null,
    now: number,
  ) {
    const { windows, quote, priced } = plan;
    const scope = scopeOf(asset.kind, asset.ctx);
    const { writer } = this.s.deps.changes;
    const event = creationEvent(plan);
    return this.s.deps.changes.withLock(asset.kind, asset.row.id, async (trx) => {
      // The event's listeners are read beside the conflict read.
      if (event) await writer.prepare(trx, scope);
      await this.s.checkConflicts(trx, windows, asset, project, null);
      // A promo code's use is taken with the booking (given back if its payment is voided or lapses).
      if (quote?.promoCodeId && !(await this.s.deps.payments.claimPromo(trx, quote.promoCodeId))) {
        throw errors.validation([`body.promoCode: the promo code ${input.promoCode} has been used up`]);
      }
      const opened = priced ? await this.openPayment(trx, input, plan, priced, project, prepared, now) : null;
      const booking: NewBooking = {
        meeting: newMeetingRow(p, input, plan, asset, project, organizer, opened, now),
        slots: plan.slots,
        attendees: plan.attendees,
        histories: plan.histories,
        event,
        timersFor: windows[0],
      };
      return writer.create(trx, scope, booking);
    });
  }

  /** A paid booking holds its slot unpaid, with a payment opened in the same transaction. */
  private openPayment(
    trx: Kysely<Database>,
    input: CreateMeetingInput,
    plan: NewBookingPlan,
    priced: Priced,
    project: ProjectRow,
    prepared: PreparedCheckout | null,
    now: number,
  ): Promise<Opened> {
    const { paymentDueAt } = plan;
    return this.s.deps.payments.open(trx, {
      meetingId: plan.id,
      projectId: project.id,
      kind: plan.backoffice ? 'quote' : 'checkout',
      currency: priced.price.currency,
      amountMinor: priced.price.minor.total,
      summary: priced.price.summary,
      expiresAt: paymentDueAt ?? checkoutDeadline(now),
      nudgeAt: paymentDueAt === null ? null : holdReminderAt(now, paymentDueAt),
      redirectUrl: input.frontendRedirectUrl ?? null,
      promoCodeId: priced.promoCodeId,
      prepared,
      now,
    });
  }

  /** A draft: whether the window (and each of `draftEndDateTimes`) is available, and its price. Nothing is written. */
  private async draft(input: CreateMeetingInput, asset: Asset, config: AssetConfig, project: ProjectRow, first: Window, now: number) {
    const ends = [
      first.end,
      ...(input.draftEndDateTimes ?? []).map((e, i) => truncateToMinute(parseInstant(e, `body.draftEndDateTimes[${i}]`))),
    ];
    const pricer = await this.s.pricer(input, asset, project, input.timePeriod === 'allDay', now);
    const priceOf = (end: number) => {
      if (end <= first.start) return {};
      const price = pricer.at({ start: first.start, end });
      return { amount: price.summary.total, currency: price.currency, summary: price.summary };
    };
    const cleanup = cleanupFor(project, asset.row, asset.kind === 'desk');
    const latest = Math.max(...ends);
    const slots = await this.s.deps.slots.assetSlots(
      asset.row.id,
      first.start - MAX_CLEANUP_MS,
      latest + MAX_CLEANUP_MS,
      project.max_hold_ms,
    );
    const bookings = slots.map((s) => ({ id: s.meeting_id, start: s.start_at, end: s.end_at }));
    const draftInfo = ends.map((end): DraftView['draftInfo'][number] => {
      const window = { startDateTime: new Date(first.start).toISOString(), endDateTime: new Date(end).toISOString() };
      const r = checkBookingWindow({
        start: first.start,
        end,
        now,
        timeZone: project.timezone,
        config,
        allDay: input.timePeriod === 'allDay',
        cleanupMinutes: cleanup,
        bookings,
      });
      if (r.ok) return { ...window, isAvailable: true, ...priceOf(end) };
      const message =
        r.reason === 'CONFLICT'
          ? conflictMessage(r.conflictWith, project.timezone, asset.kind, { start: first.start, end })
          : ruleViolationMessage(r, project.timezone, asset.kind);
      return { ...window, isAvailable: false, reason: r.reason, message, ...priceOf(end) };
    });
    const result: DraftView = {
      draft: true,
      ...(asset.kind === 'room' ? { meetingRoomId: asset.row.id } : { deskId: asset.row.id }),
      draftInfo,
    };
    return result;
  }
}

/** A read of the organizer's account and the attendees' accounts by email, started early. */
interface UsersRead {
  userId: string;
  read: Promise<UserAndEmails>;
}

/** The attendees' emails looked up for a booking (none for a draft). */
const attendeeEmails = (input: CreateMeetingInput): string[] => (input.draft ? [] : (input.attendees ?? []).map((a) => a.email));

function validateCreate(input: CreateMeetingInput): void {
  const problems: string[] = [];
  if ((input.meetingRoomId === undefined) === (input.deskId === undefined))
    problems.push('body must contain exactly one of meetingRoomId or deskId');
  if (input.meetingRoomId !== undefined) {
    if (input.endDateTime === undefined) problems.push('body.endDateTime is required for a room booking');
    if (input.timePeriod !== undefined) problems.push('body.timePeriod is for desk bookings; rooms use endDateTime');
  }
  if (input.deskId !== undefined && (input.endDateTime === undefined) === (input.timePeriod === undefined)) {
    problems.push('body must contain exactly one of endDateTime or timePeriod for a desk booking');
  }
  if (input.paymentDueMinutes !== undefined && input.organizerId === undefined)
    problems.push('body.paymentDueMinutes is allowed only with organizerId (back-office booking)');
  if (input.draftEndDateTimes !== undefined && !input.draft) problems.push('body.draftEndDateTimes is allowed only with draft: true');
  if (problems.length) throw errors.validation(problems);
}

/** A blocked organizer (checked before every window rule) or a closed asset cannot be booked. */
function checkBookable(asset: Asset, organizer: Organizer): void {
  if (organizer.blocked) throw new ServiceError(403, 'MEETING_049', 'The organizer has been blocked from booking by an administrator');
  if (isClosedStatus(asset.kind, asset.row.status))
    throw new ServiceError(409, 'MEETING_006', `This ${asset.kind} is ${asset.row.status} and cannot be booked`);
}

/** The window asked for: start and end (to the minute), or a desk's time period of that day. */
function requestedWindow(input: CreateMeetingInput, config: AssetConfig, project: ProjectRow, now: number): Window {
  const start = parseInstant(input.startDateTime, 'body.startDateTime');
  if (input.timePeriod) {
    const resolved = resolveTimePeriod({ start, period: input.timePeriod, timeZone: project.timezone, config, now });
    if (!resolved)
      throw errors.validation([`The desk is not open for the ${input.timePeriod} of that day (closed, or the period is over)`]);
    return resolved;
  }
  const end = parseInstant(input.endDateTime!, 'body.endDateTime');
  const w = { start: truncateToMinute(start), end: truncateToMinute(end) };
  if (w.end <= w.start) throw errors.validation(['body.endDateTime must be after body.startDateTime']);
  return w;
}

/** Every occurrence of a recurring request (the first window alone otherwise). */
function occurrences(rule: string | undefined, first: Window, timeZone: string): Window[] {
  if (!rule) return [first];
  const parsed = parseRecurrence(rule, timeZone);
  if (!parsed.ok) throw errors.validation(parsed.errors.map((e) => `body.${e}`));
  const expanded = expandRecurrence(parsed.rule, first, timeZone);
  if (!expanded.ok) throw errors.validation(expanded.errors.map((e) => `body.${e}`));
  return expanded.occurrences.map((o) => ({ start: o.start, end: o.end }));
}

/**
 * The event a new booking records: `*_BOOK` for a free one; a paid booking is booked (`*_BOOK`) when it is
 * paid, so a checkout records none now, and a back-office hold is announced with `*_PAYMENT_DUE`.
 */
function creationEvent(plan: NewBookingPlan): NewBooking['event'] {
  const { windows, priced, paymentDueAt } = plan;
  if (!priced) return { window: windows[0], detail: { kind: 'BOOK' } };
  if (paymentDueAt === null) return undefined;
  return {
    window: windows[0],
    detail: { kind: 'PAYMENT_DUE', amount: priced.price.summary.total, currency: priced.price.currency, paymentDueAt },
  };
}

/** The meeting row of a new booking. */
function newMeetingRow(
  p: Principal,
  input: CreateMeetingInput,
  plan: NewBookingPlan,
  asset: Asset,
  project: ProjectRow,
  organizer: Organizer,
  opened: Opened | null,
  now: number,
): NewMeeting {
  const { id, windows, series, startsCheckedIn } = plan;
  return {
    id,
    project_id: project.id,
    asset_kind: asset.kind,
    asset_id: asset.row.id,
    room_id: asset.kind === 'room' ? asset.row.id : null,
    desk_id: asset.kind === 'desk' ? asset.row.id : null,
    title: input.title ?? '',
    body: input.body ?? '',
    start_at: windows[0].start,
    end_at: windows[0].end,
    booked_end_at: windows[0].end,
    span_end_at: windows[windows.length - 1].end,
    all_day: input.timePeriod === 'allDay',
    time_period: input.timePeriod ?? null,
    status: opened ? 'unpaid' : startsCheckedIn ? 'checked-in' : 'active',
    pin_enc: plan.pinEnc,
    pin_failures: 0,
    organizer_user_id: organizer.userId,
    organizer: { ...organizer.snapshot, checkInAt: startsCheckedIn ? now : null, checkOutAt: null },
    attendees: plan.attendees,
    app_id: p.appId,
    booked_via: input.organizerId ? 'backoffice' : null,
    booked_by_user_id: input.organizerId ? plan.who.by : null,
    payment: opened ? opened.snapshot : null,
    payment_due_at: plan.paymentDueAt,
    billing_summaries: opened ? [opened.billing] : [],
    recurrence: series,
    cancel_reason: null,
    created_at: now,
    updated_at: now,
  };
}
