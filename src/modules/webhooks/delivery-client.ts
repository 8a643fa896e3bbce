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
 */
import http from 'node:http';
import https from 'node:https';

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

export class DeliveryClient {
  private readonly httpAgent = new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' });
  /** Request options of listener addresses (parsed once), by their text. */
  private readonly targets = new Map<string, { request: typeof http.request; options: http.RequestOptions }>();

  constructor(
    private readonly timeoutMs: number,
    private readonly readLimit = RESPONSE_READ_LIMIT,
  ) {}

  /**
   * POSTs `body` to `url` with `headers` (content-length is added to them); resolves
   * with the response status once the answer's head has arrived (the body is drained
   * in the background within the same deadline). Rejects with a TransportError when
   * there is no answer.
   */
  post(url: string, headers: Record<string, string>, body: string): Promise<number> {
    let target: { request: typeof http.request; options: http.RequestOptions };
    try {
      target = this.target(url);
    } catch (err) {
      return Promise.reject(new TransportError('connection', `connection error: ${(err as Error).message}`));
    }
    const { request } = target;
    const payload = Buffer.from(body, 'utf8');
    headers['content-length'] = String(payload.length);
    const options: http.RequestOptions = { ...target.options, headers };
    const timeoutMs = this.timeoutMs;
    const readLimit = this.readLimit;

    return new Promise<number>((resolve, reject) => {
      let answered = false;
      let done = false;
      let req: http.ClientRequest | undefined;
      const finish = () => {
        done = true;
        clearTimeout(deadline);
      };
      const fail = (err: TransportError) => {
        if (answered || done) return;
        finish();
        req?.destroy();
        reject(err);
      };
      const deadline = setTimeout(() => {
        if (!answered) fail(new TransportError('timeout', `timed out after ${timeoutMs / 1000} s`));
        else {
          finish();
          req?.destroy();
        }
      }, timeoutMs);
      deadline.unref();

      const send = (retry: boolean) => {
        try {
          req = request(options);
        } catch (err) {
          // e.g. a header value the HTTP stack refuses
          fail(new TransportError('connection', `connection error: ${(err as Error).message}`));
          return;
        }
        const sent = req;
        sent.on('response', (res) => {
          res.on('error', noop);
          if (done || answered) {
            res.destroy();
            return;
          }
          answered = true;
          resolve(res.statusCode ?? 0);
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > readLimit) {
              finish();
              res.destroy();
            }
          });
          res.on('end', finish);
          res.on('close', finish);
        });
        sent.on('error', (err: NodeJS.ErrnoException) => {
          if (answered || done) return;
          if (retry && sent.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
            send(false);
            return;
          }
          fail(new TransportError('connection', `connection error: ${err.message}`));
        });
        sent.end(payload);
      };
      send(true);
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private target(url: string): { request: typeof http.request; options: http.RequestOptions } {
    let t = this.targets.get(url);
    if (!t) {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`unsupported protocol ${u.protocol}`);
      const secure = u.protocol === 'https:';
      t = {
        request: secure ? https.request : http.request,
        options: {
          method: 'POST', protocol: u.protocol, hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || (secure ? 443 : 80),
          path: `${u.pathname}${u.search}`, agent: secure ? this.httpsAgent : this.httpAgent,
          ...(u.username || u.password ? { auth: `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` } : {}),
        },
      };
      if (this.targets.size >= 1000) this.targets.clear();
      this.targets.set(url, t);
    }
    return t;
  }
}
