/**
 * Door access in a booking's window on ZKTeco PUSH terminals (issue 28 §2, "tested on every transport"):
 * the scenarios of test/support/door-windows.ts with the board room door d1 and the hot desk gate d2 each a
 * ZKTeco terminal stand-in polling the test server every 50 ms, checked on what the terminal itself holds
 * (the user's StartTime/EndTime, packed local time in Asia/Bangkok; 0 = no limit). Offline = the terminal
 * stops polling (the service sees it stale after DEVICE_PULL_STALE_SECONDS=1).
 */
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { doorWindowScenarios } from '../support/door-windows.js';
import { actAsToken, appToken, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { doorSite } from '../support/doors.js';
import { deviceView, settled, waitForDevice } from '../support/devices.js';
import { ZktecoTerminal } from '../../tools/device-sim/zkteco-terminal.js';

const ZONE = 'Asia/Bangkok';
const SERIALS = { d1: 'ZKDOOR0001', d2: 'ZKDOOR0002' } as const;

/** ZKTeco's packed local time read independently of the product code (0: no limit). */
function iso(packed: number): string | null {
  if (packed === 0) return null;
  const secs = packed % 86400;
  const days = Math.floor(packed / 86400);
  const local = {
    year: 2000 + Math.floor(days / 372),
    month: Math.floor((days % 372) / 31) + 1,
    day: (days % 31) + 1,
    hour: Math.floor(secs / 3600),
    minute: Math.floor((secs % 3600) / 60),
    second: secs % 60,
  };
  return DateTime.fromObject(local, { zone: ZONE }).toUTC().toISO();
}

describe('door windows (ZKTeco PUSH terminals)', () => {
  let svc: TestService;
  let terminals: Record<keyof typeof SERIALS, ZktecoTerminal>;
  let keyOf: Map<string, keyof typeof SERIALS>;
  let siteIds: SiteIds;

  beforeAll(async () => {
    svc = await startTestService({ env: { DEVICE_PULL_STALE_SECONDS: '1' } });
    terminals = {
      d1: new ZktecoTerminal({ serverUrl: svc.url, serialNumber: SERIALS.d1, pollMs: 50 }),
      d2: new ZktecoTerminal({ serverUrl: svc.url, serialNumber: SERIALS.d2, pollMs: 50 }),
    };
    terminals.d1.start();
    terminals.d2.start();
  });

  afterAll(async () => {
    terminals?.d1.stop();
    terminals?.d2.stop();
    await svc?.close();
  });

  const terminalOf = (deviceId: string) => terminals[keyOf.get(deviceId)!];
  const pinOf = async (memberId: string) => String(await svc.services.deviceSync['deps'].repo.userNumber({ kind: 'member', id: memberId }));

  doorWindowScenarios(() => ({
    svc,
    timeoutMs: 10_000,
    site: () =>
      doorSite({
        devices: {
          d1: { transport: { kind: 'zkteco-push', serialNumber: SERIALS.d1 } },
          d2: { transport: { kind: 'zkteco-push', serialNumber: SERIALS.d2 } },
        },
      }),
    onIds: (ids: SiteIds) => {
      siteIds = ids;
      keyOf = new Map([
        [idOf(ids, 'd1'), 'd1'],
        [idOf(ids, 'd2'), 'd2'],
      ]);
    },
    setOnline: async (deviceId, online) => terminalOf(deviceId).setOffline(!online),
    heldOnDevice: async (deviceId, memberId) => {
      const pin = await pinOf(memberId);
      const user = terminalOf(deviceId)
        .users()
        .find((u) => u.pin === pin);
      if (!user) return undefined;
      expect(user.authorized).toBe(true);
      return { validFrom: iso(user.startTime), validUntil: iso(user.endTime) };
    },
  }));

  it('the doors were the ZKTeco terminals (commands fetched by polling, in the text format)', async () => {
    for (const [id, key] of keyOf) {
      expect((await deviceView(svc, id)).transport).toBe('zkteco-push');
      expect(terminals[key].received.some((l) => /\tDATA UPDATE user\t|DATA UPDATE user /.test(l))).toBe(true);
    }
  });

  it('a terminal offline (stale) through a move and past the moved window is never sent that window; back, it holds nothing', async () => {
    const api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
    const m = await api.putOk('zk-expire', { firstName: 'Zk', lastName: 'Expire' });
    expect((await api.credentials('zk-expire', { cards: [{ cardNo: '0004900001' }] })).status).toBe(200);
    const token = (await actAsToken(svc, { appId: PARTNER_APP_ID, secret: PARTNER_SECRET, subject: 'zk-expire' })).access_token;
    const D = await dayAhead(svc, ZONE, 8);
    const d1 = idOf(siteIds, 'd1');
    const pin = await pinOf(m.memberId);
    await setClock(svc, at(D, '08:00'));
    const res = await svc.request('POST', '/meetings', {
      token,
      body: { meetingRoomId: idOf(siteIds, 'board'), title: 'Expire', startDateTime: at(D, '09:00'), endDateTime: at(D, '10:00') },
    });
    expect(res.status, res.text).toBe(201);
    const holdsPin = () => terminals.d1.users().find((u) => u.pin === pin);
    await waitForDevice(svc, d1, (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId), 10_000);
    expect(holdsPin()).toMatchObject({ authorized: true });
    // Stops polling; the move waits for it, and the service counts it offline.
    terminals.d1.setOffline(true);
    const moved = await svc.request('PATCH', `/meetings/${res.body.data._id}`, {
      token,
      body: { startDateTime: at(D, '10:00'), endDateTime: at(D, '10:30') },
    });
    expect(moved.status, moved.text).toBe(200);
    await waitForDevice(svc, d1, (v) => !v.online && v.pendingChanges > 0, 10_000);
    await setClock(svc, at(D, '10:35'));
    await new Promise((r) => setTimeout(r, 300));
    const mark = terminals.d1.received.length;
    terminals.d1.setOffline(false);
    await waitForDevice(svc, d1, (v) => settled(v) && v.online && !v.enrollments.some((e: any) => e.memberId === m.memberId), 10_000);
    expect(holdsPin()).toBeUndefined();
    const sent = terminals.d1.received.slice(mark).filter((l) => new RegExp(`Pin=${pin}(\\t|$)`).test(l));
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((l) => /UPDATE user\b/.test(l))).toEqual([]);
  });
});
