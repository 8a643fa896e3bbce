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
import { CatalogueRepository } from './modules/catalogue/catalogue-repository.js';
import { CatalogueService } from './modules/catalogue/catalogue-service.js';
import { MeetingService } from './modules/booking/meeting-service.js';
import { PeopleRepository } from './modules/booking/people-repository.js';
import { LifecycleWorker } from './modules/lifecycle/lifecycle-worker.js';
import { DeliveryWorker } from './modules/webhooks/delivery-worker.js';
import { DeliveryRepository } from './modules/webhooks/delivery-repository.js';

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
  meetings: MeetingService;
  lifecycle: LifecycleWorker;
  deliveries: DeliveryWorker;
  deliveryRepo: DeliveryRepository;
  /** Starts the background workers (timers, webhook delivery). */
  startWorkers(): void;
  /** Stops background work (pollers, workers). */
  stop(): Promise<void>;
}

async function secretsKey(config: Config, settings: SettingsRepository): Promise<Buffer> {
  if (config.secretsKey) return config.secretsKey;
  // development/uat convenience: a key generated once and kept with the data.
  const stored = await settings.getOrInit('dev_secrets_key', randomBytes(32).toString('hex'));
  return Buffer.from(stored, 'hex');
}

export interface ServiceOptions {
  /** Where background workers report failures (the logger in production). */
  onError?: (err: unknown) => void;
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
  });

  const catalogueRepo = new CatalogueRepository(storage.db);
  const secretBox = new SecretBox(await secretsKey(config, settings));
  const onError = options.onError ?? (() => {});
  const lifecycle = new LifecycleWorker({ db: storage.db, engine: storage.engine, clock: serviceClock, onError });
  const deliveryRepo = new DeliveryRepository(storage.db);
  const deliveries = new DeliveryWorker({ repo: deliveryRepo, clock: serviceClock, realClock, secretBox, onError, timeoutMs: config.webhookTimeoutMs });
  let purgeTimer: NodeJS.Timeout | undefined;
  // Moving the sandbox clock applies every step that falls due, in time order, before it answers.
  sandboxClock.onAdvance(async (_from, to) => {
    await lifecycle.runDue(to);
  });
  return {
    config,
    storage,
    clock: serviceClock,
    sandboxClock,
    tokens,
    secretBox,
    settings,
    catalogue: new CatalogueService(catalogueRepo, serviceClock),
    meetings: new MeetingService({
      db: storage.db, engine: storage.engine, clock: serviceClock, secretBox,
      catalogue: catalogueRepo, people: new PeopleRepository(storage.db),
    }),
    lifecycle,
    deliveries,
    deliveryRepo,
    startWorkers: () => {
      lifecycle.start();
      deliveries.start();
      const purge = () => void tokens.purgeExpired().catch(onError);
      purgeTimer = setInterval(purge, 3_600_000);
      purgeTimer.unref();
    },
    stop: async () => {
      clearInterval(purgeTimer);
      sandboxClock.stop();
      await lifecycle.stop();
      await deliveries.stop();
    },
  };
}
