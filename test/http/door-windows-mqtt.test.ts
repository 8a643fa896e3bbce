/**
 * Door access in a booking's window over the MQTT transport with the reference gateway (the real
 * Mosquitto broker on 127.0.0.1:1883, a topic prefix of its own): the scenarios of
 * test/support/door-windows.ts, checked on what the simulated device itself holds as well.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { doorWindowScenarios } from '../support/door-windows.js';
import { GatewaySimulator } from '../../tools/gateway-sim/gateway-sim.js';

const MQTT_URL = 'mqtt://127.0.0.1:1883';

describe('door windows (mqtt transport, gateway simulator)', () => {
  const prefix = `test/${randomUUID()}`;
  let svc: TestService;
  let gw: GatewaySimulator;

  beforeAll(async () => {
    gw = new GatewaySimulator({ url: MQTT_URL, topicPrefix: prefix });
    await gw.start();
    svc = await startTestService({
      env: { DEVICE_TRANSPORT: 'mqtt', MQTT_URL, MQTT_TOPIC_PREFIX: prefix, DEVICE_ACK_TIMEOUT_MS: '1500' },
    });
  });

  afterAll(async () => {
    await svc?.close();
    await gw?.stop();
  });

  doorWindowScenarios(() => ({
    svc,
    timeoutMs: 15_000,
    setOnline: (deviceId, online) => gw.setDeviceOnline(deviceId, online),
    heldOnDevice: (deviceId, memberId) => {
      const held = gw.memory(deviceId).holds[`member:${memberId}`];
      return held && { validFrom: held.validFrom, validUntil: held.validUntil };
    },
  }));
});
