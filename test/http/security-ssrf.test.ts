/**
 * SSRF guard of webhook URLs (docs/webhooks.md "Addresses in production"):
 * in production apply refuses an http URL and any URL whose host is, or resolves
 * to, a loopback, private, link-local, unique-local, CGNAT, unspecified,
 * multicast or broadcast address (one KS001 message per listener, naming its
 * key); at connect time the same check runs on every lookup, so a name re-pointed
 * at an internal address after registration is refused before any connection.
 * DNS is injected (services.urlGuard.resolve): no real lookups, and every
 * connection a test could make goes to a loopback receiver that counts them.
 * In development a 127.0.0.1 receiver is served as before.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { actAsToken, applySite, expectError, idOf, type SiteIds } from '../support/fixtures.js';
import { TZ, webhookSite, type HookSpec } from '../support/webhook-site.js';
import { at } from '../support/catalogue.js';
import { DELIVERY_JOB } from '../../src/modules/webhooks/jobs.js';
import type { ResolvedAddress } from '../../src/platform/net/url-guard.js';

const PROD = { BOOKING_ENV: 'production', SECRETS_KEY: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' };

/** A loopback HTTP server that counts connections and requests. */
class CountingReceiver {
  connections = 0;
  requests = 0;
  private constructor(private readonly server: http.Server) {}
  static async start(): Promise<CountingReceiver> {
    let self!: CountingReceiver;
    const server = http.createServer((req, res) => {
      self.requests++;
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    });
    server.on('connection', () => self.connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    self = new CountingReceiver(server);
    return self;
  }
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** An injected resolver: names of the table only (anything else is ENOTFOUND); records every name asked. */
function fakeDns(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    asked.push(host);
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { table, asked, resolve };
}

const hook = (key: string, url: string): HookSpec => ({ key, url, events: ['ROOM_BOOK'] });

/** Books room `lotus` two days ahead as alice (one ROOM_BOOK event) and runs the deliveries that fall due. */
async function bookLotusAndDeliver(svc: TestService, ids: SiteIds): Promise<void> {
  const alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
  const now = await svc.ops('GET', '/ops/v1/clock');
  const D = DateTime.fromISO(now.body.data.now).setZone(TZ).startOf('day').plus({ days: 2 });
  const res = await svc.request('POST', '/meetings', {
    token: alice,
    body: { meetingRoomId: idOf(ids, 'lotus'), title: 'local', startDateTime: at(D, '09:00'), endDateTime: at(D, '10:00') },
  });
  expect(res.status, res.text).toBe(201);
  await svc.services.jobs.drain(DELIVERY_JOB);
}

describe('webhook URLs in production', () => {
  let svc: TestService;
  let rx: CountingReceiver;

  beforeAll(async () => {
    rx = await CountingReceiver.start();
    svc = await startTestService({ env: PROD });
  });
  afterAll(async () => {
    await svc?.close();
    await rx?.close();
  });

  it('apply refuses each internal address class, literal or resolved, and http; one message per listener naming its key', async () => {
    const dns = fakeDns({
      'loop.example': ['127.0.0.1'],
      'metadata.example': ['169.254.169.254'],
      'ten.example': ['10.20.30.40'],
      'ula.example': ['fd00::1'],
      'mixed.example': ['93.184.215.14', '192.168.1.10'],
      'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    });
    svc.services.urlGuard.resolve = dns.resolve;
    const literal: [string, string, RegExp][] = [
      ['lit-loopback', `https://127.0.0.1:${rx.port}/hook`, /loopback/],
      ['lit-loopback6', `https://[::1]:${rx.port}/hook`, /loopback/],
      ['lit-private10', 'https://10.0.0.5/hook', /private/],
      ['lit-private172', 'https://172.16.4.4/hook', /private/],
      ['lit-private192', 'https://192.168.0.9/hook', /private/],
      ['lit-metadata', 'https://169.254.169.254/latest/meta-data/', /link-local/],
      ['lit-linklocal6', 'https://[fe80::1]/hook', /link-local/],
      ['lit-ula', 'https://[fd12:3456::1]/hook', /unique-local/],
      ['lit-cgnat', 'https://100.64.1.1/hook', /CGNAT/],
      ['lit-unspecified', 'https://0.0.0.0/hook', /unspecified/],
      ['lit-unspecified6', 'https://[::]/hook', /unspecified/],
      ['lit-multicast', 'https://224.0.0.251/hook', /multicast/],
      ['lit-broadcast', 'https://255.255.255.255/hook', /broadcast/],
      ['lit-mapped', 'https://[::ffff:127.0.0.1]/hook', /loopback/],
      ['lit-mapped-metadata', 'https://[::ffff:169.254.169.254]/hook', /link-local/],
      ['name-localhost', `https://localhost:${rx.port}/hook`, /loopback/],
      ['name-loop', 'https://loop.example/hook', /loopback address .*127\.0\.0\.1/],
      ['name-metadata', 'https://metadata.example/hook', /link-local address .*169\.254\.169\.254/],
      ['name-ten', 'https://ten.example/hook', /private address .*10\.20\.30\.40/],
      ['name-ula', 'https://ula.example/hook', /unique-local address .*fd00::1/],
      ['name-mixed', 'https://mixed.example/hook', /private address .*192\.168\.1\.10/],
      ['plain-http', 'http://public.example/hook', /must use https in production/],
      // Issue 23: local names refused without DNS, IPv4 unwrapped from 6to4 and Teredo, names that do not resolve.
      ['name-localhost-dot', `https://localhost.:${rx.port}/hook`, /localhost\., a loopback name/],
      ['name-ip6-localhost', 'https://ip6-localhost/hook', /loopback name/],
      ['name-metadata-bare', 'https://metadata/latest', /cloud metadata name/],
      ['name-metadata-google', 'https://metadata.google.internal/computeMetadata/v1/', /cloud metadata name/],
      ['name-single-label', 'https://intranet/hook', /single-label/],
      ['lit-6to4-loopback', 'https://[2002:7f00:1::]/hook', /loopback/],
      ['lit-teredo-loopback', 'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', /loopback/],
      ['lit-nat64-local', 'https://[64:ff9b:1::a00:1]/hook', /reserved/],
      ['name-unresolvable', 'https://nowhere.example/hook', /must resolve to a public address \(nowhere\.example does not resolve\)/],
    ];
    const doc = webhookSite({ hooks: [...literal.map(([key, url]) => hook(key, url)), hook('fine', 'https://public.example/hook')] });
    const res = await svc.ops('POST', '/ops/v1/apply', doc);
    expectError(res, 400, 'KS001');
    const messages = res.body.message as string[];
    expect(messages).toHaveLength(literal.length);
    for (const [key, , reason] of literal) {
      const m = messages.find((x) => x.startsWith(`webhooks[${key}].url `));
      expect(m, key).toBeDefined();
      expect(m, key).toMatch(reason);
    }
    expect(messages.some((m) => m.includes('[fine]'))).toBe(false);
    // Literal addresses are classified without DNS; names were resolved, never connected to.
    expect(new Set(dns.asked)).toEqual(
      new Set(['loop.example', 'metadata.example', 'ten.example', 'ula.example', 'mixed.example', 'public.example', 'nowhere.example']),
    );
    expect(rx.connections).toBe(0);
  });

  it('a name re-pointed at an internal address after apply is refused before connecting, and the delivery fails with the reason', async () => {
    const dns = fakeDns({ 'hooks.example': ['93.184.215.14'] });
    svc.services.urlGuard.resolve = dns.resolve;
    const doc = webhookSite({ rooms: [{ key: 'lotus', name: 'Lotus' }], hooks: [hook('rebind', `https://hooks.example:${rx.port}/hook`)] });
    const ids: SiteIds = await applySite(svc, doc);
    expect(dns.asked).toEqual(['hooks.example']);

    const alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
    const D = DateTime.now().setZone(TZ).startOf('day').plus({ days: 2 });
    let booked = 0;
    for (const [i, address] of ['127.0.0.1', '169.254.169.254', '10.1.2.3', 'fd00::1', '::ffff:127.0.0.1'].entries()) {
      // DNS rebinding: the name now answers an internal address (the loopback receiver listens on 127.0.0.1).
      dns.table['hooks.example'] = [address];
      const res = await svc.request('POST', '/meetings', {
        token: alice,
        body: {
          meetingRoomId: idOf(ids, 'lotus'),
          title: `rebind ${i}`,
          startDateTime: at(D, `${8 + i}:00`),
          endDateTime: at(D, `${8 + i}:30`),
        },
      });
      expect(res.status, res.text).toBe(201);
      booked++;
      await svc.services.jobs.drain(DELIVERY_JOB);
      const list = await svc.ops('GET', `/ops/v1/webhooks/${idOf(ids, 'rebind')}/deliveries?limit=100`);
      expect(list.status, list.text).toBe(200);
      expect(list.body.data).toHaveLength(booked);
      const latest = list.body.data[0];
      expect(latest, address).toMatchObject({ attempts: 1, lastStatus: null });
      expect(latest.lastError, address).toMatch(
        /^refused before connecting: the URL must not resolve to a .* address in production \(hooks\.example resolves to /,
      );
      expect(latest.lastError).toContain(`resolves to ${address})`);
    }
    expect(rx.connections).toBe(0);
    expect(rx.requests).toBe(0);
  });
});

describe('webhook URLs in uat', () => {
  let svc: TestService;
  let rx: CountingReceiver;
  afterEach(async () => {
    await svc?.close();
    await rx?.close();
  });
  const UAT = { BOOKING_ENV: 'uat' };

  it('the production guard applies: a loopback or private receiver is refused', async () => {
    rx = await CountingReceiver.start();
    svc = await startTestService({ env: UAT });
    svc.services.urlGuard.resolve = fakeDns({}).resolve;
    const doc = webhookSite({
      hooks: [
        hook('local', `http://127.0.0.1:${rx.port}/hook`),
        hook('name', `http://localhost:${rx.port}/hook`),
        hook('ten', 'https://10.0.0.5/hook'),
      ],
    });
    const res = await svc.ops('POST', '/ops/v1/apply', doc);
    expectError(res, 400, 'KS001');
    expect(res.body.message).toEqual([
      'webhooks[local].url must use https in uat',
      'webhooks[name].url must use https in uat',
      'webhooks[ten].url must not be 10.0.0.5, a private address, in uat',
    ]);
    expect(rx.connections).toBe(0);
  });

  it('WEBHOOK_ALLOW_LOOPBACK=1 allows loopback receivers (over http), and nothing else', async () => {
    rx = await CountingReceiver.start();
    svc = await startTestService({ env: { ...UAT, WEBHOOK_ALLOW_LOOPBACK: '1' } });
    svc.services.urlGuard.resolve = fakeDns({ 'inside.example': ['192.168.1.10'] }).resolve;
    const refused = await svc.ops(
      'POST',
      '/ops/v1/apply',
      webhookSite({ hooks: [hook('ten', 'https://10.0.0.5/hook'), hook('inside', 'https://inside.example/hook')] }),
    );
    expectError(refused, 400, 'KS001');
    expect(refused.body.message).toHaveLength(2);

    const doc = webhookSite({ rooms: [{ key: 'lotus', name: 'Lotus' }], hooks: [hook('local', `http://127.0.0.1:${rx.port}/hook`)] });
    const ids = await applySite(svc, doc);
    await bookLotusAndDeliver(svc, ids);
    expect(rx.requests).toBe(1);
  });
});

describe('webhook URLs in development', () => {
  let svc: TestService;
  let rx: CountingReceiver;
  afterEach(async () => {
    await svc?.close();
    await rx?.close();
  });

  it('a 127.0.0.1 receiver is registered without being contacted, then served', async () => {
    rx = await CountingReceiver.start();
    svc = await startTestService();
    const asked: string[] = [];
    svc.services.urlGuard.resolve = async (host) => {
      asked.push(host);
      throw new Error('no DNS in this test');
    };
    const doc = webhookSite({ rooms: [{ key: 'lotus', name: 'Lotus' }], hooks: [hook('local', `http://127.0.0.1:${rx.port}/hook`)] });
    const ids = await applySite(svc, doc);
    await svc.services.jobs.drain(DELIVERY_JOB);
    expect(rx.connections, 'registering never connects').toBe(0);

    await bookLotusAndDeliver(svc, ids);
    expect(rx.requests).toBe(1);
    expect(asked).toEqual([]);
  });
});
