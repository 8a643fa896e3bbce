/** GET /meeting-rooms, /meeting-rooms/{id}, /desks, /desks/{id}. */
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { ok, okJsonArray, okPage } from '../../platform/http/envelope.js';
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

/** The success envelope around a JSON array, split where the items go (see okJsonArray). */
const [ARRAY_HEAD, ARRAY_TAIL] = okJsonArray(['\u0000']).split('\u0000').map((part) => Buffer.from(part));
const COMMA = Buffer.from(',');

/** okJsonArray for items that are already UTF-8 JSON: one copy of their bytes, no string in between. */
function okJsonArrayBytes(items: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [ARRAY_HEAD];
  items.forEach((item, i) => (i ? parts.push(COMMA, item) : parts.push(item)));
  parts.push(ARRAY_TAIL);
  return Buffer.concat(parts);
}

const errorResponses = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };

export async function catalogueRoutes(app: App, services: Services): Promise<void> {
  const catalogue = services.catalogue;

  app.get('/meeting-rooms', {
    schema: {
      tags: ['meeting rooms'],
      summary: 'Search meeting rooms, optionally free for a window (unpaginated)',
      querystring: RoomQuery,
      response: { 200: Envelope(MeetingRoomList), ...errorResponses },
    },
  }, async (req, reply) => {
    // The rooms come pre-serialized (see room-snapshots.ts); the envelope is added around them.
    const rooms = await catalogue.searchRooms(req.principal, req.query);
    return reply.type('application/json; charset=utf-8').send(okJsonArrayBytes(rooms) as never);
  });

  app.get('/meeting-rooms/:id', {
    schema: {
      tags: ['meeting rooms'],
      summary: 'One meeting room with its booking calendar',
      params: IdParams,
      querystring: CalendarQuery,
      response: { 200: Envelope(MeetingRoomWithCalendar), ...errorResponses },
    },
  }, async (req) => ok(await catalogue.getRoom(req.principal, req.params.id, req.query)));

  app.get('/desks', {
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
    schema: {
      tags: ['desks'],
      summary: 'One desk with its booking calendar',
      params: IdParams,
      querystring: CalendarQuery,
      response: { 200: Envelope(DeskWithCalendar), ...errorResponses },
    },
  }, async (req) => ok(await catalogue.getDesk(req.principal, req.params.id, req.query)));
}
