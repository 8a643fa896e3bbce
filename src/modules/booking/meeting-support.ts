/**
 * What the meeting services (create, change, actions, queries) share: the asset and
 * the app user they act against, the configuration and conflict checks, pricing,
 * attendees, the runner of a change under the asset's lock, and the caller's view.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Principal } from '../auth/index.js';
import { safeEqual, type SecretBox } from '../../platform/crypto/secrets.js';
import { ServiceError, errors } from '../../platform/errors.js';
import type { Database } from '../../platform/db/schema.js';
import type { Db } from '../../platform/db/db.js';
import type { AssetInContext, CatalogueService, DeskRow, ProjectRow, RoomRow } from '../catalogue/index.js';
import type { MeetingRepository, MeetingRow } from './meeting-repository.js';
import type { PeopleRepository, UserRow } from './people-repository.js';
import type { SlotRepository } from './slot-repository.js';
import type { AssetConfig } from './rules/asset-config.js';
import { configProblems, conflictMessage } from './rules/window-refusals.js';
import { canSee, mayReadPin } from './meeting-access.js';
import { currentOccurrence, meetingView, type MeetingView, type StoredAttendee, type StoredOrganizer } from './meeting-view.js';
import type { BookingChange } from './booking-change.js';
import type { BookingChanges, LockedBooking } from './booking-changes.js';
import type { PaymentDesk } from './payment-port.js';
import { priceBooking, type Price } from '../payments/rules/pricing.js';

export interface MeetingServiceDeps {
  clock: Clock;
  secretBox: SecretBox;
  catalogue: CatalogueService;
  people: PeopleRepository;
  meetings: MeetingRepository;
  /** The holds on assets (draft previews). */
  slots: SlotRepository;
  changes: BookingChanges;
  payments: PaymentDesk;
}

export type Asset = ({ kind: 'room'; row: RoomRow } | { kind: 'desk'; row: DeskRow }) & { ctx: AssetInContext };

export interface Organizer {
  userId: string;
  snapshot: StoredOrganizer;
  blocked: boolean;
}

export interface Window {
  start: number;
  end: number;
}

export interface ChangeContext extends LockedBooking {
  now: number;
  appUser: string | null;
  /** undefined when no PIN was sent. */
  pinMatches?: boolean;
  asset: Asset;
  project: ProjectRow;
  organizerBlocked: boolean;
}

/** The price of a booking, and the promo code it used. */
export interface Priced {
  price: Price;
  promoCodeId: string | null;
}

export class MeetingSupport {
  constructor(readonly deps: MeetingServiceDeps) {}

  /** The asset with its project and floor (one read), or 404 when the caller cannot see it. */
  async loadAsset(kind: 'room' | 'desk', id: string, p: Principal, db?: Db): Promise<Asset> {
    const ctx = await this.deps.catalogue.assetInContext(kind, id, db);
    if (!ctx || !p.projects.has(ctx.asset.project_id)) throw errors.notFound(kind === 'room' ? 'Meeting room not found' : 'Desk not found');
    return kind === 'room' ? { kind, row: ctx.asset as RoomRow, ctx } : { kind, row: ctx.asset as DeskRow, ctx };
  }

  /** The app's service user for reads: known from the token, never created here. */
  appUserForRead(p: Principal): string | null {
    return p.kind === 'app' ? p.appServiceUserId : null;
  }

  /** The app's service user for changes: created on the app's first write. */
  async appUserForWrite(p: Principal, now: number): Promise<string | null> {
    if (p.kind !== 'app') return null;
    return p.appServiceUserId ?? this.deps.people.appServiceUser(p.appId, now);
  }

  /** Configuration rules for every window; 400 KS001 naming each refused one. */
  checkRules(
    windows: Window[],
    config: AssetConfig,
    project: ProjectRow,
    kind: string,
    now: number,
    allDay: boolean,
    ignoreLeadTime = false,
  ): void {
    const problems = configProblems(windows, { config, timeZone: project.timezone, asset: kind, now, allDay, ignoreLeadTime });
    if (problems.length) throw errors.validation(problems);
  }

  /** Slot and cleaning conflicts for every window, read inside the asset lock; 409 KS012 naming each clash. */
  async checkConflicts(
    trx: Kysely<Database>,
    windows: Window[],
    asset: Asset,
    project: ProjectRow,
    excludeMeetingId: string | null,
  ): Promise<void> {
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

  /**
   * Prices windows of this asset for one request: the project's currency and zone,
   * the asset's charge rate and, when the request names one, the project's promo
   * code judged now. A refused code is 400 KS001. The one place bookings are priced.
   */
  async pricer(input: { promoCode?: string }, asset: Asset, project: ProjectRow, allDay: boolean, now: number) {
    const chargeRate = asset.row.charge_rate;
    const code = input.promoCode;
    const promo = code !== undefined ? await this.deps.payments.findPromo(project.id, code) : undefined;
    return {
      /** A free asset without a promo code: nothing to price. */
      free: code === undefined && !chargeRate.perHour && !chargeRate.perDay && !chargeRate.amount,
      promoCodeId: promo?.id ?? null,
      at: (w: Window): Price => {
        const r = priceBooking({
          chargeRate,
          currency: project.currency,
          start: w.start,
          end: w.end,
          timeZone: project.timezone,
          allDay,
          now,
          ...(code !== undefined ? { promo: { code, terms: promo ?? null } } : {}),
        });
        if (!r.ok) throw errors.validation([`body.promoCode: ${r.refusal.message}`]);
        return r.price;
      },
    };
  }

  /** Attendees as stored: one per email (first wins), linked to an account where one has that email. */
  attendeesOf(list: { email: string; type?: string }[], users: Map<string, UserRow>): StoredAttendee[] {
    const seen = new Set<string>();
    const out: StoredAttendee[] = [];
    for (const a of list) {
      const key = a.email.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      const u = users.get(key);
      out.push({
        userId: u?.id ?? null,
        email: a.email,
        name: u?.name ?? a.email,
        type: a.type ?? 'required',
        responseStatus: 'accepted',
        checkInAt: null,
      });
    }
    return out;
  }

  async resolveAttendees(list: { email: string; type?: string }[]): Promise<StoredAttendee[]> {
    return this.attendeesOf(list, await this.deps.people.usersByEmail(list.map((a) => a.email)));
  }

  /** The state and current window of a booking (a series: its current occurrence), as the state rules take them. */
  facts(m: MeetingRow, now: number) {
    const series = m.recurrence;
    const w = series ? currentOccurrence(series, now) : { start: m.start_at, end: m.end_at };
    return { status: m.status as never, start: w.start, end: w.end, pinFailures: m.pin_failures };
  }

  /**
   * Runs a state change on a visible meeting under its asset's lock, re-reading
   * the meeting inside the transaction so concurrent changes cannot interleave.
   * A wrong PIN is counted even though the change is refused.
   */
  async change(p: Principal, id: string, pinCode: string | undefined, work: (ctx: ChangeContext) => Promise<BookingChange | null>) {
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
        const change = await work({
          ...locked,
          now,
          appUser,
          pinMatches,
          asset,
          project,
          organizerBlocked: organizer.blocked_from_booking,
        });
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
  async visibleForAction(p: Principal, id: string): Promise<MeetingRow> {
    const m = await this.deps.meetings.byId(id);
    if (!m || !p.projects.has(m.project_id)) throw errors.notFound('Meeting not found');
    return m;
  }

  /** Loads a meeting the caller may see, or 404 KS005. */
  async visible(p: Principal, id: string, appUser: string | null): Promise<MeetingRow> {
    const m = await this.deps.meetings.byId(id);
    if (!m || !canSee(p, m, appUser)) throw errors.notFound('Meeting not found');
    return m;
  }

  async assetName(m: MeetingRow): Promise<string> {
    const ctx = await this.deps.catalogue.assetInContext(m.asset_kind as 'room' | 'desk', m.asset_id);
    return ctx?.asset.name ?? '';
  }

  /** A booking as the caller sees it: its history, the PIN when they may read it. */
  async view(p: Principal, m: MeetingRow, appUser: string | null, assetName?: string) {
    const histories = (await this.deps.meetings.histories([m.id])).get(m.id) ?? [];
    const pinCode = mayReadPin(p, m, appUser) ? this.deps.secretBox.open(m.pin_enc) : null;
    return forCaller(
      p,
      m,
      meetingView(m, { assetName: assetName ?? (await this.assetName(m)), histories, pinCode, now: this.deps.clock.now() }),
    );
  }
}

/**
 * A back-office hold's payment page is the member's: only the organizer (acting
 * through the app) sees its link; the staff who booked see the quote without it.
 */
export function forCaller(p: Principal, m: MeetingRow, view: MeetingView): MeetingView {
  if (m.booked_via !== 'backoffice' || !view.payment?.webPaymentUrl) return view;
  if (p.kind === 'member' && p.userId === m.organizer_user_id) return view;
  const { webPaymentUrl: _url, webPaymentQr: _qr, ...payment } = view.payment;
  return { ...view, payment };
}
