/**
 * The visitors module's front door: the visitor service and the ports it declares (VisitorSite, VisitorUnits,
 * DeviceDirectory, VisitorEvents), the visitors' AccessSource for the devices module, the factory (which registers the
 * visitor-expiry job), and the ops routes.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import type { Db } from '../../platform/db/db.js';
import type { ChangeSource } from '../../platform/changes/change-feed.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { App } from '../../platform/http/types.js';
import { guarded, type RouteGuards } from '../../platform/http/module.js';
import type { AccessChangeLog } from '../devices/index.js';
import { VisitorRepository, sealedVisitorColumns } from './visitor-repository.js';
import {
  VisitorService,
  type DeviceDirectory,
  type ScanEntries,
  type VisitorEvents,
  type VisitorSite,
  type VisitorUnits,
  type VisitorBookings,
} from './visitor-service.js';
import { VisitorAccessSource, type VisitorDoors } from './visitor-access.js';
import { visitorExpiryJob } from './jobs.js';
import { opsVisitorRoutes } from './routes.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';

export {
  VisitorService,
  type DeviceDirectory,
  type VisitorDevice,
  type VisitorEvent,
  type VisitorEvents,
  type VisitorSite,
  type VisitorUnits,
  type VisitorBookings,
} from './visitor-service.js';
export { VisitorAccessSource, type VisitorDoors } from './visitor-access.js';
export type { InvitedBooking } from './rules/door-pass.js';
export type { ScanEntries } from './visitor-service.js';
export { VISITOR_EXPIRY_JOB } from './jobs.js';

export interface VisitorsDeps {
  db: Kysely<Database>;
  engine: Engine;
  secretBox: SecretBox;
  /** Service time (sandbox offset included). */
  clock: Clock;
  site: VisitorSite;
  units: VisitorUnits;
  devices: DeviceDirectory;
  /** The devices module's enrollment log: access changes are recorded in the visitors' own transactions. */
  accessLog: AccessChangeLog;
  /** VMS_* events, written in the same transaction (the webhooks outbox). */
  outbox: VisitorEvents;
  /** The runner the visitor-expiry handler is registered with. */
  jobs: JobRunner;
  /** The devices' entry log: every scan is logged as a door entry. */
  entries?: ScanEntries;
  /** Bookings an invite may name (`meetingId`). */
  bookings?: VisitorBookings;
  /** The doors of rooms and desks and bookings' door windows (the devices' DoorWindows). */
  doors?: VisitorDoors;
}

export interface VisitorsModule {
  visitors: VisitorService;
  /** What devices must hold for visitor invites (the devices module's AccessSource for kind `visitor`). */
  accessSource: VisitorAccessSource;
  /** The invites naming a booking, for the devices' DoorWindows to re-plan when the booking's window changes. */
  meetingInvites: { ofMeeting(meetingId: string, trx?: Db): Promise<{ id: string; projectId: string }[]> };
  /** The console's change feed: invites and entries. */
  changes: ChangeSource;
  /** Sealed columns (QR codes and their tags), for a SECRETS_KEY rotation. */
  sealed: SealedTable[];
}

export function createVisitors(deps: VisitorsDeps): VisitorsModule {
  const { db, engine, secretBox, clock } = deps;
  const repo = new VisitorRepository(db);
  const visitors = new VisitorService({
    db,
    engine,
    repo,
    site: deps.site,
    units: deps.units,
    devices: deps.devices,
    accessLog: deps.accessLog,
    outbox: deps.outbox,
    secretBox,
    clock,
    entries: deps.entries,
    bookings: deps.bookings,
    doors: deps.doors,
  });
  deps.jobs.register(visitorExpiryJob(visitors));
  return {
    visitors,
    accessSource: new VisitorAccessSource({ repo, clock, secretBox, doors: deps.doors }),
    meetingInvites: { ofMeeting: (meetingId, trx) => repo.ofMeeting(meetingId, trx) },
    changes: { kind: 'visitor', changedSince: (t, n) => repo.changedSince(t, n), latest: () => repo.lastChangeAt() },
    sealed: sealedVisitorColumns(db),
  };
}

export interface VisitorsRouteDeps {
  guards: RouteGuards;
  visitors: VisitorService;
}

/** The ops visitor routes (behind the ops guard). */
export async function register(app: App, deps: VisitorsRouteDeps): Promise<void> {
  await guarded(app, deps.guards.ops, async (ops) => opsVisitorRoutes(ops, deps));
}
