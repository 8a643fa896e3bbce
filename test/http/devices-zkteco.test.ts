/**
 * ZKTeco PUSH over HTTP: a terminal stand-in (tools/device-sim) polls the test server's /iclock endpoints.
 * Enrollment of PIN, cards and face, removal, an unknown serial, a terminal restarted empty and repaired
 * by a reconcile, a terminal that stops polling (offline after DEVICE_PULL_STALE_SECONDS, caught up when it
 * polls again), and access logs sent twice.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { deviceSite, deviceView, face, waitForDevice } from '../support/devices.js';
import { ZktecoTerminal } from '../../tools/device-sim/zkteco-terminal.js';
import type { DoorEvent } from '../../src/modules/devices/transport.js';
import { decodeZkTime } from '../../src/modules/devices/rules/zkteco-protocol.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';

const SN = 'ZKTEST0001';
const SN2 = 'ZKTEST0002';
let svc: TestService;
let ids: SiteIds;
let api: PartnerClient;
let terminal: ZktecoTerminal;
const CONSENT = '2026-01-01T00:00:00Z';

beforeAll(async () => {
  svc = await startTestService({ env: { DEVICE_PULL_STALE_SECONDS: '1' } });
  const site = deviceSite();
  site.accessGroups[0]!.devices.push({
    key: 'z1',
    name: 'ZKTeco door',
    kind: 'face-card-reader',
    transport: { kind: 'zkteco-push', serialNumber: SN },
  } as never);
  // Driven by hand (no stand-in): a commKey, and answers written out in the tests.
  site.accessGroups[1]!.devices.push({
    key: 'z2',
    name: 'ZKTeco gym door',
    kind: 'card-reader',
    transport: { kind: 'zkteco-push', serialNumber: SN2, commKey: 'k3y-2' },
  } as never);
  ids = await applySite(svc, site);
  api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
  terminal = new ZktecoTerminal({ serverUrl: svc.url, serialNumber: SN, pollMs: 50 });
  terminal.start();
});

afterAll(async () => {
  terminal?.stop();
  await svc?.close();
});

const z1 = () => idOf(ids, 'z1');

async function until<T>(what: string, get: () => T | Promise<T>, ok: (v: T) => boolean, ms = 8_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function member(ext: string, cards: string[], withFace: boolean): Promise<{ id: string; pin: string }> {
  const m = await api.putOk(ext, { firstName: ext, lastName: 'Zk' });
  const res = await api.credentials(ext, {
    cards: cards.map((cardNo) => ({ cardNo })),
    ...(withFace ? { face: face(ext.length), faceConsentAt: CONSENT } : {}),
  });
  expect(res.status, res.text).toBe(200);
  const pin = await svc.services.deviceSync['deps'].repo.userNumber({ kind: 'member', id: m.memberId });
  return { id: m.memberId, pin: String(pin) };
}

const userOf = (pin: string) => terminal.users().find((u) => u.pin === pin);

describe('ZKTeco PUSH terminal', () => {
  it('a member with cards and a face is held by the terminal under their PIN; the view shows it applied', async () => {
    const m = await member('zk-1', ['0001234567', '3000000001'], true);
    const u = await until(
      'terminal user',
      () => userOf(m.pin),
      (u) => !!u?.face && u.cards.length === 1,
    );
    expect([u!.cardNo, ...u!.cards].sort()).toEqual(['0001234567', '3000000001']);
    expect(u).toMatchObject({ authorized: true, startTime: 0, endTime: 0 });
    const view = await waitForDevice(svc, z1(), (v) => v.pendingChanges === 0 && v.enrollments.some((e: any) => e.memberId === m.id));
    expect(view.online).toBe(true);
    expect(view.enrollments.find((e: any) => e.memberId === m.id).cardNos.sort()).toEqual(['0001234567', '3000000001']);
    expect(terminal.received.every((l) => !/Name=[^\t]/.test(l))).toBe(true); // names are never sent
  });

  it('an unknown serial gets the 404 envelope and nothing of the protocol, and nothing changes', async () => {
    const before = await deviceView(svc, z1());
    const stranger = new ZktecoTerminal({ serverUrl: svc.url, serialNumber: 'ZKNOBODY', pollMs: 50 });
    await stranger.pollOnce();
    expect(stranger.statuses).toEqual([404]);
    const res = await fetch(`${svc.url}/iclock/getrequest?SN=ZKNOBODY`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'KS005', success: false, message: 'Not found' });
    // Logged once: the next 404 for that serial within the minute is not.
    expect(svc.services.zkteco.shouldLogUnknown('ZKNOBODY')).toBe(false);
    expect(svc.services.zkteco.shouldLogUnknown('ZKSOMEONE')).toBe(true);
    const after = await deviceView(svc, z1());
    expect(after.enrollments).toEqual(before.enrollments);
  });

  it('a terminal whose users were deleted at the terminal holds them again after a reconcile (its user list read back)', async () => {
    const m = await member('zk-2', ['0007654321'], false);
    await until(
      'enrolled',
      () => userOf(m.pin),
      (u) => u?.cardNo === '0007654321',
    );
    await waitForDevice(svc, z1(), (v) => v.pendingChanges === 0);
    terminal.wipeUsers();
    expect(terminal.users()).toEqual([]);
    await svc.services.deviceSync.reconcileAll();
    await until(
      'repaired',
      () => userOf(m.pin),
      (u) => u?.cardNo === '0007654321' && u.authorized,
    );
    await until(
      'first member repaired',
      () => terminal.users().length,
      (n) => n >= 2,
    );
  });

  it('a terminal that starts again empty is read back at its handshake and repaired without waiting for a reconcile', async () => {
    await waitForDevice(svc, z1(), (v) => v.pendingChanges === 0);
    const held = terminal.users().length;
    expect(held).toBeGreaterThan(0);
    terminal.restartEmpty();
    await until(
      'repaired after the handshake',
      () => terminal.users().length,
      (n) => n === held,
    );
    await waitForDevice(svc, z1(), (v) => v.pendingChanges === 0);
    // Read back again (the user list in packs of one row): it matches in full, so nothing is sent but the queries.
    const seen = terminal.received.length;
    await svc.services.deviceSync.reconcileAll();
    await until(
      'queries answered',
      () => terminal.received.slice(seen),
      (l) => l.filter((x) => x.includes('DATA QUERY')).length === 3,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(terminal.received.slice(seen).filter((l) => !l.includes('DATA QUERY'))).toEqual([]);
  });

  it('DELETE of a member removes the user from the terminal', async () => {
    const m = await member('zk-3', ['0005550001'], false);
    await until(
      'enrolled',
      () => userOf(m.pin),
      (u) => !!u,
    );
    expect((await api.del('zk-3')).status).toBe(204);
    await until(
      'removed',
      () => userOf(m.pin),
      (u) => u === undefined,
    );
  });

  it('a terminal that stops polling shows offline after the stale time, and catches up when it polls again', async () => {
    terminal.setOffline(true);
    await new Promise((r) => setTimeout(r, 1_300));
    const m = await member('zk-4', ['0005550002'], false);
    await waitForDevice(svc, z1(), (v) => v.online === false && v.pendingChanges > 0, 8_000);
    expect(userOf(m.pin)).toBeUndefined();
    terminal.setOffline(false);
    await until(
      'caught up',
      () => userOf(m.pin),
      (u) => u?.cardNo === '0005550002',
    );
    await waitForDevice(svc, z1(), (v) => v.online === true && v.pendingChanges === 0);
  });

  it('access logs become door events; a line uploaded twice carries the same event key (the entry log keeps one)', async () => {
    const m = await member('zk-5', ['0005550003'], false);
    await until(
      'enrolled',
      () => userOf(m.pin),
      (u) => !!u,
    );
    const events: DoorEvent[] = [];
    const spy = vi.spyOn(svc.services.deviceSync, 'access').mockImplementation(async (e) => void events.push(e));
    try {
      const at = Date.parse('2026-11-20T03:04:05Z');
      const line = await terminal.emitAccess({ pin: m.pin, cardNo: '0005550003', granted: true, verifyType: 4, at });
      const refused = await terminal.emitAccess({ cardNo: '0009999999', granted: false, verifyType: 4, at: at + 1000 });
      const again = await terminal.uploadLog(line, refused);
      expect(again).toEqual({ status: 200, text: 'OK: 2' });
      expect(events).toHaveLength(4);
      expect(events[0]).toMatchObject({
        deviceId: z1(),
        at,
        granted: true,
        credentialKind: 'card',
        subject: { kind: 'member', id: m.id },
        cardNo: '0005550003',
      });
      expect(events[1]).toMatchObject({ granted: false, subject: null, cardNo: '0009999999' });
      expect(events[2]!.eventKey).toBe(events[0]!.eventKey);
      expect(events[3]!.eventKey).toBe(events[1]!.eventKey);
      expect(new Set(events.map((e) => e.eventKey)).size).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('by hand: the commKey is checked at the handshake; a refusal code is recorded; ids never given are ignored', async () => {
    const z2 = idOf(ids, 'z2');
    const url = (path: string, q = '') => `${svc.url}/iclock/${path}?SN=${SN2}${q}`;
    expect((await fetch(url('cdata', '&options=all&pushver=3.1.2'))).status).toBe(404);
    expect((await fetch(url('cdata', '&options=all&pushver=3.1.2&pushcommkey=wrong'))).status).toBe(404);
    const hs = await fetch(url('cdata', '&options=all&pushver=3.1.2&pushcommkey=k3y-2'));
    expect(hs.status).toBe(200);
    expect(hs.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await hs.text()).split('\n')).toEqual(expect.arrayContaining(['GET OPTION FROM: ZKTEST0002', 'TimeZone=7']));

    const poll = async () => (await (await fetch(url('getrequest'))).text()).split('\n');
    const answer = (body: string) => fetch(url('devicecmd'), { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
    const idsOf = (lines: string[]) => lines.map((l) => /^C:(\d+):/.exec(l)![1]!);
    // What earlier tests queued for this door: applied.
    for (let lines = await poll(); lines[0] !== 'OK'; lines = await poll())
      await answer(
        idsOf(lines)
          .map((id) => `ID=${id}&Return=0&CMD=DATA`)
          .join('\n'),
      );
    await waitForDevice(svc, z2, (v) => v.pendingChanges === 0);

    const m = await member('zk-6', ['0005550006'], false);
    const lines = await until('commands', poll, (l) => l[0] !== 'OK');
    expect(lines[0]).toMatch(/^C:\d+:DATA UPDATE user CardNo=\d+\tPin=\d+\t/);
    const cmds = idsOf(lines);
    // Handed out once: the next poll does not repeat them.
    expect(await poll()).toEqual(['OK']);
    const results = ['ID=999999&Return=0&CMD=DATA', ...cmds.map((id, i) => `ID=${id}&Return=${i === 0 ? -1001 : 0}&CMD=DATA`)];
    const res = await answer(results.join('\n'));
    expect(res.status).toBe(200);
    const view = await waitForDevice(svc, z2, (v) => v.pendingChanges === 0 && v.problems.some((p: any) => p.subject.id === m.id));
    expect(view.problems.find((p: any) => p.subject.id === m.id).message).toMatch(/Return=-1001: capacity/);
    expect(view.enrollments.find((e: any) => e.memberId === m.id)).toBeUndefined();
    expect(view.connection).toMatchObject({ kind: 'zkteco-push', serialNumber: SN2, hasSecret: true });
  });

  it("a visitor's invite window is set on the terminal as StartTime/EndTime in Bangkok time; a cancel withdraws it", async () => {
    const D = await dayAhead(svc, 'Asia/Bangkok', 2);
    await setClock(svc, at(D, '06:00'));
    const res = await svc.ops('POST', '/ops/v1/visitors/invites', {
      projectId: idOf(ids, 'tower'),
      hostUserId: idOf(ids, 'alice'),
      visitorName: 'Zk Visitor',
      startDateTime: at(D, '09:00'),
      endDateTime: at(D, '12:30'),
    });
    expect(res.status, res.text).toBe(201);
    const inviteId: string = res.body.data._id;
    const pin = String(await svc.services.deviceSync['deps'].repo.userNumber({ kind: 'visitor', id: inviteId }));
    const u = await until(
      'visitor held',
      () => userOf(pin),
      (u) => !!u?.authorized,
    );
    expect(u!.startTime).toBe(((D.year - 2000) * 12 * 31 + (D.month - 1) * 31 + (D.day - 1)) * 86400 + 9 * 3600);
    expect(decodeZkTime(u!.startTime, 'Asia/Bangkok')).toBe(Date.parse(at(D, '09:00')));
    expect(decodeZkTime(u!.endTime, 'Asia/Bangkok')).toBe(Date.parse(at(D, '12:30')));
    expect((await svc.ops('POST', `/ops/v1/visitors/invites/${inviteId}/cancel`)).status).toBe(200);
    await until(
      'visitor withdrawn',
      () => userOf(pin),
      (u) => u === undefined,
    );
  });
});
