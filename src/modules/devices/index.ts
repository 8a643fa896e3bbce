/**
 * The devices module's front door: the ports members and visitors plug into (AccessSource, AccessChangeLog), the
 * device service and sync, the factory that builds them with the transport DEVICE_TRANSPORT selects, and the ops routes.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Config } from '../../platform/config.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import type { ChangeSource } from '../../platform/changes/change-feed.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { App } from '../../platform/http/types.js';
import { guarded, type RouteGuards } from '../../platform/http/module.js';
import { DeviceRepository } from './device-repository.js';
import { DeviceService } from './device-service.js';
import { DeviceSync } from './device-sync.js';
import {
  DEVICE_RECONCILE_JOB,
  DEVICE_SYNC_JOB,
  DOOR_ENTRIES_JOB,
  deviceSyncJob,
  doorEntriesJob,
  doorWindowsJob,
  ReconcileSchedule,
} from './jobs.js';
import { EntryLog } from './entry-log.js';
import { EntryRepository } from './entry-repository.js';
import { DoorWindowRepository } from './door-window-repository.js';
import { DoorWindows } from './door-windows.js';
import { MqttTransport, type TransportLogger } from './mqtt-transport.js';
import { SandboxTransport } from './sandbox-transport.js';
import type { DeviceTransport, DoorEvent } from './transport.js';
import { RoutingTransport } from './routing-transport.js';
import { opsDeviceRoutes } from './routes.js';
import { ZktecoTransport } from './vendors/zkteco-transport.js';
import { ZktecoService } from './vendors/zkteco-service.js';
import { zktecoRoutes } from './vendors/zkteco-routes.js';
import { CursorLocks } from './vendors/zkteco-cursor.js';
import { isapiRoutes, type IsapiRouteDeps } from './vendors/isapi-routes.js';

export { DeviceService, type DeviceRecord } from './device-service.js';
export { DeviceSync } from './device-sync.js';
export type { AccessChangeLog, AccessSource, DeviceInfo, SubjectSecrets, SubjectState } from './access-source.js';
export type { DeviceTransport, DoorEvent, DeviceTarget, DeviceConnection } from './transport.js';
export { RoutingTransport } from './routing-transport.js';
export { IsapiTransport } from './vendors/isapi-transport.js';
export type { IsapiRouteDeps } from './vendors/isapi-routes.js';
export type { TransportLogger } from './mqtt-transport.js';
export { DEVICE_RECONCILE_JOB, DEVICE_SYNC_JOB, DOOR_ENTRIES_JOB, DOOR_WINDOWS_JOB } from './jobs.js';
export { ZktecoService } from './vendors/zkteco-service.js';
export { EntryLog } from './entry-log.js';
export type { CardHolders, DoorEntered, DoorPresence, EntryPorts, PresenceOutcome, VisitorCodes } from './entry-log.js';
export type { CredentialKind } from './transport.js';
export { DoorWindows, type DoorFacts, type HeldWindow, type MeetingInvites, type MeetingWindow } from './door-windows.js';

export interface DevicesDeps {
  db: Kysely<Database>;
  engine: Engine;
  /** Service time (sandbox offset included). */
  clock: Clock;
  /** Real time: the reconcile schedule. */
  realClock: Clock;
  config: Config['devices'];
  /** Whether the sandbox switches are available (development and uat). */
  sandbox: boolean;
  /** The runner the module's handlers (device-sync, device-reconcile) are registered with. */
  jobs: JobRunner;
  /** Where the MQTT transport logs connection changes (never payloads). */
  logger?: TransportLogger;
  onError: (err: unknown, context: { job: string }) => void;
  /** Opens a sealed transport secret (the ISAPI password, the ZKTeco commKey). */
  openSecret: (sealed: string) => string;
  /** Vendor transports by kind (`isapi`, `zkteco-push`), beside the default DEVICE_TRANSPORT picks. */
  vendors?: ReadonlyMap<string, DeviceTransport>;
  /** Where door events go: the module's entry log unless given. */
  onAccess?: (event: DoorEvent) => Promise<void>;
  /** Checks an ISAPI device's event-URL token (constant time); without it every ISAPI notification is refused. */
  verifyIsapiToken?: (deviceId: string, token: string) => boolean;
}

export interface DevicesModule {
  /** The enrollment log members and visitors write to, the device view, the sandbox switches. */
  service: DeviceService;
  /** Plan, deliver, repair; members and visitors add their AccessSource with `sync.addSource`. */
  sync: DeviceSync;
  transport: RoutingTransport;
  /** The entry log: door events, the sandbox badge, the ops read; `entries.connect` plugs in members, visitors, booking. */
  entries: EntryLog;
  /** Booking participants' door windows: the booking writer's observer, read by the members' access source. */
  doorWindows: DoorWindows;
  /** Reconcile soon (after a site apply). */
  reconcileSoon(): void;
  /** The console's change feed: device sync state changes. */
  changes: ChangeSource;
  /** The console's change feed: door entries received (kind `entry`). */
  entryChanges: ChangeSource;
  /** What the ZKTeco PUSH endpoints do (the terminals poll the service). */
  zkteco: ZktecoService;
  /** What the ISAPI notification route needs (POST /devices/isapi/{deviceId}/events/{token}). */
  isapiEvents: IsapiRouteDeps;
}

/** How long after a booking change that moved door windows the delivery job is woken (the booking's commit comes first). */
const DOOR_DELIVERY_DELAY_MS = 25;

// Members and visitors need the service (their AccessChangeLog) before their AccessSource exists: they add it with `sync.addSource`.
export function createDevices(deps: DevicesDeps): DevicesModule {
  const { db, engine, clock, config, jobs } = deps;
  const repo = new DeviceRepository(db, engine);
  // ZKTeco terminals poll the service: their transport is always there (it only records inventory requests).
  const cursorLocks = new CursorLocks();
  const vendors = new Map<string, DeviceTransport>([
    ['zkteco-push', new ZktecoTransport(repo, () => clock.now(), cursorLocks)],
    ...(deps.vendors ?? []),
  ]);
  const transport = new RoutingTransport(createTransport(config, deps.logger, repo), vendors);
  const entryRepo = new EntryRepository(db);
  const entries = new EntryLog({
    repo: entryRepo,
    devices: repo,
    clock,
    realNow: () => deps.realClock.now(),
    wake: () => void jobs.poke(DOOR_ENTRIES_JOB),
    sandbox: deps.sandbox,
    transport: config.transport === 'sandbox' ? 'sandbox' : 'mqtt',
  });
  const sync = new DeviceSync({
    db,
    engine,
    repo,
    transport,
    clock,
    realNow: () => deps.realClock.now(),
    openSecret: deps.openSecret,
    onAccess: deps.onAccess ?? (async (event) => void (await entries.record(event))),
    pullStaleMs: config.pullStaleMs,
    sources: [],
    onQueued: () => void jobs.poke(DEVICE_SYNC_JOB),
    onError: deps.onError,
  });
  const service = new DeviceService({
    repo,
    sync,
    clock,
    transport: transport.name,
    sandbox: deps.sandbox,
    poke: () => void jobs.poke(DEVICE_SYNC_JOB),
  });
  jobs.register(deviceSyncJob(sync, { leaseMs: config.ackTimeoutMs + 30_000 }));
  const reconcile = new ReconcileSchedule(() => deps.realClock.now(), config.reconcileMs);
  jobs.register(reconcile.job(sync));
  const zkteco = new ZktecoService({ sync, repo, openSecret: deps.openSecret, realNow: () => deps.realClock.now(), locks: cursorLocks });
  jobs.register(doorEntriesJob(entries));
  const doorWindows = new DoorWindows({
    db,
    engine,
    repo: new DoorWindowRepository(db),
    access: service,
    deliverSoon: () => void setTimeout(() => void jobs.poke(DEVICE_SYNC_JOB), DOOR_DELIVERY_DELAY_MS).unref(),
  });
  jobs.register(doorWindowsJob(doorWindows));
  return {
    entries,
    service,
    sync,
    transport,
    zkteco,
    doorWindows,
    reconcileSoon: () => {
      reconcile.soon();
      void jobs.poke(DEVICE_RECONCILE_JOB);
    },
    changes: { kind: 'device', changedSince: (t, n) => repo.changedSince(t, n), latest: () => repo.lastChangeAt() },
    entryChanges: { kind: 'entry', changedSince: (t, n) => entryRepo.changedSince(t, n), latest: () => entryRepo.lastChangeAt() },
    isapiEvents: {
      verify: (deviceId, token) => deps.verifyIsapiToken?.(deviceId, token) ?? false,
      device: async (deviceId) => {
        const d = await repo.device(deviceId);
        return d && d.transportKind === 'isapi' ? { timeZone: d.timeZone } : null;
      },
      onEvent: (event) => sync.access(event),
    },
  };
}

/** The device transport DEVICE_TRANSPORT selects. */
function createTransport(
  config: Config['devices'],
  logger: TransportLogger | undefined,
  repo: DeviceRepository,
): SandboxTransport | MqttTransport {
  if (config.transport === 'sandbox') return new SandboxTransport((id) => repo.sandboxMemory(id));
  return new MqttTransport({ url: config.mqttUrl, topicPrefix: config.topicPrefix, ackTimeoutMs: config.ackTimeoutMs, logger });
}

export interface DevicesRouteDeps {
  guards: RouteGuards;
  devices: DeviceService;
  entries: EntryLog;
  /** The ISAPI notification route's needs (DevicesModule.isapiEvents); without them every notification is answered 404. */
  isapi?: IsapiRouteDeps;
  /** The ZKTeco PUSH endpoints (public: terminals are known by their serial numbers). */
  zkteco?: ZktecoService;
}

const NO_ISAPI: IsapiRouteDeps = { verify: () => false, device: () => Promise.resolve(null), onEvent: () => Promise.resolve() };

/** The ops device routes (behind the ops guard), the public ISAPI notification route and the ZKTeco PUSH endpoints. */
export async function register(app: App, deps: DevicesRouteDeps): Promise<void> {
  await guarded(app, deps.guards.ops, async (ops) => opsDeviceRoutes(ops, deps));
  await isapiRoutes(app, deps.isapi ?? NO_ISAPI);
  if (deps.zkteco) await zktecoRoutes(app, { zkteco: deps.zkteco });
}
