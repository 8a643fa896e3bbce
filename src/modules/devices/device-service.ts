/**
 * The devices module's face to the rest of the service:
 * - the `AccessChangeLog` the members and visitors modules write to, in their own
 *   transaction (it records the change and plans the device commands it causes);
 * - device lookups (the visitors module's scans);
 * - the ops device view and the sandbox reachability switch.
 */
import type { ConsoleDevice } from '../../contract/ops-console.js';
import type { Clock } from '../../platform/clock/clock.js';
import type { Db } from '../../platform/db/db.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { DeviceView } from '../../contract/devices.js';
import { cardNoOf } from '../members/rules/card-codec.js';
import type { AccessChangeLog } from './access-source.js';
import type { DeviceRepository, DeviceRow } from './device-repository.js';
import { cardFormatOf, type DeviceSync } from './device-sync.js';
import type { SubjectKind } from './rules/subject-state.js';

export interface DeviceServiceDeps {
  repo: DeviceRepository;
  sync: DeviceSync;
  clock: Clock;
  transport: 'sandbox' | 'mqtt';
  /** Whether the sandbox switches are available (development and uat). */
  sandbox: boolean;
  /** Wakes the delivery job (after a commit that queued commands). */
  poke: () => void;
}

/** A device as other modules see it. */
export interface DeviceRecord {
  id: string;
  projectId: string;
  accessGroupId: string;
  name: string;
  kind: string;
  location: { en: string; th: string } | null;
}

const PROBLEMS_SHOWN = 20;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function locationOf(d: DeviceRow): { en: string; th: string } | null {
  if (!d.locationEn && !d.locationTh) return null;
  return { en: d.locationEn ?? d.locationTh!, th: d.locationTh ?? d.locationEn! };
}

export class DeviceService implements AccessChangeLog {
  constructor(private readonly deps: DeviceServiceDeps) {}

  /** Records a subject's access change and queues the device commands it causes, in the caller's transaction. */
  async record(
    trx: Db,
    change: { projectId: string; subject: { kind: SubjectKind; id: string }; reason: string; at: number },
  ): Promise<void> {
    const { projectId, subject, reason, at } = change;
    await this.deps.repo.insertAccessChange(
      {
        id: newId(at),
        project_id: projectId,
        subject_kind: subject.kind,
        user_id: subject.id,
        reason,
        created_at: at,
        processed_at: at,
      },
      trx,
    );
    await this.deps.sync.plan(trx, projectId, subject, at);
  }

  /** Call after the transaction that recorded changes commits: deliveries start at once. */
  poke(): void {
    this.deps.poke();
  }

  async device(id: string): Promise<DeviceRecord | undefined> {
    const d = await this.deps.repo.device(id);
    return d && { id: d.id, projectId: d.projectId, accessGroupId: d.accessGroupId, name: d.name, kind: d.kind, location: locationOf(d) };
  }

  /** Every device's sync state and pending changes (the console's list). */
  async list(): Promise<ConsoleDevice[]> {
    return (await this.deps.repo.overview()).map((d) => ({
      _id: d.id,
      name: d.name,
      kind: d.kind,
      online: d.online ?? true,
      pendingChanges: d.pending,
      lastSyncedAt: iso(d.lastSyncedAt),
    }));
  }

  async view(id: string): Promise<DeviceView> {
    const { repo } = this.deps;
    const d = await repo.device(id);
    if (!d) throw errors.notFound('Device not found');
    // Read in this order, one after another: a view that counts no pending change then sees every
    // acknowledgement that emptied the queue (on PostgreSQL the reads may use different connections).
    const pending = await repo.pendingCount(id);
    const state = await repo.state(id);
    const held = await repo.enrollments(id);
    const problems = await repo.problems(id, PROBLEMS_SHOWN);
    const enrollments: DeviceView['enrollments'] = [];
    const visitorPasses: DeviceView['visitorPasses'] = [];
    for (const h of held) {
      const s = h.state;
      if (h.subject_kind === 'member')
        enrollments.push({
          memberId: h.subject_id,
          cardNos: s.cards.map(cardNoOf),
          face: s.face !== null,
          faceRefused: s.faceRefused ?? null,
          validFrom: iso(s.validFrom),
          validUntil: iso(s.validUntil),
        });
      else
        visitorPasses.push({
          inviteId: h.subject_id,
          qrCode: s.qr !== null,
          licensePlate: s.plates.length > 0,
          validFrom: iso(s.validFrom),
          validUntil: iso(s.validUntil),
        });
    }
    return {
      _id: d.id,
      name: d.name,
      kind: d.kind,
      online: state ? state.online : true,
      pendingChanges: pending,
      lastSyncedAt: iso(state?.last_synced_at ?? null),
      enrollments,
      accessGroupId: d.accessGroupId,
      location: locationOf(d),
      cardFormat: cardFormatOf(d),
      transport: d.transportKind ?? this.deps.transport,
      connection: connectionView(d, state?.last_seen_at ?? null),
      lastError: state?.last_error ?? null,
      visitorPasses,
      problems: problems.map((p) => ({
        subject: { kind: p.subject_kind, id: p.subject_id },
        message: p.last_error ?? '',
        at: iso(p.done_at ?? p.created_at)!,
      })),
    };
  }

  /** The sandbox switch: make a device unreachable, or reachable again (it then catches up at once). */
  /** Commands not yet applied on devices, and devices offline (metrics; every project of the database). */
  queueStats(): Promise<{ pendingCommands: number; offlineDevices: number }> {
    return this.deps.repo.queueStats();
  }

  async setOnline(id: string, online: boolean): Promise<DeviceView> {
    if (!this.deps.sandbox) throw errors.notFound('Not found');
    const device = await this.deps.repo.device(id);
    if (!device) throw errors.notFound('Device not found');
    if (device.transportKind)
      throw errors.conflict(`This device is reached over ${device.transportKind}: whether it is online is what it answers`);
    if (this.deps.transport !== 'sandbox')
      throw errors.conflict('This device is reached through the MQTT gateway, which reports whether it is online');
    await this.deps.sync.setOnline(id, online);
    return this.view(id);
  }
}

/** A device's own transport as the ops view shows it: settings, never the secret. */
function connectionView(d: DeviceRow, lastSeenAt: number | null): DeviceView['connection'] {
  if (d.transportKind !== 'isapi' && d.transportKind !== 'zkteco-push') return null;
  const settings = JSON.parse(d.transportJson ?? '{}') as { baseUrl?: string; username?: string; serialNumber?: string };
  return {
    kind: d.transportKind,
    baseUrl: settings.baseUrl ?? null,
    username: settings.username ?? null,
    serialNumber: settings.serialNumber ?? null,
    hasSecret: d.transportSecretEnc !== null,
    lastSeenAt: d.transportKind === 'zkteco-push' ? iso(lastSeenAt) : null,
  };
}
