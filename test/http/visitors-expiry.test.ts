/**
 * Visitor invites in time (the sandbox clock): a null end is valid the whole
 * property-local start day and expires at local midnight; when a window is over,
 * the `visitor-expiry` job withdraws the code (an `access_changes` row of kind
 * `visitor`, reason `expired`) as the clock moves, and the access source stops
 * asking devices to hold it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVisitorService, type VisitorCtx } from '../support/visitors.js';
import type { DeviceInfo } from '../../src/modules/devices/access-source.js';

let c: VisitorCtx;

const clockTo = async (iso: string) => {
  const res = await c.svc.ops('POST', '/ops/v1/clock', { set: iso });
  expect(res.status, res.text).toBe(200);
};
const changes = (inviteId: string) =>
  c.svc.services.storage.db
    .selectFrom('access_changes')
    .select(['subject_kind', 'reason', 'created_at'])
    .where('user_id', '=', inviteId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
const status = async (inviteId: string) => (await c.get(inviteId)).body.data.status;

beforeAll(async () => {
  c = await startVisitorService();
});
afterAll(async () => {
  await c?.close();
});

describe('windows in time', () => {
  it('null end: valid until local midnight of the start day, then expired; withdrawals follow the clock', async () => {
    const allDay = await c.inviteOk({
      visitorName: 'All Day Ann',
      licensePlate: '2ขค 5678',
      startDateTime: c.t('14:00'),
      endDateTime: null,
    });
    const unused = await c.inviteOk({ visitorName: 'Unused Una', startDateTime: c.t('09:00'), endDateTime: null });
    const morning = await c.inviteOk({ visitorName: 'Morning Mo', startDateTime: c.t('09:00'), endDateTime: c.t('10:00') });
    expect(allDay.validUntil).toBe(new Date(c.t('00:00', 1)).toISOString());

    expect(await c.scanOk('t1', { cardCode: allDay.qrCardCode })).toEqual({
      granted: false,
      reason: 'not-yet-valid',
      inviteId: allDay._id,
    });

    // 10:00: the morning invite's window is over; moving the clock applied its withdrawal.
    await clockTo(c.t('10:00'));
    expect(await status(morning._id)).toBe('expired');
    expect((await changes(morning._id)).map((r) => [r.subject_kind, r.reason, r.created_at])).toEqual([
      ['visitor', 'invited', expect.any(Number)],
      ['visitor', 'expired', Date.parse(c.t('10:00'))],
    ]);
    expect((await changes(allDay._id)).map((r) => r.reason)).toEqual(['invited']);

    // 23:59:30 local is still the start day.
    await clockTo(c.t('23:59:30'));
    expect(await c.scanOk('cam', { licensePlate: '2ขค-5678' })).toEqual({ granted: true, inviteId: allDay._id });
    expect(await status(unused._id)).toBe('invited');

    // Local midnight: both whole-day invites are over.
    await clockTo(c.t('00:00', 1));
    expect(await c.scanOk('t1', { cardCode: allDay.qrCardCode })).toEqual({ granted: false, reason: 'expired', inviteId: allDay._id });
    expect(await c.scanOk('cam', { licensePlate: '2ขค 5678' })).toEqual({ granted: false, reason: 'expired', inviteId: allDay._id });
    expect(await status(unused._id)).toBe('expired');
    expect(await status(allDay._id)).toBe('checked-in');
    for (const id of [allDay._id, unused._id]) {
      expect((await changes(id)).map((r) => [r.subject_kind, r.reason, r.created_at])).toEqual([
        ['visitor', 'invited', expect.any(Number)],
        ['visitor', 'expired', Date.parse(c.t('00:00', 1))],
      ]);
    }
    const [event] = await c.received('VMS_VISITOR_CHECKED_IN', 'All Day Ann');
    expect(event.checkInTime.en).toBe(`${c.D.setLocale('en-US').toFormat('dd MMM yyyy')} 23:59`);
  });

  it('the access source: QR tag on readers, plate on cameras, within the window; nothing once withdrawn or cancelled', async () => {
    const source = c.svc.services.visitorAccess;
    const tower = c.id('tower');
    const devices: DeviceInfo[] = [
      { id: c.id('t1'), projectId: tower, accessGroupId: c.id('lobby'), kind: 'face-card-reader' },
      { id: c.id('cam'), projectId: tower, accessGroupId: c.id('carpark'), kind: 'lpr-camera' },
    ];
    const withPlate = await c.inviteOk({
      visitorName: 'Src Sam',
      licensePlate: 'sr-12',
      startDateTime: c.t('09:00', 1),
      endDateTime: c.t('11:00', 1),
    });
    const noPlate = await c.inviteOk({ visitorName: 'Src Sue', startDateTime: c.t('09:00', 1), endDateTime: c.t('11:00', 1) });
    const window = { validFrom: Date.parse(c.t('09:00', 1)), validUntil: Date.parse(c.t('11:00', 1)) };

    const a = await source.desired(tower, withPlate._id, devices);
    expect(a.get(c.id('cam'))).toEqual({ cards: [], face: null, qr: null, plates: ['SR12'], ...window });
    const qr = a.get(c.id('t1'))!;
    expect(qr).toMatchObject({ cards: [], face: null, plates: [], ...window });
    expect(qr.qr).toEqual(expect.any(String));
    expect(qr.qr).not.toBe(withPlate.qrCardCode);
    const b = await source.desired(tower, noPlate._id, devices);
    expect([...b.keys()]).toEqual([c.id('t1')]);
    expect(await source.secrets(tower, [withPlate._id, noPlate._id, withPlate._id])).toEqual(
      new Map([
        [withPlate._id, { face: null, qrCode: withPlate.qrCardCode }],
        [noPlate._id, { face: null, qrCode: noPlate.qrCardCode }],
      ]),
    );
    expect(await source.secrets(c.id('annex'), [withPlate._id])).toEqual(new Map());
    expect(await source.subjects(tower)).toEqual(expect.arrayContaining([withPlate._id, noPlate._id]));
    expect((await source.desired(c.id('annex'), withPlate._id, devices)).size).toBe(0);

    await c.cancel(noPlate._id);
    expect((await source.desired(tower, noPlate._id, devices)).size).toBe(0);
    expect(await source.subjects(tower)).not.toContain(noPlate._id);

    await clockTo(c.t('11:00', 1));
    expect((await source.desired(tower, withPlate._id, devices)).size).toBe(0);
    expect(await source.subjects(tower)).not.toContain(withPlate._id);
  });
});
