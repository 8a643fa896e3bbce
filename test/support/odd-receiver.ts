/** Misbehaving webhook receivers for the delivery tests (loopback only). */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

const TEN_MB = 10 * 1024 * 1024;

/**
 * A webhook receiver on loopback with a behaviour per path, recording hits,
 * connections and how much of each big body it wrote:
 * `/redirect-NNN` redirects to /target with that status; `/huge-200`, `/huge-500`
 * stream 10 MB; `/endless` streams forever; `/hang` never answers (until close);
 * anything else answers 200 `ok`.
 */
export class OddReceiver {
  readonly hits = new Map<string, number>();
  readonly sockets = new Set<Socket>();
  /** Per path: bytes of response body written before the client went away, and when it went away. */
  readonly cut = new Map<string, { written: number; closedAfterMs: number }[]>();
  /** Requests to /hang not answered (yet). */
  readonly hanging = new Set<http.ServerResponse>();
  private readonly open = new Set<http.ServerResponse>();
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<OddReceiver> {
    let self!: OddReceiver;
    const server = http.createServer((req, res) => self.handle(req, res));
    server.on('connection', (s) => self.sockets.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    self = new OddReceiver(server);
    return self;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  count(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async close(): Promise<void> {
    for (const res of [...this.open, ...this.hanging]) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '';
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const redirect = /^\/redirect-(\d{3})$/.exec(path);
      if (redirect) {
        res.writeHead(Number(redirect[1]), { location: this.url('/target') }).end();
      } else if (path === '/huge-200' || path === '/huge-500') {
        this.stream(path, res, path === '/huge-200' ? 200 : 500, TEN_MB);
      } else if (path === '/hang') {
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
      } else if (path === '/endless') {
        this.stream(path, res, 200, Infinity);
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }
    });
  }

  /** Writes `total` bytes of body as fast as the client reads them (forever for Infinity), noting when the client goes away. */
  private stream(path: string, res: http.ServerResponse, status: number, total: number): void {
    const started = Date.now();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    this.open.add(res);
    res.writeHead(status, {
      'content-type': 'application/octet-stream',
      ...(Number.isFinite(total) ? { 'content-length': String(total) } : {}),
    });
    res.on('close', () => {
      this.open.delete(res);
      if (written < total) (this.cut.get(path) ?? this.cut.set(path, []).get(path)!).push({ written, closedAfterMs: Date.now() - started });
    });
    const pump = () => {
      while (written < total && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (written >= total) res.end();
    };
    pump();
  }
}
