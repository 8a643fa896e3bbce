/**
 * The devices module's tables: the enrollment outbox (access_changes), per-device
 * sync state, planned targets, the command queue and what devices acknowledged.
 * Devices themselves are written by the site module; this reads them.
 */
import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import { groupBy } from '../../platform/group-by.js';
import { chunked, IN_CHUNK, readInChunks } from '../../platform/db/in-chunks.js';
import type { Db } from '../../platform/db/db.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { backlogOf } from '../../platform/db/backlog-row.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database, DeviceCommandTable, DeviceStateTable } from '../../platform/db/schema.js';
import { parseState, stateJson, type SubjectKind, type SubjectState } from './rules/subject-state.js';

/** A queued command as the module uses it: its state (JSON in the column) parsed; null for a remove. */
export type CommandRow = Omit<Selectable<DeviceCommandTable>, 'state'> & { state: SubjectState | null };
/** A device's sync row as the module uses it: `online` as a boolean. */
export type DeviceStateRow = Omit<Selectable<DeviceStateTable>, 'online'> & { online: boolean };

const stateRecord = (r: Selectable<DeviceStateTable>): DeviceStateRow => ({ ...r, online: Number(r.online) === 1 });

export interface DeviceRow {
  id: string;
  projectId: string;
  accessGroupId: string;
  name: string;
  kind: string;
  locationEn: string | null;
  locationTh: string | null;
  cardFormat: string | null;
  /** The property's IANA time zone (devices that keep local time get windows in it). */
  timeZone: string;
  /** isapi | zkteco-push, or null: the DEVICE_TRANSPORT default. */
  transportKind: string | null;
  /** The transport's non-secret settings (JSON text): ISAPI {baseUrl, username}, ZKTeco {serialNumber}. */
  transportJson: string | null;
  /** The ISAPI password or ZKTeco commKey, sealed. */
  transportSecretEnc: string | null;
}

/** A subject's state on a device (a target, or what the device acknowledged), parsed from its JSON column. */
export interface SubjectStateRow {
  device_id: string;
  subject_kind: string;
  subject_id: string;
  state: SubjectState;
}

/**
 * `'pending'` written into the statement, not bound: only then may SQLite read the partial index
 * `device_commands_pending_idx` (migration 023), which holds just the unapplied commands.
 */
const PENDING = sql.lit('pending');

const commandRecord = (r: Selectable<DeviceCommandTable>): CommandRow => ({ ...r, state: r.state === null ? null : parseState(r.state) });
const subjectStateRecord = <R extends { state: string }>(r: R): Omit<R, 'state'> & { state: SubjectState } => ({
  ...r,
  state: parseState(r.state),
});

export class DeviceRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
  ) {}

  private devicesQuery(db: Db) {
    return db
      .selectFrom('devices')
      .innerJoin('access_groups', 'access_groups.id', 'devices.access_group_id')
      .innerJoin('projects', 'projects.id', 'access_groups.project_id')
      .select([
        'devices.id as id',
        'access_groups.project_id as projectId',
        'devices.access_group_id as accessGroupId',
        'devices.name as name',
        'devices.kind as kind',
        'devices.location_en as locationEn',
        'devices.location_th as locationTh',
        'devices.card_format as cardFormat',
        'projects.timezone as timeZone',
        'devices.transport_kind as transportKind',
        'devices.transport_json as transportJson',
        'devices.transport_secret_enc as transportSecretEnc',
      ]);
  }

  async device(id: string, db: Db = this.db): Promise<DeviceRow | undefined> {
    return this.devicesQuery(db).where('devices.id', '=', id).executeTakeFirst();
  }

  /** Every device with its sync state (online: null without a sync row yet) and count of unsent commands (the console's list). */
  async overview(
    db: Db = this.db,
  ): Promise<{ id: string; name: string; kind: string; online: boolean | null; lastSyncedAt: number | null; pending: number }[]> {
    const pending = db
      .selectFrom('device_commands')
      .select((eb) => ['device_id', eb.fn.countAll<number>().as('n')])
      .where('status', '=', PENDING)
      .groupBy('device_id')
      .as('pc');
    const rows = await db
      .selectFrom('devices')
      .leftJoin('device_state as s', 's.device_id', 'devices.id')
      .leftJoin(pending, 'pc.device_id', 'devices.id')
      .select([
        'devices.id as id',
        'devices.name as name',
        'devices.kind as kind',
        's.online as online',
        's.last_synced_at as lastSyncedAt',
        'pc.n as pending',
      ])
      .orderBy('devices.name')
      .orderBy('devices.id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      kind: r.kind,
      online: r.online === null ? null : Number(r.online) === 1,
      lastSyncedAt: r.lastSyncedAt ?? null,
      pending: Number(r.pending ?? 0),
    }));
  }

  /** Devices whose sync state changed after `after`, oldest change first: the console's change feed. */
  async changedSince(after: number, limit: number, db: Db = this.db): Promise<{ id: string; projectId: null; at: number }[]> {
    const rows = await db
      .selectFrom('device_state')
      .select(['device_id', 'updated_at'])
      .where('updated_at', '>', after)
      .orderBy('updated_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.device_id, projectId: null, at: Number(r.updated_at) }));
  }

  /** The latest device-state change time (0 when none). */
  async lastChangeAt(db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('device_state')
      .select((eb) => eb.fn.max('updated_at').as('at'))
      .executeTakeFirst();
    return Number(row?.at ?? 0);
  }

  async projectDevices(projectId: string, db: Db = this.db): Promise<DeviceRow[]> {
    return this.devicesQuery(db).where('access_groups.project_id', '=', projectId).orderBy('devices.id').execute();
  }

  async allDevices(db: Db = this.db): Promise<DeviceRow[]> {
    return this.devicesQuery(db).orderBy('devices.id').execute();
  }

  /** Sync states of these devices (those that have one). */
  async states(deviceIds: string[], db: Db = this.db): Promise<DeviceStateRow[]> {
    if (!deviceIds.length) return [];
    const rows = await db.selectFrom('device_state').selectAll().where('device_id', 'in', deviceIds).execute();
    return rows.map(stateRecord);
  }

  /** Real time a pull device last polled, or null. */
  async lastSeen(deviceId: string, db: Db = this.db): Promise<number | null> {
    const row = await db.selectFrom('device_state').select('last_seen_at').where('device_id', '=', deviceId).executeTakeFirst();
    return row?.last_seen_at == null ? null : Number(row.last_seen_at);
  }

  /** A pull device polled (real time `seenAt`): it is online, and due at once. */
  async seen(deviceId: string, seenAt: number, now: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('device_state')
      .set({ last_seen_at: seenAt, online: 1, attempts: 0, last_error: null, updated_at: now })
      .where('device_id', '=', deviceId)
      .execute();
  }

  /** A pull device's commands wait for its poll: look again at `nextAt`, with `error` when it has gone silent. */
  async waiting(deviceId: string, error: string | null, nextAt: number, now: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('device_state')
      .set({ next_attempt_at: nextAt, claimed_until: null, last_error: error, updated_at: now })
      .where('device_id', '=', deviceId)
      .execute();
  }

  /** Pull-device state kept between polls (JSON), or null. */
  async pullCursor(deviceId: string, db: Db = this.db): Promise<string | null> {
    const row = await db.selectFrom('device_state').select('pull_cursor').where('device_id', '=', deviceId).executeTakeFirst();
    return row?.pull_cursor ?? null;
  }

  async setPullCursor(deviceId: string, cursor: string, db: Db = this.db): Promise<void> {
    await db.updateTable('device_state').set({ pull_cursor: cursor }).where('device_id', '=', deviceId).execute();
  }

  /** The device of a ZKTeco serial number, or undefined. */
  async deviceBySerial(serialNumber: string, db: Db = this.db): Promise<DeviceRow | undefined> {
    const rows = await this.devicesQuery(db).where('devices.transport_kind', '=', 'zkteco-push').execute();
    return rows.find((r) => (JSON.parse(r.transportJson ?? '{}') as { serialNumber?: string }).serialNumber === serialNumber);
  }

  /** The number a subject has on devices that key users by number (taken on first use; the same on every device). */
  async userNumber(subject: { kind: string; id: string }, db: Db = this.db): Promise<number> {
    const find = () =>
      db
        .selectFrom('device_user_numbers')
        .select('user_no')
        .where('subject_kind', '=', subject.kind)
        .where('subject_id', '=', subject.id)
        .executeTakeFirst();
    const known = await find();
    if (known) return Number(known.user_no);
    for (let attempt = 0; attempt < 5; attempt++) {
      const top = await db
        .selectFrom('device_user_numbers')
        .select((eb) => eb.fn.max('user_no').as('n'))
        .executeTakeFirst();
      const next = Number(top?.n ?? 0) + 1;
      await db
        .insertInto('device_user_numbers')
        .values({ subject_kind: subject.kind, subject_id: subject.id, user_no: next })
        .onConflict((oc) => oc.doNothing())
        .execute();
      const got = await find();
      if (got) return Number(got.user_no);
    }
    throw new Error('could not take a device user number');
  }

  /** The subject a device user number stands for, or undefined. */
  async subjectOfNumber(userNo: number, db: Db = this.db): Promise<{ kind: string; id: string } | undefined> {
    const row = await db
      .selectFrom('device_user_numbers')
      .select(['subject_kind', 'subject_id'])
      .where('user_no', '=', userNo)
      .executeTakeFirst();
    return row && { kind: row.subject_kind, id: row.subject_id };
  }

  /** What a sandbox device holds (what it acknowledged), with the seq that wrote each entry; null when it is switched offline. */
  async sandboxMemory(
    deviceId: string,
    db: Db = this.db,
  ): Promise<{ subject_kind: string; subject_id: string; state: SubjectState; seq: number }[] | null> {
    const state = await db.selectFrom('device_state').select('online').where('device_id', '=', deviceId).executeTakeFirst();
    if (state && Number(state.online) !== 1) return null;
    const rows = await db
      .selectFrom('device_enrollments')
      .select(['subject_kind', 'subject_id', 'state', 'seq'])
      .where('device_id', '=', deviceId)
      .orderBy('subject_kind')
      .orderBy('subject_id')
      .execute();
    return rows.map((r) => ({ ...subjectStateRecord(r), seq: Number(r.seq) }));
  }

  async projectIdsWithDevices(db: Db = this.db): Promise<string[]> {
    const rows = await db
      .selectFrom('devices')
      .innerJoin('access_groups', 'access_groups.id', 'devices.access_group_id')
      .select('access_groups.project_id as projectId')
      .distinct()
      .execute();
    return rows.map((r) => r.projectId);
  }

  // ----- the enrollment outbox -------------------------------------------------

  async insertAccessChange(
    row: {
      id: string;
      project_id: string;
      subject_kind: SubjectKind;
      user_id: string;
      reason: string;
      created_at: number;
      processed_at: number | null;
    },
    db: Db = this.db,
  ): Promise<void> {
    await db.insertInto('access_changes').values(row).execute();
  }

  // ----- targets (what the service decided each device must hold) ---------------

  /** The targets of these subjects of one kind, on every device (one statement per IN_CHUNK subjects). */
  async subjectsTargets(kind: SubjectKind, subjectIds: readonly string[], db: Db = this.db): Promise<SubjectStateRow[]> {
    const rows = await readInChunks(subjectIds, (ids) =>
      db
        .selectFrom('device_targets')
        .select(['device_id', 'subject_kind', 'subject_id', 'state'])
        .where('subject_kind', '=', kind)
        .where('subject_id', 'in', ids)
        .execute(),
    );
    return rows.map(subjectStateRecord);
  }

  async deviceTargets(deviceId: string, db: Db = this.db): Promise<SubjectStateRow[]> {
    const rows = await db
      .selectFrom('device_targets')
      .select(['device_id', 'subject_kind', 'subject_id', 'state'])
      .where('device_id', '=', deviceId)
      .execute();
    return rows.map(subjectStateRecord);
  }

  /** Subjects of a kind with a target on any of the devices. */
  async targetedSubjects(kind: SubjectKind, deviceIds: string[], db: Db = this.db): Promise<string[]> {
    if (!deviceIds.length) return [];
    const rows = await db
      .selectFrom('device_targets')
      .select('subject_id')
      .distinct()
      .where('subject_kind', '=', kind)
      .where('device_id', 'in', deviceIds)
      .execute();
    return rows.map((r) => r.subject_id);
  }

  /** Many targets at once (upserted; a null state deletes), in statements of at most IN_CHUNK rows. */
  async putTargets(
    rows: { device_id: string; subject_kind: string; subject_id: string; state: SubjectState | null }[],
    now: number,
    db: Db,
  ) {
    const puts = rows.filter((r) => r.state !== null).map((r) => ({ ...r, state: stateJson(r.state!), updated_at: now }));
    for (const part of chunked(puts, IN_CHUNK))
      await db
        .insertInto('device_targets')
        .values(part)
        .onConflict((oc) =>
          oc
            .columns(['device_id', 'subject_kind', 'subject_id'])
            .doUpdateSet((eb) => ({ state: eb.ref('excluded.state'), updated_at: now })),
        )
        .execute();
    for (const r of rows) if (r.state === null) await this.deleteTarget(r.device_id, r.subject_kind, r.subject_id, db);
  }

  async deleteTarget(deviceId: string, kind: string, subjectId: string, db: Db = this.db): Promise<void> {
    await db
      .deleteFrom('device_targets')
      .where('device_id', '=', deviceId)
      .where('subject_kind', '=', kind)
      .where('subject_id', '=', subjectId)
      .execute();
  }

  // ----- the per-device queue ----------------------------------------------------

  /** Creates the devices' sync rows when missing. */
  async ensureStates(deviceIds: string[], now: number, db: Db = this.db): Promise<void> {
    if (!deviceIds.length) return;
    await db
      .insertInto('device_state')
      .values(
        deviceIds.map((id) => ({
          device_id: id,
          online: 1,
          next_seq: 1,
          attempts: 0,
          next_attempt_at: 0,
          claimed_until: null,
          last_synced_at: null,
          last_error: null,
          updated_at: now,
        })),
      )
      .onConflict((oc) => oc.column('device_id').doNothing())
      .execute();
  }

  /**
   * Serializes planners of these devices until the transaction ends: PostgreSQL
   * locks their sync rows (in id order, so planners never deadlock); on SQLite the
   * write transaction already holds the database. Call it before reading what a
   * subject must hold, so no planner queues a state read before another's commit.
   */
  async lockDevices(deviceIds: string[], db: Db): Promise<void> {
    if (this.engine !== 'postgres' || !deviceIds.length) return;
    await db.selectFrom('device_state').select('device_id').where('device_id', 'in', deviceIds).orderBy('device_id').forUpdate().execute();
  }

  async state(deviceId: string, db: Db = this.db): Promise<DeviceStateRow | undefined> {
    const row = await db.selectFrom('device_state').selectAll().where('device_id', '=', deviceId).executeTakeFirst();
    return row && stateRecord(row);
  }

  async insertCommands(rows: NewCommand[], db: Db): Promise<void> {
    const values = rows.map((row) => ({
      ...row,
      state: row.state === null ? null : stateJson(row.state),
      status: 'pending',
      attempts: 0,
      last_error: null,
      done_at: null,
    }));
    for (const part of chunked(values, IN_CHUNK)) await db.insertInto('device_commands').values(part).execute();
  }

  /**
   * Drops the unsent commands of these (device, subject) pairs (a newer command carries the whole state):
   * one statement per subject over its devices, or per device over its subjects, whichever makes fewer.
   */
  async supersedeMany(pairs: { deviceId: string; kind: string; subjectId: string }[], db: Db): Promise<void> {
    const bySubject = groupBy(pairs, (p) => `${p.kind}\0${p.subjectId}`);
    const byDevice = groupBy(pairs, (p) => `${p.kind}\0${p.deviceId}`);
    const perSubject = bySubject.size <= byDevice.size;
    for (const group of (perSubject ? bySubject : byDevice).values()) {
      const { kind, deviceId, subjectId } = group[0]!;
      const others = group.map((p) => (perSubject ? p.deviceId : p.subjectId));
      for (const part of chunked(others, IN_CHUNK))
        await db
          .deleteFrom('device_commands')
          .where('subject_kind', '=', kind)
          .where('status', '=', 'pending')
          .where(perSubject ? 'subject_id' : 'device_id', '=', perSubject ? subjectId : deviceId)
          .where(perSubject ? 'device_id' : 'subject_id', 'in', part)
          .execute();
    }
  }

  /**
   * Takes `n` sequence numbers on each device (on PostgreSQL this locks the devices' rows until commit, so commits come
   * in sequence order; lock them in id order first). Returns each device's first number.
   */
  async takeSeqs(counts: Map<string, number>, db: Db): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const byCount = groupBy([...counts], ([, n]) => String(n));
    for (const [n, group] of byCount)
      for (const part of chunked(
        group.map(([id]) => id),
        IN_CHUNK,
      )) {
        const rows = await db
          .updateTable('device_state')
          .set({ next_seq: sql<number>`next_seq + ${Number(n)}` })
          .where('device_id', 'in', part)
          .returning(['device_id', 'next_seq'])
          .execute();
        for (const r of rows) out.set(r.device_id, Number(r.next_seq) - Number(n));
      }
    return out;
  }

  /** Devices with pending commands due by `now` and not leased by another worker. */
  async dueDevices(now: number, realNow: number, limit: number, skip: readonly string[], db: Db = this.db): Promise<DeviceStateRow[]> {
    let q = db
      .selectFrom('device_state')
      .selectAll()
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', realNow)]))
      .where(hasPendingCommand);
    if (skip.length) q = q.where('device_id', 'not in', [...skip]);
    return (await q.orderBy('next_attempt_at').orderBy('device_id').limit(limit).execute()).map(stateRecord);
  }

  /** Devices with pending commands due by `now` (leased ones too: not done yet): how many, and the earliest (metrics). */
  async dueBacklog(now: number, db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('device_state')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('next_attempt_at').as('oldest')])
      .where('next_attempt_at', '<=', now)
      .where(hasPendingCommand)
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }

  /** Commands not yet applied on any device, and devices marked offline (metrics; the whole database). */
  async queueStats(db: Db = this.db): Promise<{ pendingCommands: number; offlineDevices: number }> {
    const commands = await db
      .selectFrom('device_commands')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', PENDING)
      .executeTakeFirstOrThrow();
    const offline = await db
      .selectFrom('device_state')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('online', '=', 0)
      .executeTakeFirstOrThrow();
    return { pendingCommands: Number(commands.n), offlineDevices: Number(offline.n) };
  }

  async lease(deviceId: string, realNow: number, leaseMs: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('device_state')
      .set({ claimed_until: realNow + leaseMs })
      .where('device_id', '=', deviceId)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', realNow)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async pendingCommands(deviceId: string, limit: number, db: Db = this.db): Promise<CommandRow[]> {
    const rows = await db
      .selectFrom('device_commands')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('status', '=', 'pending')
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map(commandRecord);
  }

  async pendingCount(deviceId: string, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('device_commands')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('device_id', '=', deviceId)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Subjects with an unsent command on the device. */
  async pendingSubjects(deviceId: string, db: Db = this.db): Promise<Set<string>> {
    const rows = await db
      .selectFrom('device_commands')
      .select(['subject_kind', 'subject_id'])
      .distinct()
      .where('device_id', '=', deviceId)
      .where('status', '=', 'pending')
      .execute();
    return new Set(rows.map((r) => `${r.subject_kind}:${r.subject_id}`));
  }

  /** The newest command per subject on the device that the device refused (bad input). */
  async refusedStates(deviceId: string, db: Db = this.db): Promise<Map<string, SubjectState | null>> {
    const rows = await db
      .selectFrom('device_commands')
      .select(['subject_kind', 'subject_id', 'state', 'seq', 'status'])
      .where('device_id', '=', deviceId)
      .where('status', '!=', 'pending')
      .orderBy('seq')
      .execute();
    const latest = new Map<string, { status: string; state: string | null }>();
    for (const r of rows) latest.set(`${r.subject_kind}:${r.subject_id}`, { status: r.status, state: r.state });
    const out = new Map<string, SubjectState | null>();
    for (const [k, v] of latest) if (v.status === 'failed') out.set(k, v.state === null ? null : parseState(v.state));
    return out;
  }

  async problems(deviceId: string, limit: number, db: Db = this.db): Promise<CommandRow[]> {
    const rows = await db
      .selectFrom('device_commands')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('status', '=', 'failed')
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.map(commandRecord);
  }

  /**
   * Commands the device applied (one device's answers): done, and what it now holds for each subject (the
   * newest applied command per subject). Commands superseded meanwhile change nothing: a newer command follows.
   */
  async appliedMany(cmds: CommandRow[], now: number, db: Db): Promise<void> {
    const done = new Set<string>();
    for (const part of chunked(cmds, IN_CHUNK)) {
      const rows = await db
        .updateTable('device_commands')
        .set((eb) => ({ status: 'done', done_at: now, attempts: eb('attempts', '+', 1) }))
        .where(
          'id',
          'in',
          part.map((c) => c.id),
        )
        .where('status', '=', 'pending')
        .returning('id')
        .execute();
      for (const r of rows) done.add(r.id);
    }
    const last = new Map<string, CommandRow>();
    for (const c of [...cmds].sort((a, b) => Number(a.seq) - Number(b.seq)))
      if (done.has(c.id)) last.set(`${c.device_id}\0${c.subject_kind}\0${c.subject_id}`, c);
    const upserts = [...last.values()]
      .filter((c) => c.op !== 'remove')
      .map((c) => ({
        device_id: c.device_id,
        subject_kind: c.subject_kind,
        subject_id: c.subject_id,
        state: stateJson(c.state!),
        seq: c.seq,
        updated_at: now,
      }));
    for (const part of chunked(upserts, IN_CHUNK))
      await db
        .insertInto('device_enrollments')
        .values(part)
        .onConflict((oc) =>
          oc
            .columns(['device_id', 'subject_kind', 'subject_id'])
            .doUpdateSet((eb) => ({ state: eb.ref('excluded.state'), seq: eb.ref('excluded.seq'), updated_at: now })),
        )
        .execute();
    for (const c of last.values()) if (c.op === 'remove') await this.deleteEnrollment(c.device_id, c.subject_kind, c.subject_id, db);
  }

  async refused(cmd: CommandRow, message: string, now: number, db: Db): Promise<void> {
    await db
      .updateTable('device_commands')
      .set({ status: 'failed', done_at: now, attempts: cmd.attempts + 1, last_error: message })
      .where('id', '=', cmd.id)
      .where('status', '=', 'pending')
      .execute();
  }

  /** The device answered: it is reachable and in sync up to what it acknowledged; the lease ends. */
  async synced(deviceId: string, answered: boolean, now: number, db: Db): Promise<void> {
    await db
      .updateTable('device_state')
      .set({
        attempts: 0,
        next_attempt_at: now,
        claimed_until: null,
        last_error: null,
        updated_at: now,
        ...(answered ? { last_synced_at: now } : {}),
      })
      .where('device_id', '=', deviceId)
      .execute();
  }

  /** Delivery stopped (offline, no answer): try again at `retryAt`; the lease ends. */
  async stopped(deviceId: string, message: string, retryAt: number, now: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('device_state')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        next_attempt_at: retryAt,
        claimed_until: null,
        last_error: message,
        updated_at: now,
      }))
      .where('device_id', '=', deviceId)
      .execute();
  }

  async setOnline(deviceId: string, online: boolean, now: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('device_state')
      .set(online ? { online: 1, attempts: 0, next_attempt_at: now, updated_at: now } : { online: 0, updated_at: now })
      .where('device_id', '=', deviceId)
      .execute();
  }

  // ----- what devices hold ----------------------------------------------------------

  async enrollments(deviceId: string, db: Db = this.db): Promise<SubjectStateRow[]> {
    const rows = await db
      .selectFrom('device_enrollments')
      .select(['device_id', 'subject_kind', 'subject_id', 'state'])
      .where('device_id', '=', deviceId)
      .orderBy('subject_kind')
      .orderBy('subject_id')
      .execute();
    return rows.map(subjectStateRecord);
  }

  async deleteEnrollment(deviceId: string, kind: string, subjectId: string, db: Db = this.db): Promise<void> {
    await db
      .deleteFrom('device_enrollments')
      .where('device_id', '=', deviceId)
      .where('subject_kind', '=', kind)
      .where('subject_id', '=', subjectId)
      .execute();
  }
}

type NewCommand = Omit<CommandRow, 'done_at' | 'last_error' | 'attempts' | 'status'>;

/** A device_state row's device has a pending command. */
function hasPendingCommand(eb: ExpressionBuilder<Database, 'device_state'>) {
  return eb.exists(
    eb
      .selectFrom('device_commands')
      .select('device_commands.id')
      .whereRef('device_commands.device_id', '=', 'device_state.device_id')
      .where('device_commands.status', '=', 'pending'),
  );
}
