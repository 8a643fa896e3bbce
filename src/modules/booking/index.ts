/**
 * The booking module's front door: the API's actor (MeetingService), the console's
 * booking reads (OpsBookings), the lock-and-write service every actor goes through
 * (BookingChanges, with the one writer), the ports it talks to (LifecyclePlanner,
 * BookingEventSink, PaymentDesk), the catalogue's BusySlots port implemented over
 * booking's tables, and the types of stored bookings other modules read.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import type { App } from '../../platform/http/types.js';
import { guarded, type RouteGuards } from '../../platform/http/module.js';
import type { BusySlots, CatalogueService } from '../catalogue/index.js';
import { BookingChangeWriter, type BookingChangeObserver, type BookingEventSink, type LifecyclePlanner } from './booking-change.js';
import { BookingChanges } from './booking-changes.js';
import { BookingBusySlots } from './busy-slots.js';
import { MeetingRepository } from './meeting-repository.js';
import { MeetingService } from './meeting-service.js';
import { OpsBookings, type BadgePresence } from './ops-bookings.js';
import { latePaymentDesk, type PaymentDesk } from './payment-port.js';
import { PeopleRepository } from './people-repository.js';
import { SlotRepository } from './slot-repository.js';
import { meetingRoutes, opsMeetingRoutes } from './routes.js';
import { DoorPresenceService } from './door-presence-service.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';
import { sealedBookingColumns } from './meeting-repository.js';
export { plainBookingColumns } from './meeting-repository.js';

export { MeetingService, DEFAULT_MEETING_PAGE_SIZE, PIN_PATTERN } from './meeting-service.js';
export type { CreateMeetingInput, UpdateMeetingInput, ListMeetingsInput } from './meeting-service.js';
export { OpsBookings, type BadgePresence } from './ops-bookings.js';
export { DoorPresenceService, type DoorEntry, type DoorPresenceResult } from './door-presence-service.js';
export { BookingChanges, scopeOf } from './booking-changes.js';
export type { FeedBooking, LockedBooking } from './booking-changes.js';
export { BookingChangeWriter, SYSTEM_ACTOR, bookingFacts, newPinCode } from './booking-change.js';
export type {
  Actor,
  BookingChange,
  BookingChangeObserver,
  BookingEventSink,
  BookingScope,
  HistoryEntry,
  LifecyclePlanner,
  NewBooking,
  SlotChange,
  Window,
} from './booking-change.js';
export type { HistoryRow, MeetingRow } from './meeting-repository.js';
export { allOccurrences, currentOccurrence, occurrenceAt, withoutOccurrence } from './meeting-view.js';
export type {
  CancelledOccurrence,
  MeetingView,
  StoredAttendee,
  StoredOccurrence,
  StoredOrganizer,
  StoredRecurrence,
} from './meeting-view.js';
export { billingWithStatus } from './payment-port.js';
export type {
  BillingEntry,
  BillingStatus,
  CheckoutToPrepare,
  OpenPayment,
  PaymentDesk,
  PaymentSnapshot,
  PreparedCheckout,
  PromoCode,
} from './payment-port.js';

export interface BookingDeps {
  db: Kysely<Database>;
  engine: Engine;
  /** Service time. */
  clock: Clock;
  /** Seals and opens booking PINs. */
  secretBox: SecretBox;
  catalogue: CatalogueService;
  /** Where the writer records each change's event (the webhooks module's Outbox). */
  events: BookingEventSink;
  /** Where the writer re-plans a booking's clock-driven steps (the lifecycle module's planner). */
  lifecycle: LifecyclePlanner;
  /** Opens and voids payments (the payments module's service); late-bound: payments is built on BookingChanges. */
  payments: () => PaymentDesk;
  /** Others that hear of every change in its transaction (connected calendars); late-bound. */
  observers?: () => readonly BookingChangeObserver[];
}

export interface BookingModule {
  /** The API's actor on bookings, and the console's staff cancel. */
  meetings: MeetingService;
  /** The operator console's booking reads and staff cancel. */
  opsBookings: OpsBookings;
  /** Locks a booking and applies any actor's change through the one writer. */
  bookings: BookingChanges;
  /** The door's actor: a granted member entry at an asset's access device checks their booking there in. */
  doorPresence: DoorPresenceService;
  /** Bookings' changes for the console's change feed. */
  changeSource: {
    changedSince(after: number, limit: number): Promise<{ id: string; projectId: string; at: number }[]>;
    latest(): Promise<number>;
  };
  /** Booking's sealed columns, for a SECRETS_KEY rotation. */
  sealed: SealedTable[];
  /** Plugs in the entry log the console's floor reads ask who badged in at an asset's doors. */
  connectPresence(presence: BadgePresence): void;
}

export function createBooking(deps: BookingDeps): BookingModule {
  const meetingRepo = new MeetingRepository(deps.db);
  const people = new PeopleRepository(deps.db);
  const payments = latePaymentDesk(deps.payments);
  // The entry log is built after booking: plugged in with `connectPresence`.
  const presenceRef: { current?: BadgePresence } = {};
  // The one writer of booking changes; events and lifecycle steps plug in through its ports.
  const writer = new BookingChangeWriter({
    meetings: meetingRepo,
    events: deps.events,
    lifecycle: deps.lifecycle,
    observers: deps.observers,
  });
  const bookings = new BookingChanges({ db: deps.db, engine: deps.engine, meetings: meetingRepo, writer, catalogue: deps.catalogue });
  const meetings = new MeetingService({
    clock: deps.clock,
    secretBox: deps.secretBox,
    catalogue: deps.catalogue,
    people,
    meetings: meetingRepo,
    slots: new SlotRepository(deps.db),
    changes: bookings,
    payments,
  });
  return {
    meetings,
    opsBookings: new OpsBookings({
      presence: () => presenceRef.current,
      clock: deps.clock,
      meetings: meetingRepo,
      catalogue: deps.catalogue,
      payments,
      service: meetings,
      people,
    }),
    bookings,
    doorPresence: new DoorPresenceService({
      clock: deps.clock,
      catalogue: deps.catalogue,
      meetings: meetingRepo,
      slots: new SlotRepository(deps.db),
      changes: bookings,
    }),
    changeSource: { changedSince: (t, n) => meetingRepo.changedSince(t, n), latest: () => meetingRepo.lastChangeAt() },
    sealed: sealedBookingColumns(deps.db),
    connectPresence: (presence) => void (presenceRef.current = presence),
  };
}

/** The catalogue's BusySlots port over booking's tables (built before the catalogue, which booking then uses). */
export function createBusySlots(deps: { db: Kysely<Database> }): BusySlots {
  return new BookingBusySlots(new SlotRepository(deps.db));
}

export interface BookingRouteDeps {
  meetings: MeetingService;
  opsBookings: OpsBookings;
  guards: RouteGuards;
}

/** /meetings (and its actions) behind the API guard; the console's /ops/v1 booking routes behind the ops guard. */
export async function register(app: App, deps: BookingRouteDeps): Promise<void> {
  await guarded(app, deps.guards.api, async (api) => {
    await meetingRoutes(api, { meetings: deps.meetings });
  });
  await guarded(app, deps.guards.ops, async (ops) => {
    await opsMeetingRoutes(ops, { opsBookings: deps.opsBookings });
  });
}
