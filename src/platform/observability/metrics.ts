/**
 * The service's Prometheus metrics (docs/operations.md "Metrics"), on a registry of
 * its own (several services may live in one process: tests).
 *
 * - Requests: a counter and a latency histogram by templated route, method and status
 *   (`observeRequest`, called once per answer; the label children are cached, so the
 *   hot path is a few map look-ups and two increments).
 * - Statements: a histogram per statement kind and a counter of failed statements, fed
 *   by `Storage.observeQueries`.
 * - Jobs: runs per job and outcome, failures per job (the runner's run observer); the
 *   webhook delivery job's runs are also counted as deliveries by outcome.
 * - Gauges read from the database (job backlog and oldest due item, undelivered webhook
 *   events, device command queue, devices offline, payments by state) are read at scrape
 *   time, at most once per `readCacheMs`; a failing read keeps the last values and is
 *   counted (`booking_metrics_read_failures_total`), it never fails the scrape.
 * - prom-client's default metrics (process, heap, GC, event-loop delay), unprefixed.
 */
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type HistogramConfiguration,
  type MetricObjectWithValues,
  type MetricValue,
  type MetricValueWithName,
} from 'prom-client';
import type { QueryObserver } from '../db/database.js';
import type { JobBacklog, JobRunObserver } from '../jobs/runner.js';
import { statementKind, STATEMENT_KINDS, type StatementKind } from './statement-kind.js';

/** What the metrics read from the database at scrape time (each module's COUNT reads, wired in services.ts). */
export interface MetricReads {
  /** Due work per job (JobRunner.backlog); a job whose read fails is reported through `onError` and left out. */
  jobBacklog(onError: (err: unknown, job: string) => void): Promise<JobBacklog[]>;
  /** Deliveries to enabled listeners not delivered yet, and the creation time (service clock) of the oldest. */
  undeliveredWebhooks(): Promise<{ count: number; oldestCreatedAt: number | null }>;
  /** Device commands not yet applied, and devices offline. */
  deviceQueue(): Promise<{ pendingCommands: number; offlineDevices: number }>;
  /** Payments per state. */
  paymentsByState(): Promise<Record<string, number>>;
}

export interface MetricsDeps {
  observeQueries(listener: QueryObserver): void;
  observeRuns(listener: JobRunObserver): void;
  reads: MetricReads;
  /** The job whose runs are webhook delivery attempts. */
  deliveryJob: string;
  /** Service time (the sandbox offset included): the clock due times and event creation times are on. */
  serviceNow(): number;
  /** Real milliseconds (monotonic): the read cache. */
  realNow?: () => number;
  /** Default 5000. */
  readCacheMs?: number;
}

/** Payment states always exported (0 when none), so a dashboard sees every series. */
const PAYMENT_STATES = ['pending', 'settled', 'voided', 'expired', 'refunded'];
/** The route label of a request no route matched (404s): one value, never the raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';
const DB_NOTE = 'On PostgreSQL this is global to the database (every instance reports the same value).';

type RequestLabel = 'route' | 'method' | 'status';

/** One label set of a histogram kept as plain numbers: its count, sum and observations per bucket. */
class SeriesEntry<L extends string> {
  count = 0;
  sum = 0;
  /** Observations per bucket, not cumulative; the last slot holds those above every bound. */
  readonly perBucket: number[];
  constructor(
    readonly labels: Record<L, string>,
    private readonly bounds: readonly number[],
  ) {
    this.perBucket = new Array<number>(bounds.length + 1).fill(0);
  }
  add(seconds: number): void {
    this.count++;
    this.sum += seconds;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    this.perBucket[i]!++;
  }
}

/**
 * Histograms (and counters) read from series of plain numbers: a labelled `observe`/`inc`
 * in prom-client checks and hashes the labels on every call (about 5 % of the CPU of an
 * authenticated GET; a create runs a dozen statements, each observed), while here an
 * observation costs a few map look-ups and additions. What a scrape sees is prom-client's
 * own shape and text (test/unit/request-metrics.test.ts compares it with prom-client's
 * Counter and Histogram). `all` is in order of first observation, as prom-client's.
 */
interface Series<L extends string> {
  readonly bounds: readonly number[];
  readonly all: readonly SeriesEntry<L>[];
}

/** Answers by route × method × status. */
class RequestSeries implements Series<RequestLabel> {
  private readonly byRoute = new Map<string, Map<string, Map<number, SeriesEntry<RequestLabel>>>>();
  readonly all: SeriesEntry<RequestLabel>[] = [];
  constructor(readonly bounds: readonly number[]) {}

  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map<string, Map<number, SeriesEntry<RequestLabel>>>()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map<number, SeriesEntry<RequestLabel>>()));
    let entry = byStatus.get(status);
    if (!entry) {
      entry = new SeriesEntry({ route, method, status: String(status) }, this.bounds);
      byStatus.set(status, entry);
      this.all.push(entry);
    }
    entry.add(seconds);
  }
}

/** Statements by kind. */
class KindSeries implements Series<'kind'> {
  private readonly byKind = new Map<string, SeriesEntry<'kind'>>();
  readonly all: SeriesEntry<'kind'>[] = [];
  constructor(readonly bounds: readonly number[]) {}

  observe(kind: string, seconds: number): void {
    let entry = this.byKind.get(kind);
    if (!entry) {
      entry = new SeriesEntry({ kind }, this.bounds);
      this.byKind.set(kind, entry);
      this.all.push(entry);
    }
    entry.add(seconds);
  }
}

/** prom-client's Counter whose values are the series' counts. */
class SeriesCounter<L extends string> extends Counter<L> {
  constructor(
    private readonly config: CounterConfiguration<L>,
    private readonly series: Series<L>,
  ) {
    super(config);
  }
  override async get(): Promise<MetricObjectWithValues<MetricValue<L>>> {
    const values = this.series.all.map((e) => ({ labels: { ...e.labels }, value: e.count }));
    return { name: this.config.name, help: this.config.help, type: 'counter', aggregator: 'sum', values } as never;
  }
}

/** One row of a histogram's exposition as prom-client's registry reads it: the series' labels kept apart from `le`. */
type HistogramRow<L extends string> = MetricValueWithName<L> & { sharedLabels: Record<string, string>; exemplar?: null };

/** prom-client's Histogram whose buckets, sums and counts are the series'. */
class SeriesHistogram<L extends string> extends Histogram<L> {
  constructor(
    private readonly config: HistogramConfiguration<L>,
    private readonly series: Series<L>,
  ) {
    super(config);
  }
  /** As prom-client's: the series' labels as shared labels, after `le` (the registry's text reads this). */
  async getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    const { name, help } = this.config;
    const values: HistogramRow<L>[] = [];
    const bounds = this.series.bounds;
    for (const e of this.series.all) {
      const shared = e.labels;
      let acc = 0;
      for (let i = 0; i < bounds.length; i++) {
        acc += e.perBucket[i]!;
        values.push({ labels: { le: bounds[i] } as never, sharedLabels: shared, value: acc, metricName: `${name}_bucket`, exemplar: null });
      }
      values.push({ labels: { le: '+Inf' } as never, sharedLabels: shared, value: e.count, metricName: `${name}_bucket`, exemplar: null });
      values.push({ labels: {}, sharedLabels: shared, value: e.sum, metricName: `${name}_sum` });
      values.push({ labels: {}, sharedLabels: shared, value: e.count, metricName: `${name}_count` });
    }
    return { name, help, type: 'histogram', aggregator: 'sum', values } as never;
  }
  /** As prom-client's `get`: each value's labels with the shared ones merged in. */
  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    const data = await this.getForPromString();
    const values = (data.values as HistogramRow<L>[]).map(({ sharedLabels, labels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return { ...data, values };
  }
}

/**
 * booking_http_requests_total and booking_http_request_duration_seconds on `registers`, fed by `observe` only
 * (the two prom-client objects are kept out of reach: their own `inc`/`observe` would not show in a scrape).
 */
export class RequestMetrics {
  private readonly series = new RequestSeries(REQUEST_BUCKETS);
  constructor(registers: Registry[]) {
    const labelNames: RequestLabel[] = ['route', 'method', 'status'];
    new SeriesCounter({ name: 'booking_http_requests_total', help: REQUESTS_HELP, labelNames, registers }, this.series);
    new SeriesHistogram(
      { name: 'booking_http_request_duration_seconds', help: REQUEST_DURATION_HELP, labelNames, buckets: REQUEST_BUCKETS, registers },
      this.series,
    );
  }
  observe(route: string, method: string, status: number, seconds: number): void {
    this.series.observe(route, method, status, seconds);
  }
}

/**
 * booking_db_statement_duration_seconds on `registers`, fed by `observe` only (as RequestMetrics: the prom-client
 * object is kept out of reach).
 */
export class StatementDurations {
  private readonly series = new KindSeries(STATEMENT_BUCKETS);
  constructor(registers: Registry[]) {
    new SeriesHistogram(
      {
        name: 'booking_db_statement_duration_seconds',
        help: STATEMENT_DURATION_HELP,
        labelNames: ['kind'],
        buckets: STATEMENT_BUCKETS,
        registers,
      },
      this.series,
    );
  }
  observe(kind: StatementKind, seconds: number): void {
    this.series.observe(kind, seconds);
  }
}

export const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
export const STATEMENT_DURATION_HELP =
  'Database statements by kind (select, insert, update, delete, other; a WITH statement by its main verb): time from sending to its result.';
export const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
export const REQUESTS_HELP = 'HTTP requests answered, by route template (unmatched: no route), method and status.';
export const REQUEST_DURATION_HELP = 'Time from a request arriving to its answer being sent, by route template, method and status.';

export class Metrics {
  readonly registry = new Registry();
  /** How long values read from the database are reused (ms); tests set 0. */
  readCacheMs: number;
  /** The separate metrics listener's address once it listens (METRICS_PORT). */
  listener: { host: string; port: number } | null = null;

  /** Answers by route, method and status (booking_http_requests_total, booking_http_request_duration_seconds). */
  private readonly requestMetrics: RequestMetrics;
  private readonly readFailures: Counter<'read'>;
  private readonly realNow: () => number;
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;
  private readonly gauges: ReturnType<Metrics['dbGauges']>;

  constructor(private readonly deps: MetricsDeps) {
    this.readCacheMs = deps.readCacheMs ?? 5000;
    this.realNow = deps.realNow ?? (() => performance.now());
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requestMetrics = new RequestMetrics(registers);
    this.readFailures = new Counter({
      name: 'booking_metrics_read_failures_total',
      help: 'Reads of database gauges at scrape time that failed (the gauges keep their last values).',
      labelNames: ['read'],
      registers,
    });
    for (const read of ['job_backlog', 'webhooks', 'devices', 'payments']) this.readFailures.labels({ read }).inc(0);
    this.observeStatements();
    this.observeJobs();
    this.gauges = this.dbGauges();
  }

  /** One answered request; `route` is the route's template (`request.routeOptions.url`), undefined when none matched. */
  observeRequest(route: string | undefined, method: string, status: number, seconds: number): void {
    this.requestMetrics.observe(route ?? UNMATCHED_ROUTE, method, status, seconds);
  }

  /** The Prometheus text exposition. */
  async render(): Promise<{ contentType: string; body: string }> {
    // Read first: then a read failing now is in this exposition's failure counter.
    await this.readDatabase();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private observeStatements(): void {
    const durations = new StatementDurations([this.registry]);
    const failures = new Counter({
      name: 'booking_db_statement_errors_total',
      help: 'Database statements that failed, by kind.',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    const failed = new Map<StatementKind, () => void>();
    for (const kind of STATEMENT_KINDS) {
      const c = failures.labels({ kind });
      c.inc(0);
      failed.set(kind, () => c.inc());
    }
    this.deps.observeQueries((event) => {
      const kind = statementKind(event.sql);
      durations.observe(kind, event.durationMs / 1000);
      if (event.failed) failed.get(kind)!();
    });
  }

  private observeJobs(): void {
    const registers = [this.registry];
    const runs = new Counter({
      name: 'booking_job_runs_total',
      help: 'Background job item runs, by job and outcome (succeeded; failed: tried again later; gave_up: failed for the last time).',
      labelNames: ['job', 'outcome'],
      registers,
    });
    const failures = new Counter({
      name: 'booking_job_failures_total',
      help: 'Background job item runs that failed (failed or gave_up), by job.',
      labelNames: ['job'],
      registers,
    });
    const deliveries = new Counter({
      name: 'booking_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered, failed_attempt (tried again later), gave_up (attempts used up).',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['delivered', 'failed_attempt', 'gave_up']) deliveries.labels({ outcome }).inc(0);
    const deliveryOutcome = { succeeded: 'delivered', failed: 'failed_attempt', gave_up: 'gave_up' } as const;
    this.deps.observeRuns((e) => {
      runs.labels({ job: e.job, outcome: e.outcome }).inc();
      if (e.outcome !== 'succeeded') failures.labels({ job: e.job }).inc();
      if (e.job === this.deps.deliveryJob) deliveries.labels({ outcome: deliveryOutcome[e.outcome] }).inc();
    });
  }

  /** The gauges read from the database at scrape time (`render` reads them first, through one cached read). */
  private dbGauges() {
    const registers = [this.registry];
    const gauge = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
      new Gauge<L>({ name, help: `${help} ${DB_NOTE}`, labelNames, registers });
    return {
      backlog: gauge('booking_job_backlog', 'Items due now and not done, per job.', ['job']),
      oldestDue: gauge('booking_job_oldest_due_age_seconds', 'How long the earliest due item of each job has been due (0: none due).', [
        'job',
      ]),
      undelivered: gauge(
        'booking_webhook_undelivered',
        'Webhook deliveries to enabled listeners not delivered yet (due or waiting to retry).',
      ),
      oldestUndelivered: gauge(
        'booking_webhook_oldest_undelivered_age_seconds',
        'Age of the oldest event not yet delivered to an enabled listener (0: none).',
      ),
      deviceQueue: gauge('booking_device_commands_pending', 'Device commands queued and not yet applied by their device.'),
      devicesOffline: gauge('booking_devices_offline', 'Devices marked offline.'),
      payments: gauge('booking_payments', 'Payments by state.', ['state']),
    };
  }

  /** Reads every database gauge, at most once per readCacheMs; concurrent scrapes share one read. */
  private readDatabase(): Promise<void> {
    if (this.reading) return this.reading;
    if (this.realNow() - this.readAt < this.readCacheMs) return Promise.resolve();
    this.reading = this.readAll().finally(() => {
      this.readAt = this.realNow();
      this.reading = null;
    });
    return this.reading;
  }

  private async readAll(): Promise<void> {
    const g = this.gauges;
    const { reads } = this.deps;
    await this.guarded('job_backlog', async () => {
      const rows = await reads.jobBacklog(() => this.readFailures.labels({ read: 'job_backlog' }).inc());
      for (const b of rows) {
        g.backlog.labels({ job: b.job }).set(b.count);
        g.oldestDue.labels({ job: b.job }).set(b.oldestAgeMs / 1000);
      }
    });
    await this.guarded('webhooks', async () => {
      const u = await reads.undeliveredWebhooks();
      g.undelivered.set(u.count);
      g.oldestUndelivered.set(u.oldestCreatedAt === null ? 0 : Math.max(0, this.deps.serviceNow() - u.oldestCreatedAt) / 1000);
    });
    await this.guarded('devices', async () => {
      const d = await reads.deviceQueue();
      g.deviceQueue.set(d.pendingCommands);
      g.devicesOffline.set(d.offlineDevices);
    });
    await this.guarded('payments', async () => {
      const byState = await reads.paymentsByState();
      for (const state of new Set([...PAYMENT_STATES, ...Object.keys(byState)])) g.payments.labels({ state }).set(byState[state] ?? 0);
    });
  }

  private async guarded(read: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch {
      this.readFailures.labels({ read }).inc();
    }
  }
}
