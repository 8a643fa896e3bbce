/**
 * The parties of the release's multi-instance test (test/release/multi-instance.ts): a throwaway
 * PostgreSQL database, a TLS certificate made with openssl, Debian's nginx in a temp prefix with
 * deploy/nginx/booking-proxy.conf, service instances started from a release tree as an unprivileged
 * user, a loopback webhook receiver, and an HTTPS client that trusts only the test's certificate.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { createVerifier } from '../../src/modules/webhooks/receiver-kit.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Fails the test with a message (the runner prints the logs). */
export class CheckFailed extends Error {}

export function check(ok: boolean, what: string, detail = ''): void {
  if (!ok) throw new CheckFailed(`${what}${detail ? `: ${detail}` : ''}`);
  console.log(`ok - ${what}${detail ? ` (${detail})` : ''}`);
}

export async function waitUntil(what: string, timeoutMs: number, probe: () => Promise<boolean> | boolean): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > until) throw new CheckFailed(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** A port nothing listens on now (the kernel's pick). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export interface ThrowawayDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createDatabase(adminUrl: string): Promise<ThrowawayDatabase> {
  const name = `booking_release_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A self-signed certificate for localhost / 127.0.0.1 (clients trust it as their only CA). */
export function makeCertificate(dir: string): { cert: string; key: string; pem: Buffer } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  // -addext needs OpenSSL 1.1.1+ (Debian 11+).
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-sha256',
      '-days',
      '2',
      '-keyout',
      key,
      '-out',
      cert,
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { cert, key, pem: readFileSync(cert) };
}

export interface Nginx {
  url: string;
  port: number;
  dir: string;
  logs(): string;
  /** Requests nginx sent to more than one instance, by their upstream statuses (e.g. `503, 201`), from the access log. */
  retried(): Map<string, number>;
  stop(): Promise<void>;
}

export const NGINX = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

/** nginx in its own prefix: TLS on 127.0.0.1:port, the repository's shared proxy directives, the given upstreams. */
export async function startNginx(o: { dir: string; cert: string; key: string; upstreams: number[]; repoRoot: string }): Promise<Nginx> {
  const dir = join(o.dir, 'nginx');
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `# The release test's nginx: everything in ${dir}, listening on 127.0.0.1 only.
daemon off;
worker_processes 2;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 1024; }
http {
  log_format upstreams '$remote_addr "$request" $status up=[$upstream_addr] us=[$upstream_status] rt=$request_time';
  access_log ${dir}/access.log upstreams;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  upstream booking {
${o.upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n')}
    keepalive 32;
    keepalive_timeout 60s;
  }
  server {
    listen 127.0.0.1:${port} ssl;
    server_name localhost;
    ssl_certificate ${o.cert};
    ssl_certificate_key ${o.key};
    include ${resolve(o.repoRoot, 'deploy/nginx/booking-proxy.conf')};
  }
}
`,
  );
  execFileSync(NGINX, ['-t', '-p', dir, '-e', `${dir}/error.log`, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  const child = spawn(NGINX, ['-p', dir, '-e', `${dir}/error.log`, '-c', conf], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `https://localhost:${port}`;
  await waitUntil('nginx to listen', 10_000, () => canConnect(port));
  const read = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : '');
  return {
    url,
    port,
    dir,
    logs: () =>
      `--- nginx error.log\n${read('error.log')}\n--- nginx access.log (last 40 lines)\n${read('access.log').split('\n').slice(-40).join('\n')}`,
    retried: () => {
      const counts = new Map<string, number>();
      for (const m of read('access.log').matchAll(/ us=\[([^\]]*,[^\]]*)\]/g)) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
      return counts;
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await Promise.race([exited, sleep(5000)]);
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((r) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      r(true);
    });
    s.once('error', () => r(false));
  });
}

/** The unprivileged user the instances run as (created when absent). */
export const SERVICE_USER = 'booking';

export function ensureServiceUser(): void {
  try {
    execFileSync('id', ['-u', SERVICE_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', SERVICE_USER], { stdio: 'inherit' });
  }
}

/** Fails clearly when the service user cannot read the release tree (a `mktemp -d` directory is 0700). */
export function checkReadableByServiceUser(releaseDir: string): void {
  const main = join(releaseDir, 'dist/main.js');
  try {
    execFileSync('setpriv', ['--reuid', SERVICE_USER, '--regid', SERVICE_USER, '--init-groups', 'test', '-r', main], { stdio: 'ignore' });
  } catch {
    throw new CheckFailed(`user ${SERVICE_USER} cannot read ${main}: make the release tree (and its parent directories) readable`);
  }
}

export interface Instance {
  name: string;
  port: number;
  url: string;
  child: ChildProcess;
  /** Everything the process wrote (stdout and stderr). */
  log(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** `node RELEASE_DIR/dist/main.js` as the service user, its output collected and written to DIR/<name>.log. */
export function startInstance(o: {
  name: string;
  port: number;
  releaseDir: string;
  logDir: string;
  env: Record<string, string>;
}): Instance {
  const logFile = join(o.logDir, `${o.name}.log`);
  let text = '';
  const child = spawn(
    'setpriv',
    ['--reuid', SERVICE_USER, '--regid', SERVICE_USER, '--init-groups', process.execPath, join(o.releaseDir, 'dist/main.js')],
    {
      cwd: o.releaseDir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ...o.env, PORT: String(o.port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const collect = (chunk: Buffer) => {
    text += chunk.toString();
    appendFileSync(logFile, chunk);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal, at: performance.now() })),
  );
  return { name: o.name, port: o.port, url: `http://127.0.0.1:${o.port}`, child, log: () => text, exited };
}

/** Log lines at error level or above (pino: level >= 50) and anything that is not JSON after the banner. */
export function errorLines(log: string): string[] {
  return log.split('\n').filter((l) => {
    if (!l.startsWith('{')) return false;
    try {
      return (JSON.parse(l) as { level?: number }).level! >= 50;
    } catch {
      return false;
    }
  });
}

export interface HttpAnswer {
  status: number;
  body: any;
  text: string;
  headers: http.IncomingHttpHeaders;
}

export interface Client {
  request(method: string, path: string, o?: { body?: unknown; token?: string; headers?: Record<string, string> }): Promise<HttpAnswer>;
  close(): void;
}

/** A keep-alive client of one base URL (https: trusting `ca` only), from `localAddress` when given. */
export function client(base: string, o: { ca?: Buffer; localAddress?: string; maxSockets?: number } = {}): Client {
  const isHttps = base.startsWith('https:');
  const agent = isHttps
    ? new https.Agent({ keepAlive: true, ca: o.ca, maxSockets: o.maxSockets ?? 4, localAddress: o.localAddress })
    : new http.Agent({ keepAlive: true, maxSockets: o.maxSockets ?? 4, localAddress: o.localAddress });
  const request: Client['request'] = (method, path, r = {}) =>
    new Promise((resolvePromise, reject) => {
      const payload = r.body === undefined ? undefined : Buffer.from(JSON.stringify(r.body));
      const headers: Record<string, string> = { ...(r.headers ?? {}) };
      if (payload) headers['content-type'] = 'application/json';
      if (r.token) headers.authorization = `Bearer ${r.token}`;
      const req = (isHttps ? https : http).request(new URL(path, base), { method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolvePromise({ status: res.statusCode ?? 0, body, text, headers: res.headers });
        });
      });
      req.setTimeout(30_000, () => req.destroy(new Error('client timeout (30 s)')));
      req.on('error', reject);
      req.end(payload);
    });
  return { request, close: () => agent.destroy() };
}

export interface Delivery {
  id: string;
  type: string;
  meetingId: string | undefined;
  verified: boolean;
  reason?: string;
}

/** A webhook receiver on 127.0.0.1 that verifies every delivery with the webhooks module's receiver kit. */
export async function startReceiver(secret: string): Promise<{ url: string; deliveries: Delivery[]; close(): Promise<void> }> {
  const verifier = createVerifier(secret, new Set());
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const v = verifier.verify(req.headers, raw);
      let body: any = {};
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = {};
      }
      deliveries.push({
        id: String(body.id),
        type: String(body.type),
        meetingId: body.data?.meetingId,
        verified: v.ok,
        reason: v.ok ? undefined : v.reason,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A temp directory the service user may enter (the instances' cwd is the release tree; logs are written by this process). */
export function makeTempDir(base: string): string {
  const dir = join(base, `booking-release-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  return dir;
}
