/**
 * Where HikVision terminals post their event notifications: POST /devices/isapi/{deviceId}/events/{token}
 * (public: the device cannot send a bearer token; the path token is the device's own secret, compared
 * in constant time). Bodies are kept as bytes (JSON, or multipart with pictures). Access results are
 * handed on as door events; the answer is 200 once they are recorded (the device resends otherwise).
 * An unknown device and a wrong token get the same 404.
 */
import { Type } from 'typebox';
import type { App } from '../../../platform/http/types.js';
import { errors } from '../../../platform/errors.js';
import { ErrorEnvelope } from '../../../contract/envelope.js';
import type { DoorEvent } from '../transport.js';
import { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream } from '@fastify/busboy';
import { parseNotification } from './isapi-events.js';

/** Largest notification accepted (an alert with a few pictures). */
const NOTIFICATION_LIMIT_BYTES = 2 * 1024 * 1024;

export interface IsapiRouteDeps {
  /** Whether `token` is the device's event token (constant time). */
  verify(deviceId: string, token: string): boolean;
  /** The ISAPI device's time zone, or null when no such ISAPI device exists. */
  device(deviceId: string): Promise<{ timeZone: string } | null>;
  onEvent(event: DoorEvent): Promise<void>;
  log?: (message: string, deviceId: string) => void;
}

const Params = Type.Object({
  deviceId: Type.String({ description: "The device's id (GET /ops/v1/devices lists it)" }),
  token: Type.String({ description: "The device's event token (part of the URL the service registers on the device)" }),
});

const Received = Type.Object(
  { received: Type.Integer({ minimum: 0, description: 'Access events taken from the notification' }) },
  { additionalProperties: false },
);

async function routes(app: App, deps: IsapiRouteDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: NOTIFICATION_LIMIT_BYTES }, (_req, body, done) => done(null, body));
  app.post(
    '/devices/isapi/:deviceId/events/:token',
    {
      bodyLimit: NOTIFICATION_LIMIT_BYTES,
      schema: {
        tags: ['devices'],
        summary: "A HikVision terminal's event notification (ISAPI HTTP host notification)",
        description:
          'The device posts EventNotificationAlert bodies (JSON, or multipart/form-data with a JSON part and pictures, which are ignored). ' +
          'Access results (AccessControllerEvent) go into the entry log; anything else is acknowledged and dropped. ' +
          'An unknown device or a wrong token is answered 404.',
        security: [],
        params: Params,
        response: { 200: Received, 404: ErrorEnvelope, 503: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const { deviceId, token } = req.params;
      const device = deps.verify(deviceId, token) ? await deps.device(deviceId) : null;
      if (!device) {
        deps.log?.('ISAPI notification for an unknown device or with a wrong token', deviceId);
        throw errors.notFound('Not found');
      }
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const events = parseNotification(deviceId, await jsonTexts(body, req.headers['content-type']), device.timeZone);
      try {
        for (const e of events) await deps.onEvent(e);
      } catch {
        throw errors.upstreamUnavailable(); // the device sends it again
      }
      return reply.code(200).send({ received: events.length });
    },
  );
}

const MAX_JSON_PART = 256 * 1024;

/** The JSON texts of a notification body: the body itself, or a multipart body's JSON parts (pictures skipped). */
export function jsonTexts(body: Buffer, contentType: string | undefined): Promise<string[]> {
  if (!contentType || !/multipart\/form-data/i.test(contentType)) return Promise.resolve([body.toString('utf8')]);
  return new Promise((resolve) => {
    const texts: string[] = [];
    let bb;
    try {
      bb = new Busboy({ headers: { 'content-type': contentType }, limits: { fieldSize: MAX_JSON_PART } });
    } catch {
      resolve([]);
      return;
    }
    bb.on('field', (_name: string, value: string) => void texts.push(value));
    bb.on('file', (_name: string, stream: BusboyFileStream, _filename: string, _enc: string, mime: string) => {
      if (!/json/i.test(mime)) return void stream.resume(); // a picture: ignored
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => texts.push(Buffer.concat(chunks).toString('utf8')));
    });
    bb.on('finish', () => resolve(texts));
    bb.on('error', () => resolve(texts));
    Readable.from([body]).pipe(bb);
  });
}

/** Registers the notification route in its own scope (bodies kept as bytes). */
export async function isapiRoutes(app: App, deps: IsapiRouteDeps): Promise<void> {
  await app.register(async (scope) => routes(scope, deps));
}
