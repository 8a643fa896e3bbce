/** Payments of bookings, invoice numbers per project, and the promo codes payments read. */
import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database, PaymentInboxTable, PaymentTable, PromoCodeTable } from '../../platform/db/schema.js';
import type { Db } from '../../platform/db/db.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { backlogOf } from '../../platform/db/backlog-row.js';

/** A payment's breakdown in major units (the `summary` column). */
export interface PaymentSummary {
  subtotal: number;
  total: number;
  discounts: { code: string; value: number; name: string }[];
}

/** What an extension's lapse puts back (the `restore` column). */
export interface Restore {
  status: string;
  start: number;
  end: number;
}

/** A stored payment, its JSON columns parsed. */
export type PaymentRecord = Omit<Selectable<PaymentTable>, 'summary' | 'restore'> & { summary: PaymentSummary; restore: Restore | null };
/** A payment to store: its summary and restore as values (written as JSON here). */
export type NewPayment = Omit<Insertable<PaymentTable>, 'summary' | 'restore'> & { summary: PaymentSummary; restore: unknown };
/** A promo code as payments read it, `active` a boolean. */
export type PromoCodeRecord = Omit<Selectable<PromoCodeTable>, 'active'> & { active: boolean };
export type InboxRow = Selectable<PaymentInboxTable>;

/** A stored payment row as the record the service works with (JSON parsed once, here). */
function toPayment(row: Selectable<PaymentTable>): PaymentRecord {
  return {
    ...row,
    summary: JSON.parse(row.summary) as PaymentSummary,
    restore: row.restore ? (JSON.parse(row.restore) as Restore | null) : null,
  };
}

const toPayments = (rows: Selectable<PaymentTable>[]): PaymentRecord[] => rows.map(toPayment);

export class PaymentRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The next invoice number of a project (1, 2, 3 …), taken in the caller's transaction. */
  async nextInvoiceNo(projectId: string, db: Db = this.db): Promise<number> {
    const row = await db
      .insertInto('invoice_counters')
      .values({ project_id: projectId, last_no: 1 })
      .onConflict((oc) => oc.column('project_id').doUpdateSet({ last_no: sql<number>`invoice_counters.last_no + 1` }))
      .returning('last_no')
      .executeTakeFirstOrThrow();
    return Number(row.last_no);
  }

  async insert(p: NewPayment, db: Db = this.db): Promise<void> {
    await db
      .insertInto('payments')
      .values({ ...p, summary: JSON.stringify(p.summary), restore: p.restore === undefined ? null : JSON.stringify(p.restore) })
      .execute();
  }

  async byId(id: string, db: Db = this.db): Promise<PaymentRecord | undefined> {
    const row = await db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toPayment(row);
  }

  async pendingOf(meetingId: string, db: Db = this.db): Promise<PaymentRecord[]> {
    return toPayments(
      await db.selectFrom('payments').selectAll().where('meeting_id', '=', meetingId).where('status', '=', 'pending').execute(),
    );
  }

  /** The newest payment of a booking (the console's booking detail). */
  async latestOf(meetingId: string, db: Db = this.db): Promise<PaymentRecord | undefined> {
    const row = await db
      .selectFrom('payments')
      .selectAll()
      .where('meeting_id', '=', meetingId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && toPayment(row);
  }

  /** Payments, newest first, optionally of one status (the console's payment list). */
  async list(status: string | undefined, limit: number, db: Db = this.db): Promise<PaymentRecord[]> {
    let q = db.selectFrom('payments').selectAll();
    if (status) q = q.where('status', '=', status);
    return toPayments(await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute());
  }

  /** Pending payments whose deadline has passed by `now`, earliest first. */
  lapsed(now: number, limit: number, db: Db = this.db): Promise<PaymentRecord[]> {
    return this.pendingDueBy('expires_at', now, limit, db);
  }

  /** Pending back-office holds whose reminder is due by `now`, earliest first. */
  nudgesDue(now: number, limit: number, db: Db = this.db): Promise<PaymentRecord[]> {
    return this.pendingDueBy('nudge_at', now, limit, db);
  }

  private async pendingDueBy(column: 'expires_at' | 'nudge_at', now: number, limit: number, db: Db): Promise<PaymentRecord[]> {
    return toPayments(
      await db
        .selectFrom('payments')
        .selectAll()
        .where('status', '=', 'pending')
        .where(column, '<=', now)
        .orderBy(column)
        .orderBy('id')
        .limit(limit)
        .execute(),
    );
  }

  /** Pending payments due by `now` on `column` (deadline or reminder): how many, and the earliest (metrics). */
  async dueBacklog(column: 'expires_at' | 'nudge_at', now: number, db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('payments')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min(column).as('oldest')])
      .where('status', '=', 'pending')
      .where(column, '<=', now)
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }

  /** The payment a provider's object belongs to (events name the object, not our id). */
  async byProviderRef(providerId: string, ref: string, db: Db = this.db): Promise<PaymentRecord | undefined> {
    const row = await db
      .selectFrom('payments')
      .selectAll()
      .where('provider_id', '=', providerId)
      .where('provider_ref', '=', ref)
      .executeTakeFirst();
    return row && toPayment(row);
  }

  /**
   * Pending payments with a real provider, opened before `openedBefore` and not asked about
   * since `checkedBefore` (service time), oldest first: the reconciliation job's due read.
   */
  async reconcileDue(openedBefore: number, checkedBefore: number, limit: number, db: Db = this.db): Promise<PaymentRecord[]> {
    return toPayments(
      await db
        .selectFrom('payments')
        .selectAll()
        .where('status', '=', 'pending')
        .where('provider_id', 'is not', null)
        .where('created_at', '<=', openedBefore)
        .where((eb) => eb.or([eb('reconciled_at', 'is', null), eb('reconciled_at', '<=', checkedBefore)]))
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute(),
    );
  }

  /** Records that the provider was asked about a payment (service time). */
  async markReconciled(id: string, at: number, db: Db = this.db): Promise<void> {
    await db.updateTable('payments').set({ reconciled_at: at }).where('id', '=', id).execute();
  }

  /** Payments per status (metrics). */
  async countByStatus(db: Db = this.db): Promise<Record<string, number>> {
    const rows = await db
      .selectFrom('payments')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  /** Takes a due reminder (exactly once across workers); false when another took it. */
  async takeNudge(id: string, nudgeAt: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('payments')
      .set({ nudge_at: null })
      .where('id', '=', id)
      .where('nudge_at', '=', nudgeAt)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Moves a payment out of `from`; false when it was not in that state any more. */
  async transition(id: string, from: string, changes: Updateable<PaymentTable>, db: Db = this.db): Promise<boolean> {
    const res = await db.updateTable('payments').set(changes).where('id', '=', id).where('status', '=', from).executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async countFailedAttempt(id: string, now: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('payments')
      .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1), updated_at: now }))
      .where('id', '=', id)
      .execute();
  }

  async settledOf(meetingId: string, db: Db = this.db): Promise<PaymentRecord[]> {
    return toPayments(
      await db.selectFrom('payments').selectAll().where('meeting_id', '=', meetingId).where('status', '=', 'settled').execute(),
    );
  }

  /** Takes one use of a promo code while it has uses left; false when it is used up. */
  async claimPromoUse(promoCodeId: string, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('promo_codes')
      .set((eb) => ({ used_count: eb('used_count', '+', 1) }))
      .where('id', '=', promoCodeId)
      .where((eb) => eb.or([eb('max_uses', 'is', null), eb('used_count', '<', eb.ref('max_uses'))]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Counts one use whatever the limit (a late payment that brought its booking back). */
  async countPromoUse(promoCodeId: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable('promo_codes')
      .set((eb) => ({ used_count: eb('used_count', '+', 1) }))
      .where('id', '=', promoCodeId)
      .execute();
  }

  /** Gives a use back (its payment was voided or lapsed). */
  async releasePromoUse(promoCodeId: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable('promo_codes')
      .set((eb) => ({ used_count: eb('used_count', '-', 1) }))
      .where('id', '=', promoCodeId)
      .where('used_count', '>', 0)
      .execute();
  }

  async promoByCode(projectId: string, code: string, db: Db = this.db): Promise<PromoCodeRecord | undefined> {
    const row = await db
      .selectFrom('promo_codes')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('code', '=', code)
      .executeTakeFirst();
    return row && { ...row, active: row.active === 1 };
  }

  /** Stores a notification once per provider event id; returns the stored one (new or earlier). */
  async receive(n: Insertable<PaymentInboxTable>, db: Db = this.db): Promise<InboxRow> {
    await db
      .insertInto('payment_inbox')
      .values(n)
      .onConflict((oc) => oc.columns(['provider', 'provider_event_id']).doNothing())
      .execute();
    return db
      .selectFrom('payment_inbox')
      .selectAll()
      .where('provider', '=', n.provider)
      .where('provider_event_id', '=', n.provider_event_id)
      .executeTakeFirstOrThrow();
  }

  async markProcessed(id: string, outcome: string, at: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('payment_inbox')
      .set({ processed_at: at, outcome })
      .where('id', '=', id)
      .where('processed_at', 'is', null)
      .execute();
  }

  async recordInboxFailure(id: string, error: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable('payment_inbox')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error.slice(0, 500) }))
      .where('id', '=', id)
      .execute();
  }

  /** Notifications not applied yet, received before `before` (real time), oldest first. */
  async unprocessed(before: number, limit: number, db: Db = this.db): Promise<InboxRow[]> {
    return db
      .selectFrom('payment_inbox')
      .selectAll()
      .where('processed_at', 'is', null)
      .where('received_at', '<=', before)
      .orderBy('received_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Notifications not applied yet, received before `before`: how many, and the earliest (metrics). */
  async inboxBacklog(before: number, db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('payment_inbox')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('received_at').as('oldest')])
      .where('processed_at', 'is', null)
      .where('received_at', '<=', before)
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }
}
