/**
 * The Microsoft Graph connector against the Graph stand-in (127.0.0.1). No database.
 * A tiny local receiver answers the validation handshake and collects notifications.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConnectorRefusedError,
  ConnectorUnavailableError,
  CursorExpiredError,
  NotFoundError,
  type CalendarConnector,
  type OutboundEvent,
} from '../../src/modules/calendar-sync/connector.js';
import {
  BOOKING_ID_PROPERTY,
  GRAPH_SUBSCRIPTION_MS,
  microsoftConnector,
  toRemoteEvent,
  transactionIdOf,
  type MicrosoftAccount,
} from '../../src/modules/calendar-sync/connectors/microsoft.js';
import { startGraphStandIn, type GraphStandIn } from '../support/graph-standin.js';

const ROOM = 'room.orchid@example.com';
const H = 3600_000;
const T0 = Date.UTC(2026, 11, 1, 9, 0);
const WINDOW = { start: Date.UTC(2026, 10, 20), end: Date.UTC(2027, 1, 1) };

interface Receiver {
  url: string;
  bodies: unknown[];
  /** When false, the handshake is not echoed. */
  echo: boolean;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const r: Omit<Receiver, 'url' | 'close'> = { bodies: [], echo: true };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const token = new URL(req.url ?? '/', 'http://x').searchParams.get('validationToken');
      if (token !== null) {
        if (!r.echo) return void res.writeHead(500).end();
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(token);
      }
      r.bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(r, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/calendar/webhooks/con_1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

let graph: GraphStandIn;
let receiver: Receiver;
let now: number;
let conn: CalendarConnector;

function account(over: Partial<MicrosoftAccount> = {}): MicrosoftAccount {
  return {
    id: 'con_1',
    provider: 'microsoft',
    tenantId: graph.credentials.tenantId!,
    clientId: graph.credentials.clientId!,
    clientSecret: graph.credentials.clientSecret!,
    apiBaseUrl: graph.apiBaseUrl,
    tokenUrl: graph.tokenUrl,
    ...over,
  };
}

function outbound(over: Partial<OutboundEvent> = {}): OutboundEvent {
  return {
    key: 'bk_1:create',
    bookingId: 'bk_1',
    title: 'Quarterly review',
    description: 'Booked through the app',
    start: T0,
    end: T0 + H,
    timeZone: 'Asia/Bangkok',
    organizer: { email: 'Alice@Example.com', name: 'Alice' },
    tentative: false,
    ...over,
  };
}

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

const cal = { calendarId: ROOM };
const count = (method: string, path: RegExp) => graph.requests.filter((r) => r.method === method && path.test(r.path)).length;

beforeEach(async () => {
  graph = await startGraphStandIn({ names: { [ROOM]: 'Orchid' } });
  receiver = await startReceiver();
  now = Date.now();
  conn = microsoftConnector(account(), { now: () => now, timeoutMs: 5000 });
});

afterEach(async () => {
  await graph.close();
  await receiver.close();
});

describe('Microsoft connector: token', () => {
  it('caches the token until 5 minutes before expiry, one request at a time, and refreshes after a 401', async () => {
    await Promise.all([conn.changes(cal, null, WINDOW), conn.changes(cal, null, WINDOW)]);
    expect(graph.tokensIssued).toBe(1);
    now += 3599_000 - 6 * 60_000;
    await conn.changes(cal, null, WINDOW);
    expect(graph.tokensIssued).toBe(1);
    now += 2 * 60_000;
    await conn.changes(cal, null, WINDOW);
    expect(graph.tokensIssued).toBe(2);
    graph.revokeTokens();
    await conn.changes(cal, null, WINDOW);
    expect(graph.tokensIssued).toBe(3);
  });

  it('refuses wrong credentials without the secret in the message', async () => {
    const bad = microsoftConnector(account({ clientSecret: 'not-the-secret-123' }), { now: () => now, timeoutMs: 5000 });
    const err = await caught(bad.changes(cal, null, WINDOW));
    expect(err).toBeInstanceOf(ConnectorRefusedError);
    expect((err as ConnectorRefusedError).status).toBe(401);
    expect(err.message).toContain('invalid_client');
    expect(err.message).not.toContain('not-the-secret-123');
  });
});

describe('Microsoft connector: base address', () => {
  it("takes apiBaseUrl with or without Graph's /v1.0", async () => {
    for (const apiBaseUrl of [graph.apiBaseUrl, `${graph.apiBaseUrl}/v1.0`, `${graph.apiBaseUrl}/v1.0/`]) {
      const c = microsoftConnector(account({ apiBaseUrl }), { now: () => now, timeoutMs: 5000 });
      const page = await c.changes(cal, null, WINDOW);
      expect(page.full).toBe(true);
    }
    expect(graph.requests.every((r) => !r.path.includes('/v1.0/v1.0'))).toBe(true);
  });
});

describe('Microsoft connector: subscriptions', () => {
  it('subscribes after the handshake, renews, and unsubscribes', async () => {
    const sub = await conn.subscribe(cal, {
      notificationUrl: receiver.url,
      clientState: 'cs-secret',
      expiresAt: now + 10 * 24 * H,
      channelId: 'x',
    });
    expect(conn.maxSubscriptionMs).toBe(GRAPH_SUBSCRIPTION_MS);
    expect(sub.resourceId).toBeNull();
    expect(Math.abs(sub.expiresAt - (now + GRAPH_SUBSCRIPTION_MS))).toBeLessThan(1000);
    expect(graph.subscriptions()).toMatchObject([{ id: sub.id, calendarId: ROOM, notificationUrl: receiver.url, active: true }]);

    const renewed = await conn.renew(cal, sub, {
      notificationUrl: receiver.url,
      clientState: 'cs-secret',
      expiresAt: now + 48 * H,
      channelId: 'y',
    });
    expect(renewed.id).toBe(sub.id);
    expect(Math.abs(renewed.expiresAt - (now + 48 * H))).toBeLessThan(1000);

    // Changes are announced with the clientState.
    await graph.personCreates(ROOM, { organizer: { email: 'bob@example.com', name: 'Bob' }, title: 'Sync', start: T0, end: T0 + H });
    await graph.settled();
    expect(receiver.bodies).toMatchObject([{ value: [{ subscriptionId: sub.id, changeType: 'created', clientState: 'cs-secret' }] }]);

    await conn.unsubscribe(cal, sub);
    await conn.unsubscribe(cal, sub);
    expect(graph.subscriptions()[0]!.active).toBe(false);
    expect(
      await caught(conn.renew(cal, sub, { notificationUrl: receiver.url, clientState: 'cs', expiresAt: now + H, channelId: 'z' })),
    ).toBeInstanceOf(NotFoundError);
  });

  it('is refused when the notification URL does not echo the validation token', async () => {
    receiver.echo = false;
    const err = await caught(conn.subscribe(cal, { notificationUrl: receiver.url, clientState: 'cs', expiresAt: now + H, channelId: 'x' }));
    expect(err).toBeInstanceOf(ConnectorRefusedError);
    expect(err.message).toContain('ValidationError');
    expect(graph.subscriptions()).toEqual([]);
  });
});

describe('Microsoft connector: changes', () => {
  it('reads a full window across pages, then increments, removals, and 410 as an expired cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      ids.push(
        await graph.personCreates(ROOM, {
          organizer: { email: 'bob@example.com', name: 'Bob' },
          title: `M${i}`,
          start: T0 + i * H,
          end: T0 + i * H + H / 2,
        }),
      );
    }
    const full = await conn.changes(cal, null, WINDOW);
    expect(full.full).toBe(true);
    expect(full.events).toHaveLength(60);
    expect(count('GET', /calendarView\/delta$/)).toBe(2);
    const first = full.events.find((e) => e.id === ids[0])!;
    expect(first).toMatchObject({
      removed: false,
      start: T0,
      end: T0 + H / 2,
      title: 'M0',
      allDay: false,
      sequence: 0,
      bookingId: null,
      organizer: { email: 'bob@example.com', name: 'Bob' },
      attendees: [{ email: ROOM, resource: true, response: 'none' }],
    });
    expect(first.uid).toMatch(/^040000008200E00074C5B7101A82E008/);
    expect(first.etag).toBeTruthy();

    const none = await conn.changes(cal, full.cursor, WINDOW);
    expect(none).toMatchObject({ events: [], full: false });

    await graph.personUpdates(ROOM, ids[1]!, { start: T0 + 100 * H, end: T0 + 101 * H });
    await graph.personDeletes(ROOM, ids[2]!);
    await graph.personRemovesRoom(ROOM, ids[3]!);
    const inc = await conn.changes(cal, none.cursor, WINDOW);
    expect(inc.full).toBe(false);
    expect(inc.events.map((e) => [e.id, e.removed, e.start])).toEqual([
      [ids[1], false, T0 + 100 * H],
      [ids[2], true, 0],
      [ids[3], true, 0],
    ]);

    graph.expireCursors(ROOM);
    expect(await caught(conn.changes(cal, inc.cursor, WINDOW))).toBeInstanceOf(CursorExpiredError);
  });

  it('reads the booking id back from an event the service wrote, and a declined room', async () => {
    const full = await conn.changes(cal, null, WINDOW);
    const created = await conn.createEvent(cal, outbound());
    const pid = await graph.personCreates(ROOM, {
      organizer: { email: 'bob@example.com', name: 'Bob' },
      title: 'Sync',
      start: T0,
      end: T0 + H,
    });
    await graph.personDeclinesForRoom(ROOM, pid);
    const inc = await conn.changes(cal, full.cursor, WINDOW);
    const mine = inc.events.find((e) => e.id === created.id)!;
    expect(mine).toMatchObject({ bookingId: 'bk_1', uid: created.uid, title: 'Quarterly review', description: 'Booked through the app' });
    expect(mine.organizer).toEqual({ email: ROOM, name: 'Orchid' });
    expect(mine.attendees).toEqual([{ email: 'alice@example.com', name: 'Alice', resource: false, response: 'none' }]);
    expect(inc.events.find((e) => e.id === pid)!.attendees.find((a) => a.resource)!.response).toBe('declined');
  });
});

describe('Microsoft connector: events', () => {
  it('creates once per key, updates, and cancels', async () => {
    const a = await conn.createEvent(cal, outbound());
    const b = await conn.createEvent(cal, outbound({ title: 'retried' }));
    expect(b.id).toBe(a.id);
    expect(graph.events(ROOM)).toHaveLength(1);
    const raw = graph.rawEvent(ROOM, a.id)!;
    expect(raw).toMatchObject({
      transactionId: transactionIdOf('bk_1:create'),
      showAs: 'busy',
      allowNewTimeProposals: false,
      responseStatus: { response: 'organizer' },
      singleValueExtendedProperties: [{ id: BOOKING_ID_PROPERTY, value: 'bk_1' }],
    });
    expect(graph.events(ROOM)[0]).toMatchObject({
      bookingId: 'bk_1',
      organizerEmail: ROOM,
      attendeeEmails: ['alice@example.com'],
      roomResponse: 'organizer',
    });

    const u = await conn.updateEvent(cal, a.id, outbound({ start: T0 + 2 * H, end: T0 + 3 * H, title: 'Moved', tentative: true }));
    expect(u.etag).not.toBe(a.etag);
    expect(graph.events(ROOM)[0]).toMatchObject({ start: T0 + 2 * H, end: T0 + 3 * H, title: 'Moved', tentative: true });

    await conn.cancelEvent(cal, a.id, 'Booking cancelled');
    await conn.cancelEvent(cal, a.id, null);
    expect(graph.events(ROOM)[0]!.cancelled).toBe(true);
    expect(await caught(conn.updateEvent(cal, a.id, outbound()))).toBeInstanceOf(NotFoundError);
  });

  it('accepts and declines with a comment on the room copy', async () => {
    const id = await graph.personCreates(ROOM, {
      organizer: { email: 'bob@example.com', name: 'Bob' },
      title: 'Sync',
      start: T0,
      end: T0 + H,
    });
    await conn.respond(cal, id, { accepted: true, comment: 'Booked' });
    expect(graph.events(ROOM)[0]).toMatchObject({ roomResponse: 'accepted', roomComment: 'Booked' });
    await conn.respond(cal, id, { accepted: false, comment: 'Outside opening hours' });
    expect(graph.events(ROOM)[0]).toMatchObject({ roomResponse: 'declined', roomComment: 'Outside opening hours' });
    const last = graph.requests.at(-1)!;
    expect(last).toMatchObject({ method: 'POST' });
    expect(last.path.endsWith('/decline')).toBe(true);
    expect(await caught(conn.respond(cal, 'AAMkAGI2missing=', { accepted: true, comment: '' }))).toBeInstanceOf(NotFoundError);
  });
});

describe('Microsoft connector: errors', () => {
  it('maps 503 with Retry-After to unavailable, 429 too, and 400 to refused', async () => {
    graph.down = true;
    const down = await caught(conn.changes(cal, null, WINDOW));
    expect(down).toBeInstanceOf(ConnectorUnavailableError);
    graph.down = false;
    await conn.changes(cal, null, WINDOW);
    graph.failNext(503, 'ServiceUnavailable', 'try later', { headers: { 'retry-after': '7' } });
    const e503 = await caught(conn.createEvent(cal, outbound()));
    expect(e503).toBeInstanceOf(ConnectorUnavailableError);
    expect((e503 as ConnectorUnavailableError).retryAfterMs).toBe(7000);
    graph.failNext(429, 'TooManyRequests', 'slow down', { headers: { 'retry-after': '3' } });
    expect(((await caught(conn.createEvent(cal, outbound()))) as ConnectorUnavailableError).retryAfterMs).toBe(3000);
    graph.failNext(400, 'ErrorInvalidRequest', 'bad thing');
    const refused = await caught(conn.createEvent(cal, outbound()));
    expect(refused).toBeInstanceOf(ConnectorRefusedError);
    expect(refused.message).toContain('ErrorInvalidRequest: bad thing');
    expect((refused as ConnectorRefusedError).status).toBe(400);
  });

  it('maps an unreachable Graph to unavailable', async () => {
    await graph.close();
    const err = await caught(conn.changes(cal, null, WINDOW));
    expect(err).toBeInstanceOf(ConnectorUnavailableError);
    expect(err.message).not.toContain(graph.credentials.clientSecret!);
    graph = await startGraphStandIn();
  });
});

describe('Graph stand-in: notifications', () => {
  it('sends forged, repeated and lifecycle notifications in Graph’s shape', async () => {
    const sub = await conn.subscribe(cal, { notificationUrl: receiver.url, clientState: 'cs-secret', expiresAt: now + H, channelId: 'x' });
    graph.autoNotify = false;
    const id = await graph.personCreates(ROOM, {
      organizer: { email: 'bob@example.com', name: 'Bob' },
      title: 'Sync',
      start: T0,
      end: T0 + H,
    });
    await graph.settled();
    expect(receiver.bodies).toEqual([]);
    expect(await graph.notify(ROOM, { token: 'forged' })).toEqual([202]);
    expect(await graph.resendLast()).toEqual([202]);
    expect(await graph.lifecycle(ROOM, 'missed')).toEqual([202]);
    const [forged, again, missed] = receiver.bodies as { value: Record<string, unknown>[] }[];
    expect(forged!.value[0]).toMatchObject({
      subscriptionId: sub.id,
      changeType: 'updated',
      clientState: 'forged',
      tenantId: graph.credentials.tenantId,
      resourceData: { '@odata.type': '#Microsoft.Graph.Event', id },
    });
    expect(again).toEqual(forged);
    expect(missed!.value[0]).toMatchObject({ subscriptionId: sub.id, lifecycleEvent: 'missed', clientState: 'cs-secret' });
    await graph.lifecycle(ROOM, 'subscriptionRemoved');
    expect(graph.subscriptions()[0]!.active).toBe(false);
    expect(
      await caught(conn.renew(cal, sub, { notificationUrl: receiver.url, clientState: 'cs', expiresAt: now + H, channelId: 'y' })),
    ).toBeInstanceOf(NotFoundError);
  });
});

describe('Microsoft connector: mapping', () => {
  it('maps all-day events, HTML bodies, responses and cancelled events', () => {
    const e = toRemoteEvent({
      id: 'AAMk1=',
      iCalUId: 'uid-1',
      changeKey: 'ck',
      lastModifiedDateTime: '2026-11-27T01:02:03.1234567Z',
      subject: 'Offsite',
      body: { contentType: 'html', content: '<html><body>Line 1<br>A &amp; B</body></html>' },
      isAllDay: true,
      originalStartTimeZone: 'Asia/Bangkok',
      start: { dateTime: '2026-12-01T00:00:00.0000000', timeZone: 'UTC' },
      end: { dateTime: '2026-12-02T00:00:00.0000000', timeZone: 'UTC' },
      organizer: { emailAddress: { name: 'Bob', address: 'Bob@Example.com' } },
      attendees: [
        { type: 'resource', status: { response: 'tentativelyAccepted' }, emailAddress: { name: 'Orchid', address: ROOM } },
        { type: 'required', status: { response: 'notResponded' }, emailAddress: { name: 'Eve', address: 'eve@example.com' } },
      ],
    });
    expect(e).toMatchObject({
      uid: 'uid-1',
      etag: 'ck',
      removed: false,
      allDay: true,
      timeZone: 'Asia/Bangkok',
      start: Date.UTC(2026, 10, 30, 17),
      end: Date.UTC(2026, 11, 1, 17),
      description: 'Line 1\nA & B',
      updatedAt: Date.UTC(2026, 10, 27, 1, 2, 3, 123),
      organizer: { email: 'bob@example.com', name: 'Bob' },
      attendees: [
        { email: ROOM, resource: true, response: 'tentative' },
        { email: 'eve@example.com', resource: false, response: 'none' },
      ],
    });
    expect(toRemoteEvent({ id: 'x', originalStartTimeZone: 'SE Asia Standard Time', isCancelled: true })).toMatchObject({
      removed: true,
      timeZone: null,
    });
    expect(toRemoteEvent({ id: 'y', '@removed': { reason: 'deleted' } })).toMatchObject({ id: 'y', uid: 'y', removed: true });
  });
});
