/**
 * Payments of paid bookings. Implements the booking module's payment port (open
 * a payment with the booking, void it on cancel) and is itself an actor of the
 * booking-change writer: a settlement makes the booking active (history `pay`,
 * `*_BOOK`), a lapsed deadline cancels it (history `payment-timeout`, `*_CANCEL`
 * with the exact reason). Lapses, reminders and the inbox are jobs of the runner (jobs.ts).
 */
import type { Backlog } from '../../platform/jobs/handler.js';
import QRCode from 'qrcode';
import type { Clock } from '../../platform/clock/clock.js';
import type { Db } from '../../platform/db/db.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { ServiceError, errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { BookingChanges, LockedBooking, MeetingRow } from '../booking/index.js';
import { SYSTEM_ACTOR, type Actor, type BookingChange } from '../booking/index.js';
import {
  billingWithStatus,
  type BillingEntry,
  type OpenPayment,
  type CheckoutToPrepare,
  type PaymentDesk,
  type PaymentSnapshot,
  type PreparedCheckout,
  type PromoCode,
} from '../booking/index.js';
import {
  ProviderRefusedError,
  ProviderUnavailableError,
  type Checkout,
  type CheckoutDisplay,
  type ProviderPaymentState,
} from './provider.js';
import type { ProviderRegistry, ResolvedProvider } from './provider-registry.js';
import type { ProviderRecordsRepository } from './provider-records-repository.js';
import { parseCheckoutDisplay } from './checkout-display.js';
import { fromMinor } from './rules/pricing.js';
import { settlementDecision } from './rules/settlement.js';
import type { InboxRow, PaymentRecord, PaymentRepository } from './payment-repository.js';

export const PAYMENT_LAPSED_REASON = 'Payment window lapsed — auto-cancelled by system';
export const HOLD_LAPSED_REASON = 'Unpaid — back-office hold expired';
export const EXTENSION_LAPSED_REASON = 'Payment window lapsed — the change was undone';

export interface PaymentServiceDeps {
  repo: PaymentRepository;
  /** Which provider takes a project's money (its account, the sandbox, or none). */
  providers: ProviderRegistry;
  records: ProviderRecordsRepository;
  /** How long after its deadline a lapse waits for a provider that cannot be asked (then lapses; a late payment is refunded). */
  lapseGraceMs: number;
  bookings: BookingChanges;
  secretBox: SecretBox;
  /** Service time (sandbox offset included): deadlines. */
  clock: Clock;
  /** Real time: when notifications arrive. */
  realClock: Clock;
  /** Base of links in payments (read at call time: a service on port 0 learns its address after listening). */
  publicBaseUrl: () => string;
}

export type SettleOutcome = 'settled' | 'already-settled' | 'refunded';

/** A settle or fail notification, identified by the provider's event id. */
export interface PaymentNotification {
  provider: string;
  eventId: string;
  paymentId: string;
  kind: 'settle' | 'fail';
  /** Where it came from, recorded on the booking's `pay` history (sourceDetail). */
  via: string;
}

export interface NotifyResult {
  /** settled, already-settled, refunded (paid after the deadline: the money goes back) or failed. */
  outcome: string;
  /** The same notification had already been applied. */
  replayed: boolean;
}

/** What the hosted payment page shows. Times are epoch ms; the page formats them in `timeZone`. */
export interface PaymentPageView {
  /** payable: pending and inside its deadline; the others show their state and no Pay button. */
  state: 'payable' | 'settled' | 'voided' | 'expired' | 'refunded';
  paymentId: string;
  invoiceNo: string;
  /** Amount due in major units (e.g. 250.5), and its breakdown. */
  amount: number;
  summary: PaymentSnapshot['summary'];
  currency: string;
  expiresAt: number;
  /** Service time when the view was made (sandbox offset included): the countdown starts from expiresAt - now. */
  now: number;
  meetingId: string;
  title: string;
  assetKind: 'room' | 'desk';
  assetName: string;
  floorName: string;
  timeZone: string;
  start: number;
  end: number;
  redirectUrl: string | null;
  /** sandbox | stripe | opn: who takes the money (the page shows a Pay button only for the sandbox). */
  provider: string;
  /** What the provider's answer gave the page to show (PromptPay QR, card script); null for the sandbox or when unreadable. */
  display: CheckoutDisplay | null;
}

const TOKEN_PURPOSE = 'payment-page';

export class PaymentService implements PaymentDesk {
  constructor(private readonly deps: PaymentServiceDeps) {}

  // ---------------------------------------------------------------------------
  // The booking module's port
  // ---------------------------------------------------------------------------

  async findPromo(projectId: string, code: string): Promise<PromoCode | undefined> {
    const row = await this.deps.repo.promoByCode(projectId, code);
    if (!row) return undefined;
    return {
      id: row.id,
      code: row.code,
      name: row.name,
      percentOff: row.percent_off,
      amountOff: row.amount_off,
      active: row.active,
      validFrom: row.valid_from,
      validUntil: row.valid_until,
      maxUses: row.max_uses,
      usedCount: row.used_count,
    };
  }

  async claimPromo(trx: Db, promoCodeId: string): Promise<boolean> {
    return this.deps.repo.claimPromoUse(promoCodeId, trx);
  }

  async prepare(p: CheckoutToPrepare, db?: Db): Promise<PreparedCheckout> {
    const id = newId(p.now);
    const resolved = await this.deps.providers.forProject(p.projectId, db);
    const { ref, display } = await this.createCheckout(resolved, {
      paymentId: id,
      meetingId: p.meetingId,
      amountMinor: p.amountMinor,
      currency: p.currency,
      description: `Booking ${p.meetingId}`,
      methods: resolved.methods,
      idempotencyKey: `payment-${id}`,
      ...(p.payerEmail ? { payerEmail: p.payerEmail } : {}),
      expiresAt: p.expiresAt,
    });
    return {
      paymentId: id,
      accountId: resolved.accountId,
      provider: resolved.provider.name,
      ref,
      display: Object.keys(display).length ? JSON.stringify(display) : null,
    };
  }

  async discard(prepared: PreparedCheckout): Promise<void> {
    if (prepared.accountId === null) return; // the sandbox made nothing anywhere
    const realNow = this.deps.realClock.now();
    await this.deps.records.enqueueAction({
      id: newId(realNow),
      payment_id: prepared.paymentId,
      provider_id: prepared.accountId,
      provider: prepared.provider,
      action: 'void',
      amount_minor: 0,
      status: 'queued',
      reason: 'The booking it was made for was not made',
      // No payment row exists: the object to cancel is named here.
      provider_ref: prepared.ref,
      next_attempt_at: realNow,
      last_error: null,
      created_at: realNow,
      updated_at: realNow,
    });
  }

  async open(trx: Db, p: OpenPayment): Promise<{ snapshot: PaymentSnapshot; billing: BillingEntry }> {
    // Made before the transaction by the create; an extension still makes it here.
    const prepared = p.prepared ?? (await this.prepare(p, trx));
    const id = prepared.paymentId;
    const invoiceNo = `INV-${String(await this.deps.repo.nextInvoiceNo(p.projectId, trx)).padStart(6, '0')}`;
    await this.deps.repo.insert(
      {
        id,
        project_id: p.projectId,
        meeting_id: p.meetingId,
        kind: p.kind,
        invoice_no: invoiceNo,
        currency: p.currency,
        amount_minor: p.amountMinor,
        summary: p.summary,
        status: 'pending',
        provider: prepared.provider,
        provider_id: prepared.accountId,
        provider_ref: prepared.ref,
        provider_display: prepared.display,
        expires_at: p.expiresAt,
        nudge_at: p.nudgeAt ?? null,
        redirect_url: p.redirectUrl,
        promo_code_id: p.promoCodeId,
        restore: p.restore,
        settled_at: null,
        created_at: p.now,
        updated_at: p.now,
      },
      trx,
    );
    // Every payment has a page; a back-office quote's is shown only to the member who pays it (see docs/payments.md).
    const url = this.pageUrl(id);
    const snapshot: PaymentSnapshot = {
      paymentId: id,
      invoiceNo,
      amount: p.summary.total,
      summary: p.summary,
      webPaymentUrl: url,
      webPaymentQr: await QRCode.toDataURL(url, { errorCorrectionLevel: 'M', margin: 1, width: 240 }),
    };
    const billing: BillingEntry = {
      kind: p.kind,
      payment_id: id,
      amount: p.summary.total,
      total: p.summary.total,
      invoice_no: invoiceNo,
      status: 'pending',
      expiredAt: new Date(p.expiresAt).toISOString(),
    };
    return { snapshot, billing };
  }

  async voidPending(trx: Db, meetingId: string, now: number): Promise<string[]> {
    const pending = await this.deps.repo.pendingOf(meetingId, trx);
    const voided: string[] = [];
    for (const p of pending) {
      if (!(await this.deps.repo.transition(p.id, 'pending', { status: 'voided', updated_at: now }, trx))) continue;
      if (p.promo_code_id) await this.deps.repo.releasePromoUse(p.promo_code_id, trx);
      await this.queueProviderAction(trx, p, 'void', 'The booking was cancelled before it was paid');
      voided.push(p.id);
    }
    return voided;
  }

  async refundSettled(trx: Db, meetingId: string, now: number): Promise<string[]> {
    const settled = await this.deps.repo.settledOf(meetingId, trx);
    const refunded: string[] = [];
    for (const p of settled) {
      if (!(await this.deps.repo.transition(p.id, 'settled', { status: 'refunded', updated_at: now }, trx))) continue;
      await this.queueProviderAction(trx, p, 'refund', 'The paid booking was cancelled before its start');
      refunded.push(p.id);
    }
    return refunded;
  }

  async paymentOf(meetingId: string): Promise<{ status: string; amount: number; currency: string; dueAt: number | null } | undefined> {
    const p = await this.deps.repo.latestOf(meetingId);
    return (
      p && {
        status: p.status,
        amount: fromMinor(p.amount_minor, p.currency),
        currency: p.currency,
        dueAt: p.status === 'pending' ? p.expires_at : null,
      }
    );
  }

  /** Payments, newest first (at most 500), optionally of one status (the console's list). */
  async list(
    status?: string,
  ): Promise<{ id: string; meetingId: string; status: string; amount: number; currency: string; expiresAt: number }[]> {
    const rows = await this.deps.repo.list(status, 500);
    return rows.map((p) => ({
      id: p.id,
      meetingId: p.meeting_id,
      status: p.status,
      amount: fromMinor(p.amount_minor, p.currency),
      currency: p.currency,
      expiresAt: p.expires_at,
    }));
  }

  async pendingOf(meetingId: string, db?: Db): Promise<{ id: string } | undefined> {
    return (await this.deps.repo.pendingOf(meetingId, db))[0];
  }

  // ---------------------------------------------------------------------------
  // The payment page's capability
  // ---------------------------------------------------------------------------

  /** The page token: the payment id plus an unforgeable tag (nothing stored, nothing guessable). */
  pageToken(paymentId: string): string {
    return `${paymentId}.${this.deps.secretBox.tag(TOKEN_PURPOSE, paymentId)}`;
  }

  pageUrl(paymentId: string): string {
    return `${this.deps.publicBaseUrl()}/pay/${this.pageToken(paymentId)}`;
  }

  /** The payment a page token stands for, or undefined for a token that is not ours. */
  async byPageToken(token: string): Promise<PaymentRecord | undefined> {
    const [id, tag] = token.split('.');
    if (!id || !tag || !/^[0-9a-f]{24}$/.test(id)) return undefined;
    if (!this.deps.secretBox.tagMatches(TOKEN_PURPOSE, id, tag)) return undefined;
    return this.deps.repo.byId(id);
  }

  /** Everything the payment page shows, for a page token; undefined when the token is not ours. */
  async pageView(token: string): Promise<PaymentPageView | undefined> {
    const payment = await this.byPageToken(token);
    if (!payment) return undefined;
    const booking = await this.deps.bookings.read(payment.meeting_id);
    if (!booking) return undefined;
    const now = this.deps.clock.now();
    const { meeting, scope } = booking;
    const state: PaymentPageView['state'] =
      payment.status === 'pending'
        ? now >= payment.expires_at
          ? 'expired'
          : 'payable'
        : payment.status === 'settled'
          ? 'settled'
          : payment.status === 'voided'
            ? 'voided'
            : payment.status === 'refunded'
              ? 'refunded'
              : 'expired';
    return {
      state,
      paymentId: payment.id,
      invoiceNo: payment.invoice_no,
      amount: payment.summary.total,
      summary: payment.summary,
      currency: payment.currency,
      expiresAt: payment.expires_at,
      now,
      meetingId: meeting.id,
      title: meeting.title,
      assetKind: scope.asset.kind,
      assetName: scope.asset.name,
      floorName: scope.asset.floorName,
      timeZone: scope.project.timezone,
      start: meeting.start_at,
      end: meeting.end_at,
      redirectUrl: payment.redirect_url,
      provider: payment.provider,
      display: parseCheckoutDisplay(payment.provider_display),
    };
  }

  async byId(paymentId: string): Promise<PaymentRecord | undefined> {
    return this.deps.repo.byId(paymentId);
  }

  /** The status of a payment's booking, if the booking exists (the sandbox routes' answer). */
  async meetingStatus(meetingId: string): Promise<string | undefined> {
    return (await this.deps.bookings.read(meetingId))?.meeting.status;
  }

  // ---------------------------------------------------------------------------
  // The inbox: every settle or fail notification passes through it
  // ---------------------------------------------------------------------------

  /**
   * Takes a provider's notification (or the sandbox's, or the page's): stored once
   * by its event id, then applied. A replay of a notification already applied
   * answers what it answered then; one that could not be applied (the database was
   * down) stays in the inbox and the inbox job applies it later.
   */
  async notify(n: PaymentNotification): Promise<NotifyResult> {
    if (n.provider === 'sandbox') {
      // The sandbox's settle and the page's Pay button move no money: a real provider's payment settles only on its word.
      const p = await this.deps.repo.byId(n.paymentId);
      if (p && p.provider !== 'sandbox') {
        throw new ServiceError(409, 'KS012', `This payment is taken by ${p.provider}; only the provider's events settle or fail it`);
      }
    }
    const stored = await this.deps.repo.receive({
      id: newId(this.deps.realClock.now()),
      provider: n.provider,
      provider_event_id: n.eventId,
      payment_id: n.paymentId,
      kind: n.kind,
      via: n.via,
      received_at: this.deps.realClock.now(),
      processed_at: null,
      outcome: null,
      last_error: null,
    });
    if (stored.payment_id !== n.paymentId || stored.kind !== n.kind) {
      throw errors.conflict('This notification id was already used for another payment or kind');
    }
    return this.apply(stored);
  }

  /** Applies a stored notification (as it came in, or later from the inbox job); a replay answers what it answered then. */
  async apply(n: InboxRow): Promise<NotifyResult> {
    if (n.processed_at !== null) return { outcome: n.outcome!, replayed: true };
    try {
      // A real provider's notification (a verified event, or its answer before a lapse) is its word that the money arrived.
      const confirmed = n.provider !== 'sandbox';
      const outcome = n.kind === 'settle' ? await this.settle(n.payment_id, n.via, confirmed) : (await this.fail(n.payment_id), 'failed');
      await this.deps.repo.markProcessed(n.id, outcome, this.deps.realClock.now());
      return { outcome, replayed: false };
    } catch (err) {
      if (err instanceof ServiceError && err.status < 500) {
        // A final answer (unknown payment, voided, refunded): recorded, not retried.
        await this.deps.repo.markProcessed(n.id, `refused: ${err.message}`, this.deps.realClock.now());
      } else {
        await this.deps.repo.recordInboxFailure(n.id, err instanceof Error ? err.message : String(err));
      }
      throw err;
    }
  }

  /** Notifications not applied yet, received before `before` (real time), oldest first (the inbox job's due read). */
  unprocessed(before: number, limit: number): Promise<InboxRow[]> {
    return this.deps.repo.unprocessed(before, limit);
  }

  // ---------------------------------------------------------------------------
  // Actors: settle, fail, lapse
  // ---------------------------------------------------------------------------

  /**
   * The payer paid (page button, sandbox route, or a provider notification).
   * A pending payment settles and the booking becomes active with `pay` and
   * `*_BOOK`. Settling twice is harmless. A settlement that arrives after the
   * deadline is refunded: the booking lapsed (or lapses now, when the lapse job
   * has not reached it yet) and a cancelled booking never comes back
   * (`rules/settlement.ts`, docs/decisions.md).
   */
  async settle(paymentId: string, via: string, confirmedByProvider = false): Promise<SettleOutcome> {
    const p = await this.deps.repo.byId(paymentId);
    if (!p) throw errors.notFound('Payment not found');
    const now = this.deps.clock.now();
    const outcome = await this.deps.bookings.change(p.meeting_id, async ({ trx, meeting, write }): Promise<SettleOutcome> => {
      const cur = (await this.deps.repo.byId(paymentId, trx))!;
      const decision = settlementDecision({ status: cur.status, expiresAt: cur.expires_at }, meeting.status, now, confirmedByProvider);
      switch (decision.action) {
        case 'already-settled':
          return 'already-settled';
        case 'refuse':
          throw new ServiceError(409, 'KS012', `This payment is ${decision.status} and can no longer be paid`);
        case 'settle':
          await this.deps.repo.transition(cur.id, 'pending', { status: 'settled', settled_at: now, updated_at: now }, trx);
          await write(this.settledChange(meeting, cur, now, { by: meeting.organizer_user_id, source: 'user', sourceDetail: via }));
          return 'settled';
        case 'refund': {
          let from = cur.status;
          if (decision.lapseFirst) {
            // The deadline passed before the lapse job got to it: the lapse happens now, as of the deadline.
            await this.lapseLocked({ trx, meeting, write }, cur);
            from = 'expired';
          }
          await this.deps.repo.transition(cur.id, from, { status: 'refunded', updated_at: now }, trx);
          await this.queueProviderAction(trx, cur, 'refund', 'Paid after the booking lapsed or ended');
          return 'refunded';
        }
      }
    });
    if (outcome === undefined) throw errors.notFound('Payment not found');
    return outcome;
  }

  /** A failed attempt: counted; the booking stays unpaid until the deadline. */
  async fail(paymentId: string): Promise<PaymentRecord> {
    const p = await this.deps.repo.byId(paymentId);
    if (!p) throw errors.notFound('Payment not found');
    if (p.status !== 'pending') throw new ServiceError(409, 'KS012', `This payment is ${p.status}`);
    await this.deps.repo.countFailedAttempt(paymentId, this.deps.clock.now());
    return (await this.deps.repo.byId(paymentId))!;
  }

  /**
   * The deadline of a pending payment passed: the unpaid booking is cancelled with the exact reason.
   * A real provider is asked first: paid there means settled, not lapsed. A provider that cannot be
   * asked holds the lapse back (the job tries again) for `lapseGraceMs`; after that the booking lapses
   * and a payment that still arrives is refunded.
   */
  async lapse(p: PaymentRecord): Promise<void> {
    if (p.provider_id !== null) {
      const state = await this.askProvider(p);
      if (state === 'succeeded') {
        await this.notify({
          provider: p.provider_id,
          eventId: `reconcile-${p.id}`,
          paymentId: p.id,
          kind: 'settle',
          via: 'reconciliation',
        });
        return;
      }
      if (state === 'unknown' && this.deps.clock.now() < p.expires_at + this.deps.lapseGraceMs) {
        throw new ServiceError(503, 'KS234', 'The payment provider could not be asked before the lapse; trying again');
      }
    }
    const done = await this.deps.bookings.change(p.meeting_id, async (locked) => {
      await this.lapseLocked(locked, p);
    });
    // A payment whose booking is gone is simply closed.
    if (done === undefined) await this.deps.repo.transition(p.id, 'pending', { status: 'expired', updated_at: p.expires_at });
  }

  /**
   * The lapse itself, under the booking's lock, as of the deadline: a still pending payment
   * expires, its promo use is released, and an unpaid booking is cancelled. Nothing when the
   * payment was no longer pending.
   */
  private async lapseLocked({ trx, meeting, write }: Pick<LockedBooking, 'trx' | 'meeting' | 'write'>, p: PaymentRecord): Promise<void> {
    if (!(await this.deps.repo.transition(p.id, 'pending', { status: 'expired', updated_at: p.expires_at }, trx))) return;
    if (p.promo_code_id) await this.deps.repo.releasePromoUse(p.promo_code_id, trx);
    // The provider's object is cancelled too, so the payer cannot pay for a booking that is gone.
    if (p.provider_id !== null) await this.queueProviderAction(trx, p, 'void', 'The payment window lapsed');
    if (meeting.status === 'unpaid') await write(this.lapsedChange(meeting, p));
  }

  /** The second reminder of a back-office hold: *_PAYMENT_DUE at about 75 % of the hold, if still unpaid. */
  async nudge(p: PaymentRecord): Promise<void> {
    const at = p.nudge_at!;
    await this.deps.bookings.change(p.meeting_id, async ({ trx, meeting, write }) => {
      if (!(await this.deps.repo.takeNudge(p.id, at, trx))) return;
      if (meeting.status !== 'unpaid') return;
      await write({ at, event: { window: { start: meeting.start_at, end: meeting.end_at }, detail: paymentDue(p) } });
    });
  }

  /** Pending back-office holds whose reminder is due by `now`, earliest first (the reminder job's due read). */
  nudgesDue(now: number, limit: number): Promise<PaymentRecord[]> {
    return this.deps.repo.nudgesDue(now, limit);
  }

  /** What the lapse (`expires_at`) or reminder (`nudge_at`) job has due by `now` (metrics). */
  dueBacklog(column: 'expires_at' | 'nudge_at', now: number): Promise<Backlog> {
    return this.deps.repo.dueBacklog(column, now);
  }

  /** What the inbox job has due: notifications received before `before` and not applied (metrics). */
  inboxBacklog(before: number): Promise<Backlog> {
    return this.deps.repo.inboxBacklog(before);
  }

  /** Payments per status (metrics; every project of the database). */
  countByStatus(): Promise<Record<string, number>> {
    return this.deps.repo.countByStatus();
  }

  /** Pending payments whose deadline has passed by `now`, earliest first (the lapse job's due read). */
  lapsed(now: number, limit: number): Promise<PaymentRecord[]> {
    return this.deps.repo.lapsed(now, limit);
  }

  // ---------------------------------------------------------------------------
  // The provider's side
  // ---------------------------------------------------------------------------

  /** Creates the provider's payment object; a provider that is down or refuses is 503 KS234 (the booking is not made). */
  private async createCheckout(
    resolved: ResolvedProvider,
    req: Parameters<ResolvedProvider['provider']['createCheckout']>[0],
  ): Promise<Checkout> {
    try {
      return await resolved.provider.createCheckout(req);
    } catch (err) {
      if (err instanceof ProviderUnavailableError) {
        throw new ServiceError(
          503,
          'KS234',
          'The payment provider is not available right now; nothing was booked. Retry after the Retry-After seconds',
          undefined,
          err.retryAfterSeconds,
        );
      }
      if (err instanceof ProviderRefusedError) {
        throw new ServiceError(503, 'KS234', 'The payment provider refused to open the payment; nothing was booked', undefined, 60);
      }
      throw err;
    }
  }

  /** Queues a void or refund of a payment's provider object in the caller's transaction (the provider-actions job sends it). */
  private async queueProviderAction(trx: Db, p: PaymentRecord, action: 'void' | 'refund', reason: string): Promise<void> {
    const realNow = this.deps.realClock.now();
    await this.deps.records.enqueueAction(
      {
        id: newId(realNow),
        payment_id: p.id,
        provider_id: p.provider_id,
        provider: p.provider,
        action,
        amount_minor: Number(p.amount_minor),
        status: 'queued',
        reason,
        provider_ref: null,
        next_attempt_at: realNow,
        last_error: null,
        created_at: realNow,
        updated_at: realNow,
      },
      trx,
    );
  }

  /**
   * What the provider says of a payment now (reconciliation): its state, or `unknown` when it
   * cannot be asked. Records when it was asked.
   */
  async askProvider(p: PaymentRecord): Promise<ProviderPaymentState | 'unknown'> {
    const provider = await this.deps.providers.byAccountId(p.provider_id);
    if (!provider || !p.provider_ref) return 'unknown';
    try {
      const found = await provider.retrieve(p.provider_ref);
      await this.deps.repo.markReconciled(p.id, this.deps.clock.now());
      return found.state;
    } catch (err) {
      if (err instanceof ProviderUnavailableError || err instanceof ProviderRefusedError) return 'unknown';
      throw err;
    }
  }

  private settledChange(m: MeetingRow, p: PaymentRecord, now: number, actor: Actor): BookingChange {
    const payment: PaymentSnapshot | null = m.payment ? { ...m.payment } : null;
    if (payment) {
      // Paid: the page link and its QR have done their job.
      delete payment.webPaymentUrl;
      delete payment.webPaymentQr;
    }
    const restore = p.restore;
    const change: BookingChange = {
      at: now,
      set: {
        status: restore?.status ?? 'active',
        payment,
        billing_summaries: billingWithStatus(m.billing_summaries, [p.id], 'paid'),
        updated_at: now,
      },
      history: { action: 'pay', actor },
    };
    // A paid extension keeps only its new window (MODIFY was sent when it was asked for);
    // a paid booking is booked now.
    if (p.kind === 'extension') change.slots = { replace: { start: m.start_at, end: m.end_at } };
    else change.event = { window: { start: m.start_at, end: m.end_at }, detail: { kind: 'BOOK' } };
    return change;
  }

  private lapsedChange(m: MeetingRow, p: PaymentRecord): BookingChange {
    const at = p.expires_at;
    const billing = billingWithStatus(m.billing_summaries, [p.id], 'expired');
    if (p.kind === 'extension' && p.restore) {
      // The change was not paid for: the old times and status come back, and the new window is let go.
      const r = p.restore;
      return {
        at,
        set: {
          status: r.status,
          start_at: r.start,
          end_at: r.end,
          booked_end_at: r.end,
          span_end_at: r.end,
          billing_summaries: billing,
          updated_at: at,
        },
        slots: { replace: { start: r.start, end: r.end } },
        history: {
          action: 'cancel-updating',
          actor: SYSTEM_ACTOR,
          reason: EXTENSION_LAPSED_REASON,
          oldStart: m.start_at,
          oldEnd: m.end_at,
          newStart: r.start,
          newEnd: r.end,
        },
        event: { window: { start: r.start, end: r.end }, detail: { kind: 'MODIFY', oldStart: m.start_at, oldEnd: m.end_at } },
        timers: { window: { start: r.start, end: r.end } },
      };
    }
    const reason = p.kind === 'quote' ? HOLD_LAPSED_REASON : PAYMENT_LAPSED_REASON;
    return {
      at,
      set: { status: 'cancelled', cancel_reason: reason, billing_summaries: billing, updated_at: at },
      slots: { release: true },
      history: { action: 'payment-timeout', actor: SYSTEM_ACTOR, reason },
      event: { window: { start: m.start_at, end: m.end_at }, detail: { kind: 'CANCEL', cancelReason: reason } },
      timers: { window: null },
    };
  }
}

/** The *_PAYMENT_DUE detail of a pending payment. */
export function paymentDue(p: Pick<PaymentRecord, 'summary' | 'currency' | 'expires_at'>): {
  kind: 'PAYMENT_DUE';
  amount: number;
  currency: string;
  paymentDueAt: number;
} {
  return { kind: 'PAYMENT_DUE', amount: p.summary.total, currency: p.currency, paymentDueAt: p.expires_at };
}
