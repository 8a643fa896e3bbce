/**
 * The entry log (access_entries, owned by devices): one row per access event, unique per device by the
 * device's own event key. Also reads which room or desk names a device among its access devices.
 *
 * `processed_at` is the claim of a pending entry (real time its lease ends) while the outcome is
 * `pending`, and the real time it was processed once it is not.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { AccessEntryTable, Database } from '../../platform/db/schema.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { backlogOf } from '../../platform/db/backlog-row.js';
import type { EntryOutcome, EntrySubjectKind } from './rules/door-entry.js';

/** An entry as the module uses it: `granted` a boolean, the times numbers. */
export interface EntryRow {
  id: string;
  projectId: string;
  deviceId: string;
  eventKey: string;
  subjectKind: EntrySubjectKind;
  subjectId: string | null;
  credentialKind: string;
  granted: boolean;
  deviceAt: number;
  receivedAt: number;
  assetKind: 'room' | 'desk' | null;
  assetId: string | null;
  outcome: EntryOutcome;
  meetingId: string | null;
  processedAt: number | null;
}

export interface EntryFilter {
  projectId: string;
  /** Device time bounds [from, to). */
  from?: number;
  to?: number;
  deviceId?: string;
  assetId?: string;
  outcome?: string;
  /** Entries strictly older than this one (device time, then id): the next page. */
  before?: { deviceAt: number; id: string };
  limit: number;
}

const record = (r: Selectable<AccessEntryTable>): EntryRow => ({
  id: r.id,
  projectId: r.project_id,
  deviceId: r.device_id,
  eventKey: r.event_key,
  subjectKind: r.subject_kind as EntrySubjectKind,
  subjectId: r.subject_id,
  credentialKind: r.credential_kind,
  granted: Number(r.granted) === 1,
  deviceAt: Number(r.device_at),
  receivedAt: Number(r.received_at),
  assetKind: r.asset_kind as EntryRow['assetKind'],
  assetId: r.asset_id,
  outcome: r.outcome as EntryOutcome,
  meetingId: r.meeting_id,
  processedAt: r.processed_at === null ? null : Number(r.processed_at),
});

export class EntryRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the entry unless the device already sent this event: true when it was new. */
  async insert(e: Omit<EntryRow, 'processedAt'>, db: Db = this.db): Promise<boolean> {
    const row = await db
      .insertInto('access_entries')
      .values({
        id: e.id,
        project_id: e.projectId,
        device_id: e.deviceId,
        event_key: e.eventKey,
        subject_kind: e.subjectKind,
        subject_id: e.subjectId,
        credential_kind: e.credentialKind,
        granted: e.granted ? 1 : 0,
        device_at: e.deviceAt,
        received_at: e.receivedAt,
        asset_kind: e.assetKind,
        asset_id: e.assetId,
        outcome: e.outcome,
        meeting_id: e.meetingId,
        processed_at: e.outcome === 'pending' ? null : e.receivedAt,
      })
      .onConflict((oc) => oc.columns(['device_id', 'event_key']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async byKey(deviceId: string, eventKey: string, db: Db = this.db): Promise<EntryRow | undefined> {
    const r = await db
      .selectFrom('access_entries')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('event_key', '=', eventKey)
      .executeTakeFirst();
    return r && record(r);
  }

  async byId(id: string, db: Db = this.db): Promise<EntryRow | undefined> {
    const r = await db.selectFrom('access_entries').selectAll().where('id', '=', id).executeTakeFirst();
    return r && record(r);
  }

  /** The rooms and desks of the project naming the device among their access devices. */
  async assetsOfDevice(projectId: string, deviceId: string, db: Db = this.db): Promise<{ rooms: string[]; desks: string[] }> {
    const pattern = `%${JSON.stringify(deviceId)}%`;
    const names = (rows: { id: string; access_devices: string | null }[]) =>
      rows.filter((r) => r.access_devices !== null && (JSON.parse(r.access_devices) as string[]).includes(deviceId)).map((r) => r.id);
    const [rooms, desks] = await Promise.all([
      db
        .selectFrom('rooms')
        .select(['id', 'access_devices'])
        .where('project_id', '=', projectId)
        .where('access_devices', 'like', pattern)
        .execute(),
      db
        .selectFrom('desks')
        .select(['id', 'access_devices'])
        .where('project_id', '=', projectId)
        .where('access_devices', 'like', pattern)
        .execute(),
    ]);
    return { rooms: names(rooms), desks: names(desks) };
  }

  /** Pending entries nobody holds (real time), oldest received first. */
  async due(realNow: number, limit: number, db: Db = this.db): Promise<EntryRow[]> {
    const rows = await db
      .selectFrom('access_entries')
      .selectAll()
      .where('outcome', '=', 'pending')
      .where((eb) => eb.or([eb('processed_at', 'is', null), eb('processed_at', '<', realNow)]))
      .orderBy('received_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(record);
  }

  async backlog(db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('access_entries')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.min('received_at').as('oldest')])
      .where('outcome', '=', 'pending')
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }

  /** Claims a pending entry until `realNow + leaseMs` (a conditional update: one instance wins). */
  async claim(id: string, realNow: number, leaseMs: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('access_entries')
      .set({ processed_at: realNow + leaseMs })
      .where('id', '=', id)
      .where('outcome', '=', 'pending')
      .where((eb) => eb.or([eb('processed_at', 'is', null), eb('processed_at', '<', realNow)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Stores what a pending entry did (once: a processed entry stays as it is). */
  async finish(id: string, outcome: EntryOutcome, meetingId: string | null, realNow: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('access_entries')
      .set({ outcome, meeting_id: meetingId, processed_at: realNow })
      .where('id', '=', id)
      .where('outcome', '=', 'pending')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Per asset, the latest granted entry at its doors at or after `since` (device time); assets without one are left out. */
  async lastGranted(assetIds: readonly string[], since: number, db: Db = this.db): Promise<Map<string, number>> {
    if (!assetIds.length) return new Map();
    const rows = await db
      .selectFrom('access_entries')
      .select((eb) => ['asset_id', eb.fn.max('device_at').as('at')])
      .where('asset_id', 'in', [...assetIds])
      .where('granted', '=', 1)
      .where('device_at', '>=', since)
      .groupBy('asset_id')
      .execute();
    return new Map(rows.flatMap((r) => (r.asset_id === null || r.at === null ? [] : [[r.asset_id, Number(r.at)] as const])));
  }

  /** Entries received after `after` (real time), oldest first: the console's change feed. */
  async changedSince(after: number, limit: number, db: Db = this.db): Promise<{ id: string; projectId: string; at: number }[]> {
    const rows = await db
      .selectFrom('access_entries')
      .select(['id', 'project_id', 'received_at'])
      .where('received_at', '>', after)
      .orderBy('received_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, projectId: r.project_id, at: Number(r.received_at) }));
  }

  /** The latest time an entry was received (0 when none). */
  async lastChangeAt(db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('access_entries')
      .select((eb) => eb.fn.max('received_at').as('at'))
      .executeTakeFirst();
    return Number(row?.at ?? 0);
  }

  /** A project's entries, newest (device time) first. */
  async list(f: EntryFilter, db: Db = this.db): Promise<EntryRow[]> {
    let q = db.selectFrom('access_entries').selectAll().where('project_id', '=', f.projectId);
    if (f.from !== undefined) q = q.where('device_at', '>=', f.from);
    if (f.to !== undefined) q = q.where('device_at', '<', f.to);
    if (f.deviceId !== undefined) q = q.where('device_id', '=', f.deviceId);
    if (f.assetId !== undefined) q = q.where('asset_id', '=', f.assetId);
    if (f.outcome !== undefined) q = q.where('outcome', '=', f.outcome);
    const before = f.before;
    if (before)
      q = q.where((eb) =>
        eb.or([eb('device_at', '<', before.deviceAt), eb.and([eb('device_at', '=', before.deviceAt), eb('id', '<', before.id)])]),
      );
    const rows = await q.orderBy('device_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
    return rows.map(record);
  }
}
