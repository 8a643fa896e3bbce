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
import { TokenRepository } from './modules/auth/token-repository.js';
import { TokenService } from './modules/auth/token-service.js';
import { SecretBox } from './platform/crypto/secrets.js';
import { randomBytes } from 'node:crypto';
import { createCatalogue, type CatalogueService } from './modules/catalogue/index.js';
import { createBooking, createBusySlots, type BookingChanges, type BookingModule, type MeetingService, type OpsBookings } from './modules/booking/index.js';
import { createLifecycle, type Lifecycle } from './modules/lifecycle/index.js';
import { Outbox } from './modules/webhooks/outbox.js';
import { SiteService } from './modules/site/site-service.js';
import { PaymentService } from './modules/payments/payment-service.js';
import { PaymentRepository } from './modules/payments/payment-repository.js';
import { SandboxProvider } from './modules/payments/provider.js';
import { SiteRepository } from './modules/site/site-repository.js';
import { OutboxRepository } from './modules/webhooks/outbox-repository.js';
import { JobRunner } from './platform/jobs/runner.js';
import { deliveryJob } from './modules/webhooks/jobs.js';
import { DeliveryRepository } from './modules/webhooks/delivery-repository.js';
import { tokenPurgeJob } from './modules/auth/jobs.js';
import { MembersRepository } from './modules/members/members-repository.js';
import { MemberService } from './modules/members/member-service.js';
import { CredentialService } from './modules/members/credential-service.js';
import { CredentialRepository } from './modules/members/credential-repository.js';
import { RateLimitRepository } from './platform/db/rate-limit-repository.js';
import { ConsoleSessionRepository } from './platform/db/console-session-repository.js';
import { RateLimiter } from './platform/rate-limit.js';
import { DeviceRepository } from './modules/devices/device-repository.js';
import { DeviceSync } from './modules/devices/device-sync.js';
import { DeviceService } from './modules/devices/device-service.js';
import { SandboxTransport } from './modules/devices/sandbox-transport.js';
import { MqttTransport, type TransportLogger } from './modules/devices/mqtt-transport.js';
import type { DeviceTransport } from './modules/devices/transport.js';
import { DEVICE_RECONCILE_JOB, DEVICE_SYNC_JOB, deviceSyncJob, ReconcileSchedule } from './modules/devices/jobs.js';
import { MemberAccessSource } from './modules/members/member-access.js';
import { FaceVariants } from './modules/members/face-variants.js';
import { VisitorRepository } from './modules/visitors/visitor-repository.js';
import { CalendarSync } from './modules/calendar-sync/calendar-service.js';
import { CalendarRepository } from './modules/calendar-sync/calendar-repository.js';
import { VisitorService } from './modules/visitors/visitor-service.js';
import { VisitorAccessSource } from './modules/visitors/visitor-access.js';
import { FeedRepository } from './modules/calendar-sync/feed-repository.js';
import { RoomFeedService } from './modules/calendar-sync/feed-service.js';
import { UrlGuard } from './platform/net/url-guard.js';
import { TokenAttempts } from './modules/auth/token-attempts.js';
import { ConsoleSessions } from './platform/http/console-session.js';
import { OpsTokenFailures } from './platform/http/authenticate.js';
import { ChangeFeed } from './platform/changes/change-feed.js';

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
  /** Locks a booking and applies actors' changes through the one booking-change writer. */
  bookings: BookingChanges;
  /** The lifecycle job: applies due steps (tests replace its `fire`). */
  lifecycle: Lifecycle;
  deliveryRepo: DeliveryRepository;
  /** Partner member provisioning: PUT/GET/DELETE /partner/members. */
  members: MemberService;
  /** Partner members' cards and face photos (PUT …/credentials). */
  credentials: CredentialService;
  /** 30 requests per 60 s per app across the partner member routes (real time). */
  partnerRateLimit: RateLimiter;
  /** Building devices: the enrollment log members and visitors write to, the device view, the sandbox switches. */
  devices: DeviceService;
  /** Device sync (plan, deliver, repair); tests drive it directly. */
  deviceSync: DeviceSync;
  deviceTransport: DeviceTransport;
  /** Calendar sync: iTIP messages from synced rooms' mailboxes, applied as bookings. */
  calendarSync: CalendarSync;
  /** Visitor invites, scans at devices, and the withdrawal of codes whose window is over (a job). */
  visitors: VisitorService;
  /** What devices must hold for visitor invites (the devices module's AccessSource for kind `visitor`). */
  visitorAccess: VisitorAccessSource;
  /** Room feeds: each room's bookings as an iCalendar feed at a secret, revocable address. */
  roomFeeds: RoomFeedService;
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
  /** Starts the background work (the job runner). */
  startWorkers(): void;
  /** Stops background work (the clock poller and the job runner, letting in-flight work finish). */
  stop(): Promise<void>;
}

async function secretsKey(config: Config, settings: SettingsRepository): Promise<Buffer> {
  if (config.secretsKey) return config.secretsKey;
  // development/uat convenience: a key generated once and kept with the data.
  const stored = await settings.getOrInit('dev_secrets_key', randomBytes(32).toString('hex'));
  return Buffer.from(stored, 'hex');
}

/**
 * development/uat without OPS_TOKEN: the token generated at the first start is kept with the data,
 * sealed with the secrets key (printed at every start, so it must be recoverable), and reused, so
 * a restart does not end console sessions or invalidate scripts. Whichever instance stores first wins.
 */
async function keepGeneratedOpsToken(config: Config, settings: SettingsRepository, box: SecretBox): Promise<void> {
  if (!config.opsTokenGenerated) return;
  const stored = await settings.getOrInit('dev_ops_token', box.seal(config.opsToken));
  try {
    config.opsToken = box.open(stored);
  } catch {
    // Sealed under another secrets key (SECRETS_KEY changed): the new token replaces it.
    await settings.set('dev_ops_token', box.seal(config.opsToken));
  }
}

export interface ServiceOptions {
  /** Where background workers report failures (the logger in production). */
  onError?: (err: unknown, context?: { job: string }) => void;
  /** Where the MQTT device transport logs connection changes (never payloads). */
  logger?: TransportLogger;
}

export async function createServices(config: Config, storage: Storage, realClock: Clock = systemClock, options: ServiceOptions = {}): Promise<Services> {
  const settings = new SettingsRepository(storage.db);
  const serviceClock = new OffsetClock(realClock);
  const sandboxClock = new SandboxClock(serviceClock, settings, isSandbox(config.env));
  await sandboxClock.refresh();
  sandboxClock.startPolling();

  const tokens = new TokenService({
    repo: new TokenRepository(storage.db),
    env: config.env,
    lifetimes: config.tokens,
    clock: realClock,
    callerCacheMs: config.callerCacheMs,
  });

  const secretBox = new SecretBox(await secretsKey(config, settings));
  await keepGeneratedOpsToken(config, settings, secretBox);
  const onError = options.onError ?? (() => {});
  // The catalogue reads the holds on assets through its BusySlots port, over booking's tables.
  const { catalogue } = createCatalogue({ db: storage.db, clock: serviceClock, busySlots: createBusySlots({ db: storage.db }) });
  const outbox = new Outbox(new OutboxRepository(storage.db));
  // Late-bound both ways: the lifecycle steps act through booking's BookingChanges, booking's writer plans through the
  // lifecycle's planner; booking's services use the payments desk, which is built on BookingChanges.
  const { lifecycle, planner } = createLifecycle({ db: storage.db, bookings: () => booking.bookings });
  const booking: BookingModule = createBooking({
    db: storage.db, engine: storage.engine, clock: serviceClock, secretBox, catalogue, events: outbox, lifecycle: planner, payments: () => payments,
  });
  const bookingChanges = booking.bookings;
  const payments = new PaymentService({
    repo: new PaymentRepository(storage.db), provider: new SandboxProvider(), bookings: bookingChanges, secretBox, clock: serviceClock, realClock,
    publicBaseUrl: () => config.publicBaseUrl,
  });
  const deliveryRepo = new DeliveryRepository(storage.db);
  // The SSRF guard in production and uat (uat may allow loopback receivers: WEBHOOK_ALLOW_LOOPBACK=1).
  const urlGuard = new UrlGuard({ enforce: config.env !== 'development', allowLoopback: config.webhookAllowLoopback, environment: config.env });
  const jobs = new JobRunner({ clock: serviceClock, realClock, onError });
  jobs.register(lifecycle.job());
  jobs.register(deliveryJob({ repo: deliveryRepo, clock: serviceClock, realClock, secretBox, timeoutMs: config.webhookTimeoutMs, urlGuard }));
  jobs.register(tokenPurgeJob(tokens, realClock));
  jobs.register(payments.job());
  jobs.register(payments.nudgeJob());
  jobs.register(payments.inboxJob());
  // Moving the sandbox clock applies every step that falls due, in time order, before it answers.
  sandboxClock.onAdvance(async (_from, to) => {
    await jobs.replay(to);
  });
  const membersRepo = new MembersRepository(storage.db, storage.engine);
  const credentialRepo = new CredentialRepository(storage.db);
  const faceVariants = new FaceVariants({ db: storage.db, engine: storage.engine, repo: credentialRepo, secretBox, now: () => serviceClock.now() });

  // Building devices: members (and visitors) tell the devices module what changed; the sync job delivers.
  const deviceRepo = new DeviceRepository(storage.db, storage.engine);
  const deviceTransport = createTransport(config, options.logger, deviceRepo);
  const deviceSync = new DeviceSync({
    db: storage.db, engine: storage.engine, repo: deviceRepo, transport: deviceTransport, clock: serviceClock,
    sources: [new MemberAccessSource(membersRepo, credentialRepo, secretBox, faceVariants)],
    onQueued: () => jobs.poke(DEVICE_SYNC_JOB), onError,
  });
  const devices = new DeviceService({
    repo: deviceRepo, sync: deviceSync, clock: serviceClock, transport: deviceTransport.name, sandbox: isSandbox(config.env),
    poke: () => jobs.poke(DEVICE_SYNC_JOB),
  });
  jobs.register(deviceSyncJob(deviceSync, { leaseMs: config.devices.ackTimeoutMs + 30_000 }));
  const reconcile = new ReconcileSchedule(() => realClock.now(), config.devices.reconcileMs);
  jobs.register(reconcile.job(deviceSync));
  const site = new SiteService(new SiteRepository(storage.db));
  site.onApplied(() => {
    tokens.forgetCallers();
    reconcile.soon();
    jobs.poke(DEVICE_RECONCILE_JOB);
  });

  const credentials = new CredentialService({ db: storage.db, engine: storage.engine, repo: credentialRepo, members: membersRepo, secretBox, access: devices, faces: faceVariants, clock: serviceClock });
  const members = new MemberService({ db: storage.db, engine: storage.engine, repo: membersRepo, credentials, access: devices, clock: serviceClock,
    onMembershipsChanged: () => tokens.forgetCallers(),
  });

  // Visitors: invites enroll their code on the project's devices through the same sync.
  const visitorRepo = new VisitorRepository(storage.db);
  const visitorAccess = new VisitorAccessSource({ repo: visitorRepo, clock: serviceClock, secretBox });
  deviceSync.addSource(visitorAccess);
  const visitors = new VisitorService({
    db: storage.db, engine: storage.engine, repo: visitorRepo, site, units: members, devices, accessLog: devices, outbox, secretBox, clock: serviceClock,
  });
  jobs.register(visitors.expiryJob());
  const roomFeeds = new RoomFeedService({
    repo: new FeedRepository(storage.db), catalogue, bookings: bookingChanges, secretBox, clock: serviceClock,
    publicBaseUrl: () => config.publicBaseUrl,
  });
  const changeFeed = new ChangeFeed({
    sources: [
      { kind: 'meeting', ...booking.changeSource },
      { kind: 'delivery', changedSince: (t, n) => deliveryRepo.changedSince(t, n), latest: () => deliveryRepo.lastChangeAt() },
      { kind: 'device', changedSince: (t, n) => deviceRepo.changedSince(t, n), latest: () => deviceRepo.lastChangeAt() },
      { kind: 'visitor', changedSince: (t, n) => visitorRepo.changedSince(t, n), latest: () => visitorRepo.lastChangeAt() },
    ],
    clockMark: () => sandboxClock.state().offsetMs,
    onError: (err) => onError(err, { job: 'change-feed' }),
  });
  return {
    config,
    storage,
    clock: serviceClock,
    sandboxClock,
    tokens,
    secretBox,
    settings,
    catalogue,
    site,
    outbox,
    payments,
    meetings: booking.meetings,
    opsBookings: booking.opsBookings,
    bookings: bookingChanges,
    lifecycle,
    deliveryRepo,
    members,
    devices,
    deviceSync,
    deviceTransport,
    credentials,
    partnerRateLimit: new RateLimiter(new RateLimitRepository(storage.db), realClock, config.partnerRateLimitPerMinute, 60_000),
    visitors,
    visitorAccess,
    calendarSync: new CalendarSync({
      changes: bookingChanges, catalogue, organizers: site, repo: new CalendarRepository(storage.db), secretBox, clock: serviceClock,
    }),
    roomFeeds,
    jobs,
    urlGuard,
    tokenAttempts: new TokenAttempts(
      new RateLimiter(new RateLimitRepository(storage.db), realClock, config.tokenFailures.perApp, config.tokenFailures.windowMs),
      new RateLimiter(new RateLimitRepository(storage.db), realClock, config.tokenFailures.perAddress, config.tokenFailures.windowMs),
    ),
    changeFeed,
    consoleSessions: new ConsoleSessions(config.opsToken, config.env, new ConsoleSessionRepository(storage.db), realClock),
    opsTokenFailures: new OpsTokenFailures(new RateLimiter(new RateLimitRepository(storage.db), realClock, config.tokenFailures.perAddress, config.tokenFailures.windowMs)),
    startWorkers: () => {
      void deviceTransport.start(deviceSync).catch((err) => onError(err, { job: 'device-transport' }));
      jobs.start();
    },
    stop: async () => {
      sandboxClock.stop();
      await changeFeed.stop();
      await jobs.stop();
      await deviceTransport.stop();
    },
  };
}

/** The device transport DEVICE_TRANSPORT selects. */
function createTransport(config: Config, logger: TransportLogger | undefined, repo: DeviceRepository): DeviceTransport {
  const d = config.devices;
  if (d.transport === 'sandbox') return new SandboxTransport((id) => repo.sandboxMemory(id));
  return new MqttTransport({ url: d.mqttUrl, topicPrefix: d.topicPrefix, ackTimeoutMs: d.ackTimeoutMs, logger });
}
