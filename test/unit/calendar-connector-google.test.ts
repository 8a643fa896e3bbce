/**
 * The Google Calendar connector against the Google stand-in (no database): the
 * service account's assertion and the token cache, watch channels and their renewal,
 * full and incremental reads with sync tokens and 410, writes and the room's answer,
 * and how failures map onto the port's errors.
 */

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConnectorRefusedError,
  ConnectorUnavailableError,
  CursorExpiredError,
  NotFoundError,
  type CalendarConnector,
  type OutboundEvent,
} from '../../src/modules/calendar-sync/connector.js';
import { googleConnector, googleEventId, mapGoogleFailure, toRemoteEvent } from '../../src/modules/calendar-sync/connectors/google.js';
import { startGoogleStandIn, type GoogleStandIn } from '../support/google-standin.js';

const ROOM = 'c_188a1b2c3d4e5f@resource.calendar.google.com';
const HOUR = 3600_000;
const T0 = Date.parse('2031-03-10T09:00:00Z');
const WINDOW = { start: T0 - 24 * HOUR, end: T0 + 30 * 24 * HOUR };

let standIn: GoogleStandIn;
let receiver: Server;
let receiverUrl: string;
const received: IncomingHttpHeaders[] = [];
let clock = Date.now();

function connector(overrides: { privateKey?: string; subject?: string; apiBaseUrl?: string } = {}): CalendarConnector {
  return googleConnector(
    {
      id: 'conn-google',
      provider: 'google',
      serviceAccountEmail: standIn.credentials.serviceAccountEmail,
      privateKey: overrides.privateKey ?? standIn.credentials.privateKey,
      subject: overrides.subject ?? standIn.credentials.subject,
      apiBaseUrl: overrides.apiBaseUrl ?? standIn.apiBaseUrl,
      tokenUrl: standIn.tokenUrl,
    },
    { now: () => clock, timeoutMs: 5000 },
  );
}

function booking(over: Partial<OutboundEvent> = {}): OutboundEvent {
  return {
    key: 'booking-1:create',
    bookingId: 'bk_1',
    title: 'Quarterly review',
    description: 'Room: Orchid',
    start: T0,
    end: T0 + HOUR,
    timeZone: 'Asia/Bangkok',
    organizer: { email: 'ann@example.test', name: 'Ann Lee' },
    tentative: false,
    ...over,
  };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    received.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/calendar/webhooks/conn-google`;
});

afterAll(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
});

beforeEach(async () => {
  clock = Date.now();
  received.length = 0;
  standIn = await startGoogleStandIn({ autoNotify: false });
});

afterEach(async () => {
  await standIn.close();
});

describe('token', () => {
  it('exchanges a signed assertion and caches the token until 5 minutes before expiry', async () => {
    const c = connector();
    await c.changes({ calendarId: ROOM }, null, WINDOW);
    await c.changes({ calendarId: ROOM }, null, WINDOW);
    expect(standIn.tokensIssued).toBe(1);
    const form = new URLSearchParams(standIn.requests.find((r) => r.path === '/token')!.body);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    clock += 3599_000 - 5 * 60_000 + 1;
    await c.changes({ calendarId: ROOM }, null, WINDOW);
    expect(standIn.tokensIssued).toBe(2);
  });

  it('asks once for concurrent calls, and drops a refused token and retries once', async () => {
    const c = connector();
    await Promise.all([1, 2, 3].map(() => c.changes({ calendarId: ROOM }, null, WINDOW)));
    expect(standIn.tokensIssued).toBe(1);
    standIn.revokeTokens();
    await c.changes({ calendarId: ROOM }, null, WINDOW);
    expect(standIn.tokensIssued).toBe(2);
  });

  it('refuses a wrong subject or key without quoting the key', async () => {
    await expect(connector({ subject: 'someone@else.test' }).changes({ calendarId: ROOM }, null, WINDOW)).rejects.toBeInstanceOf(
      ConnectorRefusedError,
    );
    const other = await startGoogleStandIn();
    try {
      const err = await connector({ privateKey: other.credentials.privateKey })
        .changes({ calendarId: ROOM }, null, WINDOW)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectorRefusedError);
      expect((err as Error).message).toContain('invalid_grant');
      expect((err as Error).message).not.toContain('PRIVATE KEY');
    } finally {
      await other.close();
    }
  });
});

describe('base address', () => {
  it("takes apiBaseUrl with or without the API's /calendar/v3", async () => {
    const root = standIn.apiBaseUrl.replace(/\/+$/, '');
    for (const apiBaseUrl of [root, `${root}/`, `${root}/calendar/v3`, `${root}/calendar/v3/`]) {
      const page = await connector({ apiBaseUrl }).changes({ calendarId: ROOM }, null, WINDOW);
      expect(page.full).toBe(true);
    }
  });
});

describe('channels', () => {
  const params = (channelId: string) => ({
    notificationUrl: receiverUrl,
    clientState: 'channel-secret',
    expiresAt: clock + 3 * 24 * HOUR,
    channelId,
  });

  it('watches the calendar; Google sends the sync message to the address', async () => {
    const c = connector();
    const sub = await c.subscribe({ calendarId: ROOM }, params('ch-1'));
    expect(sub.id).toBe('ch-1');
    expect(sub.resourceId).toBeTruthy();
    expect(Math.abs(sub.expiresAt - (clock + 3 * 24 * HOUR))).toBeLessThan(5000);
    const watch = standIn.requests.find((r) => r.path.endsWith('/events/watch'))!;
    expect(watch.body).toMatchObject({ id: 'ch-1', type: 'web_hook', address: receiverUrl, token: 'channel-secret' });
    await until(() => received.length === 1);
    expect(received[0]).toMatchObject({
      'x-goog-channel-id': 'ch-1',
      'x-goog-channel-token': 'channel-secret',
      'x-goog-resource-state': 'sync',
      'x-goog-resource-id': sub.resourceId,
      'x-goog-message-number': '1',
    });
    expect(await standIn.notify(ROOM)).toEqual([200]);
    expect(received[1]).toMatchObject({ 'x-goog-resource-state': 'exists', 'x-goog-message-number': '2' });
  });

  it('keeps the expiry Google grants when shorter than asked', async () => {
    await standIn.close();
    standIn = await startGoogleStandIn({ autoNotify: false, maxTtlSeconds: 3600 });
    const sub = await connector().subscribe({ calendarId: ROOM }, params('ch-short'));
    expect(Math.abs(sub.expiresAt - (Date.now() + HOUR))).toBeLessThan(5000);
  });

  it('renews with a new channel and stops the old one; unsubscribe twice is fine', async () => {
    const c = connector();
    const first = await c.subscribe({ calendarId: ROOM }, params('ch-1'));
    const second = await c.renew({ calendarId: ROOM }, first, params('ch-2'));
    expect(second.id).toBe('ch-2');
    const subs = standIn.subscriptions();
    expect(subs.find((s) => s.id === 'ch-1')!.active).toBe(false);
    expect(subs.find((s) => s.id === 'ch-2')!.active).toBe(true);
    expect(standIn.requests.find((r) => r.path === '/calendar/v3/channels/stop')!.body).toEqual({
      id: 'ch-1',
      resourceId: first.resourceId,
    });
    await c.unsubscribe({ calendarId: ROOM }, second);
    await c.unsubscribe({ calendarId: ROOM }, second);
    expect(standIn.subscriptions().every((s) => !s.active)).toBe(true);
  });
});

describe('the stand-in announces changes', () => {
  it('after a person, after our own writes, again on resend, forged on request, and on missed', async () => {
    standIn.autoNotify = true;
    const c = connector();
    await c.subscribe(
      { calendarId: ROOM },
      { notificationUrl: receiverUrl, clientState: 'tok', expiresAt: clock + HOUR, channelId: 'ch-n' },
    );
    await until(() => received.length === 1);
    const id = await standIn.personCreates(ROOM, {
      organizer: { email: 'bob@example.test', name: 'Bob' },
      title: 'A',
      start: T0,
      end: T0 + HOUR,
    });
    expect(received[1]).toMatchObject({ 'x-goog-resource-state': 'exists', 'x-goog-message-number': '2', 'x-goog-channel-token': 'tok' });
    const first = await c.changes({ calendarId: ROOM }, null, WINDOW);
    await c.respond({ calendarId: ROOM }, id, { accepted: true, comment: 'ok' });
    await until(() => received.length === 3);
    expect(await standIn.resendLast()).toEqual([200]);
    expect(received[3]['x-goog-message-number']).toBe(received[2]['x-goog-message-number']);
    await standIn.notify(ROOM, { token: 'forged' });
    expect(received[4]['x-goog-channel-token']).toBe('forged');
    expect(await standIn.lifecycle(ROOM, 'missed')).toEqual([200]);
    await expect(c.changes({ calendarId: ROOM }, first.cursor, WINDOW)).rejects.toBeInstanceOf(CursorExpiredError);
    expect(await standIn.lifecycle(ROOM, 'subscriptionRemoved')).toEqual([]);
    expect(standIn.subscriptions()[0].active).toBe(false);
    expect(await standIn.notify(ROOM)).toEqual([]);
  });
});

describe('changes', () => {
  const person = { email: 'Bob@Example.test', name: 'Bob' };

  it('reads the window, then only the changes, and a 410 after the tokens expired', async () => {
    const c = connector();
    const a = await standIn.personCreates(ROOM, { organizer: person, title: 'Standup', start: T0, end: T0 + HOUR });
    const b = await standIn.personCreates(ROOM, { organizer: person, title: 'Retro', start: T0 + 2 * HOUR, end: T0 + 3 * HOUR });
    await standIn.personCreates(ROOM, { organizer: person, title: 'Far away', start: T0 + 90 * 24 * HOUR, end: T0 + 91 * 24 * HOUR });
    const full = await c.changes({ calendarId: ROOM }, null, WINDOW);
    expect(full.full).toBe(true);
    expect(full.events.map((e) => e.title).sort()).toEqual(['Retro', 'Standup']);
    const standup = full.events.find((e) => e.id === a)!;
    expect(standup).toMatchObject({
      uid: a,
      removed: false,
      start: T0,
      end: T0 + HOUR,
      allDay: false,
      organizer: { email: 'bob@example.test', name: 'Bob' },
      bookingId: null,
    });
    expect(standup.attendees).toContainEqual({ email: ROOM, name: null, resource: true, response: 'none' });
    const list = standIn.requests.find((r) => r.path.endsWith('/events') && r.method === 'GET')!;
    expect(list.query).toMatchObject({ singleEvents: 'true', showDeleted: 'true', maxResults: '250' });

    await standIn.personUpdates(ROOM, a, { start: T0 + HOUR, end: T0 + 2 * HOUR });
    await standIn.personDeletes(ROOM, b);
    const inc = await c.changes({ calendarId: ROOM }, full.cursor, WINDOW);
    expect(inc.full).toBe(false);
    expect(inc.events).toHaveLength(2);
    expect(inc.events.find((e) => e.id === a)).toMatchObject({ start: T0 + HOUR, sequence: 1, removed: false });
    expect(inc.events.find((e) => e.id === b)).toMatchObject({ removed: true });
    expect(standIn.requests.at(-1)!.query).toMatchObject({ syncToken: full.cursor });

    const quiet = await c.changes({ calendarId: ROOM }, inc.cursor, WINDOW);
    expect(quiet.events).toEqual([]);
    standIn.expireCursors(ROOM);
    await expect(c.changes({ calendarId: ROOM }, quiet.cursor, WINDOW)).rejects.toBeInstanceOf(CursorExpiredError);
  });

  it('follows every page to the sync token', async () => {
    for (let i = 0; i < 260; i++) {
      await standIn.personCreates(ROOM, { organizer: person, title: `m${i}`, start: T0 + i * 60_000, end: T0 + (i + 1) * 60_000 });
    }
    const full = await connector().changes({ calendarId: ROOM }, null, WINDOW);
    expect(full.events).toHaveLength(260);
    expect(standIn.requests.filter((r) => r.path.endsWith('/events') && r.method === 'GET')).toHaveLength(2);
  });

  it('maps all-day events to midnight in their zone, and Google answers', () => {
    const ev = toRemoteEvent({
      id: 'x1',
      status: 'confirmed',
      start: { date: '2031-03-10', timeZone: 'Asia/Bangkok' },
      end: { date: '2031-03-11' },
    });
    expect(ev).toMatchObject({ allDay: true, start: Date.parse('2031-03-09T17:00:00Z'), end: Date.parse('2031-03-10T17:00:00Z') });
    expect(toRemoteEvent({ id: 'x2', start: { date: '2031-03-10' }, end: { date: '2031-03-11' } }).start).toBe(
      Date.parse('2031-03-10T00:00:00Z'),
    );
    const attendee = toRemoteEvent({ id: 'x3', attendees: [{ email: 'A@x.test', responseStatus: 'needsAction' }] }).attendees[0];
    expect(attendee).toEqual({ email: 'a@x.test', name: null, resource: false, response: 'none' });
  });
});

describe('writes', () => {
  it('creates the event with the booking id, once per key', async () => {
    const c = connector();
    const made = await c.createEvent({ calendarId: ROOM }, booking({ tentative: true }));
    expect(made.id).toBe(googleEventId('booking-1:create'));
    expect(made.id).toMatch(/^[a-v0-9]{5,1024}$/);
    const again = await c.createEvent({ calendarId: ROOM }, booking({ tentative: true }));
    expect(again.id).toBe(made.id);
    const events = standIn.events(ROOM);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      title: 'Quarterly review',
      start: T0,
      end: T0 + HOUR,
      tentative: true,
      bookingId: 'bk_1',
      roomResponse: 'organizer',
      attendeeEmails: ['ann@example.test'],
    });
    const insert = standIn.requests.find((r) => r.method === 'POST' && r.path.endsWith('/events'))!;
    expect(insert.query).toMatchObject({ sendUpdates: 'all' });
    expect(insert.body).toMatchObject({ guestsCanModify: false, start: { timeZone: 'Asia/Bangkok' } });
    const read = await c.changes({ calendarId: ROOM }, null, WINDOW);
    expect(read.events[0]).toMatchObject({ id: made.id, bookingId: 'bk_1' });
  });

  it('patches, deletes (gone already is fine) and refuses a bad range', async () => {
    const c = connector();
    const { id } = await c.createEvent({ calendarId: ROOM }, booking());
    const { etag } = await c.updateEvent({ calendarId: ROOM }, id, booking({ start: T0 + HOUR, end: T0 + 2 * HOUR, title: 'Moved' }));
    expect(etag).toBeTruthy();
    expect(standIn.events(ROOM)[0]).toMatchObject({ start: T0 + HOUR, title: 'Moved', bookingId: 'bk_1' });
    const bad = await c.updateEvent({ calendarId: ROOM }, id, booking({ start: T0 + HOUR, end: T0 })).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ConnectorRefusedError);
    expect((bad as ConnectorRefusedError).status).toBe(400);
    expect((bad as Error).message).toContain('The specified time range is empty.');
    await expect(c.updateEvent({ calendarId: ROOM }, 'nosuchevent1', booking())).rejects.toBeInstanceOf(NotFoundError);
    await c.cancelEvent({ calendarId: ROOM }, id, 'Cancelled');
    expect(standIn.events(ROOM)[0].cancelled).toBe(true);
    await c.cancelEvent({ calendarId: ROOM }, id, null);
    await c.cancelEvent({ calendarId: ROOM }, 'nosuchevent1', null);
    const read = await c.changes({ calendarId: ROOM }, null, WINDOW);
    expect(read.events[0]).toMatchObject({ id, removed: true });
  });

  it("answers on the room's copy with a comment", async () => {
    const c = connector();
    const id = await standIn.personCreates(ROOM, {
      organizer: { email: 'bob@example.test', name: 'Bob' },
      title: 'Demo',
      start: T0,
      end: T0 + HOUR,
    });
    await c.respond({ calendarId: ROOM }, id, { accepted: false, comment: 'Outside opening hours' });
    expect(standIn.events(ROOM)[0]).toMatchObject({ roomResponse: 'declined', roomComment: 'Outside opening hours' });
    await c.respond({ calendarId: ROOM }, id, { accepted: true, comment: 'Booked' });
    const ev = standIn.events(ROOM)[0];
    expect(ev).toMatchObject({ roomResponse: 'accepted', roomComment: 'Booked' });
    expect(ev.attendeeEmails).toHaveLength(2);
    await expect(c.respond({ calendarId: ROOM }, 'nosuchevent1', { accepted: true, comment: '' })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('failures', () => {
  it('answers Unavailable while Google is down, then works again', async () => {
    const c = connector();
    standIn.down = true;
    await expect(c.changes({ calendarId: ROOM }, null, WINDOW)).rejects.toBeInstanceOf(ConnectorUnavailableError);
    standIn.down = false;
    await c.changes({ calendarId: ROOM }, null, WINDOW);
    standIn.down = true;
    const err = await c.createEvent({ calendarId: ROOM }, booking()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorUnavailableError);
    expect((err as Error).message).not.toMatch(/ya29|Bearer/);
    standIn.down = false;
    await c.createEvent({ calendarId: ROOM }, booking());
    expect(standIn.events(ROOM)).toHaveLength(1);
  });

  it('answers Unavailable when nothing listens', async () => {
    const c = connector();
    await standIn.close();
    await expect(c.changes({ calendarId: ROOM }, null, WINDOW)).rejects.toBeInstanceOf(ConnectorUnavailableError);
    standIn = await startGoogleStandIn({ autoNotify: false });
  });

  it('answers Unavailable when Google does not answer in time', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const c = googleConnector(
        {
          id: 'conn-google',
          provider: 'google',
          ...(standIn.credentials as { serviceAccountEmail: string; privateKey: string; subject: string }),
          apiBaseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`,
          tokenUrl: standIn.tokenUrl,
        },
        { now: () => clock, timeoutMs: 300 },
      );
      await expect(c.changes({ calendarId: ROOM }, null, WINDOW)).rejects.toBeInstanceOf(ConnectorUnavailableError);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('reads a private key pasted with its \\n escapes', async () => {
    const escaped = standIn.credentials.privateKey.replace(/\n/g, '\\n');
    await connector({ privateKey: escaped }).changes({ calendarId: ROOM }, null, WINDOW);
    expect(standIn.tokensIssued).toBe(1);
  });

  it('maps rate limits with Retry-After, and other refusals', () => {
    const rate = mapGoogleFailure(
      403,
      { error: { code: 403, message: 'Rate Limit Exceeded', errors: [{ reason: 'rateLimitExceeded' }] } },
      new Headers({ 'retry-after': '7' }),
    );
    expect(rate).toBeInstanceOf(ConnectorUnavailableError);
    expect((rate as ConnectorUnavailableError).retryAfterMs).toBe(7000);
    const later = mapGoogleFailure(429, null, { 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' }, {}, Date.parse('2015-10-21T07:28:00Z'));
    expect(later).toBeInstanceOf(ConnectorUnavailableError);
    expect((later as ConnectorUnavailableError).retryAfterMs).toBe(30_000);
    const forbidden = mapGoogleFailure(403, { error: { code: 403, message: 'Forbidden', errors: [{ reason: 'forbidden' }] } }, {});
    expect(forbidden).toBeInstanceOf(ConnectorRefusedError);
    expect(forbidden.message).toContain('Forbidden');
    expect(mapGoogleFailure(404, null, {})).toBeInstanceOf(ConnectorRefusedError);
    expect(mapGoogleFailure(404, null, {}, { notFound: true })).toBeInstanceOf(NotFoundError);
  });
});
