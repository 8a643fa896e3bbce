/**
 * A loopback HTTP proxy in front of the service that injects faults, one per
 * request, from a queue per path: an answer of its own (status + error code,
 * optional Retry-After), a reset connection before forwarding, or forwarding and
 * then dropping the answer (the request was acted on, the client never hears).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = { status: number; code: string; retryAfter?: string } | 'reset' | 'drop-answer';

export class FaultProxy {
  /** "METHOD /path" of every request that reached the proxy. */
  readonly seen: string[] = [];
  private readonly faults = new Map<string, Fault[]>();
  private readonly server: http.Server;
  port = 0;

  constructor(private readonly target: string) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  static async start(target: string): Promise<FaultProxy> {
    const p = new FaultProxy(target);
    await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', () => r()));
    p.port = (p.server.address() as AddressInfo).port;
    return p;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Queues faults for the next requests to "METHOD /path" (query ignored). */
  inject(key: string, ...faults: Fault[]): void {
    this.faults.set(key, [...(this.faults.get(key) ?? []), ...faults]);
  }

  count(key: string): number {
    return this.seen.filter((s) => s === key).length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const key = `${req.method} ${new URL(req.url!, 'http://x').pathname}`;
    this.seen.push(key);
    const fault = this.faults.get(key)?.shift();
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault && typeof fault === 'object') {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}) });
      res.end(JSON.stringify({ code: fault.code, success: false, message: 'injected fault' }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers[k] = v;
    const upstream = await fetch(this.target + req.url, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (fault === 'drop-answer') {
      req.socket.destroy();
      return;
    }
    const out: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection' && k !== 'content-encoding') out[k] = v;
    });
    res.writeHead(upstream.status, out);
    res.end(body);
  }
}
