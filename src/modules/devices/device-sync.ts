/**
 * Device sync: from "a subject's access changed" to "every device holds what it
 * must", durably and in order.
 *
 * 1. **Plan** (in the caller's transaction, with the change that caused it): the
 *    subject's source says what each of the project's devices must hold; where that
 *    differs from the device's target, the target is updated and a command is
 *    queued with the device's next sequence number. An unsent older command for the
 *    same subject on that device is dropped: the new one carries the whole state.
 * 2. **Deliver** (the `device-sync` job, one device at a time per device): the
 *    device's pending commands go to the transport in sequence order; what the
 *    device acknowledged becomes what it holds; a refusal for bad input is recorded
 *    and not retried; an unreachable device is tried again with backoff.
 * 3. **Repair** (the `device-reconcile` job and gateway inventories): targets are
 *    planned again from the sources, and every device is asked what it holds (its
 *    inventory: the sandbox answers at once, a gateway when it can). What a device
 *    reports replaces what the service recorded for it, and the difference from its
 *    targets, for subjects with nothing pending, is queued. A gateway coming online
 *    or restarting (maybe without its memory) is asked the same.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Backlog } from '../../platform/jobs/handler.js';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Db } from '../../platform/db/db.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import { writeTransaction } from '../../platform/db/transactions.js';
import { groupBy } from '../../platform/group-by.js';
import { newId } from '../../platform/ids.js';
import { encodeCard, fitsFormat, isCardCodeFormat, DEFAULT_CARD_CODE_FORMAT } from '../members/rules/card-codec.js';
import type { AccessSource, DeviceInfo, SubjectSecrets } from './access-source.js';
import type { CommandRow, DeviceRepository, DeviceRow, DeviceStateRow } from './device-repository.js';
import { retryDelayMs } from './rules/device-kinds.js';
import { stateHash } from './state-hash.js';
import { sameState, subjectKey, type SubjectKind, type SubjectRef, type SubjectState } from './rules/subject-state.js';
import { observedMatches } from './rules/observed-state.js';
import type { RoutingTransport } from './routing-transport.js';
import type {
  DeliveryReport,
  DeviceConnection,
  DeviceTarget,
  DoorEvent,
  InventoryReport,
  TransportEvents,
  WireCommand,
} from './transport.js';

/** Commands per delivery round. */
export const DELIVERY_BATCH = 200;
/** What a command for a subject with no secrets carries. */
const NO_SECRETS: SubjectSecrets = { face: null, qrCode: null };
/** Subjects planned per transaction by a repair pass. */
const RECONCILE_CHUNK = 25;

export interface DeviceSyncDeps {
  db: Kysely<Database>;
  engine: Engine;
  repo: DeviceRepository;
  transport: RoutingTransport;
  sources: AccessSource[];
  /** Opens a sealed transport secret (the ISAPI password, the ZKTeco commKey). */
  openSecret: (sealed: string) => string;
  /** Where door events go (the entry log). */
  onAccess?: (event: DoorEvent) => Promise<void>;
  /** A pull device that has not polled for this long (real ms) counts as offline. */
  pullStaleMs?: number;
  /** Service time. */
  clock: Clock;
  /** Real time (a pull device's last poll). */
  realNow: () => number;
  /** Called after a commit that queued commands (wakes the delivery job). */
  onQueued?: () => void;
  onError?: (err: unknown, context: { job: string }) => void;
}

export function deviceInfo(d: DeviceRow): DeviceInfo {
  return { id: d.id, projectId: d.projectId, accessGroupId: d.accessGroupId, kind: d.kind };
}

/** How a device is reached: its own transport from the site entry (secret opened), or null for the default. */
export function connectionOf(d: DeviceRow, open: (sealed: string) => string): DeviceConnection | null {
  if (!d.transportKind || !d.transportJson) return null;
  const settings = JSON.parse(d.transportJson) as Record<string, string>;
  const secret = d.transportSecretEnc ? open(d.transportSecretEnc) : null;
  if (d.transportKind === 'isapi')
    return { kind: 'isapi', baseUrl: settings.baseUrl ?? '', username: settings.username ?? '', password: secret ?? '' };
  if (d.transportKind === 'zkteco-push') return { kind: 'zkteco-push', serialNumber: settings.serialNumber ?? '', commKey: secret };
  return null;
}

export function cardFormatOf(d: Pick<DeviceRow, 'cardFormat'>): string {
  return d.cardFormat && isCardCodeFormat(d.cardFormat) ? d.cardFormat : DEFAULT_CARD_CODE_FORMAT;
}

export class DeviceSync implements TransportEvents {
  private readonly sources = new Map<SubjectKind, AccessSource>();

  constructor(private readonly deps: DeviceSyncDeps) {
    for (const s of deps.sources) this.sources.set(s.kind, s);
  }

  addSource(source: AccessSource): void {
    this.sources.set(source.kind, source);
  }

  private source(kind: SubjectKind): AccessSource {
    const s = this.sources.get(kind);
    if (!s) throw new Error(`no access source for ${kind}`);
    return s;
  }

  // ----- 1. plan ---------------------------------------------------------------

  /**
   * Plans one subject on every device of its project, in `trx`. Returns how many
   * commands were queued.
   */
  plan(trx: Db, projectId: string, subject: SubjectRef, now: number, devices?: DeviceRow[]): Promise<number> {
    return this.planMany(trx, projectId, [subject], now, devices);
  }

  /**
   * Plans several subjects of a project at once, in `trx`: the devices are locked once, the subjects' targets read
   * together, and their targets and commands written in a few multi-row statements (what each subject must hold is
   * still asked of its source one subject at a time). Returns how many commands were queued.
   */
  async planMany(trx: Db, projectId: string, subjects: readonly SubjectRef[], now: number, devices?: DeviceRow[]): Promise<number> {
    const { repo } = this.deps;
    const all = devices ?? (await repo.projectDevices(projectId, trx));
    const ids = all.map((d) => d.id).sort();
    const inProject = new Set(ids);
    await repo.ensureStates(ids, now, trx);
    await repo.lockDevices(ids, trx);
    const infos = all.map(deviceInfo);
    const targets = new Map<string, Map<string, SubjectState>>(); // by subject key, then device
    for (const [kind, ofKind] of groupBy(subjects, (s) => s.kind)) {
      for (const t of await repo.subjectsTargets(
        kind as SubjectKind,
        ofKind.map((s) => s.id),
        trx,
      )) {
        const key = subjectKey({ kind: kind as SubjectKind, id: t.subject_id });
        let held = targets.get(key);
        if (!held) targets.set(key, (held = new Map<string, SubjectState>()));
        held.set(t.device_id, t.state);
      }
    }
    const work: { deviceId: string; subject: SubjectRef; state: SubjectState | null }[] = [];
    for (const subject of subjects) {
      const desired = await this.source(subject.kind).desired(projectId, subject.id, infos, trx);
      const held = targets.get(subjectKey(subject)) ?? new Map<string, SubjectState>();
      for (const d of all) {
        const want = desired.get(d.id) ?? null;
        const have = held.get(d.id) ?? null;
        if (want ? !sameState(want, have) : have !== null) work.push({ deviceId: d.id, subject, state: want });
      }
      // Targets on devices no longer in the project (a device moved): withdraw there too.
      for (const [deviceId] of held) if (!inProject.has(deviceId)) work.push({ deviceId, subject, state: null });
    }
    if (!work.length) return 0;
    work.sort((a, b) => (a.deviceId < b.deviceId ? -1 : a.deviceId > b.deviceId ? 1 : 0));
    const moved = [...new Set(work.filter((w) => !inProject.has(w.deviceId)).map((w) => w.deviceId))];
    if (moved.length) {
      await repo.ensureStates(moved, now, trx); // a device that left the project
      await repo.lockDevices(moved, trx);
    }
    await repo.putTargets(
      work.map((w) => ({ device_id: w.deviceId, subject_kind: w.subject.kind, subject_id: w.subject.id, state: w.state })),
      now,
      trx,
    );
    await this.enqueue(trx, work, now);
    return work.length;
  }

  /**
   * Queues commands (at most one per device and subject), each with its device's next sequence number, dropping
   * the unsent older commands of the same subjects: the new ones carry the whole state. A few statements in all.
   */
  private async enqueue(trx: Db, items: { deviceId: string; subject: SubjectRef; state: SubjectState | null }[], now: number) {
    const { repo } = this.deps;
    await repo.supersedeMany(
      items.map((w) => ({ deviceId: w.deviceId, kind: w.subject.kind, subjectId: w.subject.id })),
      trx,
    );
    const counts = new Map<string, number>();
    for (const w of items) counts.set(w.deviceId, (counts.get(w.deviceId) ?? 0) + 1);
    const next = await repo.takeSeqs(counts, trx);
    const commands = items.map((w) => {
      const seq = next.get(w.deviceId)!;
      next.set(w.deviceId, seq + 1);
      const op = w.state ? ('upsert' as const) : ('remove' as const);
      return {
        id: newId(now),
        device_id: w.deviceId,
        seq,
        subject_kind: w.subject.kind,
        subject_id: w.subject.id,
        op,
        state: w.state,
        created_at: now,
      };
    });
    await repo.insertCommands(commands, trx);
  }

  // ----- 2. deliver --------------------------------------------------------------

  async dueDevices(now: number, realNow: number, limit: number, skip: readonly string[]): Promise<DeviceStateRow[]> {
    return this.deps.repo.dueDevices(now, realNow, limit, skip);
  }

  /** What the sync job has due by `now` (metrics). */
  dueBacklog(now: number): Promise<Backlog> {
    return this.deps.repo.dueBacklog(now);
  }

  async lease(deviceId: string, realNow: number, leaseMs: number): Promise<boolean> {
    return this.deps.repo.lease(deviceId, realNow, leaseMs);
  }

  /** The device as a transport sees it. */
  target(device: DeviceRow, online: boolean): DeviceTarget {
    return { id: device.id, kind: device.kind, online, timeZone: device.timeZone, connection: connectionOf(device, this.deps.openSecret) };
  }

  /** One delivery round for a leased device. */
  async deliver(deviceId: string): Promise<void> {
    const { repo, transport, clock } = this.deps;
    const device = await repo.device(deviceId);
    const state = await repo.state(deviceId);
    if (!device || !state) {
      // The device left the site: its queue has nowhere to go.
      await writeTransaction(this.deps.db, this.deps.engine, (trx) => repo.synced(deviceId, false, clock.now(), trx));
      return;
    }
    const target = this.target(device, state.online);
    if (transport.of(target).pull) return this.watchPullDevice(deviceId, state.online);
    const commands = await repo.pendingCommands(deviceId, DELIVERY_BATCH);
    if (!commands.length) return;
    const wires = await this.wires(device, commands);
    const report = await transport.deliver(target, wires);
    await this.record(deviceId, commands, report, state, transport.of(target).name !== 'sandbox');
  }

  /**
   * A pull device fetches its commands itself (`pendingWires`, answered with `acknowledge`): the job only
   * looks again later, and marks the device offline once it has stopped polling.
   */
  private async watchPullDevice(deviceId: string, online: boolean): Promise<void> {
    const { repo, clock } = this.deps;
    const staleMs = this.deps.pullStaleMs ?? 60_000;
    const seenAt = await repo.lastSeen(deviceId);
    const now = clock.now();
    const silent = seenAt === null || this.deps.realNow() - seenAt > staleMs;
    await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      if (silent && online) await repo.setOnline(deviceId, false, now, trx);
      const message = silent ? 'offline: the device has not polled the service' : 'waiting for the device to poll';
      await repo.waiting(deviceId, silent ? message : null, now + staleMs, now, trx);
    });
  }

  /** A pull device's next commands, as it will receive them (sequence order). */
  async pendingWires(deviceId: string, limit = DELIVERY_BATCH): Promise<WireCommand[]> {
    const device = await this.deps.repo.device(deviceId);
    if (!device) return [];
    const commands = await this.deps.repo.pendingCommands(deviceId, limit);
    return this.wires(device, commands);
  }

  /** A pull device polled: it is reachable, and what it lacks goes out with its next poll. */
  async pulled(deviceId: string): Promise<void> {
    const { repo, clock } = this.deps;
    const now = clock.now();
    await repo.ensureStates([deviceId], now);
    await repo.seen(deviceId, this.deps.realNow(), now);
  }

  /** A pull device's answers to commands it fetched. */
  async acknowledge(deviceId: string, answered: DeliveryReport['answered']): Promise<void> {
    const { repo } = this.deps;
    const state = await repo.state(deviceId);
    if (!state) return;
    const seqs = new Set(answered.map((a) => a.seq));
    const commands = (await repo.pendingCommands(deviceId, DELIVERY_BATCH * 5)).filter((c) => seqs.has(Number(c.seq)));
    await this.record(deviceId, commands, { answered }, state, true);
  }

  /** What a delivery's answers did: applied, refused, or the device unreachable (retried with backoff). */
  private async record(
    deviceId: string,
    commands: CommandRow[],
    report: DeliveryReport,
    state: DeviceStateRow,
    reportsReachability: boolean,
  ): Promise<void> {
    const { repo, clock } = this.deps;
    const now = clock.now();
    const bySeq = new Map(commands.map((c) => [Number(c.seq), c]));
    await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      // The device's row first, as planners take it: a planner and this write never wait on each other crosswise.
      await repo.lockDevices([deviceId], trx);
      const applied: CommandRow[] = [];
      for (const a of report.answered) {
        const cmd = bySeq.get(a.seq);
        if (!cmd) continue;
        if (a.ok) applied.push(cmd);
        else await repo.refused(cmd, a.message ?? 'refused by the device', now, trx);
      }
      await repo.appliedMany(applied, now, trx);
      if (report.stopped) {
        const attempts = state.attempts + 1;
        await repo.stopped(deviceId, `${report.stopped.kind}: ${report.stopped.message}`, now + retryDelayMs(attempts), now, trx);
        if (report.stopped.kind === 'offline' && state.online && reportsReachability) await repo.setOnline(deviceId, false, now, trx);
      } else {
        await repo.synced(deviceId, report.answered.length > 0, now, trx);
        // A device that answered is reachable again (an ISAPI terminal is otherwise marked online only by an inventory).
        if (report.answered.length > 0 && !state.online && reportsReachability) await repo.setOnline(deviceId, true, now, trx);
      }
    });
  }

  /**
   * The commands as the device receives them (see `wire`), the secrets of all of them read together: one read
   * per kind of subject for a whole delivery round, not one per command.
   */
  private async wires(device: DeviceRow, commands: readonly CommandRow[]): Promise<WireCommand[]> {
    const carrying = commands.filter((c) => c.op !== 'remove' && c.state && (c.state.face !== null || c.state.qr !== null));
    const secrets = new Map<string, SubjectSecrets>();
    for (const [name, ofKind] of groupBy(carrying, (c) => c.subject_kind)) {
      const kind = name as SubjectKind;
      const ids = ofKind.map((c) => c.subject_id);
      for (const [id, s] of await this.source(kind).secrets(device.projectId, ids, deviceInfo(device)))
        secrets.set(subjectKey({ kind, id }), s);
    }
    return commands.map((c) => this.wire(device, c, secrets));
  }

  /** The command as the device receives it: cards in its format, the face bytes and QR code resolved now (in `secrets`). */
  private wire(device: DeviceRow, c: CommandRow, secretsBySubject: ReadonlyMap<string, SubjectSecrets>): WireCommand {
    const subject = { kind: c.subject_kind as SubjectKind, id: c.subject_id };
    if (c.op === 'remove' || !c.state) {
      return { v: 1, deviceId: device.id, seq: Number(c.seq), op: 'remove', subject, stateHash: '' };
    }
    const state = c.state;
    const format = cardFormatOf(device);
    const secrets = secretsBySubject.get(subjectKey(subject)) ?? NO_SECRETS;
    return {
      v: 1,
      deviceId: device.id,
      seq: Number(c.seq),
      op: 'upsert',
      subject,
      stateHash: stateHash(state),
      cards: state.cards.map((uid) => ({
        uid,
        format,
        cardNo: fitsFormat(uid, format as never) ? encodeCard(uid, format as never) : '',
      })),
      face:
        state.face && secrets.face
          ? { mime: secrets.face.mime, sha256: secrets.face.sha256, data: secrets.face.bytes.toString('base64') }
          : null,
      qrCode: state.qr ? secrets.qrCode : null,
      plates: state.plates,
      validFrom: state.validFrom === null ? null : new Date(state.validFrom).toISOString(),
      validUntil: state.validUntil === null ? null : new Date(state.validUntil).toISOString(),
    };
  }

  // ----- 3. repair -----------------------------------------------------------------

  /**
   * Plans every subject of every project again, then asks every device what it holds;
   * each answer queues what that device lacks. Returns the commands queued by the
   * planning and by the answers that came before it returns (the sandbox's; a
   * gateway's answers are applied when they arrive).
   */
  async reconcileAll(): Promise<number> {
    let queued = 0;
    for (const projectId of await this.deps.repo.projectIdsWithDevices()) queued += await this.reconcileProject(projectId);
    queued += await this.requestInventories();
    if (queued) this.deps.onQueued?.();
    return queued;
  }

  /** Asks every device for its inventory (a reconcile, a gateway that came online). */
  async requestInventories(): Promise<number> {
    const { repo } = this.deps;
    const devices = await repo.allDevices();
    const states = new Map((await repo.states(devices.map((d) => d.id))).map((s) => [s.device_id, s.online]));
    return this.deps.transport.requestInventory(devices.map((d) => this.target(d, states.get(d.id) ?? true)));
  }

  async reconcileProject(projectId: string): Promise<number> {
    const { repo, clock } = this.deps;
    const devices = await repo.projectDevices(projectId);
    let queued = 0;
    for (const source of this.sources.values()) await source.prepare?.(projectId);
    for (const source of this.sources.values()) {
      const ids = new Set([
        ...(await source.subjects(projectId)),
        ...(await repo.targetedSubjects(
          source.kind,
          devices.map((d) => d.id),
        )),
      ]);
      const all = [...ids];
      for (let i = 0; i < all.length; i += RECONCILE_CHUNK) {
        const chunk = all.slice(i, i + RECONCILE_CHUNK);
        const subjects = chunk.map((id) => ({ kind: source.kind, id }));
        const n = await writeTransaction(this.deps.db, this.deps.engine, (trx) =>
          this.planMany(trx, projectId, subjects, clock.now(), devices),
        );
        if (n) this.deps.onQueued?.(); // deliveries start while the pass goes on
        queued += n;
        await nextTurn(); // requests run meanwhile: SQLite statements complete at once and do not yield
      }
    }
    // What devices lack is queued from what they report (requestInventories), never from what was sent to them.
    if (queued) this.deps.onQueued?.();
    return queued;
  }

  /** Queues, for each subject with nothing pending, the difference between the device's target and what it acknowledged. */
  async repairDevice(deviceId: string, unknownHeld: SubjectRef[] = []): Promise<number> {
    const { repo, clock } = this.deps;
    return writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      const now = clock.now();
      await repo.ensureStates([deviceId], now, trx);
      await repo.lockDevices([deviceId], trx);
      const [targets, held, pending, refused] = await Promise.all([
        repo.deviceTargets(deviceId, trx),
        repo.enrollments(deviceId, trx),
        repo.pendingSubjects(deviceId, trx),
        repo.refusedStates(deviceId, trx),
      ]);
      const heldBy = new Map(held.map((h) => [`${h.subject_kind}:${h.subject_id}`, h.state]));
      const targetBy = new Map(targets.map((t) => [`${t.subject_kind}:${t.subject_id}`, t.state]));
      const work: { subject: SubjectRef; state: SubjectState | null }[] = [];
      for (const t of targets) {
        const key = `${t.subject_kind}:${t.subject_id}`;
        if (pending.has(key) || sameState(heldBy.get(key), t.state)) continue;
        if (refused.has(key) && sameState(refused.get(key), t.state)) continue; // refused as bad input: sending it again cannot help
        work.push({ subject: { kind: t.subject_kind as SubjectKind, id: t.subject_id }, state: t.state });
      }
      for (const h of held) {
        const key = `${h.subject_kind}:${h.subject_id}`;
        if (!targetBy.has(key) && !pending.has(key))
          work.push({ subject: { kind: h.subject_kind as SubjectKind, id: h.subject_id }, state: null });
      }
      for (const s of unknownHeld) {
        const key = subjectKey(s);
        if (!targetBy.has(key) && !heldBy.has(key) && !pending.has(key)) work.push({ subject: s, state: null });
      }
      if (!work.length) return 0;
      await this.enqueue(
        trx,
        work.map((w) => ({ deviceId, ...w })),
        now,
      );
      return work.length;
    });
  }

  // ----- what the transport reports -------------------------------------------------

  reachability(deviceId: string, online: boolean): void {
    void this.setOnline(deviceId, online).catch((err) => this.deps.onError?.(err, { job: 'device-reachability' }));
  }

  async setOnline(deviceId: string, online: boolean): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.repo.ensureStates([deviceId], now);
    await this.deps.repo.setOnline(deviceId, online, now);
    if (online) this.deps.onQueued?.();
  }

  /** A door event from any transport: into the entry log. */
  access(event: DoorEvent): Promise<void> {
    return this.deps.onAccess ? this.deps.onAccess(event) : Promise.resolve();
  }

  /** The gateway came online or restarted: ask what its devices hold. */
  gatewayOnline(): void {
    void this.requestInventories().catch((err) => this.deps.onError?.(err, { job: 'device-inventory-request' }));
  }

  /** A device's full memory (asked for, or after a gateway reconnects): what it holds replaces what we recorded; the difference is queued. */
  inventory(deviceId: string, report: InventoryReport): Promise<number> {
    return this.applyInventory(deviceId, report).catch((err) => {
      this.deps.onError?.(err, { job: 'device-inventory' });
      return 0;
    });
  }

  async applyInventory(deviceId: string, report: InventoryReport): Promise<number> {
    const { repo } = this.deps;
    if (!(await repo.device(deviceId))) return 0;
    // A device that reports its memory is reachable: what it lacks goes out now, not after a backoff.
    // (Written only when it changes: every reconcile pass asks every device.)
    const known = await repo.state(deviceId);
    if (!known || !known.online) await this.setOnline(deviceId, true);
    const reported = new Map(report.holds.map((h) => [subjectKey(h.subject), h]));
    const unknown: SubjectRef[] = [];
    const device = await repo.device(deviceId);
    const format = device ? cardFormatOf(device) : DEFAULT_CARD_CODE_FORMAT;
    await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      for (const e of await repo.enrollments(deviceId, trx)) {
        const key = `${e.subject_kind}:${e.subject_id}`;
        const h = reported.get(key);
        const same = h && (h.observed ? observedMatches(e.state, h.observed, format) : h.stateHash === stateHash(e.state));
        if (same) reported.delete(key);
        else await repo.deleteEnrollment(deviceId, e.subject_kind, e.subject_id, trx);
      }
    });
    for (const key of reported.keys()) {
      const [kind, ...rest] = key.split(':');
      unknown.push({ kind: kind as SubjectKind, id: rest.join(':') });
    }
    const queued = await this.repairDevice(deviceId, unknown);
    if (queued) this.deps.onQueued?.();
    return queued;
  }
}
