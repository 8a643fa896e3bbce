/**
 * The MQTT device transport end to end: the service (DEVICE_TRANSPORT=mqtt) and
 * the reference gateway talk through the real Mosquitto broker on 127.0.0.1:1883,
 * each test on its own topic prefix. Enrollment in each device's card format with
 * the face carried to the gateway; a gateway that goes away and comes back; a
 * device that lost its memory; a restart of the service mid-queue.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { deviceSite, deviceView, face, settled, waitForDevice } from '../support/devices.js';
import { createTestDatabase } from '../support/test-database.js';
import { GatewaySimulator } from '../../tools/gateway-sim/gateway-sim.js';
import { decodeCard } from '../../src/modules/members/rules/card-codec.js';

const MQTT_URL = 'mqtt://127.0.0.1:1883';
const CONSENT = '2026-01-01T00:00:00Z';
const uidOf = (cardNo: string) => {
  const d = decodeCard(cardNo);
  if (!d.ok) throw new Error(d.reason);
  return d.uid;
};

function mqttEnv(prefix: string): Record<string, string> {
  return { DEVICE_TRANSPORT: 'mqtt', MQTT_URL, MQTT_TOPIC_PREFIX: prefix, DEVICE_ACK_TIMEOUT_MS: '1500' };
}

async function until<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const held = (gw: GatewaySimulator, deviceId: string, memberId: string) => gw.memory(deviceId).holds[`member:${memberId}`];

describe('mqtt transport with the reference gateway', () => {
  const prefix = `test/${randomUUID()}`;
  let svc: TestService;
  let gw: GatewaySimulator;
  let ids: SiteIds;
  let api: PartnerClient;
  const dev = (key: string) => idOf(ids, key);

  beforeAll(async () => {
    gw = new GatewaySimulator({ url: MQTT_URL, topicPrefix: prefix });
    await gw.start();
    svc = await startTestService({ env: mqttEnv(prefix) });
    ids = await applySite(svc, deviceSite());
    api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
  });

  afterAll(async () => {
    await svc?.close();
    await gw?.stop();
  });

  it("enrolls a member on every device of the app's groups, cards in each device's format, the face carried to face readers", async () => {
    const m = await api.putOk('mq-1', { firstName: 'Mq', lastName: 'One' });
    const res = await api.credentials('mq-1', { cards: [{ cardNo: '0001234567' }], face: face(3), faceConsentAt: CONSENT });
    expect(res.status, res.text).toBe(200);
    for (const key of ['t1', 't2', 'g1']) {
      const view = await waitForDevice(
        svc,
        dev(key),
        (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId && e.cardNos.length === 1),
        10_000,
      );
      expect(view.transport).toBe('mqtt');
      expect(view.online).toBe(true);
    }
    const uid = uidOf('0001234567');
    expect(held(gw, dev('t1'), m.memberId)!.cards).toEqual([{ uid, cardNo: '0001234567', format: 'decimal-reversed' }]);
    expect(held(gw, dev('t2'), m.memberId)!.cards).toEqual([{ uid, cardNo: uid, format: 'hex' }]);
    expect(held(gw, dev('t1'), m.memberId)!.faceSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(held(gw, dev('t2'), m.memberId)!.faceSha256).toBeNull();
    for (const key of ['s1', 'a1']) expect(gw.memory(dev(key)).holds[`member:${m.memberId}`]).toBeUndefined();
  });

  it('the sandbox switches are not for gateway devices', async () => {
    const res = await svc.ops('POST', `/ops/v1/devices/${dev('t1')}/offline`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('KS006');
  });

  it('a gateway that goes away gets the changes when it comes back, in order', async () => {
    const m = await api.putOk('mq-2', { firstName: 'Mq', lastName: 'Two' });
    expect((await api.credentials('mq-2', { cards: [{ cardNo: '0000000010' }] })).status).toBe(200);
    await waitForDevice(svc, dev('g1'), (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId));
    await gw.crash();
    for (const cardNo of ['0000000011', '0000000012']) expect((await api.credentials('mq-2', { cards: [{ cardNo }] })).status).toBe(200);
    const away = await waitForDevice(svc, dev('g1'), (v) => v.online === false && v.pendingChanges === 1, 10_000);
    expect(away.lastError).toMatch(/offline/);
    expect(held(gw, dev('g1'), m.memberId)!.cards.map((c) => c.cardNo)).toEqual(['0000000010']);

    await gw.start();
    for (const key of ['t1', 't2', 'g1']) {
      await waitForDevice(
        svc,
        dev(key),
        (v) => settled(v) && v.online && v.enrollments.some((e: any) => e.memberId === m.memberId && e.cardNos[0] === '0000000012'),
        15_000,
      );
    }
    expect(held(gw, dev('g1'), m.memberId)!.cards.map((c) => c.cardNo)).toEqual(['0000000012']);
  });

  it('a device that lost its memory is given everything again after its inventory', async () => {
    const m = await api.putOk('mq-3', { firstName: 'Mq', lastName: 'Three' });
    await api.credentials('mq-3', { cards: [{ cardNo: '0000000021' }] });
    await waitForDevice(
      svc,
      dev('t1'),
      (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId && e.cardNos.length === 1),
    );
    gw.clearMemory(dev('t1'));
    await gw.publishInventory(dev('t1'));
    await until('t1 to hold mq-3 again', () => held(gw, dev('t1'), m.memberId)?.cards.length === 1);
    const view = await waitForDevice(svc, dev('t1'), settled);
    expect(view.enrollments.find((e: any) => e.memberId === m.memberId).cardNos).toEqual(['0000000021']);
  });
});

describe('a gateway that lost its memory', () => {
  const prefix = `test/${randomUUID()}`;
  let svc: TestService;
  let gw: GatewaySimulator;
  let ids: SiteIds;
  let api: PartnerClient;
  const dev = (key: string) => idOf(ids, key);
  const holdsCard = (g: GatewaySimulator, key: string, memberId: string, cardNo: string) => {
    const h = g.memory(dev(key)).holds[`member:${memberId}`];
    return !!h && h.cards.some((c) => c.cardNo === cardNo || c.uid === uidOf(cardNo));
  };

  beforeAll(async () => {
    gw = new GatewaySimulator({ url: MQTT_URL, topicPrefix: prefix });
    await gw.start();
    // Reconcile passes only when the test runs one.
    svc = await startTestService({ env: { ...mqttEnv(prefix), DEVICE_RECONCILE_SECONDS: '3600' } });
    ids = await applySite(svc, deviceSite());
    api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
  });

  afterAll(async () => {
    await svc?.close();
    await gw?.stop();
  });

  it('restarted without its state (the gateway:sim default), it is asked what its devices hold and given everything again', async () => {
    const m = await api.putOk('mq-boot', { firstName: 'Mq', lastName: 'Boot' });
    expect((await api.credentials('mq-boot', { cards: [{ cardNo: '0000000041' }], face: face(4), faceConsentAt: CONSENT })).status).toBe(
      200,
    );
    for (const key of ['t1', 't2', 'g1']) await until(`${key} to hold mq-boot`, () => holdsCard(gw, key, m.memberId, '0000000041'));
    for (const key of ['t1', 't2', 'g1']) await waitForDevice(svc, dev(key), settled);

    // The process is killed and started again with no state file: every device is empty.
    await gw.crash();
    gw = new GatewaySimulator({ url: MQTT_URL, topicPrefix: prefix });
    await gw.start();

    for (const key of ['t1', 't2', 'g1'])
      await until(`${key} to hold mq-boot again`, () => holdsCard(gw, key, m.memberId, '0000000041'), 15_000);
    expect(gw.memory(dev('t1')).holds[`member:${m.memberId}`]!.faceSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(gw.memory(dev('t2')).holds[`member:${m.memberId}`]!.faceSha256).toBeNull();
    for (const key of ['t1', 't2', 'g1']) {
      const view = await waitForDevice(
        svc,
        dev(key),
        (v) => settled(v) && v.online && v.enrollments.some((e: any) => e.memberId === m.memberId),
        10_000,
      );
      expect(view.enrollments.find((e: any) => e.memberId === m.memberId).cardNos).toEqual(['0000000041']);
    }
    // Nothing on the devices that are not the member's.
    for (const key of ['s1', 'a1']) expect(gw.memory(dev(key)).holds[`member:${m.memberId}`]).toBeUndefined();
  });

  it('a reconcile pass asks the devices, not its own records: an entry a device lost comes back', async () => {
    const m = await api.putOk('mq-lost', { firstName: 'Mq', lastName: 'Lost' });
    expect((await api.credentials('mq-lost', { cards: [{ cardNo: '0000000051' }] })).status).toBe(200);
    await until('g1 to hold mq-lost', () => holdsCard(gw, 'g1', m.memberId, '0000000051'));
    await waitForDevice(svc, dev('g1'), (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId));

    // The device drops the entry; nothing tells the service (no inventory is published).
    gw.forget(dev('g1'), { kind: 'member', id: m.memberId });
    expect(holdsCard(gw, 'g1', m.memberId, '0000000051')).toBe(false);

    await svc.services.deviceSync.reconcileAll();
    await until('g1 to hold mq-lost again', () => holdsCard(gw, 'g1', m.memberId, '0000000051'), 10_000);
    const view = await waitForDevice(svc, dev('g1'), (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId));
    expect(view.enrollments.find((e: any) => e.memberId === m.memberId).cardNos).toEqual(['0000000051']);
  });
});

describe('a restart of the service mid-queue', () => {
  it('loses nothing: the next run delivers what the first could not', async () => {
    const prefix = `test/${randomUUID()}`;
    const gw = new GatewaySimulator({ url: MQTT_URL, topicPrefix: prefix });
    await gw.start();
    const database = await createTestDatabase();
    const first = await startTestService({ database, keepDatabase: true, env: mqttEnv(prefix) });
    let second: TestService | undefined;
    try {
      const ids = await applySite(first, deviceSite());
      const t1 = idOf(ids, 't1');
      const token = (await appToken(first, PARTNER_APP_ID, PARTNER_SECRET)).access_token;
      const api = new PartnerClient(first, token);
      const m = await api.putOk('mq-r', { firstName: 'Re', lastName: 'Start' });
      expect((await api.credentials('mq-r', { cards: [{ cardNo: '0000000030' }] })).status).toBe(200);
      await waitForDevice(first, t1, (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId));
      await gw.setDeviceOnline(t1, false);
      expect((await api.credentials('mq-r', { cards: [{ cardNo: '0000000031' }] })).status).toBe(200);
      await waitForDevice(first, t1, (v) => v.pendingChanges === 1 && v.online === false, 10_000);
      await first.close();

      await gw.setDeviceOnline(t1, true);
      second = await startTestService({ database, env: mqttEnv(prefix) });
      expect((await deviceView(second, t1)).pendingChanges).toBe(1);
      const view = await waitForDevice(
        second,
        t1,
        (v) => settled(v) && v.enrollments.some((e: any) => e.memberId === m.memberId && e.cardNos[0] === '0000000031'),
        15_000,
      );
      expect(view.online).toBe(true);
      expect(held(gw, t1, m.memberId)!.cards.map((c) => c.cardNo)).toEqual(['0000000031']);
    } finally {
      await second?.close();
      await gw.stop();
    }
  });
});
