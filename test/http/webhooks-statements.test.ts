/**
 * How much SQL one delivery attempt costs, counted with a statement counter on the
 * real service (background workers off, sandbox clock stopped, so every statement
 * seen while the delivery job drains belongs to the deliveries):
 * - the due read leases what can start and reads its bodies (one statement), and
 *   as many more per listener as LEASE_DEPTH allows, started from memory as slots
 *   free up; on PostgreSQL the statement that records delivered attempts is also
 *   the next due read, so in a flow a delivered attempt takes at most 1 statement
 *   (a round trip); on SQLite (in the process) the due read stays a statement of
 *   its own, one per LEASE_DEPTH - PER_LISTENER_CONCURRENCY attempts at most
 *   (before: 2 per attempt, the due read and the outcome; and before that 8);
 * - the listener's failure count is written only when it changes;
 * - no statement reads a body or a whole delivery row except the one that leases it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { quietService, statementCounter } from '../support/statements.js';
import { applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { webhookSite } from '../support/webhook-site.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { writeTransaction } from '../../src/platform/db/transactions.js';
import { TEST_ENGINE } from '../support/test-database.js';
import { DELIVERY_JOB, LEASE_DEPTH, MAX_ATTEMPTS, PER_LISTENER_CONCURRENCY } from '../../src/modules/webhooks/jobs.js';

/** Statements one attempt may take: its outcome (on PostgreSQL, the same statement leases the next ones). */
const PER_ATTEMPT = 1;
/** Due reads on their own in a flow of `n` attempts: the first, the drain's last, and on SQLite one per refill of what is leased ahead. */
const reads = (n: number) => 2 + (TEST_ENGINE === 'postgres' ? 0 : Math.ceil(n / (LEASE_DEPTH - PER_LISTENER_CONCURRENCY)));
const WEBHOOKS_WRITE = /^\s*update\s+"?webhooks"?/i;
/** A statement that records delivered attempts. */
const RECORDS_DELIVERED = /\bset\s+"?status"?\s*=\s*(\$\d+|\?|'delivered')/i;

describe('SQL per delivery attempt', () => {
  let svc: TestService;
  let rx: WebhookReceiver;
  let ids: SiteIds;
  let failing = true;
  const { record, counted } = statementCounter();

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    rx.respond('/flaky', () => (failing ? 500 : 200));
    svc = await startTestService({ noWorkers: true, onQuery: record });
    ids = await applySite(
      svc,
      webhookSite({
        rooms: [{ key: 'ra', name: 'Room A' }],
        hooks: [
          { key: 'ok', url: rx.url('/ok'), events: ['ROOM_REMINDER'] },
          { key: 'flaky', url: rx.url('/flaky'), events: ['ROOM_ENDING_SOON'] },
        ],
      }),
    );
    await quietService(svc);
  });
  afterAll(async () => {
    await svc?.close();
    await rx?.close();
  });

  /** Queues `n` events of `type` through the outbox (one delivery each to the listener subscribed to it). */
  async function emit(type: 'ROOM_REMINDER' | 'ROOM_ENDING_SOON', n: number): Promise<void> {
    const { db, engine } = svc.services.storage;
    const at = svc.services.clock.now();
    await writeTransaction(db, engine, async (trx) => {
      for (let i = 0; i < n; i++) await svc.services.outbox.emitEvent(trx, { projectId: idOf(ids, 'tower'), type, data: { i }, at });
    });
  }

  /** Drains the delivery job, counting its statements. */
  async function drained(label: string) {
    const { statements } = await counted(() => svc.services.jobs.drain(DELIVERY_JOB));
    console.log(
      `${label}: ${statements.length} statements\n  ${statements.map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 120)).join('\n  ')}`,
    );
    return statements;
  }

  const listener = async (key: string) =>
    svc.services.storage.db
      .selectFrom('webhooks')
      .select(['consecutive_failures', 'enabled'])
      .where('id', '=', idOf(ids, key))
      .executeTakeFirstOrThrow();
  const deliveriesOf = (key: string) =>
    svc.services.storage.db
      .selectFrom('deliveries')
      .select(['id', 'status', 'attempts', 'last_status'])
      .where('webhook_id', '=', idOf(ids, key))
      .execute();

  it(`a delivered attempt takes the due read that leases it and ${PER_ATTEMPT} statement (plus the drain's last, empty, due read) and writes nothing to its listener`, async () => {
    const before = rx.on('/ok').length;
    await emit('ROOM_REMINDER', 1);
    const statements = await drained('one delivered attempt');
    expect(rx.on('/ok').length).toBe(before + 1);
    expect(await deliveriesOf('ok')).toMatchObject([{ status: 'delivered', attempts: 1, last_status: 200 }]);
    expect(statements.length).toBeLessThanOrEqual(PER_ATTEMPT + 2);
    expect(statements.filter((s) => WEBHOOKS_WRITE.test(s))).toEqual([]);
    // The body is read once, by the statement that leases the delivery; no statement reads whole delivery rows.
    const withBody = statements.filter((s) => /\bbody\b/.test(s));
    expect(withBody.length).toBeGreaterThan(0);
    expect(withBody.every((s) => /\bset\s+"?claimed_until"?\s*=/i.test(s))).toBe(true);
    expect(statements.filter((s) => /select\s+("deliveries"\.)?\*/i.test(s))).toEqual([]);
  });

  it(`a backlog: at most ${PER_ATTEMPT} statement per attempt and the due reads (attempts that start or end together share them)`, async () => {
    const before = rx.on('/ok').length;
    const n = 40;
    await emit('ROOM_REMINDER', n);
    const statements = await drained(`${n} delivered attempts`);
    expect(rx.on('/ok').length).toBe(before + n);
    expect((await deliveriesOf('ok')).every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
    expect(statements.length).toBeLessThanOrEqual(PER_ATTEMPT * n + reads(n));
    expect(statements.filter((s) => WEBHOOKS_WRITE.test(s))).toEqual([]);
    const recording = statements.filter((s) => RECORDS_DELIVERED.test(s));
    expect(recording.length).toBeGreaterThan(0);
    if (TEST_ENGINE === 'postgres') {
      // Every statement that records attempts is also a due read: it leases the next ones with their bodies.
      expect(recording.every((s) => /\bset\s+"?claimed_until"?\s*=\s*\$/i.test(s) && /\bbody\b/.test(s))).toBe(true);
    }
  });

  it(`a refused attempt with a retry ahead takes the due read and ${PER_ATTEMPT} statement and writes nothing to its listener`, async () => {
    await emit('ROOM_ENDING_SOON', 1);
    const statements = await drained('one refused attempt');
    expect(await deliveriesOf('flaky')).toMatchObject([{ status: 'pending', attempts: 1, last_status: 500 }]);
    expect(statements.length).toBeLessThanOrEqual(PER_ATTEMPT + 2);
    expect(statements.filter((s) => WEBHOOKS_WRITE.test(s))).toEqual([]);
  });

  it('the attempt that uses up a delivery counts it against the listener in the same transaction', async () => {
    // Jump to the last attempt (the retries and their spacing are covered by webhooks-delivery.test.ts).
    const [d] = await deliveriesOf('flaky');
    await svc.services.storage.db
      .updateTable('deliveries')
      .set({ attempts: MAX_ATTEMPTS - 1, next_attempt_at: svc.services.clock.now() })
      .where('id', '=', d!.id)
      .execute();
    const statements = await drained('the last attempt, refused');
    expect(await deliveriesOf('flaky')).toMatchObject([{ status: 'failed', attempts: MAX_ATTEMPTS, last_status: 500 }]);
    expect(await listener('flaky')).toMatchObject({ consecutive_failures: 1, enabled: 1 });
    // the due read that leases it; begin, the delivery, the listener, commit; the drain's last due read
    expect(statements.length).toBeLessThanOrEqual(6);
    expect(statements.filter((s) => WEBHOOKS_WRITE.test(s))).toHaveLength(1);
  });

  it("a success resets the listener's failure count with one more statement, and only when it is not 0 already", async () => {
    failing = false;
    await emit('ROOM_ENDING_SOON', 1);
    const first = await drained('a success after a run of failures');
    expect(await listener('flaky')).toMatchObject({ consecutive_failures: 0 });
    expect(first.filter((s) => WEBHOOKS_WRITE.test(s))).toHaveLength(1);
    expect(first.length).toBeLessThanOrEqual(PER_ATTEMPT + 3);

    await emit('ROOM_ENDING_SOON', 1);
    const second = await drained('the next success');
    expect(second.filter((s) => WEBHOOKS_WRITE.test(s))).toEqual([]);
    expect(second.length).toBeLessThanOrEqual(PER_ATTEMPT + 2);
  });
});
