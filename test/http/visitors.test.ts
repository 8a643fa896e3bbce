/**
 * Visitor management over HTTP, like a third party (operator-api.md "Visitors",
 * api-spec.md visitor events): invites, scans by QR code and by licence plate,
 * refusals that change nothing, cancels, statuses, validation, 404s, and the
 * VMS_* events a subscribed listener receives (every field; the QR code only in
 * VMS_INVITE_SENT; booking-only listeners get nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { expectError, UNKNOWN_ID } from '../support/fixtures.js';
import { TZ, startVisitorService, type VisitorCtx } from '../support/visitors.js';
import { ISO_DATE_TIME } from '../support/catalogue.js';
import { DELIVERY_JOB } from '../../src/modules/webhooks/jobs.js';

let c: VisitorCtx;

const en = (iso: string | number) =>
  (typeof iso === 'number' ? DateTime.fromMillis(iso) : DateTime.fromISO(iso)).setZone(TZ).setLocale('en-US').toFormat('dd MMM yyyy HH:mm');
const TH_MONTHS = ['ม.ค.', 'ก.พ.', 'มี.ค.', 'เม.ย.', 'พ.ค.', 'มิ.ย.', 'ก.ค.', 'ส.ค.', 'ก.ย.', 'ต.ค.', 'พ.ย.', 'ธ.ค.'];
const th = (iso: string) => {
  const d = DateTime.fromISO(iso).setZone(TZ);
  return `${d.toFormat('dd')} ${TH_MONTHS[d.month - 1]} ${d.year + 543} ${d.toFormat('HH:mm')}`;
};
const utc = (iso: string) => new Date(iso).toISOString();

beforeAll(async () => {
  c = await startVisitorService();
});
afterAll(async () => {
  await c?.close();
});

describe('create', () => {
  it('201 with a QR card code; VMS_INVITE_SENT reaches the listener with every field', async () => {
    const body = {
      visitorName: 'Vera Visitor',
      visitorEmail: 'vera@example.com',
      startDateTime: c.t('09:00'),
      endDateTime: c.t('11:30'),
      licensePlate: '1กข 1234',
      visitPurpose: 'Contract signing',
    };
    const data = await c.inviteOk(body);
    expect(data).toMatchObject({
      projectId: c.id('tower'),
      hostUserId: c.id('alice'),
      status: 'invited',
      visitorName: 'Vera Visitor',
      visitorEmail: 'vera@example.com',
      startDateTime: utc(c.t('09:00')),
      endDateTime: utc(c.t('11:30')),
      validUntil: utc(c.t('11:30')),
      licensePlate: '1กข 1234',
      visitPurpose: 'Contract signing',
      cancelledAt: null,
      entries: [],
    });
    expect(data._id).toMatch(/^[0-9a-f]{24}$/);
    expect(data.qrCardCode).toMatch(/^[0-9A-HJKMNP-TV-Z]{16}$/);
    expect(data.createdAt).toMatch(ISO_DATE_TIME);

    const [event] = await c.received('VMS_INVITE_SENT', 'Vera Visitor');
    const delivery = c.receiver.on('/vms').find((r) => r.body.data === event || r.body.data?.visitorName === 'Vera Visitor')!;
    expect(delivery.body.type).toBe('VMS_INVITE_SENT');
    expect(delivery.body.projectId).toBe(c.id('tower'));
    expect(event).toEqual({
      projectId: c.id('tower'),
      userId: c.id('alice'),
      timestamp: delivery.body.occurredAt,
      visitorName: 'Vera Visitor',
      visitorEmail: 'vera@example.com',
      hostName: 'Alice Example',
      hostEmail: 'alice@example.com',
      visitDate: utc(c.t('09:00')),
      startDateTime: en(c.t('09:00')),
      endDateTime: en(c.t('11:30')),
      qrCardCode: data.qrCardCode,
      licensePlate: '1กข 1234',
      visitPurpose: 'Contract signing',
    });
    expect(event.startDateTime).toBe(`${c.D.toFormat('dd')} ${c.D.setLocale('en-US').toFormat('MMM yyyy')} 09:00`);
  });

  it('without the optional fields: visitorEmail null, no licensePlate or visitPurpose in the event', async () => {
    const data = await c.inviteOk({ visitorName: 'Plain Pete', startDateTime: c.t('09:00'), endDateTime: c.t('10:00') });
    expect(data).toMatchObject({ visitorEmail: null, licensePlate: null, visitPurpose: null });
    const [event] = await c.received('VMS_INVITE_SENT', 'Plain Pete');
    expect(event.visitorEmail).toBeNull();
    expect(event).not.toHaveProperty('licensePlate');
    expect(event).not.toHaveProperty('visitPurpose');
  });

  it('null endDateTime: valid the whole property-local start day; the event carries endDateTime null', async () => {
    const data = await c.inviteOk({ visitorName: 'Day Dora', startDateTime: c.t('14:00'), endDateTime: null });
    expect(data.endDateTime).toBeNull();
    expect(data.validUntil).toBe(utc(c.t('00:00', 1)));
    const [event] = await c.received('VMS_INVITE_SENT', 'Day Dora');
    expect(event.endDateTime).toBeNull();
    expect(event.startDateTime).toBe(en(c.t('14:00')));
  });

  it('codes differ between invites', async () => {
    const a = await c.inviteOk({ visitorName: 'Code A', startDateTime: c.t('09:00'), endDateTime: c.t('10:00') });
    const b = await c.inviteOk({ visitorName: 'Code B', startDateTime: c.t('09:00'), endDateTime: c.t('10:00') });
    expect(a.qrCardCode).not.toBe(b.qrCardCode);
  });

  it('validation: 400 KS001 with one message per violation', async () => {
    const res = await c.svc.ops('POST', '/ops/v1/visitors/invites', {
      projectId: 'nope',
      startDateTime: 'tomorrow',
      endDateTime: 5,
      extra: 1,
    });
    expectError(res, 400, 'KS001');
    const messages: string[] = res.body.message;
    for (const m of [
      'body.projectId must be a 24-character hexadecimal id',
      'body.hostUserId is required',
      'body.visitorName is required',
      'body.extra is not an allowed field',
    ]) {
      expect(messages).toContain(m);
    }
    expect(messages.some((m) => m.startsWith('body.startDateTime'))).toBe(true);
    expect(messages.some((m) => m.startsWith('body.endDateTime'))).toBe(true);

    const missingEnd = await c.svc.ops('POST', '/ops/v1/visitors/invites', {
      projectId: c.id('tower'),
      hostUserId: c.id('alice'),
      visitorName: 'X',
      startDateTime: c.t('09:00'),
    });
    expectError(missingEnd, 400, 'KS001');
    expect(missingEnd.body.message).toEqual(['body.endDateTime is required']);

    const backwards = await c.invite({ visitorName: 'Back', startDateTime: c.t('10:00'), endDateTime: c.t('09:00') });
    expectError(backwards, 400, 'KS001');
    expect(backwards.body.message).toEqual(['body.endDateTime must be after body.startDateTime']);
    expectError(await c.invite({ visitorName: 'Same', startDateTime: c.t('10:00'), endDateTime: c.t('10:00') }), 400, 'KS001');

    const badEmail = await c.invite({
      visitorName: 'Mail',
      visitorEmail: 'not-an-email',
      startDateTime: c.t('09:00'),
      endDateTime: c.t('10:00'),
    });
    expectError(badEmail, 400, 'KS001');
    expect(badEmail.body.message).toEqual(['body.visitorEmail must be an email address']);

    const dashes = await c.invite({ visitorName: 'Dash', licensePlate: ' - ', startDateTime: c.t('09:00'), endDateTime: c.t('10:00') });
    expectError(dashes, 400, 'KS001');
    expect(dashes.body.message).toEqual(['body.licensePlate must contain letters or digits']);
  });

  it('unknown project → 404 KS005; a host who is not a member of the project → 400 KS001', async () => {
    const base = { visitorName: 'Nobody', startDateTime: c.t('09:00'), endDateTime: c.t('10:00') };
    expectError(await c.invite({ ...base, projectId: UNKNOWN_ID }), 404, 'KS005');
    const erin = await c.invite({ ...base, hostUserId: c.id('erin') }); // member of annex only
    expectError(erin, 400, 'KS001');
    expect(erin.body.message).toEqual(['body.hostUserId must name an active member of the project']);
    expectError(await c.invite({ ...base, hostUserId: UNKNOWN_ID }), 400, 'KS001');
  });
});

describe('scans', () => {
  it('a QR code valid now is granted; VMS_VISITOR_CHECKED_IN has every field; the invite is checked-in', async () => {
    const inv = await c.inviteOk({ visitorName: 'Quinn QR', startDateTime: c.t('05:00'), endDateTime: c.t('08:00') });
    const before = await c.deliveryCount('vms');
    const result = await c.scanOk('t1', { cardCode: inv.qrCardCode });
    expect(result).toEqual({ granted: true, inviteId: inv._id });
    expect(await c.deliveryCount('vms')).toBe(before + 1);

    const [event] = await c.received('VMS_VISITOR_CHECKED_IN', 'Quinn QR');
    expect(event).toEqual({
      projectId: c.id('tower'),
      userId: c.id('alice'),
      timestamp: event.timestamp,
      visitorName: 'Quinn QR',
      hostAssetTitle: 'Acme Tower',
      checkInTime: { en: en(event.timestamp), th: th(event.timestamp) },
      vmsEntryType: { entryType: 'card', en: 'QR code', th: 'คิวอาร์โค้ด' },
      licensePlateNumber: '',
      location: { entryType: 'card', en: 'Main lobby', th: 'ล็อบบี้หลัก' },
    });
    expect(event.timestamp).toMatch(ISO_DATE_TIME);

    const got = (await c.get(inv._id)).body.data;
    expect(got.status).toBe('checked-in');
    expect(got.entries).toEqual([{ at: event.timestamp, deviceId: c.id('t1'), entryType: 'card', licensePlate: null }]);
  });

  it('codes are read ignoring case and dashes; every granted scan is an entry and an event', async () => {
    const inv = await c.inviteOk({ visitorName: 'Twice Tina', startDateTime: c.t('05:00'), endDateTime: c.t('08:00') });
    const grouped = inv.qrCardCode.toLowerCase().replace(/(....)(?=.)/g, '$1-');
    expect(await c.scanOk('t1', { cardCode: grouped })).toEqual({ granted: true, inviteId: inv._id });
    expect(await c.scanOk('side', { cardCode: inv.qrCardCode })).toEqual({ granted: true, inviteId: inv._id });
    const events = await c.received('VMS_VISITOR_CHECKED_IN', 'Twice Tina', 2);
    expect(events).toHaveLength(2);
    // A device without a location is named by its name, in both languages.
    expect(events.map((e) => e.location).find((l) => l.en !== 'Main lobby')).toEqual({
      entryType: 'card',
      en: 'Side door reader',
      th: 'Side door reader',
    });
    expect((await c.get(inv._id)).body.data.entries).toHaveLength(2);
  });

  it("a Thai plate matches with spaces, dashes and padding; licensePlateNumber is the invite's plate", async () => {
    const inv = await c.inviteOk({
      visitorName: 'Plate Pim',
      licensePlate: '1กข 1234',
      startDateTime: c.t('05:00'),
      endDateTime: c.t('08:00'),
    });
    for (const plate of ['1กข-1234', ' 1 กข 1234 ', '1กข1234']) {
      expect(await c.scanOk('cam', { licensePlate: plate })).toEqual({ granted: true, inviteId: inv._id });
    }
    const events = await c.received('VMS_VISITOR_CHECKED_IN', 'Plate Pim', 3);
    for (const e of events) {
      expect(e.vmsEntryType).toEqual({ entryType: 'license-plate', en: 'Licence plate', th: 'ป้ายทะเบียนรถ' });
      expect(e.licensePlateNumber).toBe('1กข 1234');
      expect(e.location).toEqual({ entryType: 'license-plate', en: 'Car park gate', th: 'ประตูลานจอดรถ' });
    }
    const got = (await c.get(inv._id)).body.data;
    expect(got.entries.map((x: any) => [x.entryType, x.licensePlate, x.deviceId])).toEqual(
      Array(3).fill(['license-plate', '1กข 1234', c.id('cam')]),
    );
  });

  it('Latin plates match ignoring case; a plate used on several visits admits the visit valid now', async () => {
    const past = await c.inviteOk({
      visitorName: 'Repeat Past',
      licensePlate: 'AB-7777',
      startDateTime: c.t('02:00'),
      endDateTime: c.t('04:00'),
    });
    const current = await c.inviteOk({
      visitorName: 'Repeat Now',
      licensePlate: 'ab 7777',
      startDateTime: c.t('05:00'),
      endDateTime: c.t('08:00'),
    });
    const future = await c.inviteOk({
      visitorName: 'Repeat Later',
      licensePlate: 'AB7777',
      startDateTime: c.t('09:00', 1),
      endDateTime: c.t('10:00', 1),
    });
    expect(await c.scanOk('cam', { licensePlate: 'Ab.7777' })).toEqual({ granted: true, inviteId: current._id });
    await c.cancel(current._id);
    // With the current visit cancelled, the plate is about the next visit: not yet valid.
    expect(await c.scanOk('cam', { licensePlate: 'ab7777' })).toEqual({ granted: false, reason: 'not-yet-valid', inviteId: future._id });
    expect(past._id).toBeTruthy();
  });

  it("the host's unit names hostAssetTitle", async () => {
    const partner = await c.partner();
    const member = await partner.putOk('crm-hank', {
      firstName: 'Hank',
      lastName: 'Mail',
      email: 'hank@example.com',
      unit: { addressNo: '202' },
    });
    expect(member.memberId).toBe(c.id('hank'));
    const inv = await c.inviteOk({
      hostUserId: c.id('hank'),
      visitorName: 'Unit Uma',
      startDateTime: c.t('05:00'),
      endDateTime: c.t('08:00'),
    });
    await c.scanOk('t1', { cardCode: inv.qrCardCode });
    const [event] = await c.received('VMS_VISITOR_CHECKED_IN', 'Unit Uma');
    expect(event.hostAssetTitle).toBe('Unit A202');
    expect(event.userId).toBe(c.id('hank'));
  });

  it('refusals: not-yet-valid, expired, cancelled and unknown change nothing and emit nothing', async () => {
    const early = await c.inviteOk({
      visitorName: 'Early Ed',
      licensePlate: 'EE 1',
      startDateTime: c.t('09:00'),
      endDateTime: c.t('10:00'),
    });
    const late = await c.inviteOk({
      visitorName: 'Late Liz',
      licensePlate: 'LL 1',
      startDateTime: c.t('02:00'),
      endDateTime: c.t('05:00'),
    });
    const gone = await c.inviteOk({
      visitorName: 'Gone Gus',
      licensePlate: 'GG 1',
      startDateTime: c.t('05:00'),
      endDateTime: c.t('08:00'),
    });
    expect((await c.cancel(gone._id)).status).toBe(200);
    expect((await c.get(late._id)).body.data.status).toBe('expired');
    const vms = await c.deliveryCount('vms');
    const entriesOf = async (id: string) => (await c.get(id)).body.data.entries.length;

    expect(await c.scanOk('t1', { cardCode: early.qrCardCode })).toEqual({ granted: false, reason: 'not-yet-valid', inviteId: early._id });
    expect(await c.scanOk('cam', { licensePlate: 'ee-1' })).toEqual({ granted: false, reason: 'not-yet-valid', inviteId: early._id });
    expect(await c.scanOk('t1', { cardCode: late.qrCardCode })).toEqual({ granted: false, reason: 'expired', inviteId: late._id });
    expect(await c.scanOk('cam', { licensePlate: 'LL1' })).toEqual({ granted: false, reason: 'expired', inviteId: late._id });
    expect(await c.scanOk('t1', { cardCode: gone.qrCardCode })).toEqual({ granted: false, reason: 'cancelled', inviteId: gone._id });
    expect(await c.scanOk('cam', { licensePlate: 'gg 1' })).toEqual({ granted: false, reason: 'cancelled', inviteId: gone._id });
    expect(await c.scanOk('t1', { cardCode: 'ZZZZZZZZZZZZZZZZ' })).toEqual({ granted: false, reason: 'unknown' });
    expect(await c.scanOk('cam', { licensePlate: 'NO 0000' })).toEqual({ granted: false, reason: 'unknown' });

    expect(await c.deliveryCount('vms')).toBe(vms);
    for (const inv of [early, late, gone]) expect(await entriesOf(inv._id)).toBe(0);
    expect((await c.get(early._id)).body.data.status).toBe('invited');
    expect((await c.get(gone._id)).body.data.status).toBe('cancelled');
  });

  it("a code of one project is unknown at another project's device (no invite id leaks)", async () => {
    const inv = await c.inviteOk({
      visitorName: 'Tower Tom',
      licensePlate: 'TT 99',
      startDateTime: c.t('05:00'),
      endDateTime: c.t('08:00'),
    });
    expect(await c.scanOk('ax1', { cardCode: inv.qrCardCode })).toEqual({ granted: false, reason: 'unknown' });
    expect(await c.scanOk('ax1', { licensePlate: 'TT 99' })).toEqual({ granted: false, reason: 'unknown' });
  });

  it('400 KS001 unless exactly one of cardCode or licensePlate; unknown or malformed device → 404 KS005', async () => {
    const both = await c.scan('t1', { cardCode: 'A', licensePlate: 'B' });
    expectError(both, 400, 'KS001');
    expect(both.body.message).toEqual(['body must have exactly one of cardCode or licensePlate']);
    expectError(await c.scan('t1', {}), 400, 'KS001');
    const extra = await c.scan('t1', { cardCode: 'A', door: 1 });
    expectError(extra, 400, 'KS001');
    expect(extra.body.message).toEqual(['body.door is not an allowed field']);
    expectError(await c.scan(UNKNOWN_ID, { cardCode: 'A' }), 404, 'KS005');
    expectError(await c.svc.ops('POST', '/ops/v1/devices/not-a-device/scans', { cardCode: 'A' }), 404, 'KS005');
  });
});

describe('cancel and read', () => {
  it('cancel is idempotent: 200 twice, the same view, one VMS_HOST_CANCELLED with every field', async () => {
    const inv = await c.inviteOk({
      visitorName: 'Cancel Cara',
      licensePlate: 'CC 123',
      startDateTime: c.t('09:00'),
      endDateTime: null,
    });
    const first = await c.cancel(inv._id);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({ _id: inv._id, status: 'cancelled', qrCardCode: inv.qrCardCode });
    expect(first.body.data.cancelledAt).toMatch(ISO_DATE_TIME);
    const vms = await c.deliveryCount('vms');
    const second = await c.cancel(inv._id);
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual(first.body.data);
    expect(await c.deliveryCount('vms')).toBe(vms);

    const [event] = await c.received('VMS_HOST_CANCELLED', 'Cancel Cara');
    expect(event).toEqual({
      projectId: c.id('tower'),
      userId: c.id('alice'),
      timestamp: event.timestamp,
      visitorName: 'Cancel Cara',
      hostName: 'Alice Example',
      hostEmail: 'alice@example.com',
      startDateTime: en(c.t('09:00')),
      endDateTime: null,
      licensePlate: 'CC 123',
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(
      c.receiver.on('/vms').filter((r) => r.body.type === 'VMS_HOST_CANCELLED' && r.body.data.visitorName === 'Cancel Cara'),
    ).toHaveLength(1);

    // The devices module learns of the change from its outbox (access_changes), written with the cancel.
    const rows = await c.svc.services.storage.db
      .selectFrom('access_changes')
      .select(['subject_kind', 'reason'])
      .where('user_id', '=', inv._id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      { subject_kind: 'visitor', reason: 'invited' },
      { subject_kind: 'visitor', reason: 'cancelled' },
    ]);
  });

  it('GET: invited → checked-in; invited → expired; cancelled', async () => {
    const a = await c.inviteOk({ visitorName: 'Status A', startDateTime: c.t('05:00'), endDateTime: c.t('08:00') });
    expect((await c.get(a._id)).body.data.status).toBe('invited');
    await c.scanOk('t1', { cardCode: a.qrCardCode });
    const got = await c.get(a._id);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ code: 'KS000', success: true, message: 'Success' });
    expect(got.body.data.status).toBe('checked-in');
    const b = await c.inviteOk({ visitorName: 'Status B', startDateTime: c.t('01:00'), endDateTime: c.t('02:00') });
    expect(b.status).toBe('expired');
    expect((await c.get(b._id)).body.data.status).toBe('expired');
    await c.cancel(a._id);
    expect((await c.get(a._id)).body.data.status).toBe('cancelled');
  });

  it('unknown and malformed invite ids → 404 KS005', async () => {
    expectError(await c.get(UNKNOWN_ID), 404, 'KS005');
    expectError(await c.get('not-an-id'), 404, 'KS005');
    expectError(await c.cancel(UNKNOWN_ID), 404, 'KS005');
    expectError(await c.cancel('xyz'), 404, 'KS005');
  });

  it('ops auth: 401 KS002 without the ops token', async () => {
    const res = await c.svc.request('GET', `/ops/v1/visitors/invites/${UNKNOWN_ID}`);
    expectError(res, 401, 'KS002');
  });
});

describe('deliveries', () => {
  it('a listener of booking events only gets no visitor event; the reserved types are never sent; only VMS_INVITE_SENT carries qrCardCode', async () => {
    await c.svc.services.jobs.drain(DELIVERY_JOB);
    await c.receiver.waitFor((all) => all.filter((r) => r.path === '/vms').length >= 1);
    expect(c.receiver.on('/bookings')).toEqual([]);
    expect(await c.deliveryCount('bookings')).toBe(0);
    const all = c.receiver.on('/vms');
    // The vms listener also subscribes to VMS_VISITOR_CHECKED_OUT and VMS_HOST_NOTIFICATION: neither ever comes.
    expect(new Set(all.map((r) => r.body.type))).toEqual(new Set(['VMS_INVITE_SENT', 'VMS_VISITOR_CHECKED_IN', 'VMS_HOST_CANCELLED']));
    for (const r of all) {
      expect(r.body.projectId).toBe(c.id('tower'));
      const text = JSON.stringify(r.body.data);
      if (r.body.type === 'VMS_INVITE_SENT') expect(r.body.data.qrCardCode).toMatch(/^[0-9A-Z]{16}$/);
      else {
        expect(r.body.data).not.toHaveProperty('qrCardCode');
        expect(text).not.toMatch(/qrCardCode/i);
      }
    }
    // Codes never leak into other events' bodies either.
    const codes = all.filter((r) => r.body.type === 'VMS_INVITE_SENT').map((r) => r.body.data.qrCardCode as string);
    for (const r of all.filter((x) => x.body.type !== 'VMS_INVITE_SENT'))
      for (const code of codes) expect(r.raw.toString()).not.toContain(code);
  });
});
