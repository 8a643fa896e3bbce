/**
 * Service configuration, read once from environment variables.
 * The variable names are part of the operator contract (docs/operator-api.md).
 */
import { randomBytes } from 'node:crypto';

export type BookingEnv = 'development' | 'uat' | 'production';

export interface TokenLifetimes {
  accessSeconds: number;
  refreshSeconds: number;
  actAsSeconds: number;
  /** How long a rotated refresh token presented again is treated as a benign retry. */
  refreshReuseGraceSeconds: number;
}

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  engine: 'sqlite' | 'postgres';
  env: BookingEnv;
  opsToken: string;
  opsTokenGenerated: boolean;
  publicBaseUrl: string;
  demo: boolean;
  /** 32-byte key for secrets that must be recoverable (webhook secrets). */
  secretsKey: Buffer | null;
  /** Earlier secrets keys (SECRETS_KEY_PREVIOUS, comma-separated): they still open what they sealed, never seal. */
  secretsKeyPrevious: Buffer[];
  tokens: TokenLifetimes;
  logLevel: string;
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes: number;
  /** Largest site document POST /ops/v1/apply accepts, in bytes (APPLY_BODY_LIMIT_BYTES). */
  applyBodyLimitBytes: number;
  /** How long a webhook receiver has to answer. */
  webhookTimeoutMs: number;
  /** uat only (WEBHOOK_ALLOW_LOOPBACK=1): webhook URLs may name loopback receivers (the SSRF guard refuses them otherwise). */
  webhookAllowLoopback: boolean;
  /** Partner member requests per app per 60 s (the specification's 30; raise it only for load tests). */
  partnerRateLimitPerMinute: number;
  /** How long a resolved bearer token is reused without reading the token store (0: never). */
  callerCacheMs: number;
  /** Origins allowed to call the API from a browser (CORS_ORIGINS, comma-separated); empty: CORS closed. */
  corsOrigins: string[];
  /**
   * Which proxies' X-Forwarded-For is believed (TRUST_PROXY): false (default: the
   * socket's address is the client's), a hop count, or comma-separated addresses/CIDRs.
   */
  trustProxy: boolean | number | string;
  /**
   * Failed attempts allowed per window: app_secret failures at the token endpoint per (app_id, client address) pair
   * (`perApp`) and per client address (`perAddress`, also the limit of wrong ops tokens per address).
   */
  tokenFailures: { perApp: number; perAddress: number; windowMs: number };
  /** How long SIGTERM may take (in-flight requests and the running job) before the process exits 1 anyway. */
  shutdownTimeoutMs: number;
  /**
   * JOB_POLL_MS: every job handler's poll interval instead of its own (unset: their own, 0.25–60 s). Work is
   * started by wake-ups (commits, LISTEN/NOTIFY, next due times) and the poll is the fallback; tests set it long.
   */
  jobPollMs?: number;
  /** HTTP connection timeouts (Node's server: keep-alive idle, headers, whole request, socket inactivity). */
  timeouts: { keepAliveMs: number; headersMs: number; requestMs: number; connectionMs: number };
  /**
   * /metrics (docs/operations.md "Metrics"): behind `token` (METRICS_TOKEN, Bearer) on the service's listener, and/or
   * alone on its own listener `port`/`host` (METRICS_PORT, METRICS_HOST) without a credential; neither: no /metrics.
   */
  metrics: { token: string | null; port: number | null; host: string };
  /**
   * Load shedding: new requests get 503 KS004 with Retry-After while the event loop's delay (mean over a sample
   * interval) is above `maxEventLoopDelayMs` (MAX_EVENT_LOOP_DELAY_MS; 0: off).
   */
  loadShedding: { maxEventLoopDelayMs: number; sampleIntervalMs: number };
  /** Real payment providers (docs/payments.md "Connecting a provider"). */
  payments: {
    /** How long one call to a provider may take (PAYMENT_PROVIDER_TIMEOUT_MS). */
    providerTimeoutMs: number;
    /** A pending payment is asked about at its provider once it is this old, and again this often (PAYMENT_RECONCILE_AFTER_SECONDS). */
    reconcileAfterMs: number;
    /** How long past a deadline a lapse waits for a provider that cannot be asked (PAYMENT_LAPSE_GRACE_SECONDS). */
    lapseGraceMs: number;
  };
  /** Connected room calendars (docs/calendar-sync.md "Connected calendars"). */
  calendars: {
    /** How long one call to Microsoft Graph or Google Calendar may take (CALENDAR_PROVIDER_TIMEOUT_MS). */
    providerTimeoutMs: number;
  };
  /** How device changes reach devices (operator-api.md "Access devices"). */
  devices: {
    transport: 'sandbox' | 'mqtt';
    mqttUrl: string;
    topicPrefix: string;
    /** How long the gateway has to acknowledge a batch of commands. */
    ackTimeoutMs: number;
    /** How often every device is compared with what it must hold. */
    reconcileMs: number;
    /** A device that polls the service (ZKTeco PUSH) and has not for this long counts as offline (DEVICE_PULL_STALE_SECONDS). */
    pullStaleMs: number;
  };
}

const LIFETIMES: Record<BookingEnv, TokenLifetimes> = {
  development: { accessSeconds: 3600, refreshSeconds: 30 * 86400, actAsSeconds: 900, refreshReuseGraceSeconds: 30 },
  uat: { accessSeconds: 3600, refreshSeconds: 30 * 86400, actAsSeconds: 900, refreshReuseGraceSeconds: 30 },
  production: { accessSeconds: 900, refreshSeconds: 14 * 86400, actAsSeconds: 300, refreshReuseGraceSeconds: 30 },
};

/** Every configuration problem found, one message each (`problems`); the message lists them all. */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string | string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.length === 1 ? list[0] : `${list.length} problems:\n${list.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = list;
  }
}

/**
 * Problems found so far by the running loadConfig (it is synchronous): readers report a bad value
 * here and carry on with the default, so one start-up names every missing or invalid variable.
 */
let collecting: string[] | null = null;

function problem(message: string): void {
  if (!collecting) throw new ConfigError([message]);
  collecting.push(message);
}

function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    problem(`${name} must be an integer >= ${min}, got "${raw}"`);
    return fallback;
  }
  return n;
}

function parseSecretsKey(raw: string | undefined, name = 'SECRETS_KEY'): Buffer | null {
  if (!raw) return null;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    problem(`${name} must be 32 bytes, as 64 hex characters or base64`);
    return null;
  }
  return key;
}

function parsePreviousSecretsKeys(raw: string | undefined): Buffer[] {
  const parts = (raw ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return parts.map((p) => parseSecretsKey(p, 'each SECRETS_KEY_PREVIOUS key')).filter((k): k is Buffer => k !== null);
}

/** Whether a DATABASE_URL names PostgreSQL (`postgres://` or `postgresql://`); anything else is a SQLite file path. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** DATABASE_URL (default ./data/booking.sqlite) and the engine it names: the one rule, shared with the backup command. */
export function readDatabaseUrl(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'databaseUrl' | 'engine'> {
  const databaseUrl = env.DATABASE_URL || './data/booking.sqlite';
  return { databaseUrl, engine: isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite' };
}

/** loadConfig for an entry point (main.ts, src/cli): configuration problems are printed as `configuration error: …`; null then (the caller exits 2). */
export function loadConfigOrReport(env: NodeJS.ProcessEnv = process.env): Config | null {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`configuration error: ${err.message}`);
    return null;
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const outer = collecting;
  collecting = [];
  try {
    const config = readConfig(env);
    if (collecting.length > 0) throw new ConfigError(collecting);
    return config;
  } finally {
    collecting = outer;
  }
}

/** The connection timeouts (README), and their one consistency check. */
function readTimeouts(env: NodeJS.ProcessEnv): Config['timeouts'] {
  const timeouts = {
    keepAliveMs: intVar(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 1),
    headersMs: intVar(env, 'HEADERS_TIMEOUT_MS', 20_000, 1),
    requestMs: intVar(env, 'REQUEST_TIMEOUT_MS', 120_000, 1),
    connectionMs: intVar(env, 'CONNECTION_TIMEOUT_MS', 120_000, 0),
  };
  if (timeouts.headersMs > timeouts.requestMs) problem('HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS');
  return timeouts;
}

/** METRICS_TOKEN (production: at least 32 characters, like OPS_TOKEN), METRICS_PORT and METRICS_HOST. */
function readMetrics(env: NodeJS.ProcessEnv, bookingEnv: BookingEnv, servicePort: number): Config['metrics'] {
  const token = env.METRICS_TOKEN || null;
  if (token !== null && bookingEnv === 'production' && token.length < 32)
    problem('METRICS_TOKEN must be at least 32 characters in production');
  let port: number | null = null;
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT !== '') {
    port = intVar(env, 'METRICS_PORT', 0, 0);
    if (port > 65535) problem(`METRICS_PORT must be a port number, got "${env.METRICS_PORT}"`);
    if (port !== 0 && port === servicePort) problem('METRICS_PORT must differ from PORT (the metrics listener has no credential)');
  }
  return { token, port, host: env.METRICS_HOST || '127.0.0.1' };
}

/** MAX_EVENT_LOOP_DELAY_MS: off by default in development (a debugger's pause or a laptop's test run is not an overload). */
function readLoadShedding(env: NodeJS.ProcessEnv, bookingEnv: BookingEnv): Config['loadShedding'] {
  return {
    maxEventLoopDelayMs: intVar(env, 'MAX_EVENT_LOOP_DELAY_MS', bookingEnv === 'development' ? 0 : 1000, 0),
    sampleIntervalMs: 1000,
  };
}

/** SECRETS_KEY (required in production) and SECRETS_KEY_PREVIOUS (only beside SECRETS_KEY). */
function readSecretsKeys(env: NodeJS.ProcessEnv, bookingEnv: BookingEnv): Pick<Config, 'secretsKey' | 'secretsKeyPrevious'> {
  const secretsKey = parseSecretsKey(env.SECRETS_KEY);
  if (!secretsKey && bookingEnv === 'production' && !env.SECRETS_KEY) problem('SECRETS_KEY is required in production');
  const secretsKeyPrevious = parsePreviousSecretsKeys(env.SECRETS_KEY_PREVIOUS);
  if (secretsKeyPrevious.length > 0 && !env.SECRETS_KEY) problem('SECRETS_KEY_PREVIOUS needs SECRETS_KEY (the key that seals)');
  return { secretsKey, secretsKeyPrevious };
}

function readConfig(env: NodeJS.ProcessEnv): Config {
  let bookingEnv = (env.BOOKING_ENV || 'development') as BookingEnv;
  if (!['development', 'uat', 'production'].includes(bookingEnv)) {
    problem(`BOOKING_ENV must be development, uat or production, got "${bookingEnv}"`);
    // The variables production requires are still checked, so they are reported too.
    bookingEnv = 'production';
  }
  const port = intVar(env, 'PORT', 3000);
  const host = env.HOST || '127.0.0.1';
  const { databaseUrl, engine } = readDatabaseUrl(env);

  let opsToken = env.OPS_TOKEN || '';
  let opsTokenGenerated = false;
  if (!opsToken) {
    if (bookingEnv === 'production') problem('OPS_TOKEN is required in production');
    opsToken = `ops_${randomBytes(24).toString('base64url')}`;
    opsTokenGenerated = true;
  } else if (bookingEnv === 'production' && opsToken.length < 32) {
    problem('OPS_TOKEN must be at least 32 characters in production');
  }

  const { secretsKey, secretsKeyPrevious } = readSecretsKeys(env, bookingEnv);

  const base = LIFETIMES[bookingEnv];
  const tokens: TokenLifetimes = {
    accessSeconds: intVar(env, 'ACCESS_TOKEN_TTL_SECONDS', base.accessSeconds, 1),
    refreshSeconds: intVar(env, 'REFRESH_TOKEN_TTL_SECONDS', base.refreshSeconds, 1),
    actAsSeconds: intVar(env, 'ACT_AS_TOKEN_TTL_SECONDS', base.actAsSeconds, 1),
    refreshReuseGraceSeconds: intVar(env, 'REFRESH_REUSE_GRACE_SECONDS', base.refreshReuseGraceSeconds, 0),
  };

  // It bounds how long another instance's revocation can go unseen, so it stays short.
  const callerCacheMs = intVar(env, 'CALLER_CACHE_MS', 2000, 0);
  if (callerCacheMs > 60_000) problem('CALLER_CACHE_MS must be at most 60000');

  let transport = (env.DEVICE_TRANSPORT || 'sandbox') as 'sandbox' | 'mqtt';
  if (transport !== 'sandbox' && transport !== 'mqtt') {
    problem(`DEVICE_TRANSPORT must be sandbox or mqtt, got "${transport}"`);
    transport = 'sandbox';
  }

  const timeouts = readTimeouts(env);

  const webhookAllowLoopback = env.WEBHOOK_ALLOW_LOOPBACK === '1';
  if (webhookAllowLoopback && bookingEnv === 'production')
    problem('WEBHOOK_ALLOW_LOOPBACK is for uat only; production never delivers to loopback');

  const demoDefault = bookingEnv === 'development' ? '1' : '0';
  return {
    port,
    host,
    databaseUrl,
    engine,
    env: bookingEnv,
    opsToken,
    opsTokenGenerated,
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/$/, ''),
    demo: (env.DEMO ?? demoDefault) === '1',
    secretsKey,
    secretsKeyPrevious,
    tokens,
    logLevel: env.LOG_LEVEL || 'info',
    bodyLimitBytes: intVar(env, 'BODY_LIMIT_BYTES', 15 * 1024 * 1024, 1024),
    applyBodyLimitBytes: intVar(env, 'APPLY_BODY_LIMIT_BYTES', 8 * 1024 * 1024, 1024),
    webhookTimeoutMs: intVar(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
    webhookAllowLoopback,
    partnerRateLimitPerMinute: intVar(env, 'PARTNER_RATE_LIMIT_PER_MINUTE', 30, 1),
    callerCacheMs,
    corsOrigins: parseOrigins(env.CORS_ORIGINS),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    tokenFailures: {
      perApp: intVar(env, 'TOKEN_FAILURES_PER_APP', 10, 1),
      perAddress: intVar(env, 'TOKEN_FAILURES_PER_ADDRESS', 30, 1),
      windowMs: intVar(env, 'TOKEN_FAILURE_WINDOW_SECONDS', 300, 1) * 1000,
    },
    shutdownTimeoutMs: intVar(env, 'SHUTDOWN_TIMEOUT_MS', 15_000, 100),
    timeouts,
    metrics: readMetrics(env, bookingEnv, port),
    loadShedding: readLoadShedding(env, bookingEnv),
    payments: readPayments(env),
    calendars: { providerTimeoutMs: intVar(env, 'CALENDAR_PROVIDER_TIMEOUT_MS', 10_000, 100) },
    devices: readDevices(env, transport),
    ...(env.JOB_POLL_MS ? { jobPollMs: intVar(env, 'JOB_POLL_MS', 1000, 10) } : {}),
  };
}

/** MQTT_URL, MQTT_TOPIC_PREFIX, DEVICE_ACK_TIMEOUT_MS, DEVICE_RECONCILE_SECONDS, DEVICE_PULL_STALE_SECONDS. */
function readDevices(env: NodeJS.ProcessEnv, transport: 'sandbox' | 'mqtt'): Config['devices'] {
  return {
    transport,
    mqttUrl: env.MQTT_URL || 'mqtt://127.0.0.1:1883',
    topicPrefix: (env.MQTT_TOPIC_PREFIX || 'booking').replace(/\/+$/, ''),
    ackTimeoutMs: intVar(env, 'DEVICE_ACK_TIMEOUT_MS', 5_000, 100),
    reconcileMs: intVar(env, 'DEVICE_RECONCILE_SECONDS', 300, 1) * 1000,
    pullStaleMs: intVar(env, 'DEVICE_PULL_STALE_SECONDS', 60, 1) * 1000,
  };
}

/** PAYMENT_PROVIDER_TIMEOUT_MS, PAYMENT_RECONCILE_AFTER_SECONDS, PAYMENT_LAPSE_GRACE_SECONDS. */
function readPayments(env: NodeJS.ProcessEnv): Config['payments'] {
  return {
    providerTimeoutMs: intVar(env, 'PAYMENT_PROVIDER_TIMEOUT_MS', 10_000, 100),
    reconcileAfterMs: intVar(env, 'PAYMENT_RECONCILE_AFTER_SECONDS', 120, 1) * 1000,
    lapseGraceMs: intVar(env, 'PAYMENT_LAPSE_GRACE_SECONDS', 600, 0) * 1000,
  };
}

/** CORS_ORIGINS: comma-separated origins (scheme://host[:port], no path); "*" is refused (list the origins). */
function parseOrigins(raw: string | undefined): string[] {
  const out: string[] = [];
  for (const item of (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let origin: string | null = null;
    try {
      const u = new URL(item);
      if ((u.protocol === 'https:' || u.protocol === 'http:') && u.origin === item.replace(/\/$/, '')) origin = u.origin;
    } catch {
      origin = null;
    }
    if (!origin) {
      problem(`CORS_ORIGINS must list origins like https://app.example.com (no path, no "*"), got "${item}"`);
      continue;
    }
    if (!out.includes(origin)) out.push(origin);
  }
  return out;
}

export function isSandbox(env: BookingEnv): boolean {
  return env === 'development' || env === 'uat';
}

/** TRUST_PROXY: empty or `false` → false; `true` → every hop; a whole number → that many hops; else addresses/CIDRs. */
function parseTrustProxy(value: string | undefined): boolean | number | string {
  const v = (value ?? '').trim();
  if (v === '' || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v;
}
