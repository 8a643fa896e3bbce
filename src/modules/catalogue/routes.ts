/** GET /meeting-rooms, /meeting-rooms/{id}, /desks, /desks/{id}. */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { Envelope, ErrorEnvelope, PagedEnvelope, ok, okJsonArray, okPage } from '../../platform/http/envelope.js';
import { normalizeQuery } from '../../platform/http/query.js';
import { DateTime, IdParams, ObjectId, Pagination } from '../../contract/common.js';
import { DeskSchema, DeskWithCalendar, MeetingRoomSchema, MeetingRoomWithCalendar } from '../../contract/catalogue.js';

const errorResponses = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };

const RoomQuery = Type.Object({
  projectId: ObjectId('Project to search (required)'),
  zoneId: Type.Optional(ObjectId()),
  floorId: Type.Optional(ObjectId()),
  locationId: Type.Optional(ObjectId('Matches rooms whose zone or floor has this id')),
  ids: Type.Optional(Type.Array(ObjectId(), { description: 'Only these rooms; repeat the key or use a comma list' })),
  name: Type.Optional(Type.String({ description: 'Case-insensitive part of the name' })),
  status: Type.Optional(Type.Array(Type.Union([Type.Literal('active'), Type.Literal('inactive')]))),
  type: Type.Optional(Type.Union([Type.Literal('normal'), Type.Literal('bedroom')])),
  minCapacity: Type.Optional(Type.Integer({ minimum: 1 })),
  startDateTime: Type.Optional(DateTime('Window start; needs endDateTime')),
  endDateTime: Type.Optional(DateTime('Window end; needs startDateTime')),
});

const DeskStatus = Type.Union(['active', 'inactive', 'in-used', 'reserved', 'suspended'].map((s) => Type.Literal(s)));

const DeskQuery = Type.Object({
  projectId: Type.Optional(ObjectId()),
  brandId: Type.Optional(ObjectId()),
  zoneId: Type.Optional(ObjectId()),
  floorId: Type.Optional(ObjectId()),
  locationId: Type.Optional(ObjectId('Matches desks whose zone or floor has this id')),
  ids: Type.Optional(Type.Array(ObjectId())),
  name: Type.Optional(Type.String({ description: 'Case-insensitive part of the name' })),
  email: Type.Optional(Type.String()),
  status: Type.Optional(DeskStatus),
  statuses: Type.Optional(Type.Array(DeskStatus)),
  startDateTime: Type.Optional(DateTime('Window start; needs exactly one of endDateTime or timePeriod')),
  endDateTime: Type.Optional(DateTime()),
  timePeriod: Type.Optional(
    Type.Union([Type.Literal('morning'), Type.Literal('afternoon'), Type.Literal('allDay')], {
      description: 'morning = opening to 12:00, afternoon = 12:00 to closing, allDay = opening to closing, on the start\'s local date',
    }),
  ),
  ...Pagination,
});

const CalendarQuery = Type.Object({
  from: Type.Optional(DateTime('Calendar start (default: now)')),
  to: Type.Optional(DateTime('Calendar end (default: 7 days after from; at most 62 days)')),
});

export async function catalogueRoutes(app: App, services: Services): Promise<void> {
  const catalogue = services.catalogue;

  app.get('/meeting-rooms', {
    preValidation: normalizeQuery(['ids', 'status'], ['startDateTime', 'endDateTime']),
    schema: {
      tags: ['meeting rooms'],
      summary: 'Search meeting rooms, optionally free for a window (unpaginated)',
      querystring: RoomQuery,
      response: { 200: Envelope(Type.Array(MeetingRoomSchema)), ...errorResponses },
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
