/**
 * Webhook deliveries over real HTTP to a loopback receiver (api-spec.md "Events",
 * operator-api.md "Webhook operations"): every booking event's envelope and data
 * for rooms and desks, the delivery headers and signature (checked here with
 * node:crypto, and with the service's receiver kit), the optional auth schemes,
 * subscriptions, retries on the sandbox clock, timeouts and connection errors,
 * auto-disable after 20 exhausted deliveries, re-enable and redeliver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { jwtVerify, decodeProtectedHeader } from 'jose';
import { createVerifier } from '../../src/modules/webhooks/receiver-kit.js';
import { JWT_ISSUER } from '../../src/modules/webhooks/signing.js';
import { loadConfig } from '../../src/platform/config.js';
import { sleep } from '../support/fixtures.js';
import { closedPortUrl, expectedSignature, header, WebhookReceiver, type ReceivedRequest } from '../support/webhook-receiver.js';
import {
  ALL_BOOKING_EVENTS,
  FLOOR_NAMES,
  localHm,
  MINUTE,
  NO_SHOW_REASON,
  secretFor,
  startWebhookService,
  TZ,
  type WebhookCtx,
} from '../support/webhook-site.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const HHMM = /^\d{2}:\d{2}$/;
const sameInstant = (a: string, b: string | number) => Date.parse(a) === (typeof b === 'number' ? b : Date.parse(b));

/** Asserts the headers and the independently computed signature of one delivery. */
function expectSignedDelivery(r: ReceivedRequest, secret: string): void {
  expect(r.method).toBe('POST');
  expect(header(r, 'content-type')).toMatch(/^application\/json\b/);
  expect(header(r, 'x-service-event')).toBe(r.body.type);
  expect(header(r, 'x-service-delivery')).toBe(r.body.id);
  const ts = header(r, 'x-service-timestamp')!;
  expect(ts).toMatch(/^\d{13}$/);
  // Epoch milliseconds of real time (not the sandbox clock), close to when it arrived.
  expect(Math.abs(Number(ts) - r.receivedAt)).toBeLessThan(30_000);
  expect(header(r, 'x-service-signature')).toBe(expectedSignature(secret, ts, r.raw));
}

// ---------------------------------------------------------------------------
// Payloads of every booking event, rooms and desks, and the auth schemes
// ---------------------------------------------------------------------------

describe('booking events: envelope, data, headers and auth schemes', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  const pins: string[] = [];
  const m: Record<string, any> = {};
  let aliceId: string;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    c = await startWebhookService({
      rooms: [{ key: 'orchid', name: 'Orchid', floor: 'w12' }],
      desks: [{ key: 'desk7', name: 'Desk 7', floor: 'w3' }],
      hooks: [
        { key: 'hk-all', url: rx.url('/all'), events: ALL_BOOKING_EVENTS },
        { key: 'hk-bearer', url: rx.url('/bearer'), events: ['ROOM_BOOK'], auth: { scheme: 'bearer', token: 'static-bearer-token-123' } },
        {
          key: 'hk-custom',
          url: rx.url('/custom'),
          events: ['ROOM_BOOK', 'DESK_BOOK'],
          auth: { scheme: 'custom-header', headers: { 'X-Api-Key': 'k-123', 'X-Tenant-Id': 'tenant-7' } },
        },
        { key: 'hk-jwt', url: rx.url('/jwt'), events: ['ROOM_BOOK', 'DESK_CANCEL'], auth: { scheme: 'jwt' } },
        { key: 'hk-sig', url: rx.url('/sig'), events: ['DESK_BOOK'], auth: { scheme: 'signature-only' } },
      ],
      clockAt: '06:00',
    });
    aliceId = c.id('alice');
    const keep = (key: string, meeting: any) => {
      m[key] = meeting;
      pins.push(meeting.pinCode);
      return meeting;
    };
    // 06:00 — C (08:00-09:00), A (10:00-11:00, then moved to 10:30-11:30), B (13:00-14:00, cancelled).
    const attendees = [{ email: 'bob@example.com' }];
    keep('roomC', await c.bookRoom('orchid', '08:00', '09:00', 0, { attendees }));
    keep('deskC', await c.bookDesk('desk7', '08:00', '09:00', 0, { attendees }));
    keep('roomA', await c.bookRoom('orchid', '10:00', '11:00'));
    keep('deskA', await c.bookDesk('desk7', '10:00', '11:00'));
    for (const k of ['roomA', 'deskA']) {
      const res = await c.patch(m[k]._id, { startDateTime: c.t('10:30'), endDateTime: c.t('11:30') });
      expect(res.status, res.text).toBe(200);
      m[`${k}Moved`] = res.body.data;
    }
    keep('roomB', await c.bookRoom('orchid', '13:00', '14:00'));
    keep('deskB', await c.bookDesk('desk7', '13:00', '14:00'));
    for (const k of ['roomB', 'deskB']) expect((await c.action(m[k]._id, 'cancel')).status).toBe(202);
    for (const meeting of Object.values(m)) expect(meeting.pinCode).toMatch(/^\d{4,8}$/);

    // 07:45 reminders of C; check-in (no event); 08:45 ending soon; desk C checked out, room C done at 09:00 (no event).
    await c.clockTo('07:45');
    for (const k of ['roomC', 'deskC']) expect((await c.action(m[k]._id, 'check-in')).status).toBe(202);
    await c.clockTo('08:45');
    await c.clockTo('08:50');
    expect((await c.action(m.deskC._id, 'check-out')).status).toBe(202);
    await c.clockTo('09:10');
    expect((await c.get(m.roomC._id)).status).toBe('done');
    expect((await c.get(m.deskC._id)).status).toBe('done');
    // A: reminder 10:15, no-show warning 10:40, no-show cancel 10:45.
    await c.clockTo('12:00');
    expect((await c.get(m.roomA._id)).status).toBe('cancelled');
    await c.drain();
    await rx.waitForCount('/all', 20);
    await sleep(300);
    await c.drain();
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  const all = () => rx.on('/all');
  const ofType = (type: string) => all().filter((r) => r.body.type === type);
  const one = (type: string, pred: (d: any) => boolean) => {
    const found = ofType(type).filter((r) => pred(r.body.data));
    expect(found, `${type}: ${rx.describe()}`).toHaveLength(1);
    return found[0].body;
  };

  it('the all-events listener got exactly the events of the operations and timers, per asset', () => {
    const counts: Record<string, number> = {};
    for (const r of all()) counts[r.body.type] = (counts[r.body.type] ?? 0) + 1;
    const expected = { BOOK: 3, MODIFY: 1, CANCEL: 2, REMINDER: 2, NO_SHOW_WARNING: 1, ENDING_SOON: 1 };
    expect(counts).toEqual(Object.fromEntries(['ROOM', 'DESK'].flatMap((a) => Object.entries(expected).map(([k, n]) => [`${a}_${k}`, n]))));
    // Each delivery has its own id.
    expect(new Set(all().map((r) => r.body.id)).size).toBe(all().length);
  });

  it('envelope is {id: whk_<uuid>, type, version 1, occurredAt, projectId, data} and data carries projectId, userId, timestamp', () => {
    for (const r of all()) {
      const b = r.body;
      expect(Object.keys(b).sort()).toEqual(['data', 'id', 'occurredAt', 'projectId', 'type', 'version']);
      expect(b.id.startsWith('whk_')).toBe(true);
      expect(b.id.slice(4)).toMatch(UUID);
      expect(b.version).toBe(1);
      expect(b.occurredAt).toMatch(ISO);
      expect(b.projectId).toBe(c.projectId);
      expect(b.data.projectId).toBe(c.projectId);
      expect(b.data.userId).toBe(aliceId);
      expect(b.data.timestamp).toMatch(ISO);
      expect(sameInstant(b.data.timestamp, b.occurredAt)).toBe(true);
      expect(b.data.userName).toBe('Alice Example');
      if (b.type.startsWith('ROOM_')) {
        expect(b.data.roomName).toBe('Orchid');
        expect(b.data).not.toHaveProperty('deskName');
        expect(b.data.floorName).toBe(FLOOR_NAMES.w12);
      } else {
        expect(b.data.deskName).toBe('Desk 7');
        expect(b.data).not.toHaveProperty('roomName');
        expect(b.data.floorName).toBe(FLOOR_NAMES.w3);
      }
      for (const f of ['startTime', 'endTime', 'oldStartTime', 'oldEndTime', 'newStartTime', 'newEndTime']) {
        if (f in b.data) expect(b.data[f]).toMatch(HHMM);
      }
    }
  });

  it('no delivery carries a PIN, a token or a URL', () => {
    for (const r of all().concat(rx.on('/bearer'), rx.on('/custom'), rx.on('/jwt'), rx.on('/sig'))) {
      const text = r.raw.toString('utf8');
      for (const pin of pins) expect(text.includes(pin), `PIN ${pin} in ${text}`).toBe(false);
      expect(text).not.toMatch(/pin/i);
      expect(text).not.toMatch(/https?:|www\.|webPayment/i);
      expect(text.includes(c.alice)).toBe(false);
      expect(text.includes(c.portal)).toBe(false);
      expect(text).not.toMatch(/kat_|krt_|token|secret/i);
      expect(text.includes('static-bearer-token-123')).toBe(false);
    }
  });

  for (const [asset, A] of [
    ['room', 'ROOM'],
    ['desk', 'DESK'],
  ] as const) {
    describe(`${A}_* data`, () => {
      it(`${A}_BOOK: bookingDate, local startTime/endTime, attendees, userName, userEmail`, () => {
        const b = one(`${A}_BOOK`, (d) => d.startTime === '08:00');
        const meeting = m[`${asset}C`];
        expect(sameInstant(b.data.bookingDate, meeting.startDateTime)).toBe(true);
        expect(b.data.bookingDate).toMatch(ISO);
        // Property-local HH:mm (Asia/Bangkok, UTC+7), checked against luxon.
        expect(b.data.startTime).toBe(localHm(meeting.startDateTime));
        expect(b.data.endTime).toBe(localHm(meeting.endDateTime));
        expect(b.data.endTime).toBe('09:00');
        expect(DateTime.fromISO(meeting.startDateTime).toUTC().toFormat('HH:mm')).toBe('01:00');
        expect(b.data.attendees).toEqual(['Bob Admin']);
        expect(b.data.userEmail).toBe('alice@example.com');
        // BOOK happens when the booking is made (06:00 local and a few seconds).
        expect(Date.parse(b.occurredAt) - Date.parse(c.t('06:00'))).toBeGreaterThanOrEqual(0);
        expect(Date.parse(b.occurredAt) - Date.parse(c.t('06:00'))).toBeLessThan(MINUTE);
        const plain = one(`${A}_BOOK`, (d) => d.startTime === '10:00');
        expect(plain.data.endTime).toBe('11:00');
        expect(plain.data).not.toHaveProperty('attendees');
      });

      it(`${A}_MODIFY (PATCH): old and new local HH:mm`, () => {
        const b = one(`${A}_MODIFY`, () => true);
        expect(b.data).toMatchObject({ oldStartTime: '10:00', oldEndTime: '11:00', newStartTime: '10:30', newEndTime: '11:30' });
        const moved = m[`${asset}AMoved`];
        expect(b.data.newStartTime).toBe(localHm(moved.startDateTime));
        expect(b.data.newEndTime).toBe(localHm(moved.endDateTime));
        expect(b.data.oldStartTime).toBe(localHm(m[`${asset}A`].startDateTime));
      });

      it(`${A}_CANCEL by the user has no cancelReason`, () => {
        const b = one(`${A}_CANCEL`, (d) => sameInstant(d.bookingDate, m[`${asset}B`].startDateTime));
        expect(b.data).not.toHaveProperty('cancelReason');
        expect(b.data.bookingDate).toMatch(ISO);
      });

      it(`${A}_CANCEL by the no-show timer carries the exact reason, at start + 15 min`, () => {
        const b = one(`${A}_CANCEL`, (d) => 'cancelReason' in d);
        expect(b.data.cancelReason).toBe(NO_SHOW_REASON);
        expect(sameInstant(b.data.bookingDate, c.t('10:30'))).toBe(true);
        expect(sameInstant(b.occurredAt, c.t('10:45'))).toBe(true);
      });

      it(`${A}_REMINDER: minutesUntilStart, at start - 15 min, with the moved window`, () => {
        const c1 = one(`${A}_REMINDER`, (d) => d.startTime === '08:00');
        expect(c1.data).toMatchObject({ startTime: '08:00', endTime: '09:00', minutesUntilStart: 15, userEmail: 'alice@example.com' });
        expect(sameInstant(c1.occurredAt, c.t('07:45'))).toBe(true);
        const a1 = one(`${A}_REMINDER`, (d) => d.startTime === '10:30');
        expect(a1.data).toMatchObject({ endTime: '11:30', minutesUntilStart: 15 });
        expect(sameInstant(a1.occurredAt, c.t('10:15'))).toBe(true);
      });

      it(`${A}_NO_SHOW_WARNING: minutesUntilAutoCancel, at start + 10 min`, () => {
        const b = one(`${A}_NO_SHOW_WARNING`, () => true);
        expect(b.data).toMatchObject({ startTime: '10:30', endTime: '11:30', minutesUntilAutoCancel: 5 });
        expect(sameInstant(b.occurredAt, c.t('10:40'))).toBe(true);
      });

      it(`${A}_ENDING_SOON: minutesUntilEnd, at end - 15 min`, () => {
        const b = one(`${A}_ENDING_SOON`, () => true);
        expect(b.data).toMatchObject({ endTime: '09:00', minutesUntilEnd: 15 });
        expect(sameInstant(b.occurredAt, c.t('08:45'))).toBe(true);
      });
    });
  }

  it('check-in, check-out and done emit nothing', () => {
    // Check-in at 07:45, check-out at 08:50, done at 09:00: nothing occurred strictly between
    // the 07:45 reminders and the 08:45 notices, nor between those and the 10:15 reminders.
    const between = (from: string, to: string) =>
      all().filter((r) => Date.parse(r.body.occurredAt) > Date.parse(c.t(from)) && Date.parse(r.body.occurredAt) < Date.parse(c.t(to)));
    expect(between('07:45', '08:45').map((r) => r.body.type)).toEqual([]);
    expect(between('08:45', '10:15').map((r) => r.body.type)).toEqual([]);
  });

  it('headers: Content-Type, X-Service-Event/Delivery/Timestamp and a signature verified independently', () => {
    for (const r of all()) expectSignedDelivery(r, secretFor('hk-all'));
    for (const [path, key] of [
      ['/bearer', 'hk-bearer'],
      ['/custom', 'hk-custom'],
      ['/jwt', 'hk-jwt'],
      ['/sig', 'hk-sig'],
    ]) {
      for (const r of rx.on(path)) expectSignedDelivery(r, secretFor(key));
    }
    // Signed with the listener's own secret: another listener's secret does not verify.
    const r = all()[0];
    expect(header(r, 'x-service-signature')).not.toBe(expectedSignature(secretFor('hk-sig'), header(r, 'x-service-timestamp')!, r.raw));
  });

  it('only subscribed types reach a listener; each listener gets its own delivery id', () => {
    const types = (path: string) =>
      rx
        .on(path)
        .map((r) => r.body.type)
        .sort();
    expect(types('/bearer')).toEqual(['ROOM_BOOK', 'ROOM_BOOK', 'ROOM_BOOK']);
    expect(types('/custom')).toEqual(['DESK_BOOK', 'DESK_BOOK', 'DESK_BOOK', 'ROOM_BOOK', 'ROOM_BOOK', 'ROOM_BOOK']);
    expect(types('/jwt')).toEqual(['DESK_CANCEL', 'DESK_CANCEL', 'ROOM_BOOK', 'ROOM_BOOK', 'ROOM_BOOK']);
    expect(types('/sig')).toEqual(['DESK_BOOK', 'DESK_BOOK', 'DESK_BOOK']);
    const ids = ['/all', '/bearer', '/custom', '/jwt', '/sig'].flatMap((p) => rx.on(p).map((r) => r.body.id));
    expect(new Set(ids).size).toBe(ids.length);
    // The same event to two listeners: same occurredAt and data, different ids.
    const bookAll = rx.on('/all').find((r) => r.body.type === 'ROOM_BOOK' && r.body.data.startTime === '10:00')!;
    const bookBearer = rx.on('/bearer').find((r) => r.body.data.startTime === '10:00')!;
    expect(bookBearer.body.data).toEqual(bookAll.body.data);
    expect(bookBearer.body.occurredAt).toBe(bookAll.body.occurredAt);
    expect(bookBearer.body.id).not.toBe(bookAll.body.id);
  });

  it('signature-only: no Authorization header', () => {
    for (const r of [...rx.on('/all'), ...rx.on('/sig')]) expect(r.headers.authorization).toBeUndefined();
  });

  it('bearer: Authorization: Bearer <static token>', () => {
    expect(rx.on('/bearer').length).toBe(3);
    for (const r of rx.on('/bearer')) expect(r.headers.authorization).toBe('Bearer static-bearer-token-123');
  });

  it('custom-header: the listed headers, no Authorization', () => {
    expect(rx.on('/custom').length).toBe(6);
    for (const r of rx.on('/custom')) {
      expect(header(r, 'x-api-key')).toBe('k-123');
      expect(header(r, 'x-tenant-id')).toBe('tenant-7');
      expect(r.headers.authorization).toBeUndefined();
    }
  });

  it('jwt: HS256 with the listener secret, fixed iss, aud = projectId, jti = delivery id, exp ≈ iat + 60', async () => {
    const key = new TextEncoder().encode(secretFor('hk-jwt'));
    const issuers = new Set<string>();
    expect(rx.on('/jwt').length).toBe(5);
    for (const r of rx.on('/jwt')) {
      const auth = r.headers.authorization!;
      expect(auth).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      const jwt = auth.slice('Bearer '.length);
      expect(decodeProtectedHeader(jwt).alg).toBe('HS256');
      const { payload } = await jwtVerify(jwt, key, { algorithms: ['HS256'], audience: c.projectId, currentDate: new Date(r.receivedAt) });
      expect(payload.aud).toBe(c.projectId);
      expect(payload.jti).toBe(r.body.id);
      expect(payload.jti).toBe(header(r, 'x-service-delivery'));
      expect(typeof payload.iss).toBe('string');
      issuers.add(payload.iss!);
      expect(payload.exp! - payload.iat!).toBeGreaterThanOrEqual(55);
      expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(65);
      // Lifetime on real time, near the arrival.
      expect(Math.abs(payload.iat! * 1000 - r.receivedAt)).toBeLessThan(30_000);
      // Another secret does not verify.
      await expect(jwtVerify(jwt, new TextEncoder().encode(secretFor('hk-all')))).rejects.toThrow();
    }
    expect([...issuers]).toEqual([JWT_ISSUER]);
  });

  it("the receiver kit's createVerifier accepts a delivery, rejects a tampered body and a stale timestamp, flags a duplicate", () => {
    const r = all()[0];
    const headers = r.headers as Record<string, string>;
    const ts = Number(header(r, 'x-service-timestamp'));
    const v = createVerifier(secretFor('hk-all'));
    expect(v.verify(headers, r.raw, ts + 1000)).toEqual({ ok: true, duplicate: false });
    // The same delivery id again (a retry or redelivery): accepted, flagged duplicate.
    expect(v.verify(headers, r.raw, ts + 2000)).toEqual({ ok: true, duplicate: true });
    // One byte changed in the body.
    const tampered = Buffer.from(r.raw);
    const at = tampered.indexOf('"data"') + 2;
    tampered[at] = tampered[at] ^ 0x01;
    expect(createVerifier(secretFor('hk-all')).verify(headers, tampered, ts)).toEqual({ ok: false, reason: 'bad-signature' });
    // Re-serialized JSON (not the raw bytes) is not what was signed.
    const reserialized = JSON.stringify(JSON.parse(r.raw.toString('utf8')), null, 1);
    expect(createVerifier(secretFor('hk-all')).verify(headers, reserialized, ts)).toEqual({ ok: false, reason: 'bad-signature' });
    // Wrong secret.
    expect(createVerifier(secretFor('hk-sig')).verify(headers, r.raw, ts)).toEqual({ ok: false, reason: 'bad-signature' });
    // More than about 5 minutes away from now, either way.
    expect(createVerifier(secretFor('hk-all')).verify(headers, r.raw, ts + 6 * MINUTE)).toEqual({ ok: false, reason: 'stale-timestamp' });
    expect(createVerifier(secretFor('hk-all')).verify(headers, r.raw, ts - 6 * MINUTE)).toEqual({ ok: false, reason: 'stale-timestamp' });
    // Real time (the default) is within the tolerance of a fresh delivery.
    expect(createVerifier(secretFor('hk-all')).verify(headers, r.raw).ok).toBe(true);
    // Missing signature header.
    const { 'x-service-signature': _omit, ...unsigned } = headers;
    expect(createVerifier(secretFor('hk-all')).verify(unsigned, r.raw, ts)).toEqual({ ok: false, reason: 'missing-headers' });
  });

  it('the delivery log lists every delivery as delivered with status 200', async () => {
    const log = await c.deliveries('hk-all');
    expect(log).toHaveLength(20);
    for (const d of log) {
      expect(d).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200, nextAttemptAt: null, webhookId: c.id('hk-all') });
      expect(d.id).toMatch(/^whk_/);
      expect(rx.on('/all').some((r) => r.body.id === d.id && r.body.type === d.type)).toBe(true);
    }
    const state = await c.listener('hk-all');
    expect(state).toMatchObject({ enabled: true, consecutiveFailures: 0 });
  });

  it(`times are property-local (${TZ}): the UTC hour differs from the event's HH:mm`, () => {
    const b = one('ROOM_BOOK', (d) => d.startTime === '13:00');
    expect(DateTime.fromISO(b.data.bookingDate, { zone: 'utc' }).toFormat('HH:mm')).toBe('06:00');
    expect(DateTime.fromISO(b.data.bookingDate).setZone(TZ).toFormat('HH:mm')).toBe(b.data.startTime);
  });
});

// ---------------------------------------------------------------------------
// Retries on the sandbox clock
// ---------------------------------------------------------------------------

describe('retries: a receiver answering 500', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  /** Service time of each arrival. */
  const serviceAt: number[] = [];

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    rx.respond('/flaky', 500);
    c = await startWebhookService({
      rooms: [{ key: 'orchid', name: 'Orchid' }],
      hooks: [{ key: 'hk-flaky', url: rx.url('/flaky'), events: ['ROOM_BOOK'] }],
      clockAt: '06:00',
    });
    rx.onRequest = () => serviceAt.push(c.svc.services.clock.now());
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  it('is retried 1, 2, 4 and 8 minutes of service time after each failure, then fails after 5 attempts', async () => {
    await c.bookRoom('orchid', '10:00', '11:00', 1);
    await c.drain();
    await rx.waitForCount('/flaky', 1);
    const spacing = [1, 2, 4, 8];
    for (let k = 1; k <= 4; k++) {
      const [d] = await c.deliveries('hk-flaky');
      expect(d).toMatchObject({ status: 'pending', attempts: k, lastStatus: 500 });
      const next = Date.parse(d.nextAttemptAt);
      const wait = next - serviceAt[k - 1];
      expect(wait).toBeGreaterThanOrEqual(spacing[k - 1] * MINUTE);
      expect(wait).toBeLessThan(spacing[k - 1] * MINUTE + 5_000);
      // Just before the spacing has passed: nothing is sent again.
      await c.clockSet(next - 3_000);
      await c.drain();
      await sleep(400);
      await c.drain();
      expect(rx.on('/flaky'), `attempt ${k + 1} came early`).toHaveLength(k);
      // Once it has passed: sent again.
      await c.clockSet(next);
      await c.drain();
      await rx.waitForCount('/flaky', k + 1);
      expect(serviceAt[k]).toBeGreaterThanOrEqual(next);
      expect(serviceAt[k] - serviceAt[k - 1]).toBeGreaterThanOrEqual(spacing[k - 1] * MINUTE);
      expect(serviceAt[k] - serviceAt[k - 1]).toBeLessThan(spacing[k - 1] * MINUTE + 10_000);
    }
    const [d] = await c.deliveries('hk-flaky');
    expect(d).toMatchObject({ status: 'failed', attempts: 5, lastStatus: 500, nextAttemptAt: null });
    // Nothing more, however far the clock moves.
    await c.advance(120);
    await c.drain();
    await sleep(400);
    expect(rx.on('/flaky')).toHaveLength(5);
    expect(await c.listener('hk-flaky')).toMatchObject({ enabled: true, consecutiveFailures: 1 });
  });

  it('every attempt carries the same id and body bytes, a fresh timestamp and a valid signature', () => {
    const got = rx.on('/flaky');
    expect(got).toHaveLength(5);
    const id = header(got[0], 'x-service-delivery');
    for (const r of got) {
      expect(header(r, 'x-service-delivery')).toBe(id);
      expect(r.body.id).toBe(id);
      expect(r.raw.equals(got[0].raw)).toBe(true);
      expectSignedDelivery(r, secretFor('hk-flaky'));
    }
    const stamps = got.map((r) => Number(header(r, 'x-service-timestamp')));
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]);
  });
});

describe('retries: timeouts and connection errors count as failures', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  const TIMEOUT_MS = 400;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    rx.respond('/slow', 'hang');
    c = await startWebhookService({
      rooms: [{ key: 'orchid', name: 'Orchid' }],
      hooks: [
        { key: 'hk-slow', url: rx.url('/slow'), events: ['ROOM_BOOK'] },
        { key: 'hk-dead', url: await closedPortUrl('/hook'), events: ['ROOM_BOOK'] },
        { key: 'hk-fine', url: rx.url('/fine'), events: ['ROOM_BOOK'] },
      ],
      // The receiver has this long to answer (production: 10 s).
      env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
  });

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  it('the acknowledgement window is 10 s unless configured', () => {
    expect(loadConfig({ BOOKING_ENV: 'development', OPS_TOKEN: 'x'.repeat(40) }).webhookTimeoutMs).toBe(10_000);
  });

  it('a receiver that never answers and a closed port are retried and fail after 5 attempts; others are unaffected', async () => {
    const started = Date.now();
    await c.bookRoom('orchid', '10:00', '11:00', 1);
    await c.drain();
    // The healthy listener is not held up by the dead ones.
    await rx.waitForCount('/fine', 1);
    expect(Date.now() - started).toBeLessThan(10_000);
    for (let k = 1; k <= 5; k++) {
      const [slow] = await c.deliveries('hk-slow');
      const [dead] = await c.deliveries('hk-dead');
      expect(rx.on('/slow')).toHaveLength(k);
      for (const d of [slow, dead]) {
        expect(d.attempts).toBe(k);
        expect(d.lastStatus).toBeNull();
        expect(d.status).toBe(k < 5 ? 'pending' : 'failed');
        expect(d.nextAttemptAt === null).toBe(k === 5);
      }
      expect(slow.lastError).toMatch(/time/i);
      expect(dead.lastError).toMatch(/connect|refused|fetch failed/i);
      if (k < 5) {
        await c.advance(10);
        await c.drain();
      }
    }
    await c.advance(60);
    await c.drain();
    expect(rx.on('/slow')).toHaveLength(5);
    expect(rx.on('/fine')).toHaveLength(1);
    expect(await c.listener('hk-slow')).toMatchObject({ enabled: true, consecutiveFailures: 1 });
    expect(await c.listener('hk-dead')).toMatchObject({ enabled: true, consecutiveFailures: 1 });
    expect(await c.listener('hk-fine')).toMatchObject({ enabled: true, consecutiveFailures: 0 });
    const [fine] = await c.deliveries('hk-fine');
    expect(fine).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200 });
  });
});

// ---------------------------------------------------------------------------
// Auto-disable, re-enable, redeliver
// ---------------------------------------------------------------------------

describe('auto-disable after 20 exhausted deliveries, enable, redeliver', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  let mode: 'fail' | 'ok' = 'fail';
  let meetingId: string;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    rx.respond('/toggle', () => (mode === 'ok' ? 200 : 500));
    c = await startWebhookService({
      rooms: [{ key: 'orchid', name: 'Orchid' }],
      hooks: [
        { key: 'hk-toggle', url: rx.url('/toggle'), events: ['ROOM_MODIFY'] },
        { key: 'hk-bystander', url: rx.url('/bystander'), events: ['ROOM_MODIFY'] },
      ],
    });
    meetingId = (await c.bookRoom('orchid', '10:00', '11:00', 3))._id;
  }, 120_000);

  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  let edits = 0;
  const modify = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await c.patch(meetingId, { title: `edit ${++edits}` });
      expect(res.status, res.text).toBe(200);
    }
  };
  /** Lets every pending delivery use up its attempts (the first one plus four retries). */
  const exhaust = async () => {
    await c.drain();
    for (let round = 0; round < 4; round++) {
      await c.advance(10);
      await c.drain();
    }
  };

  it('19 exhausted deliveries keep the listener enabled; a success resets the counter', async () => {
    await modify(19);
    await exhaust();
    const log = await c.deliveries('hk-toggle');
    expect(log).toHaveLength(19);
    for (const d of log) expect(d).toMatchObject({ status: 'failed', attempts: 5, lastStatus: 500 });
    expect(rx.on('/toggle')).toHaveLength(19 * 5);
    expect(await c.listener('hk-toggle')).toMatchObject({ enabled: true, consecutiveFailures: 19 });

    mode = 'ok';
    await modify(1);
    await c.drain();
    expect(await c.listener('hk-toggle')).toMatchObject({ enabled: true, consecutiveFailures: 0 });
    const [latest] = await c.deliveries('hk-toggle');
    expect(latest).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200 });
  }, 120_000);

  it('the 20th consecutive exhausted delivery disables the listener; a disabled listener receives nothing', async () => {
    mode = 'fail';
    await modify(19);
    await exhaust();
    expect(await c.listener('hk-toggle')).toMatchObject({ enabled: true, consecutiveFailures: 19 });
    await modify(1);
    await exhaust();
    expect(await c.listener('hk-toggle')).toMatchObject({ enabled: false, consecutiveFailures: 20 });

    mode = 'ok';
    const before = rx.on('/toggle').length;
    const bystanderBefore = rx.on('/bystander').length;
    await modify(2);
    await c.drain();
    await c.advance(30);
    await c.drain();
    await sleep(500);
    await c.drain();
    expect(rx.on('/toggle')).toHaveLength(before);
    // Other listeners keep receiving.
    expect(rx.on('/bystander')).toHaveLength(bystanderBefore + 2);
    expect(await c.listener('hk-bystander')).toMatchObject({ enabled: true, consecutiveFailures: 0 });
  }, 120_000);

  it('POST /ops/v1/webhooks/{id}/enable re-enables and resets the counter; deliveries flow again', async () => {
    const res = await c.svc.ops('POST', `/ops/v1/webhooks/${c.id('hk-toggle')}/enable`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ _id: c.id('hk-toggle'), enabled: true, consecutiveFailures: 0 });
    expect(await c.listener('hk-toggle')).toMatchObject({ enabled: true, consecutiveFailures: 0 });
    const before = rx.on('/toggle').length;
    await modify(1);
    await c.drain();
    await rx.waitForCount('/toggle', before + 1);
    const last = rx.on('/toggle').at(-1)!;
    expect(last.body.type).toBe('ROOM_MODIFY');
    expect(last.body.data.roomName).toBe('Orchid');
    expectSignedDelivery(last, secretFor('hk-toggle'));
    const [latest] = await c.deliveries('hk-toggle');
    expect(latest).toMatchObject({ id: last.body.id, status: 'delivered', attempts: 1, lastStatus: 200 });
  });

  it('POST /ops/v1/deliveries/{id}/redeliver sends a failed delivery again with the same id and bytes', async () => {
    const failed = (await c.deliveries('hk-toggle')).find((d) => d.status === 'failed')!;
    expect(failed).toBeDefined();
    const earlier = rx.on('/toggle').filter((r) => r.body.id === failed.id);
    expect(earlier).toHaveLength(5);
    const res = await c.svc.ops('POST', `/ops/v1/deliveries/${failed.id}/redeliver`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.id).toBe(failed.id);
    await c.drain();
    const again = await rx
      .waitFor((all) => all.filter((r) => r.body?.id === failed.id).length === 6)
      .then(() =>
        rx
          .on('/toggle')
          .filter((r) => r.body.id === failed.id)
          .at(-1)!,
      );
    expect(header(again, 'x-service-delivery')).toBe(failed.id);
    expect(again.raw.equals(earlier[0].raw)).toBe(true);
    expectSignedDelivery(again, secretFor('hk-toggle'));
    const after = (await c.deliveries('hk-toggle')).find((d) => d.id === failed.id);
    expect(after).toMatchObject({ status: 'delivered', lastStatus: 200 });
    // The receiver kit flags the redelivery as a duplicate of the first attempt.
    const v = createVerifier(secretFor('hk-toggle'));
    expect(
      v.verify(earlier[0].headers as Record<string, string>, earlier[0].raw, Number(header(earlier[0], 'x-service-timestamp'))),
    ).toEqual({ ok: true, duplicate: false });
    expect(v.verify(again.headers as Record<string, string>, again.raw)).toEqual({ ok: true, duplicate: true });
  });

  it('redeliver of a delivered delivery sends it again too; unknown ids are 404', async () => {
    const [delivered] = await c.deliveries('hk-bystander');
    expect(delivered.status).toBe('delivered');
    const count = rx.on('/bystander').filter((r) => r.body.id === delivered.id).length;
    const res = await c.svc.ops('POST', `/ops/v1/deliveries/${delivered.id}/redeliver`);
    expect(res.status, res.text).toBe(200);
    await c.drain();
    await rx.waitFor((all) => all.filter((r) => r.path === '/bystander' && r.body.id === delivered.id).length === count + 1);
    const missing = await c.svc.ops('POST', '/ops/v1/deliveries/whk_00000000-0000-4000-8000-000000000000/redeliver');
    expect(missing.status).toBe(404);
    const noHook = await c.svc.ops('GET', '/ops/v1/webhooks/ffffffffffffffffffffffff');
    expect(noHook.status).toBe(404);
  });
});
