/**
 * /metrics (docs/operations.md "Metrics"), scraped over HTTP: the credential
 * (none: 404; METRICS_TOKEN wrong or missing: 401 KS002; right: 200), the separate
 * listener (METRICS_PORT, no credential, /metrics only), every metric present with
 * HELP and TYPE, and each one moving when its cause happens. Then load shedding:
 * with a tiny bound, a blocked event loop makes new requests 503 KS004 with
 * Retry-After, while /healthz still answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, OPS_TOKEN, startTestService, type TestService } from '../support/test-service.js';
import { TEST_ENGINE, createTestDatabase } from '../support/test-database.js';
import { startWebhookService, type WebhookCtx } from '../support/webhook-site.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from '../support/delivery-audit.js';
import { appToken, applySite, expectError, idOf } from '../support/fixtures.js';
import { deviceSite } from '../support/devices.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { seedPaidBooking } from '../support/payments.js';
import { loadConfig } from '../../src/platform/config.js';
import { openStorage } from '../../src/platform/db/database.js';
import { createServices } from '../../src/services.js';
import { buildApp } from '../../src/app.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';

/** Samples of an exposition: `name{a="x",b="y"}` → value (labels in the order printed). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** The value of one series, matched by name and a subset of its labels; 0 when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total: number | undefined;
  for (const [series, v] of samples(text)) {
    const brace = series.indexOf('{');
    const n = brace < 0 ? series : series.slice(0, brace);
    if (n !== name) continue;
    const labelText = brace < 0 ? '' : series.slice(brace + 1, -1);
    const have = labelText ? labelText.split(/,(?=\w+=")/) : [];
    if (want.every((w) => have.includes(w))) total = (total ?? 0) + v;
  }
  return total ?? 0;
}

function expectDeclared(text: string, name: string, type: string): void {
  expect(text, `HELP of ${name}`).toMatch(new RegExp(`^# HELP ${name} \\S.*$`, 'm'));
  expect(text, `TYPE of ${name}`).toMatch(new RegExp(`^# TYPE ${name} ${type}$`, 'm'));
}

const scrape = async (svc: TestService): Promise<string> => {
  svc.services.metrics.readCacheMs = 0;
  const res = await svc.request('GET', '/metrics', { token: METRICS_TOKEN });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
};

describe(`/metrics credentials (${TEST_ENGINE})`, () => {
  let plain: TestService;
  let svc: TestService;
  beforeAll(async () => {
    plain = await startTestService({ noWorkers: true });
    svc = await startTestService({ noWorkers: true, env: { METRICS_TOKEN, METRICS_PORT: '0' } });
  });
  afterAll(async () => {
    await plain?.close();
    await svc?.close();
  });

  it('without METRICS_TOKEN there is no /metrics on the service listener', async () => {
    expectError(await plain.request('GET', '/metrics', { token: METRICS_TOKEN }), 404, 'KS005');
    expect(plain.services.metrics.listener).toBeNull();
  });

  it('a missing or wrong token is 401 KS002; the ops token is not the metrics token; the right one gets the exposition', async () => {
    expectError(await svc.request('GET', '/metrics'), 401, 'KS002');
    expectError(await svc.request('GET', '/metrics', { token: `${METRICS_TOKEN}x` }), 401, 'KS002');
    expectError(await svc.request('GET', '/metrics', { token: OPS_TOKEN }), 401, 'KS002');
    expectError(await svc.request('GET', '/metrics', { headers: { authorization: `Basic ${METRICS_TOKEN}` } }), 401, 'KS002');
    const text = await scrape(svc);
    expect(text).toMatch(/^# HELP booking_http_requests_total /m);
  });

  it('is hidden from the OpenAPI document', async () => {
    const doc = await svc.request('GET', '/openapi.json');
    expect(Object.keys(doc.body.paths)).not.toContain('/metrics');
  });

  it('METRICS_PORT: a separate listener serves /metrics alone, without a credential', async () => {
    const at = svc.services.metrics.listener;
    expect(at).not.toBeNull();
    expect(at!.port).not.toBe(Number(new URL(svc.url).port));
    const base = `http://127.0.0.1:${at!.port}`;
    const res = await httpRequest(base, 'GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^# TYPE booking_http_request_duration_seconds histogram$/m);
    expectError(await httpRequest(base, 'GET', '/healthz'), 404, 'KS005');
    expectError(await httpRequest(base, 'POST', '/metrics'), 404, 'KS005');
  });

  it('refuses to start in production with a short METRICS_TOKEN, or METRICS_PORT equal to PORT', () => {
    const prod = { BOOKING_ENV: 'production', OPS_TOKEN, SECRETS_KEY: 'a'.repeat(64), DATABASE_URL: 'x.sqlite' };
    expect(() => loadConfig({ ...prod, METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 32 characters/);
    expect(() => loadConfig({ ...prod, PORT: '3000', METRICS_PORT: '3000' })).toThrow(/METRICS_PORT must differ from PORT/);
    expect(loadConfig({ ...prod, METRICS_TOKEN }).metrics).toEqual({ token: METRICS_TOKEN, port: null, host: '127.0.0.1' });
  });
});

describe(`every metric moves with its cause (${TEST_ENGINE})`, () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  let svc: TestService;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    rx.respond('/fails', 500);
    rx.respond('/hangs', 'hang');
    c = await startWebhookService({
      rooms: [
        { key: 'room0', name: 'Room 0' },
        { key: 'room1', name: 'Room 1' },
      ],
      hooks: [
        { key: 'hk-fails', url: rx.url('/fails'), events: ['ROOM_BOOK'] },
        { key: 'hk-hangs', url: rx.url('/hangs'), events: ['ROOM_BOOK'] },
      ],
      env: { METRICS_TOKEN, WEBHOOK_TIMEOUT_MS: '20000' },
    });
    svc = c.svc;
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  it('declares every metric with HELP and TYPE', async () => {
    const text = await scrape(svc);
    const declared: [string, string][] = [
      ['booking_http_requests_total', 'counter'],
      ['booking_http_request_duration_seconds', 'histogram'],
      ['booking_job_runs_total', 'counter'],
      ['booking_job_failures_total', 'counter'],
      ['booking_job_backlog', 'gauge'],
      ['booking_job_oldest_due_age_seconds', 'gauge'],
      ['booking_webhook_deliveries_total', 'counter'],
      ['booking_webhook_undelivered', 'gauge'],
      ['booking_webhook_oldest_undelivered_age_seconds', 'gauge'],
      ['booking_device_commands_pending', 'gauge'],
      ['booking_devices_offline', 'gauge'],
      ['booking_payments', 'gauge'],
      ['booking_db_statement_duration_seconds', 'histogram'],
      ['booking_db_statement_errors_total', 'counter'],
      ['booking_metrics_read_failures_total', 'counter'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['nodejs_eventloop_lag_p99_seconds', 'gauge'],
      ['process_cpu_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
    ];
    for (const [name, type] of declared) expectDeclared(text, name, type);
    // Every job with a backlog read is listed, with a value.
    for (const job of ['lifecycle', 'webhook-delivery', 'payments', 'payment-nudges', 'payment-inbox', 'device-sync', 'visitor-expiry']) {
      expect(text, job).toMatch(new RegExp(`^booking_job_backlog\\{job="${job}"\\} \\d+$`, 'm'));
    }
    expect(value(text, 'booking_db_statement_duration_seconds_count', { kind: 'select' })).toBeGreaterThan(0);
    expect(value(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);
  });

  it('a request counts on its route template (never the raw URL) with its latency; unknown routes are one label', async () => {
    const before = await scrape(svc);
    const meeting = await c.bookRoom('room0', '10:00', '11:00');
    expect((await svc.request('GET', `/meetings/${meeting._id}`, { token: c.alice })).status).toBe(200);
    expect((await svc.request('GET', `/no/such/route/${meeting._id}`)).status).toBe(404);
    const after = await scrape(svc);
    const route = { route: '/meetings/:id', method: 'GET', status: '200' };
    expect(value(after, 'booking_http_requests_total', route) - value(before, 'booking_http_requests_total', route)).toBe(1);
    expect(
      value(after, 'booking_http_request_duration_seconds_count', route) -
        value(before, 'booking_http_request_duration_seconds_count', route),
    ).toBe(1);
    expect(value(after, 'booking_http_request_duration_seconds_sum', route)).toBeGreaterThan(0);
    const created = { route: '/meetings', method: 'POST', status: '201' };
    expect(value(after, 'booking_http_requests_total', created) - value(before, 'booking_http_requests_total', created)).toBe(1);
    const unmatched = { route: 'unmatched', method: 'GET', status: '404' };
    expect(value(after, 'booking_http_requests_total', unmatched) - value(before, 'booking_http_requests_total', unmatched)).toBe(1);
    expect(after).not.toContain(meeting._id);
    // The statements of that work, by kind.
    for (const kind of ['select', 'insert']) {
      expect(value(after, 'booking_db_statement_duration_seconds_count', { kind }), kind).toBeGreaterThan(
        value(before, 'booking_db_statement_duration_seconds_count', { kind }),
      );
    }
  });

  it('a failing receiver: failed attempts, job failures, undelivered events growing old; a hanging one: the delivery backlog', async () => {
    // Scraped first, attempts read after: an attempt ending in between counts in the counter's delta, not in the attempts.
    const before = await scrape(svc);
    const attemptsBefore = (await c.deliveries('hk-fails')).reduce((n, d) => n + d.attempts, 0);
    await c.bookRoom('room1', '12:00', '13:00');
    // Both bookings' deliveries (room0's in the test before, room1's now) attempted once at least.
    await until(
      'the failing deliveries were attempted',
      async () => {
        const ds = await c.deliveries('hk-fails');
        return ds.length === 2 && ds.every((d) => d.attempts >= 1);
      },
      15_000,
      25,
    );
    await until(
      'the hanging deliveries are in flight',
      async () => rx.requests.filter((r) => r.path === '/hangs').length === 2,
      15_000,
      25,
    );
    // Attempts counted first: a retry made after this read only raises the counter further.
    const attempts = (await c.deliveries('hk-fails')).reduce((n, d) => n + d.attempts, 0) - attemptsBefore;
    // The counters move as an attempt ends and the gauges are read at the scrape: wait until both show it.
    let after = await scrape(svc);
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    await until(
      'the metrics show the failed attempts and the waiting deliveries',
      async () => {
        after = await scrape(svc);
        return (
          delta('booking_webhook_deliveries_total', { outcome: 'failed_attempt' }) >= attempts &&
          value(after, 'booking_webhook_undelivered') >= 2 &&
          value(after, 'booking_job_backlog', { job: 'webhook-delivery' }) >= 1
        );
      },
      15_000,
      50,
    );
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(delta('booking_webhook_deliveries_total', { outcome: 'failed_attempt' })).toBeGreaterThanOrEqual(attempts);
    expect(delta('booking_job_failures_total', { job: 'webhook-delivery' })).toBeGreaterThanOrEqual(1);
    expect(delta('booking_job_runs_total', { job: 'webhook-delivery', outcome: 'failed' })).toBeGreaterThanOrEqual(1);
    // Not delivered: the failed one waits for its retry, the hanging one is in flight.
    expect(value(after, 'booking_webhook_undelivered')).toBeGreaterThanOrEqual(2);
    expect(value(after, 'booking_webhook_oldest_undelivered_age_seconds')).toBeGreaterThan(0);
    // The hanging attempt is due and not done: the job's backlog, due for a while.
    expect(value(after, 'booking_job_backlog', { job: 'webhook-delivery' })).toBeGreaterThanOrEqual(1);
    expect(value(after, 'booking_job_oldest_due_age_seconds', { job: 'webhook-delivery' })).toBeGreaterThan(0);
    // On the sandbox clock, the undelivered event grows older with service time.
    await c.advance(30);
    const later = await scrape(svc);
    expect(value(later, 'booking_webhook_oldest_undelivered_age_seconds')).toBeGreaterThanOrEqual(30 * 60);
  });

  it('a successful delivery counts as delivered', async () => {
    const before = await scrape(svc);
    rx.respond('/fails', 200);
    await c.advance(5); // past the retry
    await until('the retry was delivered', async () => (await c.deliveries('hk-fails')).every((d) => d.status === 'delivered'), 15_000, 25);
    const after = await scrape(svc);
    expect(value(after, 'booking_webhook_deliveries_total', { outcome: 'delivered' })).toBeGreaterThan(
      value(before, 'booking_webhook_deliveries_total', { outcome: 'delivered' }),
    );
    expect(value(after, 'booking_job_runs_total', { job: 'webhook-delivery', outcome: 'succeeded' })).toBeGreaterThan(0);
  });

  it('a paid booking counts in payments by state', async () => {
    const before = await scrape(svc);
    const users = await svc.services.storage.db.selectFrom('users').select('id').limit(1).execute();
    await seedPaidBooking(svc, {
      projectId: c.projectId,
      assetId: c.id('room1'),
      organizerUserId: users[0]!.id,
      start: c.t('15:00'),
      end: c.t('16:00'),
      redirectUrl: null,
    });
    const after = await scrape(svc);
    expect(value(after, 'booking_payments', { state: 'pending' }) - value(before, 'booking_payments', { state: 'pending' })).toBe(1);
    expect(after).toMatch(/^booking_payments\{state="settled"\} 0$/m);
  });

  it('a failing read does not fail the scrape: it is counted', async () => {
    const reads = (svc.services.metrics as unknown as { deps: { reads: { paymentsByState(): Promise<unknown> } } }).deps.reads;
    const original = reads.paymentsByState;
    reads.paymentsByState = () => Promise.reject(new Error('database away'));
    try {
      const text = await scrape(svc);
      expect(value(text, 'booking_metrics_read_failures_total', { read: 'payments' })).toBeGreaterThanOrEqual(1);
      expect(text).toMatch(/^booking_payments\{state="pending"\} [1-9]/m);
    } finally {
      reads.paymentsByState = original;
    }
  });
});

describe(`devices offline and their command queue (${TEST_ENGINE})`, () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { METRICS_TOKEN } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('a device switched offline in the sandbox, and the changes queued for it', async () => {
    const ids = await applySite(svc, deviceSite());
    const api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
    const before = await scrape(svc);
    expect(value(before, 'booking_devices_offline')).toBe(0);
    expect((await svc.ops('POST', `/ops/v1/devices/${idOf(ids, 't1')}/offline`)).body.data.online).toBe(false);
    await api.putOk('metrics-member', { firstName: 'Metrics', lastName: 'Member' });
    expect((await api.credentials('metrics-member', { cards: [{ cardNo: '0000000901' }] })).status).toBe(200);
    const after = await scrape(svc);
    expect(value(after, 'booking_devices_offline')).toBe(1);
    expect(value(after, 'booking_device_commands_pending')).toBeGreaterThanOrEqual(1);
  });
});

describe(`load shedding (${TEST_ENGINE})`, () => {
  it('past the event-loop bound new requests get 503 KS004 with Retry-After; /healthz still answers', async () => {
    const database = await createTestDatabase();
    const config = loadConfig({
      BOOKING_ENV: 'development',
      DEMO: '0',
      OPS_TOKEN,
      DATABASE_URL: database.url,
      MAX_EVENT_LOOP_DELAY_MS: '5',
    });
    config.loadShedding.sampleIntervalMs = 300;
    const storage = await openStorage(config.databaseUrl);
    const services = await createServices(config, storage);
    const app = await buildApp(services);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    try {
      await new Promise((r) => setTimeout(r, 700)); // a quiet sample first
      expect((await httpRequest(url, 'GET', '/readyz')).status).toBe(200);
      // Block the event loop synchronously well past the bound.
      const end = performance.now() + 800;
      while (performance.now() < end);
      const [shed, ready, health] = await Promise.all([
        httpRequest(url, 'GET', '/openapi.json'),
        httpRequest(url, 'GET', '/readyz'),
        httpRequest(url, 'GET', '/healthz'),
      ]);
      expectError(shed, 503, 'KS004');
      expect(shed.body.message).toMatch(/overloaded/);
      expect(shed.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      // A shedding instance looks not ready to a load balancer, and alive.
      expectError(ready, 503, 'KS004');
      expect(health.status).toBe(200);
      // Once the loop catches up, requests are served again.
      await until('served again', async () => (await httpRequest(url, 'GET', '/openapi.json')).status === 200, 5_000, 100);
    } finally {
      await app.close();
      await services.stop();
      await storage.close();
      await database.drop();
    }
  });
});
