/**
 * Connected calendars' routes: POST /calendar/webhooks/{connectionId} (public, for
 * the providers: Graph's validation handshake and change notifications, Google's
 * channel messages; each authenticated by the provider's own mechanism) and
 * GET /ops/v1/calendar-sync/connections/{id} (the connection's state per room).
 */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { CalendarConnectionView } from '../../contract/calendar-sync.js';
import type { ConnectedSync } from './connected-sync.js';

/** Largest notification accepted (Graph batches are a few kilobytes per change). */
const NOTIFICATION_LIMIT_BYTES = 1024 * 1024;

const ConnectionParams = Type.Object({ connectionId: Type.String({ description: "The connection's id (GET /ops/v1/site lists it)" }) });
const ViewParams = Type.Object({ id: Type.String({ description: "The connection's id or key" }) });
const WebhookQuery = Type.Object({
  validationToken: Type.Optional(Type.String({ description: "Graph's validation handshake: echoed back as text/plain" })),
});

export interface ConnectedRouteDeps {
  connected: ConnectedSync;
}

/** The public notification route, in its own scope (bodies kept as bytes). */
export async function calendarWebhookRoutes(app: App, deps: ConnectedRouteDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: NOTIFICATION_LIMIT_BYTES }, (_req, body, done) => done(null, body));
  app.post(
    '/calendar/webhooks/:connectionId',
    {
      bodyLimit: NOTIFICATION_LIMIT_BYTES,
      schema: {
        tags: ['calendar-sync'],
        summary: "A calendar provider's notification (Microsoft Graph or Google Calendar) for a connection's room calendars",
        description:
          "Microsoft Graph: with `validationToken` the token is echoed as text/plain (the subscription handshake); otherwise the body's " +
          'notifications are checked against the clientState of their subscription and the room is read again (202). Google: the ' +
          'X-Goog-Channel-* headers are checked against the channel and its token (200). A notification that matches no subscription ' +
          'or channel of the connection is refused with 403 and changes nothing.',
        security: [],
        params: ConnectionParams,
        querystring: WebhookQuery,
        response: { 200: Type.String(), 202: Type.Null(), 400: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const answer = await deps.connected.receive(req.params.connectionId, { query: req.query, headers: req.headers, body });
      reply.code(answer.status as 200 | 202);
      if (answer.text !== undefined) return reply.type('text/plain; charset=utf-8').send(answer.text);
      return reply.send(answer.status === 200 ? '' : null);
    },
  );
}

export async function opsConnectionRoutes(app: App, deps: ConnectedRouteDeps): Promise<void> {
  app.get(
    '/ops/v1/calendar-sync/connections/:id',
    {
      schema: {
        tags: ['ops'],
        summary: "A calendar connection's rooms: subscription or channel, last sync, cursor age, last error, changes in and out",
        security: [{ opsToken: [] }],
        params: ViewParams,
        response: { 200: Envelope(CalendarConnectionView), 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await deps.connected.view(req.params.id)),
  );
}
