/**
 * A TCP proxy on loopback between the service and its database, to cut the
 * database off without stopping the shared server:
 *  - `cut()`: every open connection is destroyed and new ones are accepted and
 *    destroyed at once (the database "stopped": each attempt fails, and is counted);
 *  - `down()`: the listener is closed too (connections are refused);
 *  - `up()`: connections pass through again.
 */
import net from 'node:net';

export class TcpProxy {
  /** Connections accepted (passed through or cut) since the proxy started. */
  accepted = 0;
  private mode: 'up' | 'cut' = 'up';
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly target: { host: string; port: number },
    public port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target, 0);
    await proxy.listen();
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  cut(): void {
    this.mode = 'cut';
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  async down(): Promise<void> {
    this.cut();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async up(): Promise<void> {
    this.mode = 'up';
    if (!this.server) await this.listen();
  }

  async close(): Promise<void> {
    await this.down();
  }

  private listen(): Promise<void> {
    const server = net.createServer((client) => {
      this.accepted++;
      if (this.mode === 'cut') {
        client.destroy();
        return;
      }
      const upstream = net.connect(this.target.port, this.target.host);
      this.sockets.add(client);
      this.sockets.add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        this.port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }
}
