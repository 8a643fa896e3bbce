/**
 * Door events from the building gateway (issue 28 §3): `{prefix}/devices/{deviceId}/events` goes into the
 * entry log like any transport's; a resent event (same eventId) is recorded once; the card read names
 * its member; a malformed event is ignored. Real Mosquitto on 127.0.0.1:1883 and the reference gateway.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { doorSite } from '../support/doors.js';
import { PARTNER_APP_ID, PARTNER_SECRET, PartnerClient } from '../support/partner-members.js';
import { GatewaySimulator } from '../../tools/gateway-sim/gateway-sim.js';

const MQTT_URL = 'mqtt://127.0.0.1:1883';
const prefix = `test/${randomUUID()}`;
let svc: TestService;
let gw: GatewaySimulator;
let ids: SiteIds;

async function entriesOf(deviceId: string, n: number): Promise<any[]> {
  const end = Date.now() + 10_000;
  for (;;) {
    const res = await svc.ops('GET', `/ops/v1/access-entries?project=${idOf(ids, 'tower')}&deviceId=${deviceId}`);
    expect(res.status, res.text).toBe(200);
    const list = res.body.data as any[];
    if (list.length >= n && list.every((e) => e.outcome !== 'pending')) return list;
    if (Date.now() > end) throw new Error(`waited for ${n} entries: ${res.text}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  gw = new GatewaySimulator({ url: MQTT_URL, topicPrefix: prefix });
  await gw.start();
  svc = await startTestService({ env: { DEVICE_TRANSPORT: 'mqtt', MQTT_URL, MQTT_TOPIC_PREFIX: prefix, DEVICE_ACK_TIMEOUT_MS: '1500' } });
  ids = await applySite(svc, doorSite());
});

afterAll(async () => {
  await svc?.close();
  await gw?.stop();
});

describe('gateway access events', () => {
  it('records each event once, names the card holder, and judges a member at a door with no booking a walk-in', async () => {
    const api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
    const m = await api.putOk('mq-door', { firstName: 'Mq', lastName: 'Door' });
    expect((await api.credentials('mq-door', { cards: [{ cardNo: '0002345678' }] })).status).toBe(200);
    const d1 = idOf(ids, 'd1');
    const at = new Date(Date.now() - 5_000);
    await gw.publishAccessEvent(d1, { granted: true, cardNo: '0002345678', eventId: 'gw-1', at });
    await gw.publishAccessEvent(d1, { granted: true, cardNo: '0002345678', eventId: 'gw-1', at });
    await gw.publishAccessEvent(d1, { granted: false, cardNo: '0009876543', eventId: 'gw-2' });
    // Malformed: ignored (no entry).
    await gw.publishAccessEvent(d1, { granted: true, credentialKind: 'telepathy', eventId: 'gw-3' });
    const list = await entriesOf(d1, 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(await entriesOf(d1, 2)).toHaveLength(2);
    const granted = list.find((e) => e.granted);
    expect(granted).toMatchObject({
      subject: { kind: 'member', id: m.memberId },
      credentialKind: 'card',
      assetKind: 'room',
      assetId: idOf(ids, 'board'),
      deviceAt: at.toISOString(),
      outcome: 'walk-in',
    });
    expect(list.find((e) => !e.granted)).toMatchObject({ subject: { kind: 'unknown', id: null }, outcome: 'refused' });
  });
});
