/**
 * Door access in a booking's window on the sandbox transport (issue 28, section 2): see
 * test/support/door-windows.ts for the scenarios; the sandbox switch makes a device unreachable.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { doorWindowScenarios } from '../support/door-windows.js';

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
