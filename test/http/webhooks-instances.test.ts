/**
 * Two service instances on one database, both delivering: a backlog to two listeners
 * goes out with every delivery attempted exactly once, whichever instance leased
 * it; no attempt is ever sent twice, and neither instance holds more than
 * LEASE_DEPTH leases of one listener at once (its budget in flight, the rest
 * leased ahead; the runner keeps the budget of attempts in flight).
 *
 * (The same across retries and clock moves: lifecycle-multi-instance.test.ts.) On
 * SQLite both instances open the same file in this process: the lease is the same
 * statement, SQLite runs it alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf, sleep, type SiteIds } from '../support/fixtures.js';
import { webhookSite } from '../support/webhook-site.js';
import { WebhookReceiver, header } from '../support/webhook-receiver.js';
import { TEST_ENGINE } from '../support/test-database.js';
import { writeTransaction } from '../../src/platform/db/transactions.js';
import { LEASE_DEPTH } from '../../src/modules/webhooks/jobs.js';

describe(`two instances deliver one backlog (${TEST_ENGINE})`, () => {
  let a: TestService;
  let b: TestService;
  let rx: WebhookReceiver;
  let ids: SiteIds;
  /** Deliveries each instance has leased and not recorded, per listener, and the most seen at once. */
  const inFlight = new Map<string, number>();
  const most = new Map<string, number>();

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    a = await startTestService();
    b = await startTestService({ database: a.database, keepDatabase: true });
    ids = await applySite(
      a,
      webhookSite({
        rooms: [{ key: 'ra', name: 'Room A' }],
        hooks: [
          { key: 'one', url: rx.url('/one'), events: ['ROOM_REMINDER'] },
          { key: 'two', url: rx.url('/two'), events: ['ROOM_REMINDER'] },
        ],
      }),
    );
    // What each instance has leased and not yet recorded, per listener (every attempt here succeeds).
    for (const [name, svc] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const repo = svc.services.deliveryRepo;
      const claimDue = repo.claimDue.bind(repo);
      const leased = (items: readonly { webhook_id: string }[]) => {
        for (const d of items) {
          const key = `${name} ${d.webhook_id}`;
          const n = (inFlight.get(key) ?? 0) + 1;
          inFlight.set(key, n);
          most.set(key, Math.max(most.get(key) ?? 0, n));
        }
      };
      repo.claimDue = async (...args: Parameters<typeof claimDue>) => {
        const items = await claimDue(...args);
        leased(items);
        return items;
      };
      // On PostgreSQL the statement that records attempts also leases the next ones.
      const done = repo.recordSuccesses.bind(repo);
      repo.recordSuccesses = async (...args: Parameters<typeof done>) => {
        const items = await done(...args);
        for (const { d } of args[0]) inFlight.set(`${name} ${d.webhook_id}`, (inFlight.get(`${name} ${d.webhook_id}`) ?? 1) - 1);
        leased(items);
        return items;
      };
    }
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await rx?.close();
  });

  it('every delivery is attempted once, by one instance, within the budget', async () => {
    const n = 150;
    const { db, engine } = a.services.storage;
    const at = a.services.clock.now();
    await writeTransaction(db, engine, async (trx) => {
      for (let i = 0; i < n; i++)
        await a.services.outbox.emitEvent(trx, { projectId: idOf(ids, 'tower'), type: 'ROOM_REMINDER', data: { i }, at });
    });
    await rx.waitFor((all) => new Set(all.map((r) => header(r, 'x-service-delivery'))).size >= 2 * n, 30_000);
    await sleep(300);

    const received = rx.on();
    const sent = received.map((r) => header(r, 'x-service-delivery')!);
    expect(sent.length).toBe(2 * n);
    expect(new Set(sent).size).toBe(2 * n);
    const rows = await db.selectFrom('deliveries').select(['status', 'attempts', 'claimed_until']).execute();
    expect(rows).toHaveLength(2 * n);
    expect(rows.filter((r) => r.status !== 'delivered' || r.attempts !== 1 || r.claimed_until !== null)).toEqual([]);
    for (const [key, m] of most) expect(m, key).toBeLessThanOrEqual(LEASE_DEPTH);
    const by = (name: string) => [...inFlight.keys()].some((k) => k.startsWith(`${name} `));
    console.log(
      `[${TEST_ENGINE}] most leased per instance and listener: ${JSON.stringify(Object.fromEntries(most))}; a leased: ${by('a')}, b leased: ${by('b')}`,
    );
  });
});
