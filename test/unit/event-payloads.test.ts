import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { jwtVerify } from 'jose';
import { Value } from 'typebox/value';
import {
  bookingEventData,
  deliveryBody,
  eventType,
  type BookingFacts,
  type EventDetail,
} from '../../src/modules/webhooks/event-payloads.js';
import {
  BOOKING_EVENT_KINDS,
  BOOKING_EVENT_TYPES,
  EVENT_DATA_SCHEMAS,
  EVENT_TYPES,
  eventDeliverySchema,
} from '../../src/contract/events.js';
import { bookingFacts, type BookingScope } from '../../src/modules/booking/booking-change.js';
import { occurrenceAt, withoutOccurrence, type StoredRecurrence } from '../../src/modules/booking/meeting-view.js';
import type { MeetingRow } from '../../src/modules/booking/meeting-repository.js';
import type { WebhookEvent } from '../../sdk/src/index.js';
import { webhookDocs, webhookOperationId } from '../../src/contract/webhook-docs.js';
import { deliveryHeaders, JWT_ISSUER, signature } from '../../src/modules/webhooks/signing.js';
import { createVerifier } from '../../src/modules/webhooks/receiver-kit.js';
import { retryDelayMs } from '../../src/modules/webhooks/jobs.js';

const MIN = 60_000;
const start = Date.UTC(2026, 11, 1, 3, 0); // 10:00 in Bangkok
const MEETING = '6561a0b0c0ffee0000000001';
const ROOM = '6561a0b0c0ffee00000000aa';
const facts: BookingFacts = {
  projectId: 'p1',
  timeZone: 'Asia/Bangkok',
  meetingId: MEETING,
  occurrenceId: null,
  assetKind: 'room',
  assetId: ROOM,
  assetName: 'Orchid',
  floorName: '12F',
  organizerUserId: 'u1',
  organizerName: 'Alice',
  organizerEmail: 'alice@example.com',
  attendeeNames: ['Bob'],
  start,
  end: start + 60 * MIN,
};

describe('booking event payloads', () => {
  it('BOOK carries the catalog fields in property-local HH:mm', () => {
    expect(bookingEventData(facts, { kind: 'BOOK' }, start - 60 * MIN)).toEqual({
      projectId: 'p1',
      userId: 'u1',
      timestamp: new Date(start - 60 * MIN).toISOString(),
      meetingId: MEETING,
      assetId: ROOM,
      assetKind: 'room',
      roomName: 'Orchid',
      floorName: '12F',
      bookingDate: new Date(start).toISOString(),
      startTime: '10:00',
      endTime: '11:00',
      attendees: ['Bob'],
      userName: 'Alice',
      userEmail: 'alice@example.com',
    });
  });

  it('desk events name the desk', () => {
    const data = bookingEventData({ ...facts, assetKind: 'desk' }, { kind: 'ENDING_SOON' }, start + 45 * MIN);
    expect(data).toMatchObject({ deskName: 'Orchid', assetKind: 'desk', endTime: '11:00', minutesUntilEnd: 15 });
    expect(data).not.toHaveProperty('roomName');
    expect(eventType('desk', 'ENDING_SOON')).toBe('DESK_ENDING_SOON');
  });

  it('MODIFY, CANCEL, REMINDER and NO_SHOW_WARNING fields', () => {
    expect(bookingEventData(facts, { kind: 'MODIFY', oldStart: start - 60 * MIN, oldEnd: start }, start)).toMatchObject({
      oldStartTime: '09:00',
      oldEndTime: '10:00',
      newStartTime: '10:00',
      newEndTime: '11:00',
    });
    expect(bookingEventData(facts, { kind: 'CANCEL' }, start)).not.toHaveProperty('cancelReason');
    expect(bookingEventData(facts, { kind: 'CANCEL', cancelReason: 'No-show — auto-cancelled by system' }, start)).toMatchObject({
      cancelReason: 'No-show — auto-cancelled by system',
      bookingDate: new Date(start).toISOString(),
    });
    expect(bookingEventData(facts, { kind: 'REMINDER' }, start - 15 * MIN)).toMatchObject({ minutesUntilStart: 15, startTime: '10:00' });
    expect(bookingEventData(facts, { kind: 'NO_SHOW_WARNING', autoCancelAt: start + 15 * MIN }, start + 10 * MIN)).toMatchObject({
      minutesUntilAutoCancel: 5,
    });
  });

  /** One detail of every booking kind of the catalogue (a kind added there without one here fails below). */
  const details: Record<string, EventDetail> = {
    BOOK: { kind: 'BOOK' },
    MODIFY: { kind: 'MODIFY', oldStart: start - 60 * MIN, oldEnd: start },
    CANCEL: { kind: 'CANCEL', cancelReason: 'No-show — auto-cancelled by system' },
    REMINDER: { kind: 'REMINDER' },
    NO_SHOW_WARNING: { kind: 'NO_SHOW_WARNING', autoCancelAt: start + 15 * MIN },
    ENDING_SOON: { kind: 'ENDING_SOON' },
    PAYMENT_DUE: { kind: 'PAYMENT_DUE', amount: 450, currency: 'THB', paymentDueAt: start - 30 * MIN },
  };

  it('every booking event names its booking and asset: meetingId, assetId, assetKind; no occurrenceEventId on a single booking', () => {
    expect(Object.keys(details).sort()).toEqual([...BOOKING_EVENT_KINDS].sort());
    for (const kind of BOOKING_EVENT_KINDS) {
      for (const assetKind of ['room', 'desk'] as const) {
        const data = bookingEventData({ ...facts, assetKind }, details[kind], start - 20 * MIN);
        expect(data, kind).toMatchObject({ meetingId: MEETING, assetId: ROOM, assetKind });
        expect(data, kind).not.toHaveProperty('occurrenceEventId');
      }
    }
  });

  it('an event about an occurrence of a series carries its occurrenceEventId', () => {
    for (const kind of BOOKING_EVENT_KINDS) {
      const data = bookingEventData({ ...facts, occurrenceId: '6561a0b0c0ffee0000000002' }, details[kind], start - 20 * MIN);
      expect(data, kind).toMatchObject({ meetingId: MEETING, occurrenceEventId: '6561a0b0c0ffee0000000002' });
    }
  });

  it("the data of every booking event type is valid against the schema the catalogue publishes for that type, and not against another kind's", () => {
    expect([...BOOKING_EVENT_TYPES].sort()).toEqual(BOOKING_EVENT_KINDS.flatMap((k) => [`ROOM_${k}`, `DESK_${k}`]).sort());
    for (const type of BOOKING_EVENT_TYPES) {
      const [asset, ...rest] = type.split('_');
      const kind = rest.join('_');
      const assetKind = asset === 'ROOM' ? 'room' : 'desk';
      expect(eventType(assetKind, kind as never)).toBe(type);
      for (const occurrenceId of [null, '6561a0b0c0ffee0000000002']) {
        const data = bookingEventData({ ...facts, assetKind, occurrenceId }, details[kind], start - 20 * MIN);
        expect(
          Value.Check(EVENT_DATA_SCHEMAS[type], data),
          `${type} ${JSON.stringify([...Value.Errors(EVENT_DATA_SCHEMAS[type], data)])}`,
        ).toBe(true);
        const body = JSON.parse(deliveryBody({ deliveryId: 'whk_1', type, occurredAt: start - 20 * MIN, projectId: 'p1', data }));
        expect(Value.Check(eventDeliverySchema(type), body), type).toBe(true);
        // Without the fields that name the booking, it is not a valid event of this type.
        for (const field of ['meetingId', 'assetId', 'assetKind']) {
          const { [field]: _gone, ...without } = data as Record<string, unknown>;
          expect(Value.Check(EVENT_DATA_SCHEMAS[type], without), `${type} without ${field}`).toBe(false);
        }
      }
    }
    // A delivery schema fixes its type.
    const book = JSON.parse(
      deliveryBody({
        deliveryId: 'whk_1',
        type: 'ROOM_BOOK',
        occurredAt: start,
        projectId: 'p1',
        data: bookingEventData(facts, details.BOOK, start),
      }),
    );
    expect(Value.Check(eventDeliverySchema('ROOM_CANCEL'), book)).toBe(false);
    expect(Object.keys(EVENT_DATA_SCHEMAS).sort()).toEqual([...EVENT_TYPES].sort());
    expect(() => eventDeliverySchema('ROOM_CHECK_IN')).toThrow(/not an event type/);
  });

  it("the SDK's webhook types (Static<> of the contract) carry the fields that name the booking", () => {
    const data = bookingEventData({ ...facts, assetKind: 'desk', occurrenceId: '6561a0b0c0ffee0000000002' }, details.CANCEL, start);
    const event = JSON.parse(
      deliveryBody({ deliveryId: 'whk_3', type: 'DESK_CANCEL', occurredAt: start, projectId: 'p1', data }),
    ) as WebhookEvent;
    if (event.type !== 'DESK_CANCEL') throw new Error('not a DESK_CANCEL');
    // Type-checked: these fields exist on the SDK's type of a booking event, with these types.
    const named: [string, string | undefined, string, 'room' | 'desk'] = [
      event.data.meetingId,
      event.data.occurrenceEventId,
      event.data.assetId,
      event.data.assetKind,
    ];
    expect(named).toEqual([MEETING, '6561a0b0c0ffee0000000002', ROOM, 'desk']);
  });

  it('the envelope has id, type, version 1, occurredAt, projectId and data', () => {
    const body = JSON.parse(deliveryBody({ deliveryId: 'whk_x', type: 'ROOM_BOOK', occurredAt: start, projectId: 'p1', data: { a: 1 } }));
    expect(body).toEqual({
      id: 'whk_x',
      type: 'ROOM_BOOK',
      version: 1,
      occurredAt: new Date(start).toISOString(),
      projectId: 'p1',
      data: { a: 1 },
    });
  });
});

describe('which booking and occurrence an event names', () => {
  const H = 60 * MIN;
  const series: StoredRecurrence = {
    rule: 'FREQ=DAILY;COUNT=3',
    occurrences: [
      { id: 'o1', start, end: start + H },
      { id: 'o2', start: start + 24 * H, end: start + 25 * H },
      { id: 'o3', start: start + 48 * H, end: start + 49 * H },
    ],
  };

  it('occurrenceAt: none for a single booking; the occurrence starting with the window, held or cancelled on its own', () => {
    expect(occurrenceAt(null, { start })).toBeNull();
    expect(occurrenceAt(series, { start: start + 24 * H })?.id).toBe('o2');
    expect(occurrenceAt(series, { start })?.id).toBe('o1');
    const dropped = withoutOccurrence(series, 'o2', 'No-show — auto-cancelled by system');
    expect(occurrenceAt(dropped, { start: start + 24 * H })?.id).toBe('o2');
    // A window that starts with no occurrence (a first occurrence moved away): the one running then, else the last.
    expect(occurrenceAt(series, { start: start + 30 * MIN })?.id).toBe('o1');
    expect(occurrenceAt(series, { start: start + 100 * H })?.id).toBe('o3');
  });

  it('bookingFacts names the booking, its asset from the scope and, on a series, the occurrence of the window', () => {
    const scope: BookingScope = {
      asset: { kind: 'desk', id: ROOM, name: 'Desk 7', floorName: '3F', config: {} as never, calendarEmail: null, accessDevices: [] },
      project: { id: 'p1', timezone: 'Asia/Bangkok', maxHoldMs: 0 },
    };
    const row = {
      id: MEETING,
      project_id: 'p1',
      asset_kind: 'desk',
      asset_id: ROOM,
      room_id: null,
      desk_id: ROOM,
      start_at: start,
      end_at: start + H,
      organizer_user_id: 'u1',
      organizer: { email: null, name: 'Alice', displayName: 'Alice' },
      attendees: [],
      recurrence: null,
    } as unknown as MeetingRow;
    expect(bookingFacts(scope, row, { start, end: start + H })).toMatchObject({
      meetingId: MEETING,
      occurrenceId: null,
      assetId: ROOM,
      assetKind: 'desk',
      assetName: 'Desk 7',
    });
    const seriesRow = { ...row, recurrence: series } as MeetingRow;
    expect(bookingFacts(scope, seriesRow, series.occurrences[2]).occurrenceId).toBe('o3');
    const data = bookingEventData(bookingFacts(scope, seriesRow, series.occurrences[1]), { kind: 'REMINDER' }, start + 23 * H);
    expect(data).toMatchObject({ meetingId: MEETING, occurrenceEventId: 'o2', assetId: ROOM, assetKind: 'desk', deskName: 'Desk 7' });
  });
});

describe('the OpenAPI webhooks section', () => {
  it('one stable operationId per event type, derived from the type', () => {
    expect(webhookOperationId('ROOM_NO_SHOW_WARNING')).toBe('roomNoShowWarningEvent');
    expect(webhookOperationId('VMS_INVITE_SENT')).toBe('vmsInviteSentEvent');
    const docs = webhookDocs() as Record<string, { post: { operationId: string; summary: string } }>;
    expect(Object.keys(docs)).toEqual([...EVENT_TYPES]);
    expect(new Set(Object.values(docs).map((d) => d.post.operationId)).size).toBe(EVENT_TYPES.length);
    // Each type has a summary of its own (no type falls back to its bare name).
    for (const type of EVENT_TYPES) expect(docs[type].post.summary, type).not.toBe(type);
    expect(docs.DESK_PAYMENT_DUE.post.summary).toMatch(/desk/);
  });
});

describe('delivery signing', () => {
  const secret = 's'.repeat(40);
  const body = '{"id":"whk_1","type":"ROOM_BOOK"}';

  it('signs timestamp.body with HMAC-SHA256', () => {
    const expected = 'sha256=' + createHmac('sha256', secret).update(`1700000000000.${body}`).digest('hex');
    expect(signature(secret, '1700000000000', body)).toBe(expected);
  });

  it('adds the scheme headers; the JWT has iss, aud, jti and a 60 s lifetime', async () => {
    const now = Date.now();
    const base = { deliveryId: 'whk_1', type: 'ROOM_BOOK', projectId: 'p1', body, secret, nowMs: now };
    expect((await deliveryHeaders({ ...base, auth: { scheme: 'signature-only' } })).authorization).toBeUndefined();
    expect((await deliveryHeaders({ ...base, auth: { scheme: 'bearer', token: 'tkn' } })).authorization).toBe('Bearer tkn');
    expect((await deliveryHeaders({ ...base, auth: { scheme: 'custom-header', headers: { 'X-Api-Key': 'k' } } }))['x-api-key']).toBe('k');
    const jwt = (await deliveryHeaders({ ...base, auth: { scheme: 'jwt' } })).authorization!.slice(7);
    const { payload, protectedHeader } = await jwtVerify(jwt, new TextEncoder().encode(secret), { issuer: JWT_ISSUER, audience: 'p1' });
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload.jti).toBe('whk_1');
    expect(payload.exp! - payload.iat!).toBe(60);
  });

  it('the receiver kit accepts a signed delivery once and rejects tampering and stale timestamps', async () => {
    const now = Date.now();
    const headers = await deliveryHeaders({
      deliveryId: 'whk_1',
      type: 'ROOM_BOOK',
      projectId: 'p1',
      body,
      secret,
      nowMs: now,
      auth: { scheme: 'signature-only' },
    });
    const v = createVerifier(secret);
    expect(v.verify(headers, body, now)).toEqual({ ok: true, duplicate: false });
    expect(v.verify(headers, body, now)).toEqual({ ok: true, duplicate: true });
    expect(v.verify(headers, body.replace('BOOK', 'CANCEL'), now)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(v.verify(headers, body, now + 6 * MIN)).toEqual({ ok: false, reason: 'stale-timestamp' });
    expect(createVerifier('x'.repeat(40)).verify(headers, body, now)).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('the signature covers the fields that name the booking: changing meetingId or occurrenceEventId breaks it', async () => {
    const now = Date.now();
    const data = bookingEventData({ ...facts, occurrenceId: '6561a0b0c0ffee0000000002' }, { kind: 'REMINDER' }, start - 15 * MIN);
    const raw = deliveryBody({ deliveryId: 'whk_2', type: 'ROOM_REMINDER', occurredAt: start - 15 * MIN, projectId: 'p1', data });
    const headers = await deliveryHeaders({
      deliveryId: 'whk_2',
      type: 'ROOM_REMINDER',
      projectId: 'p1',
      body: raw,
      secret,
      nowMs: now,
      auth: { scheme: 'signature-only' },
    });
    expect(createVerifier(secret).verify(headers, raw, now)).toEqual({ ok: true, duplicate: false });
    for (const forged of [
      raw.replace(MEETING, '6561a0b0c0ffee0000000009'),
      raw.replace('0000000002', '0000000003'),
      raw.replace(ROOM, '6561a0b0c0ffee00000000bb'),
    ]) {
      expect(forged).not.toBe(raw);
      expect(createVerifier(secret).verify(headers, forged, now)).toEqual({ ok: false, reason: 'bad-signature' });
    }
  });

  it('retries back off 1, 2, 4, 8 minutes', () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([1, 2, 4, 8].map((m) => m * MIN));
  });
});
