/**
 * OpenTelemetry traces and log fields (platform/observability/tracing.ts,
 * platform/logging.ts), on either engine. A small OTLP/HTTP receiver on 127.0.0.1
 * collects what the service exports (JSON ExportTraceServiceRequest bodies); a
 * webhook listener on a loopback receiver gets the booking's delivery.
 *
 * Tracing on: one booking's request span `POST /meetings`, its SQL spans (children)
 * and its webhook delivery's job span arrive as ONE trace, the job span a child of
 * and linked to the request span (the context stored with the delivery row and the
 * lifecycle timers, migration 014); the delivery's POST carries `traceparent`; an
 * incoming `traceparent` is honoured; every log line of the request carries its
 * request id and trace id. Tracing off: nothing is sent, no context is stored, and
 * log lines still carry the request id.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, logContext, requestChildLogger } from '../../src/platform/logging.js';
import {
  currentTraceParent,
  startTracing,
  traceRequests,
  tracingSettings,
  type Tracing,
} from '../../src/platform/observability/tracing.js';
import { registerRequestContext } from '../../src/platform/http/request-context.js';
import { startWebhookService, type WebhookCtx } from '../support/webhook-site.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  service: unknown;
}

const SERVER = 2;
const CLIENT = 3;

/** OTLP/JSON ids are hex; accept base64 too (protobuf-JSON style). */
function hexId(id: unknown): string {
  const s = String(id ?? '');
  return /^[0-9a-f]*$/i.test(s) ? s.toLowerCase() : Buffer.from(s, 'base64').toString('hex');
}

function attrs(list: { key: string; value: Record<string, unknown> }[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of list ?? []) {
    const v = a.value;
    out[a.key] = v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
  }
  return out;
}

/** An OTLP/HTTP traces receiver on 127.0.0.1: keeps every span it is sent. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  posts = 0;
  private constructor(
    private readonly server: http.Server,
    readonly base: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let self!: OtlpReceiver;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        self.receive(req.url ?? '', Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  private receive(url: string, body: string): void {
    expect(url).toBe('/v1/traces');
    this.posts++;
    const doc = JSON.parse(body) as { resourceSpans: any[] };
    for (const rs of doc.resourceSpans ?? []) {
      const service = attrs(rs.resource?.attributes)['service.name'];
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: hexId(s.traceId),
            spanId: hexId(s.spanId),
            parentSpanId: s.parentSpanId ? hexId(s.parentSpanId) : undefined,
            name: s.name,
            kind: s.kind,
            attributes: attrs(s.attributes),
            links: (s.links ?? []).map((l: any) => ({ traceId: hexId(l.traceId), spanId: hexId(l.spanId) })),
            service,
          });
        }
      }
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function captured(): { lines: () => any[]; sink: Writable } {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      raw.push(String(chunk));
      done();
    },
  });
  return {
    sink,
    lines: () =>
      raw
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

const TITLE = 'Quarterly secret plan 7f3a';

describe('tracing on: one booking, one linked trace', () => {
  let otlp: OtlpReceiver;
  let hooks: WebhookReceiver;
  let tracing: Tracing;
  let ctx: WebhookCtx;
  const log = captured();
  let meetingId = '';

  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
    hooks = await WebhookReceiver.start();
    tracing = await startTracing({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.base, OTEL_SERVICE_NAME: 'booking-under-test' },
      serviceVersion: 'test',
      scheduledDelayMillis: 50,
    });
    expect(tracing.enabled).toBe(true);
    ctx = await startWebhookService({
      rooms: [{ key: 'lotus', name: 'Lotus', meetingConfig: { preStartMinutes: 15, preEndMinutes: 10 } }],
      hooks: [{ key: 'hk', url: hooks.url('/hook'), events: ['ROOM_BOOK'] }],
      logger: createLogger({ level: 'info' }, log.sink) as never,
    });
    meetingId = (await ctx.bookRoom('lotus', '10:00', '11:00', 0, { title: TITLE }))._id;
    await hooks.waitForCount('/hook', 1);
    await ctx.drain();
  });

  afterAll(async () => {
    await ctx?.close();
    await tracing?.shutdown();
    await hooks?.close();
    await otlp?.close();
  });

  it('exports the request span, its SQL spans and the delivery job span as one trace', async () => {
    const incoming = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const read = await ctx.svc.request('GET', `/meetings/${meetingId}`, { token: ctx.alice, headers: { traceparent: incoming } });
    expect(read.status, read.text).toBe(200);
    // A capability token in the path is masked as the logger masks it.
    await ctx.svc.request('GET', '/pay/capability-token-5e1f9a?token=query-secret-77');
    await tracing.shutdown(); // flushes every batch

    const book = otlp.spans.filter((s) => s.name === 'POST /meetings');
    expect(book).toHaveLength(1);
    const req = book[0]!;
    expect(req.kind).toBe(SERVER);
    expect(req.service).toBe('booking-under-test');
    expect(req.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/meetings',
      'http.response.status_code': 201,
      'url.path': '/meetings',
    });

    const sql = otlp.spans.filter((s) => s.parentSpanId === req.spanId && s.kind === CLIENT);
    expect(sql.length).toBeGreaterThan(2);
    for (const s of sql) {
      expect(s.traceId).toBe(req.traceId);
      expect(s.attributes['db.system.name']).toBe(process.env.TEST_DATABASE === 'postgres' ? 'postgresql' : 'sqlite');
      expect(typeof s.attributes['db.query.text']).toBe('string');
    }
    expect(sql.some((s) => s.attributes['db.operation.name'] === 'INSERT' && s.attributes['db.collection.name'] === 'meetings')).toBe(true);
    // Statements outside any span (the jobs' polls) make none: every SQL span has a parent.
    expect(otlp.spans.filter((s) => s.kind === CLIENT && !s.parentSpanId)).toEqual([]);
    // Parameterised text only: the booking's values never reach a span.
    expect(JSON.stringify(otlp.spans)).not.toContain('secret plan');

    const jobs = otlp.spans.filter((s) => s.name === 'job webhook-delivery');
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job.traceId).toBe(req.traceId);
    expect(job.parentSpanId).toBe(req.spanId);
    expect(job.links).toContainEqual({ traceId: req.traceId, spanId: req.spanId });
    // The job's own statements are its children, in the same trace.
    expect(otlp.spans.some((s) => s.parentSpanId === job.spanId && s.kind === CLIENT)).toBe(true);
    // The delivery's POST carries the job span's context.
    expect(hooks.requests[0]!.headers.traceparent).toBe(`00-${req.traceId}-${job.spanId}-01`);

    const pay = otlp.spans.find((s) => s.kind === SERVER && String(s.attributes['url.path']).startsWith('/pay/'));
    expect(pay?.attributes['url.path']).toBe('/pay/[redacted]');
    expect(JSON.stringify(otlp.spans)).not.toMatch(/capability-token-5e1f9a|query-secret-77/);

    // An incoming traceparent is honoured: the GET joins that trace under that parent.
    const get = otlp.spans.find((s) => s.name === 'GET /meetings/:id');
    expect(get).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parentSpanId: 'b7ad6b7169203331', kind: SERVER });
  });

  it('stores the request context with the delivery row and the lifecycle timers (migration 014)', async () => {
    const req = otlp.spans.find((s) => s.name === 'POST /meetings')!;
    const db = ctx.svc.services.storage.db;
    const deliveries = await db.selectFrom('deliveries').select('trace_parent').execute();
    expect(deliveries.map((d) => d.trace_parent)).toEqual([`00-${req.traceId}-${req.spanId}-01`]);
    const timers = await db.selectFrom('timers').select('trace_parent').where('meeting_id', '=', meetingId).execute();
    expect(timers.length).toBeGreaterThan(0);
    for (const t of timers) expect(t.trace_parent).toBe(`00-${req.traceId}-${req.spanId}-01`);
  });

  it('puts the request id and the trace id on every line of the request', () => {
    const req = otlp.spans.find((s) => s.name === 'POST /meetings')!;
    const lines = log.lines();
    const incoming = lines.find((l) => l.msg === 'incoming request' && l.req?.method === 'POST' && l.req?.url === '/meetings');
    expect(incoming?.reqId).toBeTruthy();
    const ofRequest = lines.filter((l) => l.reqId === incoming.reqId);
    expect(ofRequest.length).toBeGreaterThanOrEqual(2);
    for (const l of ofRequest) expect(l).toMatchObject({ traceId: req.traceId, spanId: req.spanId });
    // Every line in the request's trace that is not a job's belongs to that request.
    for (const l of lines.filter((x) => x.traceId === req.traceId && !x.job)) expect(l.reqId).toBe(incoming.reqId);
  });
});

describe('tracing off', () => {
  it('is off without an endpoint or with OTEL_SDK_DISABLED=true', () => {
    expect(tracingSettings({})).toBeNull();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' })).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      serviceName: 'room-desk-booking',
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/t', OTEL_SERVICE_NAME: 'x' })).toEqual({
      url: 'http://127.0.0.1:9/t',
      serviceName: 'x',
    });
  });

  it('sends nothing, stores no context, and still logs the request id', async () => {
    const otlp = await OtlpReceiver.start();
    const hooks = await WebhookReceiver.start();
    const tracing = await startTracing({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.base, OTEL_SDK_DISABLED: 'true' },
      serviceVersion: 'test',
      scheduledDelayMillis: 50,
    });
    expect(tracing.enabled).toBe(false);
    const log = captured();
    const ctx = await startWebhookService({
      rooms: [{ key: 'lotus', name: 'Lotus' }],
      hooks: [{ key: 'hk', url: hooks.url('/hook'), events: ['ROOM_BOOK'] }],
      logger: createLogger({ level: 'info' }, log.sink) as never,
    });
    try {
      await ctx.bookRoom('lotus', '10:00', '11:00');
      await hooks.waitForCount('/hook', 1);
      await ctx.drain();
      await new Promise((r) => setTimeout(r, 300));
      expect(otlp.posts).toBe(0);
      expect(hooks.requests[0]!.headers.traceparent).toBeUndefined();
      expect(currentTraceParent()).toBeNull();
      const rows = await ctx.svc.services.storage.db.selectFrom('deliveries').select('trace_parent').execute();
      expect(rows).toEqual([{ trace_parent: null }]);
      const lines = log.lines();
      const incoming = lines.find((l) => l.msg === 'incoming request' && l.req?.url === '/meetings');
      expect(incoming?.reqId).toBeTruthy();
      expect(lines.filter((l) => l.reqId === incoming.reqId).length).toBeGreaterThanOrEqual(2);
      expect(lines.some((l) => 'traceId' in l)).toBe(false);
    } finally {
      await ctx.close();
      await tracing.shutdown();
      await hooks.close();
      await otlp.close();
    }
  });
});

describe('log fields', () => {
  it('a line logged through the root logger while serving a request carries its id, once', async () => {
    const log = captured();
    const logger = createLogger({ level: 'info' }, log.sink);
    const app = Fastify({ loggerInstance: logger });
    app.setChildLoggerFactory(requestChildLogger as never);
    traceRequests(app.server);
    registerRequestContext(app as never);
    app.get('/x', async (req) => {
      await new Promise((r) => setImmediate(r));
      logger.info('from a module'); // the root logger, as services log
      req.log.info('from the route');
      return { ok: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/x`);
      expect(res.status).toBe(200);
      await res.text();
    } finally {
      await app.close();
    }
    const lines = log.lines();
    const mod = lines.find((l) => l.msg === 'from a module');
    const route = lines.find((l) => l.msg === 'from the route');
    expect(mod?.reqId).toBeTruthy();
    expect(route?.reqId).toBe(mod.reqId);
    expect(lines.filter((l) => l.reqId === mod.reqId).length).toBeGreaterThanOrEqual(4);
    // No duplicate key where Fastify's request logger binds reqId itself.
    const rawRoute = JSON.stringify(route);
    expect(rawRoute.match(/"reqId"/g)).toHaveLength(1);
    // A job's lines carry its name; outside any context, nothing is added.
    logContext.run({ job: 'webhook-delivery' }, () => logger.info('job line'));
    logger.info('plain');
    const after = log.lines();
    expect(after.find((l) => l.msg === 'job line')).toMatchObject({ job: 'webhook-delivery' });
    const plain = after.find((l) => l.msg === 'plain');
    expect(plain).not.toHaveProperty('reqId');
    expect(plain).not.toHaveProperty('job');
  });
});
