/**
 * The plans of the two reads that count unapplied device commands across every device: the
 * devices overview (pending per device: the console's list) and the pending-commands gauge. Both
 * read the partial index `device_commands_pending_idx` (migration 023), which holds only pending
 * commands; before it they went through `device_commands_queue_idx`, which holds every command a
 * device ever received, so their cost grew with the history. (test/support/query-plan.ts reads the plans.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { DeviceRepository } from '../../src/modules/devices/device-repository.js';
import { capturingDb, planOf } from '../support/query-plan.js';

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
    const storage = svc.services.storage;
    const capture = capturingDb(storage.db);
    await read(new DeviceRepository(capture.db, storage.engine));
    const plans: string[] = [];
    for (const node of capture.nodes) plans.push(await planOf(storage, node));
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
