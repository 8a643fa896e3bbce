/**
 * Composition root: wires configuration, storage, clocks and services together.
 * Tests build the same graph, so they exercise exactly what production runs.
 */
import type { Config } from './platform/config.js';
import { isSandbox } from './platform/config.js';
import { OffsetClock, systemClock, type Clock } from './platform/clock/clock.js';
import { SandboxClock } from './platform/clock/sandbox-clock.js';
import type { Storage } from './platform/db/database.js';
import { SettingsRepository } from './platform/db/settings-repository.js';
import { createAuth, type TokenAttempts, type TokenService } from './modules/auth/index.js';
import { SecretBox } from './platform/crypto/secrets.js';
import { resealTables, type ResealReport, type SealedTable } from './platform/crypto/reseal.js';
import { randomBytes } from 'node:crypto';
import { createCatalogue, type CatalogueService } from './modules/catalogue/index.js';
import {
  createBooking,
  createBusySlots,
  type BookingChangeObserver,
  type BookingChanges,
  type BookingModule,
  type MeetingService,
  type OpsBookings,
} from './modules/booking/index.js';
import { createLifecycle, LIFECYCLE_JOB, type Lifecycle } from './modules/lifecycle/index.js';
import { createWebhooks, type DeliveryRepository, type Outbox, type WebhookService } from './modules/webhooks/index.js';
import { createSite, type SiteService } from './modules/site/index.js';
import { createPayments, type PaymentDetails, type PaymentService, type ProviderSync } from './modules/payments/index.js';
import { JobRunner } from './platform/jobs/runner.js';
import { jobWake } from './platform/db/job-wake.js';
import { createMembers, type CredentialService, type MemberService, type PartnerRateLimit } from './modules/members/index.js';
import { RateLimitRepository } from './platform/db/rate-limit-repository.js';
import { ConsoleSessionRepository } from './platform/db/console-session-repository.js';
import { RateLimiter } from './platform/rate-limit.js';
import {
  createDevices,
  IsapiTransport,
  type DeviceService,
  type ZktecoService,
  type DeviceSync,
  type DeviceTransport,
  type EntryLog,
  type IsapiRouteDeps,
  type TransportLogger,
} from './modules/devices/index.js';
import {
  CALENDAR_ROOMS_JOB,
  createCalendarSync,
  type CalendarSync,
  type ConnectedSync,
  type RoomFeedService,
} from './modules/calendar-sync/index.js';
import { createAnalytics, type AnalyticsService } from './modules/analytics/index.js';
import { createVisitors, type VisitorAccessSource, type VisitorBookings, type VisitorService } from './modules/visitors/index.js';
import { UrlGuard } from './platform/net/url-guard.js';
import { ConsoleSessions } from './platform/http/console-session.js';
import { OpsTokenFailures } from './platform/http/authenticate.js';
import { ChangeFeed, type ChangeSource } from './platform/changes/change-feed.js';
import { recordJobFailure, runJobItem, traceQueries } from './platform/observability/tracing.js';
import { Metrics } from './platform/observability/metrics.js';
import { DELIVERY_JOB } from './modules/webhooks/index.js';

export interface Services {
  config: Config;
  storage: Storage;
  /** Service time (sandbox offset included). Booking rules use this. */
  clock: Clock;
  sandboxClock: SandboxClock;
  tokens: TokenService;
  secretBox: SecretBox;
  settings: SettingsRepository;
  catalogue: CatalogueService;
  /** Site-as-code: apply a site document. */
  site: SiteService;
  /** Records booking events and queues their deliveries (in the caller's transaction). */
  outbox: Outbox;
  meetings: MeetingService;
  /** The operator console's booking reads and staff cancel. */
  opsBookings: OpsBookings;
  /** Payments of paid bookings: open, settle, fail, lapse (a job), the page's token. */
  payments: PaymentService;
  /** Provider events (the webhook route), reconciliation, voids and refunds at the provider. */
  paymentSync: ProviderSync;
  /** The console's payment view: a payment with its provider events and refunds. */
  paymentDetails: PaymentDetails;
  /** Locks a booking and applies actors' changes through the one booking-change writer. */
  bookings: BookingChanges;
  /** The lifecycle job: applies due steps (tests replace its `fire`). */
  lifecycle: Lifecycle;
  /** Webhook listeners' state and deliveries (the ops routes). */
  webhooks: WebhookService;
  /** The store the delivery job leases from (tests instrument it). */
  deliveryRepo: DeliveryRepository;
  /** Partner member provisioning: PUT/GET/DELETE /partner/members. */
  members: MemberService;
  /** Partner members' cards and face photos (PUT …/credentials). */
  credentials: CredentialService;
  /** 30 requests per 60 s per app across the partner member routes (real time). */
  partnerRateLimit: PartnerRateLimit;
  /** Building devices: the enrollment log members and visitors write to, the device view, the sandbox switches. */
  devices: DeviceService;
  /** The door entry log (devices). */
  entries: EntryLog;
  /** Device sync (plan, deliver, repair); tests drive it directly. */
  deviceSync: DeviceSync;
  deviceTransport: DeviceTransport;
  /** The ZKTeco PUSH endpoints' service (terminals that poll). */
  zkteco: ZktecoService;
  /** The ISAPI notification route's needs (POST /devices/isapi/{deviceId}/events/{token}). */
  isapiEvents: IsapiRouteDeps;
  /** Calendar sync: iTIP messages from synced rooms' mailboxes, applied as bookings. */
  calendarSync: CalendarSync;
  /** Visitor invites, scans at devices, and the withdrawal of codes whose window is over (a job). */
  visitors: VisitorService;
  /** What devices must hold for visitor invites (the devices module's AccessSource for kind `visitor`). */
  visitorAccess: VisitorAccessSource;
  /** Utilisation analytics: figures kept by the `analytics` job, the questions the ops routes ask. */
  analytics: AnalyticsService;
  /** Room feeds: each room's bookings as an iCalendar feed at a secret, revocable address. */
  roomFeeds: RoomFeedService;
  /** Room calendars connected to Microsoft 365 and Google Workspace. */
  calendarConnections: ConnectedSync;
  /** All background work: lifecycle steps, webhook deliveries, token purge, device sync, visitor expiry. */
  jobs: JobRunner;
  /** Failed app_secret attempts per (app_id, client address) and per client address (the token endpoint's brute-force limit). */
  tokenAttempts: TokenAttempts;
  /** The console's live changes: one poller per instance shared by every open stream. */
  changeFeed: ChangeFeed;
  /** Console sessions: stored, revocable sessions behind a signed cookie exchanged for the ops token, and their CSRF tokens. */
  consoleSessions: ConsoleSessions;
  /** Wrong ops tokens (Bearer or console sign-in) per client address (429 KS036 once used up). */
  opsTokenFailures: OpsTokenFailures;
  /** The SSRF guard of webhook addresses (at apply and at connect time); tests replace its `resolve`. */
  urlGuard: UrlGuard;
  /** `table.column` of every sealed value and keyed tag the modules store (what a SECRETS_KEY rotation must move). */
  sealedColumns(): string[];
  /**
   * Moves every sealed value and keyed tag under the current SECRETS_KEY (npm run reseal-secrets), while
   * instances serve; afterwards SECRETS_KEY_PREVIOUS can be dropped (docs/operations.md).
   */
  resealSecrets(): Promise<ResealReport>;
  /** Prometheus metrics of this service (GET /metrics; docs/operations.md "Metrics"). */
  metrics: Metrics;
  /** Starts the background work (the job runner). */
  startWorkers(): void;
  /** Stops background work (the clock poller and the job runner, letting in-flight work finish). */
  stop(): Promise<void>;
}

async function secretBoxOf(config: Config, settings: SettingsRepository): Promise<SecretBox> {
  if (config.secretsKey) {
    // A key an earlier development/uat start generated (before SECRETS_KEY was set) still opens what it sealed,
    // until npm run reseal-secrets moves those values under SECRETS_KEY and forgets it.
    const generated = await settings.get(GENERATED_KEY_SETTING);
    return new SecretBox(config.secretsKey, [...config.secretsKeyPrevious, ...(generated ? [Buffer.from(generated, 'hex')] : [])]);
  }
  // development/uat convenience: a key generated once and kept with the data.
  const stored = await settings.getOrInit(GENERATED_KEY_SETTING, randomBytes(32).toString('hex'));
  return new SecretBox(Buffer.from(stored, 'hex'), config.secretsKeyPrevious);
}

const GENERATED_KEY_SETTING = 'dev_secrets_key';
const GENERATED_OPS_TOKEN_SETTING = 'dev_ops_token';

/**
 * development/uat without OPS_TOKEN: the token generated at the first start is kept with the data,
 * sealed with the secrets key (printed at every start, so it must be recoverable), and reused, so
 * a restart does not end console sessions or invalidate scripts. Whichever instance stores first wins.
 */
async function keepGeneratedOpsToken(config: Config, settings: SettingsRepository, box: SecretBox): Promise<void> {
  if (!config.opsTokenGenerated) return;
  const stored = await settings.getOrInit(GENERATED_OPS_TOKEN_SETTING, box.seal(config.opsToken));
  try {
    config.opsToken = box.open(stored);
    const again = box.reseal(stored);
    if (again !== null) await settings.set(GENERATED_OPS_TOKEN_SETTING, again);
  } catch {
    // Sealed under a key this start does not know (SECRETS_KEY changed): the new token replaces it.
    await settings.set(GENERATED_OPS_TOKEN_SETTING, box.seal(config.opsToken));
  }
}

/**
 * Every sealed column and keyed tag under the current key; then the generated development key is
 * forgotten when SECRETS_KEY is set (nothing is sealed under it any more). Visitor code tags may have
 * changed: devices are reconciled (on this process; running instances within DEVICE_RECONCILE_SECONDS).
 */
async function resealSecrets(p: Platform, sealed: SealedTable[], reconcile: () => void): Promise<ResealReport> {
  const report = await resealTables(sealed, p.secretBox);
  const token = await p.settings.get(GENERATED_OPS_TOKEN_SETTING);
  const again = token === undefined ? null : p.secretBox.reseal(token);
  if (again !== null) {
    await p.settings.set(GENERATED_OPS_TOKEN_SETTING, again);
    report.resealed[`settings.${GENERATED_OPS_TOKEN_SETTING}`] = 1;
  }
  if (p.config.secretsKey) await p.settings.delete(GENERATED_KEY_SETTING);
  reconcile();
  return report;
}

export interface ServiceOptions {
  /** Where background workers report failures (the logger in production). */
  onError?: (err: unknown, context?: { job: string }) => void;
  /** Where the MQTT device transport logs connection changes (never payloads). */
  logger?: TransportLogger;
}

/** What every module is built on: clocks, settings, the secret box, the SSRF guard, the job runner, error reporting. */
interface Platform {
  config: Config;
  storage: Storage;
  realClock: Clock;
  clock: Clock;
  sandboxClock: SandboxClock;
  settings: SettingsRepository;
  secretBox: SecretBox;
  urlGuard: UrlGuard;
  jobs: JobRunner;
  /** Starts the runner and the wake-ups of committed timers and deliveries (in-process on SQLite, LISTEN/NOTIFY on PostgreSQL). */
  startJobs(): void;
  /** Stops the wake-ups, then the runner (letting in-flight work finish). */
  stopJobs(): Promise<void>;
  onError: (err: unknown, context?: { job: string }) => void;
}

async function createPlatform(config: Config, storage: Storage, realClock: Clock, options: ServiceOptions): Promise<Platform> {
  const settings = new SettingsRepository(storage.db);
  const clock = new OffsetClock(realClock);
  const sandboxClock = new SandboxClock(clock, settings, isSandbox(config.env));
  await sandboxClock.refresh();
  sandboxClock.startPolling();
  const secretBox = await secretBoxOf(config, settings);
  await keepGeneratedOpsToken(config, settings, secretBox);
  const onError = options.onError ?? (() => {});
  // The SSRF guard in production and uat (uat may allow loopback receivers: WEBHOOK_ALLOW_LOOPBACK=1).
  const urlGuard = new UrlGuard({
    enforce: config.env !== 'development',
    allowLoopback: config.webhookAllowLoopback,
    environment: config.env,
  });
  const itemContext = { around: runJobItem, failed: recordJobFailure };
  const jobs = new JobRunner({ clock, realClock, onError, itemContext, ...(config.jobPollMs ? { pollMs: config.jobPollMs } : {}) });
  const wakeups = jobWake({
    ...{ engine: storage.engine, databaseUrl: config.databaseUrl, tables: { timers: LIFECYCLE_JOB, deliveries: DELIVERY_JOB } },
    ...{
      observeQueries: (l) => storage.observeQueries(l),
      wake: (job) => jobs.wake(job),
      onError: (err) => onError(err, { job: 'job-wake' }),
    },
  });
  // Moving the sandbox clock applies every step that falls due, in time order, before it answers.
  sandboxClock.onAdvance((_from, to) => jobs.replay(to));
  const startJobs = () => {
    jobs.start();
    wakeups.start();
  };
  const stopJobs = () => wakeups.stop().then(() => jobs.stop());
  return { config, storage, realClock, clock, sandboxClock, settings, secretBox, urlGuard, jobs, startJobs, stopJobs, onError };
}

/** Search, bookings and what a booking change sets off: the writer's ports (events, lifecycle), payments. */
function createBookingCore(p: Platform) {
  const { storage, config, clock, realClock, secretBox, jobs } = p;
  // The catalogue reads the holds on assets through its BusySlots port, over booking's tables.
  const { catalogue } = createCatalogue({ db: storage.db, clock, busySlots: createBusySlots({ db: storage.db }) });
  const webhooks = createWebhooks({
    db: storage.db,
    secretBox,
    clock,
    realClock,
    timeoutMs: config.webhookTimeoutMs,
    urlGuard: p.urlGuard,
    pokeJob: (name) => void jobs.poke(name),
  });
  // Late-bound both ways: the lifecycle steps act through booking's BookingChanges, booking's writer plans through the
  // lifecycle's planner; booking's services use the payments desk, which is built on BookingChanges.
  const { lifecycle, planner } = createLifecycle({ db: storage.db, bookings: () => booking.bookings });
  // Late-bound: connected calendars (built later, on BookingChanges) hear every booking change in its transaction.
  const observers: BookingChangeObserver[] = [];
  const booking: BookingModule = createBooking({
    db: storage.db,
    engine: storage.engine,
    clock,
    secretBox,
    catalogue,
    events: webhooks.outbox,
    lifecycle: planner,
    payments: () => payments,
    observers: () => observers,
  });
  const paymentsModule = createPayments({
    db: storage.db,
    bookings: booking.bookings,
    secretBox,
    clock,
    realClock,
    publicBaseUrl: () => config.publicBaseUrl,
    policy: config.payments,
  });
  const payments = paymentsModule.payments;
  jobs.register(lifecycle.job());
  jobs.register(webhooks.deliveryJob);
  jobs.register(paymentsModule.jobs.lapse);
  jobs.register(paymentsModule.jobs.nudge);
  jobs.register(paymentsModule.jobs.inbox);
  jobs.register(paymentsModule.jobs.reconcile);
  jobs.register(paymentsModule.jobs.providerActions);
  return {
    catalogue,
    webhooks,
    lifecycle,
    booking,
    payments,
    paymentSync: paymentsModule.sync,
    paymentDetails: paymentsModule.details,
    observers,
  };
}

/** The keyed-tag purpose of ISAPI devices' event-URL tokens. */
const ISAPI_EVENTS_TAG = 'isapi-events';

/** Devices, and the site, members and visitors whose changes they enroll. */
function createBuilding(p: Platform, tokens: TokenService, outbox: Outbox, options: ServiceOptions, bookings: BookingChanges) {
  const { storage, config, clock, realClock, secretBox, jobs } = p;
  // Members (and visitors) tell the devices module what changed; the sync job delivers.
  const devices = createDevices({
    db: storage.db,
    engine: storage.engine,
    clock,
    realClock,
    config: config.devices,
    sandbox: isSandbox(config.env),
    jobs,
    logger: options.logger,
    onError: p.onError,
    openSecret: (sealed) => secretBox.open(sealed),
    // HikVision terminals post their events to a URL whose last segment is an HMAC of the device id.
    vendors: new Map([
      ['isapi', new IsapiTransport({ publicBaseUrl: () => config.publicBaseUrl, hostToken: (id) => secretBox.tag(ISAPI_EVENTS_TAG, id) })],
    ]),
    verifyIsapiToken: (id, token) => secretBox.tagMatches(ISAPI_EVENTS_TAG, id, token),
  });
  const { site, sealed: siteSealed } = createSite({
    db: storage.db,
    env: config.env,
    secretBox,
    clock,
    checkUrl: (url) => p.urlGuard.checkUrl(url),
    publicBaseUrl: () => config.publicBaseUrl,
  });
  site.onApplied(() => {
    tokens.forgetCallers();
    devices.reconcileSoon();
  });
  // Members record access changes in the devices' log; the devices plan with the members' AccessSource.
  const members = createMembers({
    db: storage.db,
    engine: storage.engine,
    secretBox,
    clock,
    realClock,
    access: devices.service,
    doorWindows: devices.doorWindows,
    partnerRateLimitPerMinute: config.partnerRateLimitPerMinute,
    onMembershipsChanged: () => tokens.forgetCallers(),
  });
  devices.sync.addSource(members.accessSource);
  // Visitors: invites enroll their code on the project's devices through the same sync.
  const visitors = createVisitors({
    db: storage.db,
    engine: storage.engine,
    secretBox,
    clock,
    site,
    units: members.members,
    devices: devices.service,
    accessLog: devices.service,
    outbox,
    jobs,
    entries: devices.entries,
    bookings: invitedBookings(bookings),
    doors: devices.doorWindows,
  });
  devices.sync.addSource(visitors.accessSource);
  // A booking's door window changing re-plans the visitors invited for it, in the booking change's transaction.
  devices.doorWindows.connectInvites(visitors.meetingInvites);
  // The entry log names a card's member and a QR code's visitor through them.
  devices.entries.connect({ cards: members.cardHolders, visitors: visitors.visitors });
  return { devices, site, siteSealed, members, visitors };
}

/** Bookings as a visitor invite naming one checks it (project, organizer and attendees, status). */
function invitedBookings(bookings: BookingChanges): VisitorBookings {
  return {
    booking: async (meetingId) => {
      const m = (await bookings.read(meetingId))?.meeting;
      return (
        m && {
          projectId: m.project_id,
          status: m.status,
          organizerUserId: m.organizer_user_id,
          attendeeUserIds: m.attendees.flatMap((a) => (a.userId ? [a.userId] : [])),
        }
      );
    },
  };
}

/** Calendar sync: iTIP messages, room feeds, and room calendars connected to Microsoft 365 and Google Workspace. */
function createConnectedCalendars(
  p: Platform,
  d: { bookings: BookingChanges; catalogue: CatalogueService; site: SiteService; observers: BookingChangeObserver[] },
) {
  const { storage, config, clock, realClock, secretBox, jobs } = p;
  const calendar = createCalendarSync({
    ...{ db: storage.db, bookings: d.bookings, rooms: d.catalogue, organizers: d.site, secretBox, clock, realClock },
    publicBaseUrl: () => config.publicBaseUrl,
    connectors: { timeoutMs: config.calendars.providerTimeoutMs },
    poke: (name) => void jobs.poke(name),
  });
  d.observers.push(calendar.writeback.observer);
  const { subscriptions, pull, writeback, rooms } = calendar.jobs;
  jobs.register(subscriptions);
  jobs.register(pull);
  jobs.register(writeback);
  jobs.register(rooms);
  // A site document applied may connect or leave rooms: their subscriptions follow at once.
  d.site.onApplied(() => void calendar.connected.reconcile().catch((err) => p.onError(err, { job: CALENDAR_ROOMS_JOB })));
  return calendar;
}

/** Token grants and principals; its purge job on the runner. */
function createAuthOn(p: Platform) {
  const { config } = p;
  const auth = createAuth({
    db: p.storage.db,
    env: config.env,
    lifetimes: config.tokens,
    realClock: p.realClock,
    callerCacheMs: config.callerCacheMs,
    tokenFailures: config.tokenFailures,
  });
  p.jobs.register(auth.purgeJob);
  return auth;
}

/** The console's live changes: one poller per instance over every module's change source. */
function createChangeFeed(p: Platform, sources: ChangeSource[]): ChangeFeed {
  return new ChangeFeed({
    sources,
    clockMark: () => p.sandboxClock.state().offsetMs,
    onError: (err) => p.onError(err, { job: 'change-feed' }),
  });
}

/** Metrics: statements and job runs as they happen; the gauges read each module's counts at scrape time. */
function createMetrics(p: Platform, m: { deliveryRepo: DeliveryRepository; devices: DeviceService; payments: PaymentService }): Metrics {
  return new Metrics({
    observeQueries: (listener) => p.storage.observeQueries(listener),
    observeRuns: (listener) => p.jobs.observeRuns(listener),
    deliveryJob: DELIVERY_JOB,
    serviceNow: () => p.clock.now(),
    reads: {
      jobBacklog: (onError) => p.jobs.backlog(onError),
      undeliveredWebhooks: () => m.deliveryRepo.undelivered(),
      deviceQueue: () => m.devices.queueStats(),
      paymentsByState: () => m.payments.countByStatus(),
    },
  });
}

/** Doors and bookings: participants' door windows planned in the booking change's transaction (the writer's observer), a
 * granted member entry at a door checking the booking in, and the console's floor plan asking who badged in. */
function connectDoors(
  devices: ReturnType<typeof createBuilding>['devices'],
  booking: ReturnType<typeof createBookingCore>['booking'],
  observers: BookingChangeObserver[],
): void {
  observers.push(devices.doorWindows);
  devices.entries.connect({ presence: booking.doorPresence });
  booking.connectPresence(devices.entries);
}

export async function createServices(
  config: Config,
  storage: Storage,
  realClock: Clock = systemClock,
  options: ServiceOptions = {},
): Promise<Services> {
  // Tracing on: a span per SQL statement run inside a request or job span (nothing otherwise).
  storage.observeQueries(traceQueries(config.engine));
  const p = await createPlatform(config, storage, realClock, options);
  const { clock, sandboxClock, secretBox, jobs, onError } = p;
  const auth = createAuthOn(p);
  const { catalogue, webhooks, lifecycle, booking, payments, paymentSync, paymentDetails, observers } = createBookingCore(p);
  const { devices, site, siteSealed, members, visitors } = createBuilding(p, auth.tokens, webhooks.outbox, options, booking.bookings);
  connectDoors(devices, booking, observers);
  const calendar = createConnectedCalendars(p, { bookings: booking.bookings, catalogue, site, observers });
  const changeFeed = createChangeFeed(p, [
    { kind: 'meeting', ...booking.changeSource },
    { kind: 'delivery', changedSince: (t, n) => webhooks.webhooks.changedSince(t, n), latest: () => webhooks.webhooks.lastChangeAt() },
    ...[devices.changes, devices.entryChanges, visitors.changes],
  ]);
  const { analytics } = createAnalytics({ db: p.storage.db, engine: p.storage.engine, clock, realClock: p.realClock, jobs });
  const sealed = [...booking.sealed, ...siteSealed, ...members.sealed, ...visitors.sealed, ...calendar.sealed];
  const metrics = createMetrics(p, { deliveryRepo: webhooks.deliveryRepo, devices: devices.service, payments });
  return {
    metrics,
    config,
    storage,
    clock,
    sandboxClock,
    secretBox,
    jobs,
    settings: p.settings,
    urlGuard: p.urlGuard,
    tokens: auth.tokens,
    tokenAttempts: auth.tokenAttempts,
    catalogue,
    site,
    payments,
    paymentSync,
    paymentDetails,
    lifecycle,
    outbox: webhooks.outbox,
    meetings: booking.meetings,
    opsBookings: booking.opsBookings,
    bookings: booking.bookings,
    webhooks: webhooks.webhooks,
    deliveryRepo: webhooks.deliveryRepo,
    members: members.members,
    credentials: members.credentials,
    partnerRateLimit: members.partnerRateLimit,
    devices: devices.service,
    entries: devices.entries,
    deviceSync: devices.sync,
    zkteco: devices.zkteco,
    deviceTransport: devices.transport,
    isapiEvents: devices.isapiEvents,
    visitors: visitors.visitors,
    visitorAccess: visitors.accessSource,
    analytics,
    calendarSync: calendar.calendarSync,
    roomFeeds: calendar.roomFeeds,
    calendarConnections: calendar.connected,
    changeFeed,
    consoleSessions: new ConsoleSessions(config.opsToken, config.env, new ConsoleSessionRepository(storage.db), realClock),
    opsTokenFailures: new OpsTokenFailures(
      new RateLimiter(new RateLimitRepository(storage.db), realClock, config.tokenFailures.perAddress, config.tokenFailures.windowMs),
    ),
    sealedColumns: () => sealed.flatMap((t) => t.columns),
    resealSecrets: () => resealSecrets(p, sealed, () => devices.reconcileSoon()),
    startWorkers: () => {
      void devices.transport.start(devices.sync).catch((err) => onError(err, { job: 'device-transport' }));
      p.startJobs();
    },
    stop: async () => {
      await sandboxClock.stop();
      await changeFeed.stop();
      await p.stopJobs();
      await devices.transport.stop();
    },
  };
}
