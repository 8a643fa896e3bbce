/**
 * Room feed routes (docs/calendar-sync.md "Room feeds").
 *
 * Ops surface (ops token): GET /ops/v1/calendar-sync/rooms/{roomId}/feed shows the
 * room's feed address (creating it on the first read), POST …/feed/rotate replaces
 * it, DELETE …/feed revokes it. Unknown rooms answer 404 KS005.
 *
 * Public (no auth; the unguessable token in the address is the capability):
 * GET /calendar-feeds/{token}.ics answers the feed as text/calendar, or 404 KS005.
 *
 * This file imports neither fastify nor src/services.ts: it takes the `App` type of
 * the HTTP kit and only the service it needs (index.ts's `register` calls it).
 */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import { ok } from '../../platform/http/envelope.js';
import { errors } from '../../platform/errors.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { RoomFeed } from '../../contract/calendar-sync.js';
import type { RoomFeedService } from './feed-service.js';

/** What these routes use: the room feeds service. */
export interface FeedRouteDeps {
  roomFeeds: RoomFeedService;
}

const RoomParams = Type.Object({ roomId: Type.String({ maxLength: 512, description: "The room's _id (site document data.ids)" }) });
const FeedParams = Type.Object({ token: Type.String({ description: 'The feed token followed by .ics' }) });
const security = [{ opsToken: [] }];
const FEED_SUFFIX = '.ics';

export async function opsFeedRoutes(app: App, deps: FeedRouteDeps): Promise<void> {
  const feeds = deps.roomFeeds;

  app.get(
    '/ops/v1/calendar-sync/rooms/:roomId/feed',
    {
      schema: {
        tags: ['calendar-sync'],
        security,
        summary: "The secret address of a room's iCalendar feed (created on the first read)",
        description:
          "Anyone holding the address can read the room's bookings (times, titles, statuses; no PINs or emails). Unknown room: 404 KS005.",
        params: RoomParams,
        response: { 200: Envelope(RoomFeed), 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await feeds.feedOf(req.params.roomId)),
  );

  app.post(
    '/ops/v1/calendar-sync/rooms/:roomId/feed/rotate',
    {
      schema: {
        tags: ['calendar-sync'],
        security,
        summary: "A new address for the room's feed; the old address answers 404 at once",
        params: RoomParams,
        response: { 200: Envelope(RoomFeed), 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await feeds.rotate(req.params.roomId)),
  );

  app.delete(
    '/ops/v1/calendar-sync/rooms/:roomId/feed',
    {
      schema: {
        tags: ['calendar-sync'],
        security,
        summary: "Revoke the room's feed: its address answers 404; the next GET makes a new one",
        params: RoomParams,
        response: { 204: Type.Null({ description: 'Revoked, no body' }), 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      await feeds.revoke(req.params.roomId);
      return reply.status(204).send(null);
    },
  );
}

/** The published feeds; public, hidden from the OpenAPI document like the payment page. */
export async function publicFeedRoutes(app: App, deps: FeedRouteDeps): Promise<void> {
  const feeds = deps.roomFeeds;

  app.get('/calendar-feeds/:token', { schema: { hide: true, params: FeedParams } }, async (req, reply) => {
    const param = req.params.token;
    if (!param.endsWith(FEED_SUFFIX)) throw errors.notFound('No such calendar feed');
    const text = await feeds.render(param.slice(0, -FEED_SUFFIX.length));
    return reply
      .status(200)
      .headers({
        'content-type': 'text/calendar; charset=utf-8',
        'cache-control': 'private, max-age=60',
        'referrer-policy': 'no-referrer',
        'x-robots-tag': 'noindex',
      })
      .send(text);
  });
}
