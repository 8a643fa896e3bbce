/**
 * The HTTP client of webhook deliveries: one POST per attempt over kept-alive
 * connections (node:http and node:https agents), so a busy listener costs one TCP
 * (and TLS) handshake per connection rather than per delivery.
 *
 * - Redirects are never followed: a 3xx is the receiver's answer (a failed attempt).
 * - One deadline covers the whole attempt (connect, send, answer); past it the
 *   attempt fails as a timeout and its connection is dropped.
 * - The answer is its status. At most `readLimit` bytes of the response body are
 *   read (and thrown away, so the connection can be reused); past that, or past the
 *   deadline, the connection is dropped: a receiver answering with megabytes costs
 *   neither memory nor time.
 * - A kept-alive connection the receiver closed while it was idle fails the request
 *   before anything was answered; such a request is sent once more on a fresh
 *   connection (standard practice: nothing reached the receiver's application).
 * - The URL guard (platform/net/url-guard.ts) checks the address before any
 *   connection: in production an http URL, a literal internal address, or a name
 *   resolving to one (checked on every lookup: DNS rebinding) fails the attempt
 *   with the reason, and nothing is sent.
 */
import http from 'node:http';
import https from 'node:https';
import { UrlGuard } from '../../platform/net/url-guard.js';

/** Bytes of a response body read at most (then the connection is dropped). */
export const RESPONSE_READ_LIMIT = 64 * 1024;
/** An idle kept-alive connection is closed after this long (or sooner, when the receiver's Keep-Alive hint says so). */
const IDLE_CONNECTION_MS = 4_000;

/** The attempt got no answer: it timed out, or the receiver could not be reached. */
export class TransportError extends Error {
  constructor(
    readonly kind: 'timeout' | 'connection',
    message: string,
  ) {
    super(message);
  }
}

const noop = () => {};

interface Target {
  request: typeof http.request;
  options: http.RequestOptions;
  /** Why the guard refuses this address (nothing is sent), or null. */
  refused: string | null;
}

/** One POST: its deadline, its answer, and what is read of the response. (A class, so no closures are made per request.) */
class Attempt {
  private answered = false;
  private done = false;
  private read = 0;
  private req: http.ClientRequest | undefined;
  private readonly deadline: NodeJS.Timeout;

  constructor(
    private readonly request: typeof http.request,
    private readonly options: http.RequestOptions,
    private readonly payload: Buffer,
    private readonly timeoutMs: number,
    private readonly readLimit: number,
    private readonly resolve: (status: number) => void,
    private readonly reject: (err: TransportError) => void,
  ) {
    this.deadline = setTimeout(() => this.expired(), timeoutMs);
    this.deadline.unref();
  }

  /** Sends the request; `retry`: a kept-alive connection found closed is replaced once. */
  send(retry: boolean): void {
    let req: http.ClientRequest;
    try {
      req = this.request(this.options);
    } catch (err) {
      // e.g. a header value the HTTP stack refuses
      this.fail(new TransportError('connection', `connection error: ${(err as Error).message}`));
      return;
    }
    this.req = req;
    req.on('response', (res) => this.answer(res));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (this.answered || this.done) return;
      if (retry && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) this.send(false);
      else if (err.code === 'EADDRBLOCKED') this.fail(new TransportError('connection', err.message));
      else this.fail(new TransportError('connection', `connection error: ${err.message}`));
    });
    req.end(this.payload);
  }

  private answer(res: http.IncomingMessage): void {
    res.on('error', noop);
    if (this.done || this.answered) {
      res.destroy();
      return;
    }
    this.answered = true;
    this.resolve(res.statusCode ?? 0);
    res.on('data', (chunk: Buffer) => {
      this.read += chunk.length;
      if (this.read > this.readLimit) {
        this.finish();
        res.destroy();
      }
    });
    res.on('end', () => this.finish());
    res.on('close', () => this.finish());
  }

  private expired(): void {
    if (!this.answered) this.fail(new TransportError('timeout', `timed out after ${this.timeoutMs / 1000} s`));
    else {
      // Answered, but the body is still coming: stop reading it.
      this.finish();
      this.req?.destroy();
    }
  }

  private finish(): void {
    this.done = true;
    clearTimeout(this.deadline);
  }

  private fail(err: TransportError): void {
    if (this.answered || this.done) return;
    this.finish();
    this.req?.destroy();
    this.reject(err);
  }
}

export class DeliveryClient {
  private readonly httpAgent = new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' });
  /** Request options of listener addresses (parsed once), by their text. */
  private readonly targets = new Map<string, Target>();

  constructor(
    private readonly timeoutMs: number,
    private readonly readLimit = RESPONSE_READ_LIMIT,
    /** The SSRF guard (default: allows everything, as in development). */
    private readonly guard: UrlGuard = new UrlGuard({ enforce: false }),
  ) {}

  /**
   * POSTs `body` to `url` with `headers` (content-length is added to them); resolves
   * with the response status once the answer's head has arrived (the body is drained
   * in the background within the same deadline). Rejects with a TransportError when
   * there is no answer.
   */
  post(url: string, headers: Record<string, string>, body: string): Promise<number> {
    let target: Target;
    try {
      target = this.target(url);
    } catch (err) {
      return Promise.reject(new TransportError('connection', `connection error: ${(err as Error).message}`));
    }
    if (target.refused) return Promise.reject(new TransportError('connection', `refused before connecting: the URL ${target.refused}`));
    const payload = Buffer.from(body, 'utf8');
    headers['content-length'] = String(payload.length);
    return new Promise<number>((resolve, reject) => {
      new Attempt(target.request, { ...target.options, headers }, payload, this.timeoutMs, this.readLimit, resolve, reject).send(true);
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private target(url: string): Target {
    let t = this.targets.get(url);
    if (!t) {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`unsupported protocol ${u.protocol}`);
      const secure = u.protocol === 'https:';
      const lookup = this.guard.lookup;
      t = {
        refused: this.guard.checkTarget(url).refused,
        request: secure ? https.request : http.request,
        options: {
          method: 'POST',
          protocol: u.protocol,
          hostname: u.hostname.replace(/^\[|\]$/g, ''),
          port: u.port || (secure ? 443 : 80),
          path: `${u.pathname}${u.search}`,
          agent: secure ? this.httpsAgent : this.httpAgent,
          ...(lookup ? { lookup } : {}),
          ...(u.username || u.password ? { auth: `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` } : {}),
        },
      };
      if (this.targets.size >= 1000) this.targets.clear();
      this.targets.set(url, t);
    }
    return t;
  }
}
