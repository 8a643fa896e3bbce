/**
 * Reads of the holds on assets (meeting_slots): the conflict reads of booking changes
 * and drafts, and what the catalogue's searches and calendars need (through its
 * BusySlots port, see busy-slots.ts).
 */
import type { Kysely } from 'kysely';
import { PreparedStatements, slot } from '../../platform/db/statements.js';
import type { Db } from '../../platform/db/db.js';
import type { Database } from '../../platform/db/schema.js';
import { MAX_CLEANUP_MS, type HoldRow, type MeetingSummary, type SlotRow } from '../catalogue/index.js';

export class SlotRepository {
  private readonly statements: PreparedStatements;

  constructor(private readonly db: Kysely<Database>) {
    this.statements = new PreparedStatements(db);
  }

  /**
   * Holds in the given projects that could conflict with [from, to) once cleaning
   * (at most MAX_CLEANUP_MS on each side) is counted. The start-time range is
   * bounded by the longest hold in those projects, read in the same statement (so
   * the holds need not wait for the projects to be read first), which keeps it a
   * range read of the index.
   */
  async slotsNear(projectIds: string[], from: number, to: number, db: Db = this.db): Promise<HoldRow[]> {
    if (!projectIds.length) return [];
    return db
      .selectFrom('meeting_slots')
      .select(['asset_id', 'start_at', 'end_at'])
      .where('project_id', 'in', projectIds)
      .where('start_at', '<', to + MAX_CLEANUP_MS)
      .where('start_at', '>', (eb) =>
        eb(
          eb.val(from - MAX_CLEANUP_MS),
          '-',
          eb
            .selectFrom('projects')
            .select((p) => p.fn.max('max_hold_ms').as('m'))
            .where('id', 'in', projectIds),
        ),
      )
      .where('end_at', '>', from - MAX_CLEANUP_MS)
      .execute();
  }

  /** Holds on one asset overlapping [from, to). */
  async assetSlots(assetId: string, from: number, to: number, maxHoldMs: number, db: Db = this.db): Promise<SlotRow[]> {
    return db
      .selectFrom('meeting_slots')
      .select(['id', 'meeting_id', 'asset_id', 'start_at', 'end_at'])
      .where('asset_id', '=', assetId)
      .where('start_at', '<', to)
      .where('start_at', '>', from - maxHoldMs - MAX_CLEANUP_MS)
      .where('end_at', '>', from)
      .orderBy('start_at')
      .execute();
  }

  /**
   * Holds on one asset that could clash with [from, to), read inside the booking's
   * lock (`db`, required): the bound on start times uses the project's longest
   * hold as stored now (a concurrent booking may just have raised it).
   */
  async lockedAssetSlots(assetId: string, projectId: string, from: number, to: number, db: Db): Promise<SlotRow[]> {
    return this.statements.rows(
      db,
      'lockedAssetSlots',
      (root) =>
        root
          .selectFrom('meeting_slots')
          .select(['id', 'meeting_id', 'asset_id', 'start_at', 'end_at'])
          .where('asset_id', '=', slot(0))
          .where('start_at', '<', slot(1))
          .where('start_at', '>', (eb) =>
            eb(eb.val<number>(slot(2)), '-', eb.selectFrom('projects').select('max_hold_ms').where('id', '=', slot(3))),
          )
          .where('end_at', '>', slot(4))
          .orderBy('start_at')
          .compile(),
      [assetId, to, from - MAX_CLEANUP_MS, projectId, from],
    );
  }

  /** Title, organizer and attendees of meetings, for participants' calendar entries (attendees parsed). */
  async meetingSummaries(ids: string[], db: Db = this.db): Promise<MeetingSummary[]> {
    if (!ids.length) return [];
    const rows = await db
      .selectFrom('meetings')
      .select(['id', 'title', 'status', 'organizer_user_id', 'attendees', 'app_id'])
      .where('id', 'in', ids)
      .execute();
    return rows.map((m) => ({
      id: m.id,
      title: m.title,
      status: m.status,
      organizerUserId: m.organizer_user_id,
      appId: m.app_id,
      attendeeUserIds: (JSON.parse(m.attendees) as { userId?: string | null }[]).flatMap((a) => (a.userId ? [a.userId] : [])),
    }));
  }
}
