/**
 * The plans of the two reads that count unapplied device commands across every device: the
 * devices overview (pending per device: the console's list) and the pending-commands gauge. Both
 * read the partial index `device_commands_pending_idx` (migration 023), which holds only pending
 * commands; before it they went through `device_commands_queue_idx`, which holds every command a
 * device ever received, so their cost grew with the history. PostgreSQL chooses by cost, so its plan
 * is read with sequential scans off (an empty table makes one cheapest).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledQuery, sql, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { startTestService, type TestService } from '../support/test-service.js';
import { DeviceRepository } from '../../src/modules/devices/device-repository.js';

describe('counting pending device commands reads only pending ones', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
  });
  afterAll(async () => {
    await svc?.close();
  });

  /** The plans of the statements `read` sends, as text. */
  async function plansOf(read: (repo: DeviceRepository) => Promise<unknown>): Promise<string[]> {
    const { db, engine } = svc.services.storage;
    const nodes: RootOperationNode[] = [];
    const capture: KyselyPlugin = {
      transformQuery: (args) => {
        nodes.push(args.node);
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    await read(new DeviceRepository(db.withPlugin(capture), engine));
    const plans: string[] = [];
    for (const node of nodes) {
      const compiled = db.getExecutor().compileQuery(node, { queryId: 'plan' } as never);
      if (engine === 'sqlite') {
        const plan = await db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
        );
        plans.push(plan.rows.map((r) => r.detail).join('\n'));
        continue;
      }
      plans.push(
        await db.connection().execute(async (conn) => {
          await sql`set enable_seqscan = off`.execute(conn);
          try {
            const plan = await conn.executeQuery<{ 'QUERY PLAN': string }>(
              CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
            );
            return plan.rows.map((r) => r['QUERY PLAN']).join('\n');
          } finally {
            await sql`reset enable_seqscan`.execute(conn);
          }
        }),
      );
    }
    return plans;
  }

  it('the devices overview counts pending commands per device through the partial index', async () => {
    // The last statement is the overview's (its subquery is handed to the plugin first, on its own).
    const plan = (await plansOf((repo) => repo.overview())).at(-1)!;
    expect(plan).toMatch(/^SELECT|devices/m);
    expect(plan).toContain('device_commands_pending_idx');
    expect(plan).not.toContain('device_commands_queue_idx');
  });

  it('the pending-commands gauge counts through the partial index', async () => {
    const plans = await plansOf((repo) => repo.queueStats());
    expect(plans).toHaveLength(2);
    expect(plans[0]).toContain('device_commands_pending_idx');
    expect(plans[0]).not.toContain('device_commands_queue_idx');
  });
});
