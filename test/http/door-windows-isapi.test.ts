/**
 * Door access in a booking's window on HikVision ISAPI terminals (issue 28 §2, "tested on every transport"):
 * the scenarios of test/support/door-windows.ts with the board room door d1 and the hot desk gate d2 each an
 * ISAPI terminal stand-in, checked on what the terminal itself holds (the user's `Valid` begin/end, in the
 * property's local time, Asia/Bangkok); the stand-in's setOffline makes a terminal unreachable.
 */
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { doorWindowScenarios } from '../support/door-windows.js';
import { actAsToken, appToken, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { doorSite } from '../support/doors.js';
import { deviceView, settled, waitForDevice } from '../support/devices.js';
import { IsapiTerminal } from '../../tools/device-sim/isapi-terminal.js';

const ZONE = 'Asia/Bangkok';
/** The terminal's local `Valid` time read independently of the product code. */
const iso = (local: string) => DateTime.fromISO(local, { zone: ZONE }).toUTC().toISO();

describe('door windows (ISAPI terminals)', () => {
  const terminals = { d1: new IsapiTerminal(), d2: new IsapiTerminal() };
  let svc: TestService;
  let keyOf: Map<string, keyof typeof terminals>;
  let siteIds: SiteIds;

  const transport = (t: IsapiTerminal) => ({ kind: 'isapi', baseUrl: t.url, username: t.username, password: t.currentPassword });

  beforeAll(async () => {
    await terminals.d1.start();
    await terminals.d2.start();
    svc = await startTestService();
  });

  afterAll(async () => {
    await svc?.close();
    await terminals.d1.stop();
    await terminals.d2.stop();
  });

  const terminalOf = (deviceId: string) => terminals[keyOf.get(deviceId)!];

  doorWindowScenarios(() => ({
    svc,
    timeoutMs: 10_000,
    site: () => doorSite({ devices: { d1: { transport: transport(terminals.d1) }, d2: { transport: transport(terminals.d2) } } }),
    onIds: (ids: SiteIds) => {
      siteIds = ids;
      keyOf = new Map([
        [idOf(ids, 'd1'), 'd1'],
        [idOf(ids, 'd2'), 'd2'],
      ]);
    },
    setOnline: async (deviceId, online) => terminalOf(deviceId).setOffline(!online),
    heldOnDevice: (deviceId, memberId) => {
      const user = terminalOf(deviceId)
        .users()
        .find((u) => u.employeeNo === `m${memberId}`);
      if (!user) return undefined;
      if (!user.Valid.enable) return { validFrom: null, validUntil: null };
      return { validFrom: iso(user.Valid.beginTime), validUntil: iso(user.Valid.endTime) };
    },
  }));

  it('the doors were the ISAPI terminals (spoken to with Digest authentication)', async () => {
    for (const [id, key] of keyOf) {
      expect((await deviceView(svc, id)).transport).toBe('isapi');
      expect(terminals[key].log.some((r) => r.path.startsWith('/ISAPI/AccessControl/UserInfo/') && r.status === 200)).toBe(true);
      expect(terminals[key].log.some((r) => r.status === 401)).toBe(true);
    }
  });

  it('a terminal unreachable through a move and past the moved window is never written that window; back, it holds nothing', async () => {
    const api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
    const m = await api.putOk('isapi-expire', { firstName: 'Isapi', lastName: 'Expire' });
    expect((await api.credentials('isapi-expire', { cards: [{ cardNo: '0004900002' }] })).status).toBe(200);
    const token = (await actAsToken(svc, { appId: PARTNER_APP_ID, secret: PARTNER_SECRET, subject: 'isapi-expire' })).access_token;
    const D = await dayAhead(svc, ZONE, 8);
    const d1 = idOf(siteIds, 'd1');
    const employeeNo = `m${m.memberId}`;
    await setClock(svc, at(D, '08:00'));
    const res = await svc.request('POST', '/meetings', {
      token,
      body: { meetingRoomId: idOf(siteIds, 'board'), title: 'Expire', startDateTime: at(D, '09:00'), endDateTime: at(D, '10:00') },
    });
    expect(res.status, res.text).toBe(201);
    const userOf = () => terminals.d1.users().find((u) => u.employeeNo === employeeNo);
    await waitForDevice(svc, d1, (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId), 10_000);
    expect(userOf()?.Valid).toMatchObject({
      enable: true,
      endTime: DateTime.fromISO(at(D, '10:00')).setZone(ZONE).toFormat("yyyy-MM-dd'T'HH:mm:ss"),
    });
    // Every user write the terminal takes from now on.
    const writes: unknown[] = [];
    const write = (terminals.d1 as any).writeUser.bind(terminals.d1);
    const spy = vi.spyOn(terminals.d1 as any, 'writeUser').mockImplementation((...args: unknown[]) => {
      writes.push(JSON.parse(JSON.stringify(args[0])));
      return write(...args);
    });
    try {
      terminals.d1.setOffline(true);
      const moved = await svc.request('PATCH', `/meetings/${res.body.data._id}`, {
        token,
        body: { startDateTime: at(D, '10:00'), endDateTime: at(D, '10:30') },
      });
      expect(moved.status, moved.text).toBe(200);
      await waitForDevice(svc, d1, (v) => !v.online && v.pendingChanges > 0, 10_000);
      await setClock(svc, at(D, '10:35'));
      await new Promise((r) => setTimeout(r, 300));
      terminals.d1.setOffline(false);
      await waitForDevice(svc, d1, (v) => settled(v) && v.online && !v.enrollments.some((e: any) => e.memberId === m.memberId), 15_000);
      expect(userOf()).toBeUndefined();
      const expired = DateTime.fromISO(at(D, '10:30')).setZone(ZONE).toFormat("yyyy-MM-dd'T'HH:mm:ss");
      expect(JSON.stringify(writes)).not.toContain(expired);
      expect(JSON.stringify(writes)).not.toContain(employeeNo);
    } finally {
      spy.mockRestore();
    }
  });
});
