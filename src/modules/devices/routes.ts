/**
 * Ops device routes (operator-api.md "Access devices"): the device view, the sandbox reachability switch and
 * badge, and the entry log.
 */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { DeviceView } from '../../contract/devices.js';
import { ConsoleDevice } from '../../contract/ops-console.js';
import { AccessEntriesQuery, AccessEntry, BadgeBody } from '../../contract/access-entries.js';
import type { DeviceService } from './device-service.js';
import type { EntryLog } from './entry-log.js';

const DeviceParams = Type.Object({ deviceId: Type.String({ description: 'The device _id (from the apply result)' }) });
const security = [{ opsToken: [] }];

export async function opsDeviceRoutes(app: App, services: { devices: DeviceService; entries: EntryLog }): Promise<void> {
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

  app.post(
    '/ops/v1/devices/:deviceId/badge',
    {
      schema: {
        tags: ['ops'],
        summary: 'Sandbox transport: present a card or a member at the device; the entry it makes',
        description:
          'Exactly one of cardNo or memberId. The device grants what it holds (an enrollment with that card, or of that member, ' +
          'whose validity window contains now); the event goes into the entry log (a repeated eventId records nothing again) and ' +
          'a granted member at a room or desk door is judged against its bookings at once. 404 outside the sandbox.',
        security,
        params: DeviceParams,
        body: BadgeBody,
        response: { 200: Envelope(AccessEntry), 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope },
      },
    },
    async (req) => ok(await services.entries.badge(req.params.deviceId, req.body)),
  );

  app.get(
    '/ops/v1/access-entries',
    {
      schema: {
        tags: ['ops'],
        summary: 'The entry log of a project: every access event from the doors and what it did, newest first',
        description: 'Newest (device time) first; `before` (the last _id of a page) gives the next, older page.',
        security,
        querystring: AccessEntriesQuery,
        response: { 200: Envelope(Type.Array(AccessEntry)), 400: ErrorEnvelope, 401: ErrorEnvelope },
      },
    },
    async (req) => ok(await services.entries.list(req.query)),
  );
}
