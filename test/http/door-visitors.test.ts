/**
 * Visitors invited for a booking open its doors (issue 28, section 2: "Visitors invited for the booking get the
 * same through their pass"). On doorSite() a partner member books the board room (door d1); an invite naming the
 * booking puts the visitor's pass on d1 in the booking's door window (15 min before the start to the end) and on the
 * lobby turnstile t1 in the invite's own window; a move moves d1's window, a cancel drops d1's pass (t1 keeps it). An
 * invite naming no booking never reaches a room's or desk's door. A bad booking reference is 400 KS001.
 */
import type { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { actAsToken, appToken, applySite, expectError, idOf, UNKNOWN_ID, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { deviceView, settled, waitForDevice } from '../support/devices.js';
import { doorSite } from '../support/doors.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';

const TZ = 'Asia/Bangkok';

let svc: TestService;
let ids: SiteIds;
let api: PartnerClient;
let D: DateTime;
let n = 0;

const dev = (key: string) => idOf(ids, key);
const t = (hhmm: string) => at(D, hhmm);
const passOf = (view: any, inviteId: string) => view.visitorPasses.find((p: any) => p.inviteId === inviteId);
const win = (from: string, until: string) => ({ validFrom: new Date(t(from)).toISOString(), validUntil: new Date(t(until)).toISOString() });

/** A partner member of the tower (a card, an email) and an act_as token for them. */
async function member(): Promise<{ id: string; token: string }> {
  n += 1;
  const ext = `door-visitor-host-${n}`;
  const m = await api.putOk(ext, { firstName: 'Host', lastName: `No ${n}`, email: `${ext}@example.com` });
  expect((await api.credentials(ext, { cards: [{ cardNo: String(5_100_000 + n).padStart(10, '0') }] })).status).toBe(200);
  const token = (await actAsToken(svc, { appId: PARTNER_APP_ID, secret: PARTNER_SECRET, subject: ext })).access_token;
  return { id: m.memberId, token };
}

async function book(token: string, from: string, to: string): Promise<string> {
  const res = await svc.request('POST', '/meetings', {
    token,
    body: { meetingRoomId: dev('board'), title: 'Visitors welcome', startDateTime: t(from), endDateTime: t(to) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id;
}

function invite(body: Record<string, unknown>) {
  return svc.ops('POST', '/ops/v1/visitors/invites', {
    projectId: dev('tower'),
    visitorName: 'Door Guest',
    startDateTime: t('08:00'),
    endDateTime: t('18:00'),
    ...body,
  });
}

async function inviteOk(body: Record<string, unknown>): Promise<any> {
  const res = await invite(body);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** Waits until device `key` settled holding the invite's pass with this window (null: no pass). */
async function holds(key: string, inviteId: string, window: { validFrom: string; validUntil: string } | null): Promise<void> {
  const view = await waitForDevice(svc, dev(key), (v) => {
    if (!settled(v)) return false;
    const p = passOf(v, inviteId);
    return window ? !!p && p.validFrom === window.validFrom && p.validUntil === window.validUntil : !p;
  });
  if (window) expect(passOf(view, inviteId)).toEqual({ inviteId, qrCode: true, licensePlate: false, ...window });
}

beforeAll(async () => {
  svc = await startTestService();
  const doc = doorSite() as any;
  Object.assign(
    doc.apps.find((a: any) => a.appId === PARTNER_APP_ID),
    { actAs: true },
  );
  ids = await applySite(svc, doc);
  api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
  D = await dayAhead(svc, TZ, 2);
  await setClock(svc, t('07:00'));
});

afterAll(async () => {
  await svc?.close();
});

describe('visitors invited for a booking', () => {
  it("the booking's door holds the pass in the booking's window, the lobby in the invite's; move → moves; cancel → d1 drops it", async () => {
    const host = await member();
    const meetingId = await book(host.token, '09:00', '10:00');
    const inv = await inviteOk({ hostUserId: host.id, meetingId });
    expect(inv.meetingId).toBe(meetingId);
    expect((await svc.ops('GET', `/ops/v1/visitors/invites/${inv._id}`)).body.data.meetingId).toBe(meetingId);
    await holds('d1', inv._id, win('08:45', '10:00'));
    await holds('t1', inv._id, win('08:00', '18:00'));
    // The desk's door (d2) is no door of this booking.
    expect(passOf(await deviceView(svc, dev('d2')), inv._id)).toBeUndefined();

    const moved = await svc.request('PATCH', `/meetings/${meetingId}`, {
      token: host.token,
      body: { startDateTime: t('11:00'), endDateTime: t('12:30') },
    });
    expect(moved.status, moved.text).toBe(200);
    await holds('d1', inv._id, win('10:45', '12:30'));
    await holds('t1', inv._id, win('08:00', '18:00'));

    const cancelled = await svc.request('POST', `/meetings/${meetingId}/cancel`, { token: host.token, body: {} });
    expect(cancelled.status, cancelled.text).toBeLessThan(300);
    await holds('d1', inv._id, null);
    await holds('t1', inv._id, win('08:00', '18:00'));
  });

  it("an invite naming no booking never reaches a room's or desk's door; meetingId is null", async () => {
    const host = await member();
    const inv = await inviteOk({ hostUserId: host.id });
    expect(inv.meetingId).toBeNull();
    await holds('t1', inv._id, win('08:00', '18:00'));
    for (const key of ['d1', 'd2']) expect(passOf(await waitForDevice(svc, dev(key), settled), inv._id)).toBeUndefined();
    // Even while a booking of the host holds the door for the host.
    await book(host.token, '13:00', '14:00');
    await waitForDevice(svc, dev('d1'), (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === host.id));
    expect(passOf(await deviceView(svc, dev('d1')), inv._id)).toBeUndefined();
  });

  it('a bad booking reference is 400 KS001: unknown, of another project, the host not in it, cancelled', async () => {
    const host = await member();
    const other = await member();
    const meetingId = await book(host.token, '15:00', '16:00');
    expectError(await invite({ hostUserId: host.id, meetingId: UNKNOWN_ID }), 400, 'KS001');
    // erin is a member of the annex only: an annex invite may not name a tower booking.
    const annex = await invite({ projectId: dev('annex'), hostUserId: dev('erin'), meetingId });
    expectError(annex, 400, 'KS001');
    expect(annex.text).toContain('booking of the project');
    const stranger = await invite({ hostUserId: other.id, meetingId });
    expectError(stranger, 400, 'KS001');
    expect(stranger.text).toContain('organizes or attends');
    const cancelled = await svc.request('POST', `/meetings/${meetingId}/cancel`, { token: host.token, body: {} });
    expect(cancelled.status, cancelled.text).toBeLessThan(300);
    expectError(await invite({ hostUserId: host.id, meetingId }), 400, 'KS001');
    // Nothing was created by the refusals: the host's invites of the day are none.
    const day = await svc.ops('GET', `/ops/v1/visitors/invites?projectId=${dev('tower')}&date=${D.toISODate()}`);
    expect(day.body.data.filter((i: any) => i.hostUserId === host.id || i.hostUserId === other.id)).toEqual([]);
  });

  it("a scan at a room's door admits only the visitors of its booking, in the booking's window; elsewhere the invite's", async () => {
    const host = await member();
    const meetingId = await book(host.token, '14:30', '15:30');
    const forIt = await inviteOk({ hostUserId: host.id, meetingId });
    const notForIt = await inviteOk({ hostUserId: host.id });
    const scan = async (key: string, inv: { qrCardCode: string }) => {
      const res = await svc.ops('POST', `/ops/v1/devices/${dev(key)}/scans`, { cardCode: inv.qrCardCode });
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    };
    await holds('d1', forIt._id, win('14:15', '15:30'));
    // Inside both invites' windows (08:00–18:00), before the door's (14:15).
    await setClock(svc, t('14:00'));
    expect(await scan('d1', forIt)).toMatchObject({ granted: false, reason: 'not-yet-valid', inviteId: forIt._id });
    expect(await scan('t1', forIt)).toMatchObject({ granted: true, inviteId: forIt._id });
    await setClock(svc, t('14:20'));
    expect(await scan('d1', forIt)).toMatchObject({ granted: true, inviteId: forIt._id });
    expect(await scan('d1', notForIt)).toMatchObject({ granted: false, reason: 'unknown', inviteId: notForIt._id });
    expect(await scan('d2', forIt)).toMatchObject({ granted: false, reason: 'unknown' });
    expect(await scan('t1', notForIt)).toMatchObject({ granted: true, inviteId: notForIt._id });
    // The entry log has each scan, granted or refused, at its device.
    const log = await svc.ops('GET', `/ops/v1/access-entries?project=${dev('tower')}&deviceId=${dev('d1')}`);
    expect(log.body.data.filter((e: any) => e.subject.kind === 'visitor').map((e: any) => e.granted)).toEqual([false, true, false]);
  });

  it("the booking's end (the door-windows job) drops the pass from its door; the lobby keeps it until the invite ends", async () => {
    const host = await member();
    const meetingId = await book(host.token, '16:30', '17:00');
    const inv = await inviteOk({ hostUserId: host.id, meetingId });
    await holds('d1', inv._id, win('16:15', '17:00'));
    await setClock(svc, t('17:01'));
    await holds('d1', inv._id, null);
    await holds('t1', inv._id, win('08:00', '18:00'));
  });
});
