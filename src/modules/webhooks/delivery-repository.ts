/** Webhook listeners and their deliveries, for the delivery worker and the ops API. */
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import { inTransaction, type Db } from '../../platform/db/db.js';
import type { Database, DeliveryTable, WebhookTable } from '../../platform/db/schema.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { backlogOf } from '../../platform/db/backlog-row.js';
import { PreparedStatements, slot } from '../../platform/db/statements.js';

export type DeliveryRow = DeliveryTable;
/** A webhook listener as the ops views read it: its event types parsed, `enabled` a boolean. */
export type WebhookRecord = Omit<WebhookTable, 'events' | 'enabled'> & { events: string[]; enabled: boolean };

/** A stored listener row as its record (JSON and flag read once, here). */
function toWebhook(row: WebhookTable): WebhookRecord {
  return { ...row, events: JSON.parse(row.events) as string[], enabled: row.enabled === 1 };
}

/** A delivery that may start now, as the due read finds it (no body: that is read when it is claimed). */
export interface DueDelivery {
  id: string;
  webhook_id: string;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  /** The trace context of the request that queued it (migration 014; null without). */
  trace_parent: string | null;
}

/** What an attempt needs, read by the statement that leases it: the body and its listener's address and secrets. */
export interface ClaimedDelivery {
  type: string;
  body: string;
  project_id: string;
  url: string;
  secret_enc: string;
  auth_enc: string;
}

/** A due delivery; once leased, it carries what the lease read, and until when it is leased. */
export type DeliveryItem = DueDelivery & { claimed?: ClaimedDelivery; leaseUntil?: number };

/** The index of migration 010 holds pending rows only; the literal lets both engines see that (a bound value would not). */
const PENDING = sql.lit('pending');

/**
 * `l(wid)`: every listener with pending deliveries, one index seek each along
 * `deliveries_pending_idx` (a loose index scan), whatever their backlogs.
 */
const LISTENERS_WITH_PENDING = sql`with recursive l(wid) as (
  select (select webhook_id from deliveries where status = 'pending' order by webhook_id limit 1)
  union all
  select (select webhook_id from deliveries where status = 'pending' and webhook_id > l.wid order by webhook_id limit 1) from l where l.wid is not null
)`;

/** Rows one statement records at most (longer lists are split). */
const MAX_BATCH = 64;

/** The listener's address and secrets, read with the rows a statement leases. */
const LISTENER_COLUMNS = sql.raw(
  ['project_id', 'url', 'secret_enc', 'auth_enc']
    .map((c) => `(select ${c} from webhooks where webhooks.id = deliveries.webhook_id) as ${c}`)
    .join(', '),
);

/** What a due read leases: at most `room[listener]` (default `budget`) per listener, due by `now`, leased until `realNow + leaseMs`. */
export interface ClaimParams {
  now: number;
  realNow: number;
  leaseMs: number;
  budget: number;
  room: Readonly<Record<string, number>>;
}

type LeasedRow = DueDelivery & ClaimedDelivery;

/** Leased rows as items, in sending order (next attempt, then creation). */
function toItems(rows: LeasedRow[]): DeliveryItem[] {
  rows.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
  return rows.map((r) => ({
    id: r.id,
    webhook_id: r.webhook_id,
    attempts: r.attempts,
    next_attempt_at: r.next_attempt_at,
    created_at: r.created_at,
    trace_parent: r.trace_parent ?? null,
    claimed: { type: r.type, body: r.body, project_id: r.project_id, url: r.url, secret_enc: r.secret_enc, auth_enc: r.auth_enc },
  }));
}

/** What `leased` (see pgClaim) returns. */
const LEASED_COLUMNS = sql.raw(
  'id, webhook_id, attempts, next_attempt_at, created_at, trace_parent, type, body, project_id, url, secret_enc, auth_enc',
);

/**
 * PostgreSQL's due read as two CTEs after `l` (values: 0 lease end, 1 now, 2 real now, 3 rooms as JSON):
 * `c` locks each listener's first due, unleased rows (as many as its room), `leased` leases them and
 * returns them with their bodies and listener. `exclude`: leave out the ids of value 5 (rows the same
 * statement records: PostgreSQL does not update one row twice in a statement).
 */
function pgClaim(budget: RawBuilder<unknown>, exclude: boolean) {
  const excluded = exclude ? sql`and not (id = any(${slot(5)}::text[]))` : sql``;
  return sql`c as (
    select d.id from l
    join webhooks w on w.id = l.wid and w.enabled = 1
    cross join lateral (
      select id from deliveries
      where status = 'pending' and webhook_id = l.wid and next_attempt_at <= ${slot(1)} and (claimed_until is null or claimed_until < ${slot(2)}) ${excluded}
      order by next_attempt_at, created_at
      limit greatest(0, least(${budget}, coalesce((${slot(3)}::jsonb ->> l.wid)::int, ${budget})))
      for update skip locked) d
  ),
  leased as (
    update deliveries set claimed_until = ${slot(0)}
    from c
    where deliveries.id = c.id and deliveries.status = 'pending' and deliveries.next_attempt_at <= ${slot(1)}
      and (deliveries.claimed_until is null or deliveries.claimed_until < ${slot(2)})
    returning deliveries.id, deliveries.webhook_id, deliveries.attempts, deliveries.next_attempt_at, deliveries.created_at,
      deliveries.trace_parent, deliveries.type, deliveries.body, ${LISTENER_COLUMNS}
  )`;
}

export class DeliveryRepository {
  private readonly statements: PreparedStatements;
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.statements = new PreparedStatements(db);
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  /**
   * Leases, and reads for sending, the deliveries that may start now: pending, due
   * by `now` (service time), to an enabled listener, not leased by another worker,
   * at most `room[listener]` (default `budget`, the listener's concurrency budget)
   * per listener, each listener's in sending order (next attempt, then creation).
   * One statement: it steps along `deliveries_pending_idx` from one listener with
   * pending deliveries to the next (one seek each, however deep a backlog) and
   * takes each one's first due, unleased entries; the rows it leases come back with
   * their bodies and their listener's address and secrets (no body is read for a
   * row it does not lease). Sorted in sending order.
   */
  async claimDue(p: ClaimParams, db: Db = this.db): Promise<DeliveryItem[]> {
    // The budget goes in as a literal: SQLite re-prepares a statement whose LIMIT is a bound value on every run.
    const budget = sql.lit(Math.max(0, Math.trunc(p.budget)));
    const values = [p.realNow + p.leaseMs, p.now, p.realNow, JSON.stringify(p.room)];
    let rows: LeasedRow[];
    if (this.postgres) {
      rows = (
        await this.statements.run<LeasedRow>(
          db,
          `claimDue/${p.budget}`,
          (root) => sql<LeasedRow>`${LISTENERS_WITH_PENDING}, ${pgClaim(budget, false)} select ${LEASED_COLUMNS} from leased`.compile(root),
          values,
        )
      ).rows;
    } else {
      // SQLite has no LATERAL: each listener's first entries come as a JSON array of ids, cut at its room.
      rows = (
        await this.statements.run<LeasedRow>(
          db,
          `claimDue/${p.budget}`,
          (root) =>
            sql<LeasedRow>`
        update deliveries set claimed_until = ${slot(0)}
        where id in (${LISTENERS_WITH_PENDING}
          select j.value from l cross join webhooks w cross join json_each((
            select json_group_array(x.id order by x.next_attempt_at, x.created_at) from (
              select id, next_attempt_at, created_at from deliveries
              where status = 'pending' and webhook_id = l.wid and next_attempt_at <= ${slot(1)} and (claimed_until is null or claimed_until < ${slot(2)})
              order by next_attempt_at, created_at limit ${budget}) x)) j
          where w.id = l.wid and w.enabled = 1 and j.key < coalesce(json_extract(${slot(3)}, '$."' || l.wid || '"'), ${budget}))
        and status = 'pending'
        returning id, webhook_id, attempts, next_attempt_at, created_at, trace_parent, type, body, ${LISTENER_COLUMNS}`.compile(root),
          values,
        )
      ).rows;
    }
    return toItems(rows);
  }

  /**
   * Pending deliveries to enabled listeners due by `now` (service time), leased ones included (not done yet): how
   * many, and the earliest due time (metrics).
   */
  async backlog(now: number, db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('deliveries')
      .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('deliveries.next_attempt_at').as('oldest')])
      .where('deliveries.status', '=', 'pending')
      .where('webhooks.enabled', '=', 1)
      .where('deliveries.next_attempt_at', '<=', now)
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }

  /** Deliveries to enabled listeners not delivered yet (due or waiting for a retry), and the earliest event's creation (metrics). */
  async undelivered(db: Db = this.db): Promise<{ count: number; oldestCreatedAt: number | null }> {
    const row = await db
      .selectFrom('deliveries')
      .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('deliveries.created_at').as('oldest')])
      .where('deliveries.status', '=', 'pending')
      .where('webhooks.enabled', '=', 1)
      .executeTakeFirstOrThrow();
    return { count: Number(row.n), oldestCreatedAt: row.oldest === null ? null : Number(row.oldest) };
  }

  /** Gives back leases taken by `claimDue` for attempts that were not started (only while this worker still holds them). */
  async release(items: readonly Pick<DueDelivery, 'id'>[], leaseUntil: number, db: Db = this.db): Promise<void> {
    if (!items.length) return;
    await db
      .updateTable('deliveries')
      .set({ claimed_until: null })
      .where(
        'id',
        'in',
        items.map((d) => d.id),
      )
      .where('claimed_until', '=', leaseUntil)
      .execute();
  }

  /**
   * Leases a delivery for one attempt and reads what the attempt sends (into
   * `d.claimed`), in one statement; nothing to do for one `claimDue` returned. False when another worker holds it, or has
   * already made the attempt `d` was read for (its attempts or next attempt moved
   * on since), so a stale read never sends an attempt twice; false too when its
   * listener was disabled meanwhile.
   */
  async lease(d: DeliveryItem, realNow: number, leaseMs: number, db: Db = this.db): Promise<boolean> {
    if (d.claimed) return true; // leased (and read) by claimDue
    // (A lease of ours that is running out, `d.leaseUntil`, is renewed.)
    const res = await this.statements.run<ClaimedDelivery>(
      db,
      'lease',
      (root) => {
        const listener = <C extends 'project_id' | 'url' | 'secret_enc' | 'auth_enc'>(column: C) =>
          root.selectFrom('webhooks').select(column).whereRef('webhooks.id', '=', sql.ref('deliveries.webhook_id')).as(column);
        return root
          .updateTable('deliveries')
          .set({ claimed_until: slot(0) })
          .where('id', '=', slot(1))
          .where('status', '=', PENDING)
          .where('attempts', '=', slot(2))
          .where('next_attempt_at', '=', slot(3))
          .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', slot(4)), eb('claimed_until', '=', slot(5))]))
          .where((eb) =>
            eb.exists(
              eb
                .selectFrom('webhooks')
                .select('id')
                .whereRef('webhooks.id', '=', 'deliveries.webhook_id')
                .where('webhooks.enabled', '=', 1),
            ),
          )
          .returning(['type', 'body', listener('project_id'), listener('url'), listener('secret_enc'), listener('auth_enc')])
          .compile();
      },
      [realNow + leaseMs, d.id, d.attempts, d.next_attempt_at, realNow, d.leaseUntil ?? -1],
    );
    const row = res.rows[0];
    if (!row) return false;
    d.claimed = row;
    return true;
  }

  /** Every webhook listener (the console's list), by project and key. */
  async webhooks(db: Db = this.db): Promise<WebhookRecord[]> {
    return (await db.selectFrom('webhooks').selectAll().orderBy('project_id').orderBy('key').orderBy('id').execute()).map(toWebhook);
  }

  /** Deliveries changed after `after` (updated_at), oldest change first, with their listener's project: the console's change feed. */
  async changedSince(after: number, limit: number, db: Db = this.db): Promise<{ id: string; projectId: string; at: number }[]> {
    const rows = await db
      .selectFrom('deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.id as id', 'w.project_id as projectId', 'd.updated_at as at'])
      .where('d.updated_at', '>', after)
      .orderBy('d.updated_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, projectId: r.projectId, at: Number(r.at) }));
  }

  /** The latest delivery change time (0 when none). */
  async lastChangeAt(db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.max('updated_at').as('at'))
      .executeTakeFirst();
    return Number(row?.at ?? 0);
  }

  async webhook(id: string, db: Db = this.db): Promise<WebhookRecord | undefined> {
    const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toWebhook(row);
  }

  async delivery(id: string, db: Db = this.db): Promise<DeliveryRow | undefined> {
    return db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Records delivered attempts (their attempts count one more, their lease ends)
   * and reads their listeners' failure counts; only those not already 0 are reset,
   * by one more statement. With `next`, on PostgreSQL, the same statement is also
   * the next due read (`claimDue`): it leases what may start next and returns it,
   * so a delivery costs one round trip. On SQLite (no round trips: the database is
   * in the process) it records only, one statement for all that got the same
   * status, and returns nothing.
   */
  async recordSuccesses(
    done: readonly { d: Pick<DueDelivery, 'id' | 'webhook_id'>; status: number }[],
    now: number,
    next?: ClaimParams,
    db: Db = this.db,
  ): Promise<DeliveryItem[]> {
    const reset = new Set<string>();
    let leased: DeliveryItem[] = [];
    if (this.postgres && next) {
      const rows = await this.recordAndClaim(done, now, next, db);
      for (const r of rows) if (r.id === null && Number(r.failures ?? 0) > 0) reset.add(r.webhook_id);
      leased = toItems(rows.filter((r) => r.id !== null) as LeasedRow[]);
    } else {
      for (const r of await this.recordOnly(done, now, db)) if (Number(r.failures ?? 0) > 0) reset.add(r.webhook_id);
    }
    if (reset.size) {
      await db
        .updateTable('webhooks')
        .set({ consecutive_failures: 0 })
        .where('id', 'in', [...reset])
        .where('consecutive_failures', '>', 0)
        .execute();
    }
    return leased;
  }

  /** PostgreSQL: records `done` and leases what may start next, in one statement (rows recorded come back with a null id). */
  private async recordAndClaim(
    done: readonly { d: Pick<DueDelivery, 'id' | 'webhook_id'>; status: number }[],
    now: number,
    next: ClaimParams,
    db: Db,
  ): Promise<(Omit<LeasedRow, 'id'> & { id: string | null; failures: number | null })[]> {
    const budget = sql.lit(Math.max(0, Math.trunc(next.budget)));
    const values = [
      next.realNow + next.leaseMs,
      next.now,
      next.realNow,
      JSON.stringify(next.room),
      now,
      done.map((x) => x.d.id),
      done.map((x) => x.status),
    ];
    const res = await this.statements.run<Omit<LeasedRow, 'id'> & { id: string | null; failures: number | null }>(
      db,
      `deliveredAndClaim/${next.budget}`,
      (root) =>
        sql<Omit<LeasedRow, 'id'> & { id: string | null; failures: number | null }>`${LISTENERS_WITH_PENDING},
      done as (
        update deliveries set status = 'delivered', attempts = attempts + 1, last_status = o.status, last_error = null,
          delivered_at = ${slot(4)}, next_attempt_at = null, claimed_until = null, updated_at = ${slot(4)}
        from unnest(${slot(5)}::text[], ${slot(6)}::int[]) as o(id, status)
        where deliveries.id = o.id
        returning deliveries.webhook_id, (select consecutive_failures from webhooks where webhooks.id = deliveries.webhook_id) as failures
      ),
      ${pgClaim(budget, true)}
      select ${LEASED_COLUMNS}, null::int as failures from leased
      union all
      select null, webhook_id, null, null, null, null, null, null, null, null, null, null, failures from done`.compile(root),
      values,
    );
    return res.rows;
  }

  /** Records `done`, one statement per status (and per MAX_BATCH rows); returns each row's listener and its failure count. */
  private async recordOnly(
    done: readonly { d: Pick<DueDelivery, 'id' | 'webhook_id'>; status: number }[],
    now: number,
    db: Db,
  ): Promise<{ webhook_id: string; failures: number | null }[]> {
    const byStatus = new Map<number, string[]>();
    for (const { d, status } of done) (byStatus.get(status) ?? byStatus.set(status, []).get(status)!).push(d.id);
    const out: { webhook_id: string; failures: number | null }[] = [];
    for (const [status, all] of byStatus) {
      for (let i = 0; i < all.length; i += MAX_BATCH) {
        const ids = all.slice(i, i + MAX_BATCH);
        const res = await this.statements.run<{ webhook_id: string; failures: number | null }>(
          db,
          `delivered/${ids.length}`,
          (root) =>
            root
              .updateTable('deliveries')
              .set((eb) => ({
                status: 'delivered',
                attempts: eb('attempts', '+', 1),
                last_status: slot(0),
                last_error: null,
                delivered_at: slot(1),
                next_attempt_at: null,
                claimed_until: null,
                updated_at: slot(1),
              }))
              .where(
                'id',
                'in',
                ids.map((_, k) => slot(2 + k)),
              )
              .returning((eb) => [
                'webhook_id',
                eb
                  .selectFrom('webhooks')
                  .select('consecutive_failures')
                  .whereRef('webhooks.id', '=', 'deliveries.webhook_id')
                  .as('failures'),
              ])
              .compile(),
          [status, now, ...ids],
        );
        out.push(...res.rows);
      }
    }
    return out;
  }

  /**
   * Records a failed attempt: schedules the retry at `nextAttemptAt` (one
   * statement), or, when the attempts are used up, fails the delivery and counts it
   * against the listener, disabling it at `disableAfter` consecutive exhausted
   * deliveries (both in one transaction).
   */
  async recordFailure(
    d: Pick<DueDelivery, 'id' | 'webhook_id' | 'attempts'>,
    outcome: { status: number | null; error: string },
    now: number,
    nextAttemptAt: number | null,
    disableAfter: number,
    db: Db = this.db,
  ): Promise<void> {
    const update = (trx: Db) =>
      this.statements.run(
        trx,
        'failure',
        (root) =>
          root
            .updateTable('deliveries')
            .set({
              status: slot(0),
              attempts: slot(1),
              last_status: slot(2),
              last_error: slot(3),
              next_attempt_at: slot(4),
              claimed_until: null,
              updated_at: slot(5),
            })
            .where('id', '=', slot(6))
            .compile(),
        [
          nextAttemptAt === null ? 'failed' : 'pending',
          d.attempts + 1,
          outcome.status,
          outcome.error.slice(0, 500),
          nextAttemptAt,
          now,
          d.id,
        ],
      );
    if (nextAttemptAt !== null) {
      await update(db);
      return;
    }
    await inTransaction(this.db, db, async (trx) => {
      await update(trx);
      await trx
        .updateTable('webhooks')
        .set((eb) => ({
          consecutive_failures: eb('consecutive_failures', '+', 1),
          enabled: eb
            .case()
            .when('consecutive_failures', '>=', disableAfter - 1)
            .then(0)
            .else(eb.ref('enabled'))
            .end(),
        }))
        .where('id', '=', d.webhook_id)
        .execute();
    });
  }

  async enable(webhookId: string, now: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('webhooks')
      .set({ enabled: 1, consecutive_failures: 0, updated_at: now })
      .where('id', '=', webhookId)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async listForWebhook(
    webhookId: string,
    limit: number,
    offset: number,
    db: Db = this.db,
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const rows = await db
      .selectFrom('deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    const total = await db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_id', '=', webhookId)
      .executeTakeFirstOrThrow();
    return { rows, total: Number(total.n) };
  }

  /** Queues a delivery to be sent again with the same id and a fresh set of attempts. */
  async redeliver(id: string, now: number, db: Db = this.db): Promise<void> {
    // The lease is kept: an attempt already in flight is not sent a second time in parallel.
    await db
      .updateTable('deliveries')
      .set({ status: 'pending', attempts: 0, next_attempt_at: now, updated_at: now })
      .where('id', '=', id)
      .execute();
  }
}
