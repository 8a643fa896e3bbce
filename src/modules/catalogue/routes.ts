/** GET /meeting-rooms, /meeting-rooms/{id}, /desks, /desks/{id}. */
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { ok, okJsonArray, okPage } from '../../platform/http/envelope.js';
import { normalizeQuery } from '../../platform/http/query.js';
import { Envelope, ErrorEnvelope, PagedEnvelope } from '../../contract/envelope.js';
import { IdParams } from '../../contract/common.js';
import {
  CalendarQuery,
  DeskQuery,
  DeskSchema,
  DeskWithCalendar,
  MeetingRoomList,
  MeetingRoomWithCalendar,
  RoomQuery,
} from '../../contract/catalogue.js';

const errorResponses = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };

export async function catalogueRoutes(app: App, services: Services): Promise<void> {
  const catalogue = services.catalogue;

  app.get('/meeting-rooms', {
    preValidation: normalizeQuery(['ids', 'status'], ['startDateTime', 'endDateTime']),
    schema: {
      tags: ['meeting rooms'],
      summary: 'Search meeting rooms, optionally free for a window (unpaginated)',
      querystring: RoomQuery,
      response: { 200: Envelope(MeetingRoomList), ...errorResponses },
    },
  }, async (req, reply) => {
    // The rooms come pre-serialized (see room-snapshots.ts); the envelope is added around them.
    const rooms = await catalogue.searchRooms(req.principal, req.query);
    return reply.type('application/json; charset=utf-8').serializer((s) => s as string).send(okJsonArray(rooms) as never);
  });

  app.get('/meeting-rooms/:id', {
    preValidation: normalizeQuery([], ['from', 'to']),
    schema: {
      tags: ['meeting rooms'],
      summary: 'One meeting room with its booking calendar',
      params: IdParams,
      querystring: CalendarQuery,
      response: { 200: Envelope(MeetingRoomWithCalendar), ...errorResponses },
    },
  }, async (req) => ok(await catalogue.getRoom(req.principal, req.params.id, req.query)));

  app.get('/desks', {
    preValidation: normalizeQuery(['ids', 'statuses'], ['startDateTime', 'endDateTime']),
    schema: {
      tags: ['desks'],
      summary: 'List desks, optionally only those free for a window (paginated)',
      querystring: DeskQuery,
      response: { 200: PagedEnvelope(DeskSchema), ...errorResponses },
    },
  }, async (req) => {
    const page = await catalogue.searchDesks(req.principal, req.query);
    return okPage(page.items, page.meta);
  });

  app.get('/desks/:id', {
    preValidation: normalizeQuery([], ['from', 'to']),
    schema: {
      tags: ['desks'],
      summary: 'One desk with its booking calendar',
      params: IdParams,
      querystring: CalendarQuery,
      response: { 200: Envelope(DeskWithCalendar), ...errorResponses },
    },
  }, async (req) => ok(await catalogue.getDesk(req.principal, req.params.id, req.query)));
}
