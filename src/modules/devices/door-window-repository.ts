/**
 * The door windows (devices owns `door_windows`): per booking and participant, the
 * devices of the booking's asset and the validity window the participant holds there.
 * Written in the booking change's own transaction; read by the members' access source.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { backlogOf } from '../../platform/db/backlog-row.js';
import type { Database, DoorWindowTable } from '../../platform/db/schema.js';

/** A stored door window, its device ids parsed and its times numbers. */
export interface DoorWindowRow {
  meetingId: string;
  userId: string;
  projectId: string;
  deviceIds: string[];
  validFrom: number;
  validUntil: number;
}

const record = (r: Selectable<DoorWindowTable>): DoorWindowRow => ({
  meetingId: r.meeting_id,
  userId: r.user_id,
  projectId: r.project_id,
  deviceIds: JSON.parse(r.device_ids) as string[],
  validFrom: Number(r.valid_from),
  validUntil: Number(r.valid_until),
});

export class DoorWindowRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async ofMeeting(meetingId: string, db: Db = this.db): Promise<DoorWindowRow[]> {
    const rows = await db.selectFrom('door_windows').selectAll().where('meeting_id', '=', meetingId).execute();
    return rows.map(record);
  }

  /** Replaces the meeting's rows with `rows` (none: the meeting gives no access). */
  async replace(meetingId: string, rows: DoorWindowRow[], at: number, db: Db = this.db): Promise<void> {
    await db.deleteFrom('door_windows').where('meeting_id', '=', meetingId).execute();
    if (!rows.length) return;
    await db
      .insertInto('door_windows')
      .values(
        rows.map((r) => ({
          meeting_id: r.meetingId,
          user_id: r.userId,
          project_id: r.projectId,
          device_ids: JSON.stringify(r.deviceIds),
          valid_from: r.validFrom,
          valid_until: r.validUntil,
          updated_at: at,
        })),
      )
      .execute();
  }

  /** The project's devices some room or desk names among its access devices (reads site's rooms and desks, as the entry log does). */
  async doorDevices(projectId: string, db: Db = this.db): Promise<string[]> {
    const [rooms, desks] = await Promise.all([
      db.selectFrom('rooms').select('access_devices').where('project_id', '=', projectId).where('access_devices', 'is not', null).execute(),
      db.selectFrom('desks').select('access_devices').where('project_id', '=', projectId).where('access_devices', 'is not', null).execute(),
    ]);
    const ids = [...rooms, ...desks].flatMap((r) => (r.access_devices ? (JSON.parse(r.access_devices) as string[]) : []));
    return [...new Set(ids)].sort();
  }

  /** A user's windows in a project that are not over by `now`, earliest first. */
  async ofUser(projectId: string, userId: string, now: number, db: Db = this.db): Promise<DoorWindowRow[]> {
    const rows = await db
      .selectFrom('door_windows')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .where('valid_until', '>', now)
      .orderBy('valid_from')
      .execute();
    return rows.map(record);
  }

  /** Users of the project with a stored window. */
  async users(projectId: string, db: Db = this.db): Promise<string[]> {
    const rows = await db.selectFrom('door_windows').select('user_id').distinct().where('project_id', '=', projectId).execute();
    return rows.map((r) => r.user_id);
  }

  /** Windows over by `now`, earliest end first (the door-windows job). */
  async due(now: number, limit: number, db: Db = this.db): Promise<DoorWindowRow[]> {
    const rows = await db
      .selectFrom('door_windows')
      .selectAll()
      .where('valid_until', '<=', now)
      .orderBy('valid_until')
      .orderBy('meeting_id')
      .orderBy('user_id')
      .limit(limit)
      .execute();
    return rows.map(record);
  }

  async backlog(now: number, db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('door_windows')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('valid_until').as('oldest')])
      .where('valid_until', '<=', now)
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }

  /** Deletes the row if it still ends at `validUntil`; whether it did. */
  async expire(r: DoorWindowRow, db: Db = this.db): Promise<boolean> {
    const res = await db
      .deleteFrom('door_windows')
      .where('meeting_id', '=', r.meetingId)
      .where('user_id', '=', r.userId)
      .where('valid_until', '=', r.validUntil)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
