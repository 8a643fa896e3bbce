import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { jwtVerify } from 'jose';
import { bookingEventData, deliveryBody, eventType, type BookingFacts } from '../../src/modules/webhooks/event-payloads.js';
import { deliveryHeaders, JWT_ISSUER, signature } from '../../src/modules/webhooks/signing.js';
import { createVerifier } from '../../src/modules/webhooks/receiver-kit.js';
import { retryDelayMs } from '../../src/modules/webhooks/jobs.js';

const MIN = 60_000;
const start = Date.UTC(2026, 11, 1, 3, 0); // 10:00 in Bangkok
const facts: BookingFacts = {
  projectId: 'p1', timeZone: 'Asia/Bangkok', assetKind: 'room', assetName: 'Orchid', floorName: '12F',
  organizerUserId: 'u1', organizerName: 'Alice', organizerEmail: 'alice@example.com', attendeeNames: ['Bob'],
  start, end: start + 60 * MIN,
};

describe('booking event payloads', () => {
  it('BOOK carries the catalog fields in property-local HH:mm', () => {
    expect(bookingEventData(facts, { kind: 'BOOK' }, start - 60 * MIN)).toEqual({
      projectId: 'p1', userId: 'u1', timestamp: new Date(start - 60 * MIN).toISOString(), roomName: 'Orchid', floorName: '12F',
      bookingDate: new Date(start).toISOString(), startTime: '10:00', endTime: '11:00', attendees: ['Bob'], userName: 'Alice', userEmail: 'alice@example.com',
    });
  });

  it('desk events name the desk', () => {
    const data = bookingEventData({ ...facts, assetKind: 'desk' }, { kind: 'ENDING_SOON' }, start + 45 * MIN);
    expect(data).toMatchObject({ deskName: 'Orchid', endTime: '11:00', minutesUntilEnd: 15 });
    expect(data).not.toHaveProperty('roomName');
    expect(eventType('desk', 'ENDING_SOON')).toBe('DESK_ENDING_SOON');
  });

  it('MODIFY, CANCEL, REMINDER and NO_SHOW_WARNING fields', () => {
    expect(bookingEventData(facts, { kind: 'MODIFY', oldStart: start - 60 * MIN, oldEnd: start }, start)).toMatchObject({
      oldStartTime: '09:00', oldEndTime: '10:00', newStartTime: '10:00', newEndTime: '11:00',
    });
    expect(bookingEventData(facts, { kind: 'CANCEL' }, start)).not.toHaveProperty('cancelReason');
    expect(bookingEventData(facts, { kind: 'CANCEL', cancelReason: 'No-show — auto-cancelled by system' }, start)).toMatchObject({
      cancelReason: 'No-show — auto-cancelled by system', bookingDate: new Date(start).toISOString(),
    });
    expect(bookingEventData(facts, { kind: 'REMINDER' }, start - 15 * MIN)).toMatchObject({ minutesUntilStart: 15, startTime: '10:00' });
    expect(bookingEventData(facts, { kind: 'NO_SHOW_WARNING', autoCancelAt: start + 15 * MIN }, start + 10 * MIN)).toMatchObject({ minutesUntilAutoCancel: 5 });
  });

  it('the envelope has id, type, version 1, occurredAt, projectId and data', () => {
    const body = JSON.parse(deliveryBody({ deliveryId: 'whk_x', type: 'ROOM_BOOK', occurredAt: start, projectId: 'p1', data: { a: 1 } }));
    expect(body).toEqual({ id: 'whk_x', type: 'ROOM_BOOK', version: 1, occurredAt: new Date(start).toISOString(), projectId: 'p1', data: { a: 1 } });
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
    const headers = await deliveryHeaders({ deliveryId: 'whk_1', type: 'ROOM_BOOK', projectId: 'p1', body, secret, nowMs: now, auth: { scheme: 'signature-only' } });
    const v = createVerifier(secret);
    expect(v.verify(headers, body, now)).toEqual({ ok: true, duplicate: false });
    expect(v.verify(headers, body, now)).toEqual({ ok: true, duplicate: true });
    expect(v.verify(headers, body.replace('BOOK', 'CANCEL'), now)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(v.verify(headers, body, now + 6 * MIN)).toEqual({ ok: false, reason: 'stale-timestamp' });
    expect(createVerifier('x'.repeat(40)).verify(headers, body, now)).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('retries back off 1, 2, 4, 8 minutes', () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([1, 2, 4, 8].map((m) => m * MIN));
  });
});
