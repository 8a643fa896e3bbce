/**
 * Door access in a booking's window on the sandbox transport (issue 28, section 2): see
 * test/support/door-windows.ts for the scenarios; the sandbox switch makes a device unreachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { doorWindowScenarios } from '../support/door-windows.js';
import { actAsToken, appToken, applySite, idOf } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { settled, waitForDevice } from '../support/devices.js';
import { doorSite } from '../support/doors.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';

describe('door windows (sandbox transport)', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService();
  });

  afterAll(async () => {
    await svc?.close();
  });

  doorWindowScenarios(() => ({
    svc,
    timeoutMs: 5_000,
    setOnline: async (deviceId, online) => {
      const res = await svc.ops('POST', `/ops/v1/devices/${deviceId}/${online ? 'online' : 'offline'}`);
      expect(res.status, res.text).toBe(200);
    },
  }));
});

describe('door windows: group access wins', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService();
  });

  afterAll(async () => {
    await svc?.close();
  });

  it('a door the member holds through an access group keeps no window; the other door of the room gets the window', async () => {
    const doc = doorSite({ roomDoors: ['d1', 't1'] }) as any;
    Object.assign(
      doc.apps.find((a: any) => a.appId === PARTNER_APP_ID),
      { actAs: true },
    );
    const ids = await applySite(svc, doc);
    const dev = (key: string) => idOf(ids, key);
    const api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
    const m = await api.putOk('door-group', { firstName: 'Group', lastName: 'Member' });
    expect((await api.credentials('door-group', { cards: [{ cardNo: '0004100001' }] })).status).toBe(200);
    const token = (await actAsToken(svc, { appId: PARTNER_APP_ID, secret: PARTNER_SECRET, subject: 'door-group' })).access_token;
    const D = await dayAhead(svc, 'Asia/Bangkok', 2);
    await setClock(svc, at(D, '07:00'));
    const res = await svc.request('POST', '/meetings', {
      token,
      body: { meetingRoomId: dev('board'), title: 'Group', startDateTime: at(D, '09:00'), endDateTime: at(D, '10:00') },
    });
    expect(res.status, res.text).toBe(201);
    const mine = (v: any) => v.enrollments.find((e: any) => e.memberId === m.memberId);
    const d1 = await waitForDevice(svc, dev('d1'), (v) => settled(v) && !!mine(v));
    expect(Date.parse(mine(d1).validFrom)).toBe(Date.parse(at(D, '08:45')));
    expect(Date.parse(mine(d1).validUntil)).toBe(Date.parse(at(D, '10:00')));
    const t1 = await waitForDevice(svc, dev('t1'), (v) => settled(v) && !!mine(v));
    expect(mine(t1)).toMatchObject({ validFrom: null, validUntil: null });
  });
});
