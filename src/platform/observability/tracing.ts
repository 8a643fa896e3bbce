/**
 * OpenTelemetry traces: off by default; on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set and `OTEL_SDK_DISABLED` is not
 * `true`. Spans go out in batches over OTLP/HTTP (JSON) to that endpoint.
 *
 * - One SERVER span per request (`serveInContext`, wrapped around the HTTP
 *   server's request listener), honouring an incoming W3C `traceparent`, named
 *   `METHOD /route/template` once routed; the request's handler, and everything it
 *   awaits, runs in its context.
 * - One CLIENT span per SQL statement (`traceQueries`, a Storage query observer),
 *   a child of whatever span is active; statements outside any span (job polls)
 *   make none. Parameterised SQL text only: values never reach a span.
 * - One span per background job item (`runJobItem`), a child of, and linked to,
 *   the context stored with the outbox row or timer that caused it
 *   (`currentTraceParent()` when the row is written).
 *
 * The SDK is loaded only when tracing is on: off, the request path pays for one
 * AsyncLocalStorage store (the log context) and a null check.
 *
 * Platform code: real time is used for span timestamps.
 */
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import {
  context,
  defaultTextMapGetter,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import { logContext, logUrl, type LogContext } from '../logging.js';
import type { QueryObserver } from '../db/database.js';

export const DEFAULT_SERVICE_NAME = 'room-desk-booking';

/** Where and as what spans are sent; null when tracing is off. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  url: string;
  serviceName: string;
}

/** Reads the standard OTEL_* variables: null (off) unless an OTLP endpoint is set and the SDK is not disabled. */
export function tracingSettings(env: Record<string, string | undefined>): TracingSettings | null {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = traces || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : '');
  if (!url) return null;
  return { url, serviceName: env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME };
}

interface Active {
  tracer: Tracer;
  w3c: TextMapPropagator;
}

/** The tracer while tracing is on (process-wide, like OpenTelemetry's globals). */
let active: Active | null = null;

export function tracingEnabled(): boolean {
  return active !== null;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Sends what is buffered and stops (at most `timeoutMs`); tracing is off afterwards. */
  shutdown(timeoutMs?: number): Promise<void>;
}

export interface StartTracingOptions {
  env: Record<string, string | undefined>;
  serviceVersion: string;
  /** Batch delay (default OTEL_BSP_SCHEDULE_DELAY, else the SDK's 5 s). */
  scheduledDelayMillis?: number;
}

const OFF: Tracing = { enabled: false, shutdown: async () => undefined };

/** Starts tracing when the environment asks for it; otherwise returns a handle that does nothing. */
export async function startTracing(options: StartTracingOptions): Promise<Tracing> {
  const settings = tracingSettings(options.env);
  if (!settings || active) return OFF;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { W3CTraceContextPropagator }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
    ]);
  const delay = options.scheduledDelayMillis ?? (Number(options.env.OTEL_BSP_SCHEDULE_DELAY) || undefined);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': options.serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }), delay ? { scheduledDelayMillis: delay } : {})],
  });
  const w3c = new W3CTraceContextPropagator();
  // The AsyncLocalStorage context manager and the W3C propagator, as OpenTelemetry's globals.
  provider.register({ propagator: w3c });
  active = { tracer: provider.getTracer('room-desk-booking'), w3c };
  let stopped: Promise<void> | null = null;
  return {
    enabled: true,
    shutdown: (timeoutMs = 5_000) =>
      (stopped ??= (async () => {
        active = null;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
        try {
          await Promise.race([provider.shutdown().catch(() => undefined), timeout]);
        } finally {
          clearTimeout(timer);
          trace.disable();
          context.disable();
          propagation.disable();
        }
      })()),
  };
}

/** The active span's context as a W3C `traceparent`, to store with work done later; null when off or nothing is active. */
export function currentTraceParent(): string | null {
  if (!active) return null;
  const sc = trace.getSpanContext(context.active());
  if (!sc || !trace.isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags & 1 ? '01' : '00'}`;
}

function extract(t: Active, traceParent: string): SpanContext | undefined {
  const sc = trace.getSpanContext(t.w3c.extract(ROOT_CONTEXT, { traceparent: traceParent }, defaultTextMapGetter));
  return sc && trace.isSpanContextValid(sc) ? sc : undefined;
}

// ---------------------------------------------------------------- requests

/** Wraps the server's request listener(s): each request runs in its own log context and, tracing on, its SERVER span. */
export function traceRequests(server: Server): void {
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  for (const listener of listeners) server.on('request', (req: IncomingMessage, res: ServerResponse) => serveInContext(req, res, listener));
}

function serveInContext(req: IncomingMessage, res: ServerResponse, next: RequestListener): void {
  const store: LogContext = {};
  const t = active;
  if (!t) {
    logContext.run(store, next, req, res);
    return;
  }
  const parent: Context = t.w3c.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
  const method = req.method ?? 'HTTP';
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const span = t.tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': logUrl(path), 'url.scheme': 'http' } },
    parent,
  );
  store.span = span;
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (!res.writableFinished) span.setAttribute('error.type', 'aborted');
    span.end();
  });
  context.with(trace.setSpan(parent, span), () => logContext.run(store, next, req, res));
}

// ---------------------------------------------------------------- SQL

const OPERATION = /^\s*(?:\/\*.*?\*\/\s*)?([A-Za-z]+)/s;
const TABLE = /\b(?:from|into|update)\s+"?([A-Za-z_][\w]*)"?/i;

/** A Storage query observer making a CLIENT span per statement run inside an active span. */
export function traceQueries(engine: 'sqlite' | 'postgres'): QueryObserver {
  const system = engine === 'postgres' ? 'postgresql' : 'sqlite';
  return (e) => {
    const t = active;
    if (!t) return;
    const ctx = context.active();
    if (!trace.getSpan(ctx)) return;
    const end = performance.timeOrigin + performance.now();
    const operation = OPERATION.exec(e.sql)?.[1]?.toUpperCase();
    const table = TABLE.exec(e.sql)?.[1];
    const attributes: Record<string, string> = { 'db.system.name': system, 'db.query.text': e.sql };
    if (operation) attributes['db.operation.name'] = operation;
    if (table) attributes['db.collection.name'] = table;
    const name = operation ? (table ? `${operation} ${table}` : operation) : system;
    const span = t.tracer.startSpan(name, { kind: SpanKind.CLIENT, startTime: end - e.durationMs, attributes }, ctx);
    if (e.failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(end);
  };
}

// ---------------------------------------------------------------- jobs

/**
 * Runs one job item in its log context (the job's name) and, tracing on, in a span
 * `job <name>`: a child of, and linked to, `traceParent` (the context stored with
 * the item) when it has one, else a new trace.
 */
export function runJobItem<R>(job: string, traceParent: string | null | undefined, fn: () => Promise<R>): Promise<R> {
  const store: LogContext = { job };
  const t = active;
  if (!t) return logContext.run(store, fn);
  const linked = traceParent ? extract(t, traceParent) : undefined;
  const parent = linked ? trace.setSpanContext(ROOT_CONTEXT, linked) : ROOT_CONTEXT;
  const span = t.tracer.startSpan(
    `job ${job}`,
    { kind: SpanKind.CONSUMER, attributes: { 'job.name': job }, links: linked ? [{ context: linked }] : [] },
    parent,
  );
  return context.with(trace.setSpan(parent, span), () => logContext.run(store, fn)).finally(() => span.end());
}

/** Marks the active job span failed (the error's class name only: messages may quote data). */
export function recordJobFailure(err: unknown): void {
  if (!active) return;
  const span: Span | undefined = trace.getActiveSpan();
  span?.setStatus({ code: SpanStatusCode.ERROR });
  span?.setAttribute('error.type', err instanceof Error ? err.name : 'error');
}
