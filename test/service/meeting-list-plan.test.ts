/**
 * The plan of GET /meetings' read (meeting-repository `list`): neither part walks the project's
 * history. Single bookings are a two-sided range of `meetings_project_start_idx` (start after the
 * window's start minus the longest hold, before its end); series rows come from the partial index
 * `meetings_series_span_idx` (migration 022) by the end of their span. Before, the read was a
 * one-sided range (`start_at < to`): every booking that ever started before the window.
 * SQLite's planner has no statistics here, so its choice is fixed by the query's shape; PostgreSQL
 * chooses by cost, so its plan is read with sequential scans off (an empty table makes one cheapest).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf } from '../support/fixtures.js';
import { MeetingRepository } from '../../src/modules/booking/meeting-repository.js';
import { capturingDb, planOf } from '../support/query-plan.js';

describe('GET /meetings reads a window without walking history', () => {
  let svc: TestService;
  let projectId: string;

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
    projectId = idOf(await applySite(svc), 'tower');
  });
  afterAll(async () => {
    await svc?.close();
  });

  /** The plan of the one statement `list` sends, as text lines. */
  async function planOfList(filter: { organizerIds?: string[] }): Promise<string> {
    const storage = svc.services.storage;
    const capture = capturingDb(storage.db);
    const from = svc.services.clock.now();
    const rows = await new MeetingRepository(capture.db).list({
      from,
      to: from + 86_400_000,
      projectIds: [projectId],
      ...filter,
    });
    expect(rows).toEqual([]);
    // The statement is built last (its subqueries are handed to the plugin first, each on its own).
    return planOf(storage, capture.nodes.at(-1)!);
  }

  /** The `Index Cond:` line under the scan of `index` (PostgreSQL's EXPLAIN). */
  const indexCond = (plan: string, index: string): string => {
    const lines = plan.split('\n');
    const at = lines.findIndex((l) => l.includes(`using ${index} on meetings`));
    expect(at, plan).toBeGreaterThanOrEqual(0);
    return lines[at + 1] ?? '';
  };

  it('single bookings by a bounded start-time range, series by their span end', async () => {
    const plan = await planOfList({});
    if (svc.services.storage.engine === 'sqlite') {
      expect(plan).toContain('meetings_project_start_idx (project_id=? AND start_at>? AND start_at<?)');
      expect(plan).toContain('meetings_series_span_idx (project_id=? AND span_end_at>?)');
    } else {
      const single = indexCond(plan, 'meetings_project_start_idx');
      expect(single).toMatch(/project_id = /);
      expect(single).toMatch(/start_at < /);
      expect(single).toMatch(/start_at > /);
      expect(indexCond(plan, 'meetings_series_span_idx')).toMatch(/project_id = .*span_end_at > /);
    }
    expect(plan).not.toMatch(/SCAN meetings|Seq Scan on meetings/);
  });

  it('with an organizer filter the single bookings use the organizer index, still bounded on both sides', async () => {
    const plan = await planOfList({ organizerIds: ['0'.repeat(24)] });
    if (svc.services.storage.engine === 'sqlite') {
      expect(plan).toMatch(/USING INDEX \w+ \((?:project_id|organizer_user_id)=\? AND start_at>\? AND start_at<\?\)/);
    } else {
      const bounded = plan.split('\n').filter((l) => l.includes('Index Cond:') && l.includes('start_at < ') && l.includes('start_at > '));
      expect(bounded).toHaveLength(1);
    }
    expect(plan).not.toMatch(/SCAN meetings|Seq Scan on meetings/);
  });
});
