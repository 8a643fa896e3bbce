/**
 * Door access in a booking's window on HikVision ISAPI terminals (issue 28 §2, "tested on every transport"):
 * the scenarios of test/support/door-windows.ts with the board room door d1 and the hot desk gate d2 each an
 * ISAPI terminal stand-in, checked on what the terminal itself holds (the user's `Valid` begin/end, in the
 * property's local time, Asia/Bangkok); the stand-in's setOffline makes a terminal unreachable.
 */
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { doorWindowScenarios } from '../support/door-windows.js';
import { idOf, type SiteIds } from '../support/fixtures.js';
import { doorSite } from '../support/doors.js';
import { deviceView } from '../support/devices.js';
import { IsapiTerminal } from '../../tools/device-sim/isapi-terminal.js';

const ZONE = 'Asia/Bangkok';
/** The terminal's local `Valid` time read independently of the product code. */
const iso = (local: string) => DateTime.fromISO(local, { zone: ZONE }).toUTC().toISO();

describe('door windows (ISAPI terminals)', () => {
  const terminals = { d1: new IsapiTerminal(), d2: new IsapiTerminal() };
  let svc: TestService;
  let keyOf: Map<string, keyof typeof terminals>;

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
});
