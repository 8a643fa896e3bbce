/** Ops device routes (operator-api.md "Access devices"): the device view and the sandbox reachability switch. */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { DeviceView } from '../../contract/devices.js';
import { ConsoleDevice } from '../../contract/ops-console.js';
import type { DeviceService } from './device-service.js';

const DeviceParams = Type.Object({ deviceId: Type.String({ description: 'The device _id (from the apply result)' }) });
const security = [{ opsToken: [] }];

export async function opsDeviceRoutes(app: App, services: { devices: DeviceService }): Promise<void> {
  app.get(
    '/ops/v1/devices',
    {
      schema: {
        tags: ['ops'],
        summary: 'Every device with its sync state and pending changes',
        security,
        response: { 200: Envelope(Type.Array(ConsoleDevice)), 401: ErrorEnvelope },
      },
    },
    async () => ok(await services.devices.list()),
  );

  app.get(
    '/ops/v1/devices/:deviceId',
    {
      schema: {
        tags: ['ops'],
        summary: 'What a device holds (as it acknowledged it) and its sync state',
        security,
        params: DeviceParams,
        response: { 200: Envelope(DeviceView), 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await services.devices.view(req.params.deviceId)),
  );

  for (const [path, online] of [
    ['offline', false],
    ['online', true],
  ] as const) {
    app.post(
      `/ops/v1/devices/:deviceId/${path}`,
      {
        schema: {
          tags: ['ops'],
          summary: `Sandbox transport: make the device ${online ? 'reachable again (it catches up at once)' : 'unreachable'}`,
          security,
          params: DeviceParams,
          response: { 200: Envelope(DeviceView), 404: ErrorEnvelope, 409: ErrorEnvelope },
        },
      },
      async (req) => ok(await services.devices.setOnline(req.params.deviceId, online)),
    );
  }
}
