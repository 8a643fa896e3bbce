/**
 * ISAPI event notifications as door events: which alerts are access results, granted or refused by their
 * minor code, the credential kind, the subject from employeeNoString, the event key, the time with and
 * without an offset, and multipart bodies with pictures.
 */
import { describe, expect, it } from 'vitest';
import { doorEventOf, parseNotification, timeOf } from '../../src/modules/devices/vendors/isapi-events.js';
import { jsonTexts } from '../../src/modules/devices/vendors/isapi-routes.js';
import { classify } from '../../src/modules/devices/vendors/isapi-client.js';
import { fromLocal, subjectOfEmployeeNo, toLocal, validOf, windowOf } from '../../src/modules/devices/vendors/isapi-transport.js';

const ID = '0123456789abcdef01234567';
const alert = (ev: Record<string, unknown>, dateTime = '2026-12-01T09:45:00+07:00') => ({
  dateTime,
  eventType: 'AccessControllerEvent',
  AccessControllerEvent: { majorEventType: 5, ...ev },
});

describe('ISAPI notifications', () => {
  it('maps granted and refused minor codes to the credential kind', () => {
    const cases: [number, boolean, string][] = [
      [1, true, 'card'],
      [9, false, 'card'],
      [6, false, 'card'],
      [38, true, 'fingerprint'],
      [39, false, 'fingerprint'],
      [75, true, 'face'],
      [76, false, 'face'],
      [80, false, 'face'],
    ];
    for (const [sub, granted, kind] of cases) {
      const e = doorEventOf('d', alert({ subEventType: sub, serialNo: 1 }), 'Asia/Bangkok');
      expect({ sub, granted: e?.granted, kind: e?.credentialKind }).toEqual({ sub, granted, kind });
    }
  });

  it('drops alerts that are not access results', () => {
    expect(doorEventOf('d', alert({ subEventType: 21 }), 'UTC')).toBeNull(); // door unlocked
    expect(doorEventOf('d', alert({ majorEventType: 3, subEventType: 1 }), 'UTC')).toBeNull(); // operation
    expect(doorEventOf('d', { dateTime: '2026-12-01T09:45:00Z', eventType: 'heartBeat' }, 'UTC')).toBeNull();
  });

  it('names the subject from employeeNoString, else keeps the card number', () => {
    const member = doorEventOf('d', alert({ subEventType: 1, employeeNoString: `m${ID}`, cardNo: '123', serialNo: 7 }), 'UTC');
    expect(member).toMatchObject({ subject: { kind: 'member', id: ID }, cardNo: '123', eventKey: 'serial:7', granted: true });
    const visitor = doorEventOf('d', alert({ subEventType: 1, employeeNoString: `v${ID}`, serialNo: 8 }), 'UTC');
    expect(visitor?.subject).toEqual({ kind: 'visitor', id: ID });
    const stranger = doorEventOf('d', alert({ subEventType: 9, cardNo: '999', employeeNoString: '1001' }), 'UTC');
    expect(stranger).toMatchObject({ subject: null, cardNo: '999', granted: false });
    expect(subjectOfEmployeeNo('m123')).toBeNull();
  });

  it('prefers the verify mode for the credential kind', () => {
    expect(doorEventOf('d', alert({ subEventType: 1, currentVerifyMode: 'face' }), 'UTC')?.credentialKind).toBe('face');
    expect(doorEventOf('d', alert({ subEventType: 1, currentVerifyMode: 'cardOrFace' }), 'UTC')?.credentialKind).toBe('card');
  });

  it('keys an event without serial number by a hash that a resend repeats', () => {
    const a = doorEventOf('d', alert({ subEventType: 75, employeeNoString: `m${ID}` }), 'UTC');
    const b = doorEventOf('d', alert({ subEventType: 75, employeeNoString: `m${ID}` }), 'UTC');
    const c = doorEventOf('d', alert({ subEventType: 75, employeeNoString: `m${ID}` }, '2026-12-01T09:46:00+07:00'), 'UTC');
    expect(a!.eventKey).toMatch(/^hash:[0-9a-f]{32}$/);
    expect(a!.eventKey).toBe(b!.eventKey);
    expect(a!.eventKey).not.toBe(c!.eventKey);
  });

  it('reads the time with its offset, or in the device zone without one', () => {
    expect(timeOf('2026-12-01T09:45:00+07:00', 'UTC')).toBe(Date.parse('2026-12-01T02:45:00Z'));
    expect(timeOf('2026-12-01T09:45:00', 'Asia/Bangkok')).toBe(Date.parse('2026-12-01T02:45:00Z'));
    expect(timeOf('2026-12-01T09:45:00Z', 'Asia/Bangkok')).toBe(Date.parse('2026-12-01T09:45:00Z'));
    expect(timeOf('garbage', 'UTC')).toBeNull();
  });

  it('parses a multipart body (JSON part and a picture) and a JSON body', async () => {
    const json = JSON.stringify(alert({ subEventType: 75, employeeNoString: `m${ID}`, serialNo: 3 }));
    const body = Buffer.concat([
      Buffer.from(`--XX\r\nContent-Disposition: form-data; name="event_log"\r\n\r\n${json}\r\n`),
      Buffer.from('--XX\r\nContent-Disposition: form-data; name="Picture"; filename="p.jpg"\r\nContent-Type: image/jpeg\r\n\r\n'),
      Buffer.from([0xff, 0xd8, 0xff, 0xd9]),
      Buffer.from('\r\n--XX--\r\n'),
    ]);
    const events = parseNotification('d', await jsonTexts(body, 'multipart/form-data; boundary=XX'), 'UTC');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ eventKey: 'serial:3', subject: { kind: 'member', id: ID } });
    expect(parseNotification('d', await jsonTexts(Buffer.from(json), 'application/json'), 'UTC')).toHaveLength(1);
    expect(parseNotification('d', ['not json'], 'UTC')).toEqual([]);
  });
});

describe('ISAPI answers and windows', () => {
  it('sorts device answers into ok, bad input, capacity, auth and temporary', () => {
    expect(classify(200, { statusCode: 1, statusString: 'OK' })).toBeNull();
    expect(classify(400, { statusCode: 6, subStatusCode: 'badParameters' })?.kind).toBe('bad-input');
    expect(classify(400, { statusCode: 6, subStatusCode: 'deviceUserFull' })?.kind).toBe('capacity');
    expect(classify(401, null)?.kind).toBe('auth');
    expect(classify(503, null)?.kind).toBe('temporary');
    expect(classify(200, { statusCode: 4, subStatusCode: 'deviceBusy' })?.kind).toBe('temporary');
  });

  it('writes windows in local time to the second and reads them back', () => {
    expect(toLocal('2026-12-01T02:30:00.750Z', 'Asia/Bangkok')).toBe('2026-12-01T09:30:00');
    expect(fromLocal('2026-12-01T09:30:00', 'Asia/Bangkok')).toBe(Date.parse('2026-12-01T02:30:00Z'));
    const valid = validOf({ validFrom: '2026-12-01T02:30:00Z', validUntil: '2026-12-01T04:00:00Z' }, 'Asia/Bangkok');
    expect(valid).toEqual({ enable: true, beginTime: '2026-12-01T09:30:00', endTime: '2026-12-01T11:00:00', timeType: 'local' });
    expect(windowOf(valid, 'Asia/Bangkok')).toEqual({
      validFrom: Date.parse('2026-12-01T02:30:00Z'),
      validUntil: Date.parse('2026-12-01T04:00:00Z'),
    });
    const always = validOf({ validFrom: null, validUntil: null }, 'Asia/Bangkok');
    expect(always.enable).toBe(false);
    expect(windowOf(always, 'Asia/Bangkok')).toEqual({ validFrom: null, validUntil: null });
  });
});
