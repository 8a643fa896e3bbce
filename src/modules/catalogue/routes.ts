/** GET /meeting-rooms, /meeting-rooms/{id}, /desks, /desks/{id}. */
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { App } from '../../platform/http/types.js';
import type { CatalogueService } from './catalogue-service.js';
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
const [ARRAY_HEAD, ARRAY_TAIL] = okJsonArray(['\u0000'])
  .split('\u0000')
  .map((part) => Buffer.from(part));
const COMMA = Buffer.from(',');

/** okJsonArray for items that are already UTF-8 JSON: one copy of their bytes, no string in between. */
function okJsonArrayBytes(items: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [ARRAY_HEAD];
  items.forEach((item, i) => (i ? parts.push(COMMA, item) : parts.push(item)));
  parts.push(ARRAY_TAIL);
  return Buffer.concat(parts);
}

/** Bytes of an answer sent as one buffer; larger ones are streamed (okJsonArrayStream). */
const STREAM_FROM_BYTES = 256 * 1024;

/**
 * okJsonArrayBytes as a stream of about STREAM_FROM_BYTES chunks, with a turn of
 * the event loop between them: a list of tens of thousands of rooms (tens of MB)
 * is never copied into one buffer, and is produced only as fast as the client
 * (or the compressor) takes it.
 */
function okJsonArrayBody(items: readonly Buffer[]): Buffer | Readable {
  let total = ARRAY_HEAD.length + ARRAY_TAIL.length;
  for (const item of items) total += item.length + 1;
  if (total <= STREAM_FROM_BYTES) return okJsonArrayBytes(items);
  return Readable.from(
    (async function* () {
      let parts: Buffer[] = [ARRAY_HEAD];
      let size = ARRAY_HEAD.length;
      for (let i = 0; i < items.length; i++) {
        if (i > 0) parts.push(COMMA);
        parts.push(items[i]!);
        size += items[i]!.length + 1;
        if (size >= STREAM_FROM_BYTES) {
          yield Buffer.concat(parts);
          parts = [];
          size = 0;
          await nextTurn();
        }
      }
      parts.push(ARRAY_TAIL);
      yield Buffer.concat(parts);
    })(),
    { objectMode: false },
  );
}

const errorResponses = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };

/** What the catalogue's routes use. */
export interface CatalogueRouteServices {
  catalogue: CatalogueService;
}

export async function catalogueRoutes(app: App, deps: CatalogueRouteServices): Promise<void> {
  const catalogue = deps.catalogue;

  app.get(
    '/meeting-rooms',
    {
      schema: {
        tags: ['meeting rooms'],
        summary: 'Search meeting rooms, optionally free for a window (unpaginated)',
        querystring: RoomQuery,
        response: { 200: Envelope(MeetingRoomList), ...errorResponses },
      },
    },
    async (req, reply) => {
      // The rooms come pre-serialized (see room-snapshots.ts); the envelope is added around them.
      const rooms = await catalogue.searchRooms(req.principal, req.query);
      return reply.type('application/json; charset=utf-8').send(okJsonArrayBody(rooms) as never);
    },
  );

  app.get(
    '/meeting-rooms/:id',
    {
      schema: {
        tags: ['meeting rooms'],
        summary: 'One meeting room with its booking calendar',
        params: IdParams,
        querystring: CalendarQuery,
        response: { 200: Envelope(MeetingRoomWithCalendar), ...errorResponses },
      },
    },
    async (req) => ok(await catalogue.getRoom(req.principal, req.params.id, req.query)),
  );

  app.get(
    '/desks',
    {
      schema: {
        tags: ['desks'],
        summary: 'List desks, optionally only those free for a window (paginated)',
        querystring: DeskQuery,
        response: { 200: PagedEnvelope(DeskSchema), ...errorResponses },
      },
    },
    async (req) => {
      const page = await catalogue.searchDesks(req.principal, req.query);
      return okPage(page.items, page.meta);
    },
  );

  app.get(
    '/desks/:id',
    {
      schema: {
        tags: ['desks'],
        summary: 'One desk with its booking calendar',
        params: IdParams,
        querystring: CalendarQuery,
        response: { 200: Envelope(DeskWithCalendar), ...errorResponses },
      },
    },
    async (req) => ok(await catalogue.getDesk(req.principal, req.params.id, req.query)),
  );
}
