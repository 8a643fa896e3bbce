/**
 * A real HTTP webhook receiver on 127.0.0.1 for the delivery tests: it records
 * every request with its exact raw body bytes and answers as told per path
 * (a status code, or never answering at all). Plus an independent signature
 * check (node:crypto only, not the service's signing module) and a closed
 * loopback port for connection errors.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { sleep } from './fixtures.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The exact bytes received. */
  raw: Buffer;
  /** Parsed JSON body (undefined when it was not JSON). */
  body: any;
  /** Real wall-clock time of arrival (epoch ms). */
  receivedAt: number;
  /** What the receiver answered: a status, or 'hang' (never answered). */
  answered: number | 'hang';
}

/** How the receiver answers a path: a fixed status, 'hang' (never answer), or a function of the request. */
export type Responder = number | 'hang' | ((req: ReceivedRequest) => number | 'hang');

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly responders = new Map<string, Responder>();
  private readonly hanging = new Set<http.ServerResponse>();
  /** Called on every arrival (after recording), e.g. to read the service clock. */
  onRequest: ((r: ReceivedRequest) => void) | undefined;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let self!: WebhookReceiver;
    const server = http.createServer((req, res) => self.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    self = new WebhookReceiver(server, (server.address() as AddressInfo).port);
    return self;
  }

  /** Full URL of a path on this receiver (always 127.0.0.1). */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Sets how `path` answers (default 200). */
  respond(path: string, responder: Responder): void {
    this.responders.set(path, responder);
  }

  /** Requests received on `path` (all when omitted). */
  on(path?: string): ReceivedRequest[] {
    return path === undefined ? [...this.requests] : this.requests.filter((r) => r.path === path);
  }

  /** Waits until `predicate` holds over the received requests, or fails after `timeoutMs`. */
  async waitFor(predicate: (all: ReceivedRequest[]) => boolean, timeoutMs = 10_000, what = 'deliveries'): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!predicate(this.requests)) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}; received ${this.describe()}`);
      await sleep(25);
    }
  }

  /** Waits until `path` has received at least `n` requests. */
  async waitForCount(path: string, n: number, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
    await this.waitFor((all) => all.filter((r) => r.path === path).length >= n, timeoutMs, `${n} request(s) on ${path}`);
    return this.on(path);
  }

  describe(): string {
    return JSON.stringify(this.requests.map((r) => `${r.path} ${r.headers['x-service-event']} ${r.headers['x-service-delivery']}`));
  }

  clear(): void {
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const record: ReceivedRequest = {
        method: req.method ?? '',
        path: (req.url ?? '').split('?')[0],
        headers: req.headers,
        raw,
        body,
        receivedAt: Date.now(),
        answered: 200,
      };
      const responder = this.responders.get(record.path) ?? 200;
      const answer = typeof responder === 'function' ? responder(record) : responder;
      record.answered = answer;
      this.requests.push(record);
      this.onRequest?.(record);
      if (answer === 'hang') {
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end(answer >= 200 && answer < 300 ? 'ok' : 'nope');
    });
  }
}

/**
 * A loopback URL where nothing listens (connection refused). The port is picked
 * below the kernel's ephemeral range (Linux default 32768-60999), so a server
 * that listens on port 0 later (the service itself, another receiver) cannot
 * land on it, and it is checked to refuse connections.
 */
export async function closedPortUrl(path = '/gone'): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return `http://127.0.0.1:${port}${path}`;
  }
  throw new Error('no closed loopback port found');
}

/**
 * The signature a delivery must carry, computed here independently of the
 * service: "sha256=" + hex HMAC-SHA256(secret, timestamp + "." + raw body bytes).
 */
export function expectedSignature(secret: string, timestamp: string, raw: Buffer): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(Buffer.from(`${timestamp}.`, 'utf8'));
  mac.update(raw);
  return `sha256=${mac.digest('hex')}`;
}

/** Header value as one string. */
export function header(r: ReceivedRequest, name: string): string | undefined {
  const v = r.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
