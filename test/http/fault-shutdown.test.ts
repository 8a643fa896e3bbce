/**
 * Graceful shutdown of the real entry point (`node --import tsx src/main.ts`):
 * SIGTERM stops accepting connections, lets the request in flight finish with its
 * normal answer and the running job (a webhook delivery held open by the
 * receiver) finish and be recorded, then exits 0. A shutdown that cannot finish
 * within SHUTDOWN_TIMEOUT_MS exits 1 at that bound.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { openStorage } from '../../src/platform/db/database.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { siteDocument, PORTAL_APP_ID, PORTAL_SECRET } from '../support/fixtures.js';
import { everyDay } from '../support/catalogue.js';
import { startMainProcess } from '../support/main-process.js';
import { until } from '../support/delivery-audit.js';

const OPS_TOKEN = 'shutdown-test-ops-token-0123456789abcdef012345';
const SECRETS_KEY = 'c3'.repeat(32);

/** A receiver that holds the first request open until `release()`, and answers 200 to the others. */
async function holdingReceiver() {
  const held: http.ServerResponse[] = [];
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      if (received === 1) held.push(res);
      else res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    held: () => held.length,
    release: () => held.splice(0).forEach((r) => r.end('ok')),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Whether a new TCP connection to the service is refused. */
function refused(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname);
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** A POST whose body is sent in two parts: the request is in flight until `finish()`. */
function slowPost(url: string, path: string, token: string, body: unknown, agent: http.Agent | false = false) {
  const data = Buffer.from(JSON.stringify(body));
  const cut = Math.floor(data.length / 2);
  const req = http.request(url + path, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', 'content-length': String(data.length), authorization: `Bearer ${token}` },
  });
  const answer = new Promise<{ status: number; body: any; connection: string | undefined }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), connection: res.headers.connection }));
    });
    req.on('error', reject);
  });
  req.write(data.subarray(0, cut));
  return { finish: () => (req.end(data.subarray(cut)), answer) };
}

async function startSite(database: TestDatabase, hookUrl: string, env: Record<string, string>) {
  const svc = await startMainProcess({ database, opsToken: OPS_TOKEN, secretsKey: SECRETS_KEY, env });
  const doc = siteDocument() as any;
  doc.zones = [{ key: 'z', project: 'tower', name: 'Tower' }];
  doc.floors = [{ key: 'f', zone: 'z', name: '12F' }];
  doc.rooms = [
    {
      key: 'r1',
      floor: 'f',
      name: 'Room 1',
      capacity: 6,
      cleanupMinutes: 0,
      config: everyDay('00:00:00', '24:00:00', [], { minimumLeadTime: { minutes: 0, hours: 0, days: 0 }, maxAdvanceBookingDays: 60 }),
    },
  ];
  doc.webhooks = [
    { key: 'h', project: 'tower', url: hookUrl, secret: 'shutdown-secret-0123456789abcdef0123456789', events: ['ROOM_BOOK'] },
  ];
  const applied = await svc.ops('POST', '/ops/v1/apply', doc);
  expect(applied.status, applied.text).toBe(200);
  const room: string = applied.body.data.idsByKind.rooms.r1;
  const clock = await svc.ops('GET', '/ops/v1/clock');
  const D = DateTime.fromISO(clock.body.data.now).setZone('Asia/Bangkok').startOf('day').plus({ days: 2 });
  const tokenRes = await svc.request('POST', '/auth/accessToken', {
    body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
  });
  expect(tokenRes.status, tokenRes.text).toBe(201);
  const body = (hour: number) => ({
    meetingRoomId: room,
    title: `shutdown ${hour}`,
    startDateTime: D.plus({ hours: hour }).toISO(),
    endDateTime: D.plus({ hours: hour, minutes: 30 }).toISO(),
  });
  return { svc, token: tokenRes.body.access_token as string, body };
}

describe(`graceful shutdown (${TEST_ENGINE})`, () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()!().catch(() => undefined);
  });

  it('SIGTERM: refuses new connections, finishes the request in flight and the running delivery, exits 0', async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const receiver = await holdingReceiver();
    cleanup.push(() => receiver.close());
    const { svc, token, body } = await startSite(database, receiver.url, { SHUTDOWN_TIMEOUT_MS: '30000' });
    cleanup.push(() => svc.kill('SIGKILL'));

    // The running job: the first booking's delivery, held open by the receiver.
    const first = await svc.request('POST', '/meetings', { token, body: body(9) });
    expect(first.status, first.text).toBe(201);
    await until('the delivery in flight', () => receiver.held() === 1, 15_000);
    // The request in flight: its headers are in, half its body is not.
    const slow = slowPost(svc.url, '/meetings', token, body(11));
    await new Promise((r) => setTimeout(r, 500));

    const exited = svc.kill('SIGTERM');
    await until('new connections refused', () => refused(svc.url), 10_000, 50);
    const answer = await slow.finish();
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.data.title).toBe('shutdown 11');
    // Still waiting for the delivery: release it.
    expect(svc.child.exitCode).toBeNull();
    receiver.release();
    expect(await exited).toEqual({ code: 0, signal: null });

    // The delivery's answer was recorded before the exit; both bookings are there.
    const storage = await openStorage(database.url);
    try {
      const deliveries = await storage.db.selectFrom('deliveries').select(['status', 'event_id']).execute();
      const meetings = await storage.db.selectFrom('meetings').select(['id', 'title']).execute();
      expect(meetings.map((m) => m.title).sort()).toEqual(['shutdown 11', 'shutdown 9']);
      expect(deliveries.filter((d) => d.status === 'delivered').length).toBeGreaterThanOrEqual(1);
      const firstDelivery = await storage.db
        .selectFrom('deliveries')
        .innerJoin('events', 'events.id', 'deliveries.event_id')
        .select(['deliveries.status'])
        .where('events.type', '=', 'ROOM_BOOK')
        .orderBy('deliveries.created_at')
        .limit(1)
        .executeTakeFirstOrThrow();
      expect(firstDelivery.status).toBe('delivered');
    } finally {
      await storage.close();
    }
  }, 90_000);

  it('a kept-alive connection busy when SIGTERM arrives is closed after its answer: the exit does not wait for it to idle out', async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const receiver = await holdingReceiver();
    cleanup.push(() => receiver.close());
    // A proxy's kept-alive connection would stay open until KEEP_ALIVE_TIMEOUT_MS (72 s), far past this bound.
    const { svc, token, body } = await startSite(database, receiver.url, { SHUTDOWN_TIMEOUT_MS: '8000' });
    cleanup.push(() => svc.kill('SIGKILL'));
    const releasing = setInterval(() => receiver.release(), 50);
    cleanup.push(async () => clearInterval(releasing));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    cleanup.push(async () => agent.destroy());
    const slow = slowPost(svc.url, '/meetings', token, body(13), agent);
    await new Promise((r) => setTimeout(r, 500));

    const exited = svc.kill('SIGTERM');
    await until('new connections refused', () => refused(svc.url), 10_000, 50);
    const answer = await slow.finish();
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.connection).toBe('close');
    expect(await exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('a shutdown that cannot finish within SHUTDOWN_TIMEOUT_MS exits 1 at that bound', async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const receiver = await holdingReceiver();
    cleanup.push(() => receiver.close());
    const { svc, token, body } = await startSite(database, receiver.url, { SHUTDOWN_TIMEOUT_MS: '1500', WEBHOOK_TIMEOUT_MS: '120000' });
    cleanup.push(() => svc.kill('SIGKILL'));
    expect((await svc.request('POST', '/meetings', { token, body: body(9) })).status).toBe(201);
    await until('the delivery in flight', () => receiver.held() === 1, 15_000);
    // The receiver never answers (and the delivery timeout is long): the shutdown gives up at its bound.
    expect(await svc.kill('SIGTERM')).toEqual({ code: 1, signal: null });
    expect(svc.output()).toMatch(/shutdown took too long/);
  }, 90_000);
});
