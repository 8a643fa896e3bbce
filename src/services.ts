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
import { randomBytes } from 'node:crypto';
import { createCatalogue, type CatalogueService } from './modules/catalogue/index.js';
import { createBooking, createBusySlots, type BookingChanges, type BookingModule, type MeetingService, type OpsBookings } from './modules/booking/index.js';
import { createLifecycle, type Lifecycle } from './modules/lifecycle/index.js';
import { createWebhooks, type DeliveryRepository, type Outbox, type WebhookService } from './modules/webhooks/index.js';
import { createSite, type SiteService } from './modules/site/index.js';
import { createPayments, type PaymentService } from './modules/payments/index.js';
import { JobRunner } from './platform/jobs/runner.js';
import { createMembers, type CredentialService, type MemberService, type PartnerRateLimit } from './modules/members/index.js';
import { RateLimitRepository } from './platform/db/rate-limit-repository.js';
import { ConsoleSessionRepository } from './platform/db/console-session-repository.js';
import { RateLimiter } from './platform/rate-limit.js';
import { createDevices, type DeviceService, type DeviceSync, type DeviceTransport, type TransportLogger } from './modules/devices/index.js';
import { createCalendarSync, type CalendarSync, type RoomFeedService } from './modules/calendar-sync/index.js';
import { createVisitors, type VisitorAccessSource, type VisitorService } from './modules/visitors/index.js';
import { UrlGuard } from './platform/net/url-guard.js';
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

  const auth = createAuth({
    db: storage.db, env: config.env, lifetimes: config.tokens, realClock, callerCacheMs: config.callerCacheMs, tokenFailures: config.tokenFailures,
  });
  const tokens = auth.tokens;

  const secretBox = new SecretBox(await secretsKey(config, settings));
  await keepGeneratedOpsToken(config, settings, secretBox);
  const onError = options.onError ?? (() => {});
  // The catalogue reads the holds on assets through its BusySlots port, over booking's tables.
  const { catalogue } = createCatalogue({ db: storage.db, clock: serviceClock, busySlots: createBusySlots({ db: storage.db }) });
  // The SSRF guard in production and uat (uat may allow loopback receivers: WEBHOOK_ALLOW_LOOPBACK=1).
  const urlGuard = new UrlGuard({ enforce: config.env !== 'development', allowLoopback: config.webhookAllowLoopback, environment: config.env });
  const webhooksModule = createWebhooks({
    db: storage.db, secretBox, clock: serviceClock, realClock, timeoutMs: config.webhookTimeoutMs, urlGuard,
    // Late-bound: the job runner is built below, after the outbox the writer needs.
    pokeJob: (name) => void jobs.poke(name),
  });
  const outbox = webhooksModule.outbox;
  // Late-bound both ways: the lifecycle steps act through booking's BookingChanges, booking's writer plans through the
  // lifecycle's planner; booking's services use the payments desk, which is built on BookingChanges.
  const { lifecycle, planner } = createLifecycle({ db: storage.db, bookings: () => booking.bookings });
  const booking: BookingModule = createBooking({
    db: storage.db, engine: storage.engine, clock: serviceClock, secretBox, catalogue, events: outbox, lifecycle: planner, payments: () => payments,
  });
  const bookingChanges = booking.bookings;
  const paymentsModule = createPayments({
    db: storage.db, bookings: bookingChanges, secretBox, clock: serviceClock, realClock, publicBaseUrl: () => config.publicBaseUrl,
  });
  const payments = paymentsModule.payments;
  const jobs = new JobRunner({ clock: serviceClock, realClock, onError });
  jobs.register(lifecycle.job());
  jobs.register(webhooksModule.deliveryJob);
  jobs.register(auth.purgeJob);
  jobs.register(paymentsModule.jobs.lapse);
  jobs.register(paymentsModule.jobs.nudge);
  jobs.register(paymentsModule.jobs.inbox);
  // Moving the sandbox clock applies every step that falls due, in time order, before it answers.
  sandboxClock.onAdvance(async (_from, to) => {
    await jobs.replay(to);
  });
  // Building devices: members (and visitors) tell the devices module what changed; the sync job delivers.
  const deviceModule = createDevices({
    db: storage.db, engine: storage.engine, clock: serviceClock, realClock, config: config.devices, sandbox: isSandbox(config.env), jobs,
    logger: options.logger, onError,
  });
  const { service: devices, sync: deviceSync, transport: deviceTransport } = deviceModule;
  const site = createSite({
    db: storage.db, env: config.env, secretBox, clock: serviceClock, checkUrl: (url) => urlGuard.checkUrl(url),
  }).site;
  site.onApplied(() => {
    tokens.forgetCallers();
    deviceModule.reconcileSoon();
  });

  // Members record access changes in the devices' log; the devices plan with the members' AccessSource.
  const memberModule = createMembers({
    db: storage.db, engine: storage.engine, secretBox, clock: serviceClock, realClock, access: devices,
    partnerRateLimitPerMinute: config.partnerRateLimitPerMinute, onMembershipsChanged: () => tokens.forgetCallers(),
  });
  const { members, credentials } = memberModule;
  deviceSync.addSource(memberModule.accessSource);

  // Visitors: invites enroll their code on the project's devices through the same sync.
  const visitorModule = createVisitors({
    db: storage.db, engine: storage.engine, secretBox, clock: serviceClock, site, units: members, devices, accessLog: devices, outbox, jobs,
  });
  const { visitors, accessSource: visitorAccess } = visitorModule;
  deviceSync.addSource(visitorAccess);
  const calendar = createCalendarSync({
    db: storage.db, bookings: bookingChanges, rooms: catalogue, organizers: site, secretBox, clock: serviceClock,
    publicBaseUrl: () => config.publicBaseUrl,
  });
  const changeFeed = new ChangeFeed({
    sources: [
      { kind: 'meeting', ...booking.changeSource },
      { kind: 'delivery', changedSince: (t, n) => webhooksModule.webhooks.changedSince(t, n), latest: () => webhooksModule.webhooks.lastChangeAt() },
      deviceModule.changes,
      visitorModule.changes,
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
    webhooks: webhooksModule.webhooks,
    deliveryRepo: webhooksModule.deliveryRepo,
    members,
    devices,
    deviceSync,
    deviceTransport,
    credentials,
    partnerRateLimit: memberModule.partnerRateLimit,
    visitors,
    visitorAccess,
    calendarSync: calendar.calendarSync,
    roomFeeds: calendar.roomFeeds,
    jobs,
    urlGuard,
    tokenAttempts: auth.tokenAttempts,
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
