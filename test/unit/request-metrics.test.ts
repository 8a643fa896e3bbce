/**
 * The request counter and histogram and the statement-duration histogram kept as plain
 * numbers (observability/metrics.ts `RequestMetrics`, `StatementDurations`) scrape exactly
 * as prom-client's own labelled Counter and Histogram do when fed the same observations:
 * text exposition and JSON alike.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import {
  REQUEST_BUCKETS,
  REQUEST_DURATION_HELP,
  REQUESTS_HELP,
  RequestMetrics,
  STATEMENT_BUCKETS,
  STATEMENT_DURATION_HELP,
  StatementDurations,
} from '../../src/platform/observability/metrics.js';
import { STATEMENT_KINDS, type StatementKind } from '../../src/platform/observability/statement-kind.js';

type Answer = [route: string, method: string, status: number, seconds: number];

function both(answers: Answer[]): { ours: Registry; theirs: Registry } {
  const ours = new Registry();
  const metrics = new RequestMetrics([ours]);
  const theirs = new Registry();
  const labelNames = ['route', 'method', 'status'];
  const counter = new Counter({
    name: 'booking_http_requests_total',
    help: REQUESTS_HELP,
    labelNames,
    registers: [theirs],
  });
  const histogram = new Histogram({
    name: 'booking_http_request_duration_seconds',
    help: REQUEST_DURATION_HELP,
    labelNames,
    buckets: REQUEST_BUCKETS,
    registers: [theirs],
  });
  for (const [route, method, status, seconds] of answers) {
    metrics.observe(route, method, status, seconds);
    const labels = { route, method, status: String(status) };
    counter.labels(labels).inc();
    histogram.labels(labels).observe(seconds);
  }
  return { ours, theirs };
}

const answer = fc.tuple(
  fc.constantFrom('/meetings', '/meetings/:id', '/auth/whoami', 'unmatched'),
  fc.constantFrom('GET', 'POST', 'DELETE'),
  fc.constantFrom(200, 201, 400, 404, 503),
  fc.oneof(fc.constantFrom(...REQUEST_BUCKETS, 0, 11), fc.double({ min: 0, max: 20, noNaN: true })),
);

describe('request metrics as plain numbers', () => {
  it('scrape as prom-client does: the same text and JSON for the same answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { maxLength: 60 }), async (answers) => {
        const { ours, theirs } = both(answers);
        expect(await ours.metrics()).toBe(await theirs.metrics());
        expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
      }),
      { numRuns: 200 },
    );
  });

  it('count each answer once, in the first bucket whose bound holds it (a bound is inclusive)', async () => {
    const { ours } = both([
      ['/auth/whoami', 'GET', 200, 0.005],
      ['/auth/whoami', 'GET', 200, 0.0051],
      ['/auth/whoami', 'GET', 200, 30],
      ['/meetings', 'POST', 201, 0.2],
    ]);
    const text = await ours.metrics();
    const whoami = 'route="/auth/whoami",method="GET",status="200"';
    expect(text).toContain(`booking_http_requests_total{${whoami}} 3`);
    expect(text).toContain(`booking_http_request_duration_seconds_bucket{le="0.005",${whoami}} 1`);
    expect(text).toContain(`booking_http_request_duration_seconds_bucket{le="0.01",${whoami}} 2`);
    expect(text).toContain(`booking_http_request_duration_seconds_bucket{le="10",${whoami}} 2`);
    expect(text).toContain(`booking_http_request_duration_seconds_bucket{le="+Inf",${whoami}} 3`);
    expect(text).toContain(`booking_http_request_duration_seconds_count{${whoami}} 3`);
    expect(text).toContain('booking_http_requests_total{route="/meetings",method="POST",status="201"} 1');
  });
});

describe('statement durations as plain numbers', () => {
  const statement = fc.tuple(
    fc.constantFrom<StatementKind>(...STATEMENT_KINDS),
    fc.oneof(fc.constantFrom(...STATEMENT_BUCKETS, 0, 3), fc.double({ min: 0, max: 5, noNaN: true })),
  );

  it('scrape as prom-client does: the same text and JSON for the same statements', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(statement, { maxLength: 60 }), async (statements) => {
        const ours = new Registry();
        const durations = new StatementDurations([ours]);
        const theirs = new Registry();
        const histogram = new Histogram({
          name: 'booking_db_statement_duration_seconds',
          help: STATEMENT_DURATION_HELP,
          labelNames: ['kind'],
          buckets: STATEMENT_BUCKETS,
          registers: [theirs],
        });
        for (const [kind, seconds] of statements) {
          durations.observe(kind, seconds);
          histogram.labels({ kind }).observe(seconds);
        }
        expect(await ours.metrics()).toBe(await theirs.metrics());
        expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
      }),
      { numRuns: 200 },
    );
  });
});
