/**
 * Connection timeouts (issue 23, section 4, low). Before: idle kept-alive sockets
 * were never closed and a body sent slowly never got 408 (Fastify turns Node's
 * request timeout off). Now KEEP_ALIVE_TIMEOUT_MS, HEADERS_TIMEOUT_MS,
 * REQUEST_TIMEOUT_MS and CONNECTION_TIMEOUT_MS bound them; small values here.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_TOKEN, startTestService, type TestService } from '../support/test-service.js';
import { loadConfig } from '../../src/platform/config.js';

interface Conversation {
  /** Everything the service sent. */
  received(): string;
  /** Resolves with the ms from connect to close (or null when still open after `waitMs`). */
  closed(waitMs: number): Promise<number | null>;
  write(text: string): void;
  destroy(): void;
}

function connect(url: string): Promise<Conversation> {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), u.hostname);
  const started = performance.now();
  let text = '';
  let closedAt: number | null = null;
  socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
  socket.on('error', () => undefined);
  const closing = new Promise<number>((resolve) => socket.on('close', () => resolve((closedAt = performance.now() - started))));
  return new Promise((resolve) =>
    socket.on('connect', () =>
      resolve({
        received: () => text,
        closed: (waitMs) => Promise.race([closing, new Promise<number | null>((r) => setTimeout(() => r(closedAt), waitMs))]),
        write: (t) => socket.write(t),
        destroy: () => socket.destroy(),
      }),
    ),
  );
}

describe('timeouts', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({
      noWorkers: true,
      env: { KEEP_ALIVE_TIMEOUT_MS: '400', HEADERS_TIMEOUT_MS: '600', REQUEST_TIMEOUT_MS: '1000', CONNECTION_TIMEOUT_MS: '5000' },
    });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('an idle kept-alive socket is closed after the keep-alive timeout', async () => {
    const c = await connect(svc.url);
    c.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const ms = await c.closed(4_000);
    c.destroy();
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(c.received()).toMatch(/connection: keep-alive/i);
    expect(ms, 'closed by the service').not.toBeNull();
    expect(ms!).toBeGreaterThanOrEqual(350);
  });

  it('a body sent slowly gets 408 in the envelope', async () => {
    const c = await connect(svc.url);
    const body = JSON.stringify({ advanceMinutes: 1 });
    c.write(
      `POST /ops/v1/clock HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OPS_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 100}\r\n\r\n`,
    );
    // One byte every 100 ms: the connection is never idle, the request is never complete.
    let sent = 0;
    const drip = setInterval(() => sent < body.length && c.write(body[sent++]), 100);
    const ms = await c.closed(6_000);
    clearInterval(drip);
    c.destroy();
    expect(ms, 'closed by the service').not.toBeNull();
    const text = c.received();
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    const json = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(json).toEqual({ code: 'KS001', success: false, message: ['the request was not received in time'] });
  });

  it('headers sent slowly get 408 too', async () => {
    const c = await connect(svc.url);
    c.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => c.write('X-Slow: 1\r\n'), 100);
    const ms = await c.closed(6_000);
    clearInterval(drip);
    c.destroy();
    expect(ms, 'closed by the service').not.toBeNull();
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });
});

describe('timeout settings', () => {
  it('have defaults and refuse a headers timeout longer than the request timeout', () => {
    const base = { BOOKING_ENV: 'development', OPS_TOKEN: 'x'.repeat(40) };
    const c = loadConfig(base);
    expect(c.timeouts).toEqual({ keepAliveMs: 72_000, headersMs: 20_000, requestMs: 120_000, connectionMs: 120_000 });
    expect(() => loadConfig({ ...base, HEADERS_TIMEOUT_MS: '200000' })).toThrow(/HEADERS_TIMEOUT_MS/);
  });
});
