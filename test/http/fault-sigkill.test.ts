/**
 * SIGKILL under load, with the real service (`node --import tsx src/main.ts`) in a
 * child process: concurrent clients create and cancel bookings on a few rooms
 * (many of them colliding), and the process is SIGKILLed while requests are in
 * flight. After a restart on the same database:
 *
 *  - every acknowledged booking (201) is there, cancelled if its cancel was
 *    acknowledged (202), active if no cancel was tried (either when a cancel was
 *    in flight at the kill);
 *  - no two bookings holding a room overlap, cleaning time included;
 *  - the sandbox clock offset set before the kill is kept;
 *  - moving the clock past every booking fires each lifecycle step once: no
 *    booking has two events of one type;
 *  - every event in the outbox is delivered: the receiver got a delivery of each
 *    (each acknowledged booking's ROOM_BOOK among them), and a delivery id arrives
 *    twice only when its attempt was in flight at the kill (at most the listener's
 *    concurrency of them).
 *
 * (lifecycle-crash.test.ts kills the process while lifecycle steps are applied.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { openStorage, type Storage } from '../../src/platform/db/database.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { siteDocument, PORTAL_APP_ID, PORTAL_SECRET } from '../support/fixtures.js';
import { everyDay } from '../support/catalogue.js';
import { WebhookReceiver, header } from '../support/webhook-receiver.js';
import { startMainProcess, type MainProcess } from '../support/main-process.js';
import { countBy, until } from '../support/delivery-audit.js';

const TZ = 'Asia/Bangkok';
const OPS_TOKEN = 'sigkill-test-ops-token-0123456789abcdef01234567';
const SECRETS_KEY = 'd4'.repeat(32);
const ROOMS = 6;
const CLEANUP_MIN = 15;
const CLIENTS = 8;
/** Acknowledged creates before the kill. */
const CREATES_BEFORE_KILL = 40;
/** Attempts one listener can have in flight at once (webhooks/jobs.ts PER_LISTENER_CONCURRENCY). */
const MAX_IN_FLIGHT_PER_LISTENER = 4;
const EVENTS = ['ROOM_BOOK', 'ROOM_MODIFY', 'ROOM_CANCEL', 'ROOM_REMINDER', 'ROOM_NO_SHOW_WARNING', 'ROOM_ENDING_SOON'];

interface Booking {
  id: string;
  cancel: 'none' | 'acknowledged' | 'unknown';
}

describe(`SIGKILL under load (${TEST_ENGINE})`, () => {
  let database: TestDatabase;
  let storage: Storage;
  let receiver: WebhookReceiver;
  let svc: MainProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.url); // migrated here: the observer never contends with the child's migrator
    receiver = await WebhookReceiver.start();
  });

  afterAll(async () => {
    await svc?.kill('SIGKILL');
    await receiver?.close();
    await storage?.close();
    await database?.drop();
  });

  it('keeps every acknowledged booking, no overlap, the clock offset, and delivers every event once per timer', async () => {
    svc = await startMainProcess({ database, opsToken: OPS_TOKEN, secretsKey: SECRETS_KEY });
    const doc = siteDocument() as any;
    doc.zones = [{ key: 'z', project: 'tower', name: 'Tower' }];
    doc.floors = [{ key: 'f', zone: 'z', name: '12F' }];
    doc.rooms = Array.from({ length: ROOMS }, (_, i) => ({
      key: `r${i}`,
      floor: 'f',
      name: `Room ${i}`,
      capacity: 6,
      cleanupMinutes: CLEANUP_MIN,
      config: everyDay('00:00:00', '24:00:00', [], { minimumLeadTime: { minutes: 0, hours: 0, days: 0 }, maxAdvanceBookingDays: 60 }),
    }));
    doc.webhooks = [
      { key: 'h', project: 'tower', url: receiver.url('/h'), secret: 'sigkill-secret-0123456789abcdef0123456789', events: EVENTS },
    ];
    const applied = await svc.ops('POST', '/ops/v1/apply', doc);
    expect(applied.status, applied.text).toBe(200);
    const roomIds: string[] = Array.from({ length: ROOMS }, (_, i) => applied.body.data.idsByKind.rooms[`r${i}`]);
    const webhookId: string = applied.body.data.idsByKind.webhooks.h;

    // A sandbox clock offset to keep across the kill.
    const clock = await svc.ops('GET', '/ops/v1/clock');
    const D = DateTime.fromISO(clock.body.data.now).setZone(TZ).startOf('day').plus({ days: 2 });
    expect((await svc.ops('POST', '/ops/v1/clock', { set: D.plus({ hours: 6 }).toISO() })).status).toBe(200);
    const offsetBefore: number = (await svc.ops('GET', '/ops/v1/clock')).body.data.offsetMs;
    expect(offsetBefore).toBeGreaterThan(0);

    const tokenRes = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
    });
    expect(tokenRes.status, tokenRes.text).toBe(201);
    const token: string = tokenRes.body.access_token;

    // Load: clients create 30-minute bookings on random slots every 45 minutes (08:00–19:15, often colliding) and cancel a third of what they got.
    const bookings = new Map<string, Booking>();
    let acknowledgedCreates = 0;
    let killed = false;
    let failure: Error | undefined;
    // mulberry32: a fixed sequence of slots and rooms.
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const current = svc;
    const client = async () => {
      while (!killed) {
        try {
          const start = D.plus({ hours: 8, minutes: 45 * random(16) });
          const res = await current.request('POST', '/meetings', {
            token,
            body: {
              meetingRoomId: roomIds[random(ROOMS)],
              title: 'load',
              startDateTime: start.toISO(),
              endDateTime: start.plus({ minutes: 30 }).toISO(),
            },
          });
          if (res.status === 201) {
            const b: Booking = { id: res.body.data._id, cancel: 'none' };
            bookings.set(b.id, b);
            acknowledgedCreates++;
            if (random(3) === 0) {
              b.cancel = 'unknown';
              const cancel = await current.request('POST', `/meetings/${b.id}/cancel`, { token, body: {} });
              if (cancel.status === 202) b.cancel = 'acknowledged';
              else if (cancel.status < 500) throw new Error(`cancel answered ${cancel.status}: ${cancel.text}`);
            }
          } else if (res.status !== 409) {
            throw new Error(`create answered ${res.status}: ${res.text}`);
          }
        } catch (err) {
          if (!killed) failure ??= err as Error;
          if (!killed) return;
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, () => client());
    await until(
      'load under way',
      () => {
        if (failure) throw failure;
        return acknowledgedCreates >= CREATES_BEFORE_KILL;
      },
      60_000,
      5,
    );
    // Mid-load: requests are in flight.
    killed = true;
    const exit = await svc.kill('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    await Promise.allSettled(clients);
    const receivedBeforeKill = new Set(receiver.on('/h').map((r) => header(r, 'x-service-delivery')));

    svc = await startMainProcess({ database, opsToken: OPS_TOKEN, secretsKey: SECRETS_KEY });

    // The clock offset is kept.
    const after = await svc.ops('GET', '/ops/v1/clock');
    expect(after.body.data.offsetMs).toBe(offsetBefore);

    // Every acknowledged booking, in its acknowledged state.
    for (const b of bookings.values()) {
      const res = await svc.request('GET', `/meetings/${b.id}`, { token });
      expect(res.status, `${b.id}: ${res.text}`).toBe(200);
      const status = res.body.data.status;
      if (b.cancel === 'acknowledged') expect(status, b.id).toBe('cancelled');
      else if (b.cancel === 'none') expect(status, b.id).toBe('active');
      else expect(['active', 'cancelled'], b.id).toContain(status);
    }

    // No two bookings holding a room overlap, cleaning time included.
    const held = await storage.db
      .selectFrom('meetings')
      .select(['id', 'asset_id', 'start_at', 'end_at', 'status'])
      .where('status', '!=', 'cancelled')
      .execute();
    const clean = CLEANUP_MIN * 60_000;
    for (const a of held) {
      for (const b of held) {
        if (a.id >= b.id || a.asset_id !== b.asset_id) continue;
        const overlap = a.start_at < b.end_at + clean && b.start_at < a.end_at + clean;
        expect(overlap, `${a.id} and ${b.id} overlap on ${a.asset_id}`).toBe(false);
      }
    }

    // Every lifecycle step once: move the clock past every booking.
    expect((await svc.ops('POST', '/ops/v1/clock', { set: D.plus({ hours: 20 }).toISO() })).status).toBe(200);
    const meetings = await storage.db.selectFrom('meetings').select(['id', 'status']).execute();
    const events = await storage.db.selectFrom('events').select(['id', 'meeting_id', 'type']).execute();
    const perMeeting = countBy(events, (e) => `${e.meeting_id} ${e.type}`);
    for (const [key, n] of Object.entries(perMeeting)) expect(n, key).toBe(1);
    for (const m of meetings) {
      expect(perMeeting[`${m.id} ROOM_BOOK`], `${m.id} ROOM_BOOK`).toBe(1);
      // Not cancelled by its user: the no-show cancel fired (once).
      expect(perMeeting[`${m.id} ROOM_CANCEL`], `${m.id} ROOM_CANCEL`).toBe(1);
    }

    // Every event delivered: one delivery per event, each received, duplicates only from attempts in flight at the kill.
    await until(
      'every delivery made',
      async () => {
        const open = await storage.db.selectFrom('deliveries').select('id').where('status', '!=', 'delivered').execute();
        return open.length === 0;
      },
      60_000,
      200,
    );
    const deliveries = await storage.db.selectFrom('deliveries').select(['id', 'event_id']).where('webhook_id', '=', webhookId).execute();
    expect(new Set(deliveries.map((d) => d.event_id))).toEqual(new Set(events.map((e) => e.id)));
    expect(deliveries.length).toBe(events.length);
    const received = countBy(receiver.on('/h'), (r) => header(r, 'x-service-delivery')!);
    for (const d of deliveries) expect(received[d.id] ?? 0, `delivery ${d.id}`).toBeGreaterThanOrEqual(1);
    const bookEvents = new Map(events.filter((e) => e.type === 'ROOM_BOOK').map((e) => [e.meeting_id, e.id]));
    const deliveryOf = new Map(deliveries.map((d) => [d.event_id, d.id]));
    for (const b of bookings.values())
      expect(received[deliveryOf.get(bookEvents.get(b.id)!)!] ?? 0, `ROOM_BOOK of ${b.id}`).toBeGreaterThanOrEqual(1);
    const twice = Object.entries(received).filter(([, n]) => n > 1);
    console.log(
      `[${TEST_ENGINE}] ${acknowledgedCreates} creates acknowledged, ${[...bookings.values()].filter((b) => b.cancel === 'acknowledged').length} cancels; ${events.length} events; ${twice.length} delivery id(s) sent again after the kill`,
    );
    expect(twice.length).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_LISTENER);
    for (const [id, n] of twice) {
      expect(n, id).toBe(2);
      expect(receivedBeforeKill.has(id), `${id} was received before the kill`).toBe(true);
    }
  }, 240_000);
});
