/** POST /ops/v1/calendar-sync/{provider}/messages: the room mailbox bridge hands over one iTIP message (operator-api.md "Calendar sync"). */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import type { CalendarSync } from './calendar-service.js';
import { ok } from '../../platform/http/envelope.js';
import { CALENDAR_BODY_LIMIT_BYTES } from '../../platform/http/body-limits.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { CalendarMessageResult, ProviderParams } from '../../contract/calendar-sync.js';

const MessageQuery = Type.Object({
  room: Type.Optional(
    Type.String({
      description:
        "Only this room (its email or _id): the mailbox that received the message, when the invitation names several of the service's rooms",
    }),
  ),
});

const RoomResult = Type.Intersect([CalendarMessageResult, Type.Object({ roomId: Type.String() })]);

/** What these routes use: the calendar sync actor. */
export interface CalendarRouteDeps {
  calendarSync: CalendarSync;
}

export async function opsCalendarRoutes(app: App, deps: CalendarRouteDeps): Promise<void> {
  // iTIP messages arrive as text/calendar; the body is kept as the exact text.
  app.addContentTypeParser('text/calendar', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  app.post(
    '/ops/v1/calendar-sync/:provider/messages',
    {
      bodyLimit: CALENDAR_BODY_LIMIT_BYTES,
      schema: {
        tags: ['ops'],
        summary: "Apply one iTIP message a synced room received (REQUEST, CANCEL or REPLY); answers with the room's REPLY",
        security: [{ opsToken: [] }],
        params: ProviderParams,
        querystring: MessageQuery,
        consumes: ['text/calendar'],
        body: Type.String({ description: 'One iCalendar object (RFC 5545) carrying an iTIP method (RFC 5546)' }),
        response: {
          200: Envelope(
            Type.Intersect([
              CalendarMessageResult,
              Type.Object({ rooms: Type.Array(RoomResult, { description: 'Every room of the service the message concerned' }) }),
            ]),
          ),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          415: ErrorEnvelope,
        },
      },
    },
    async (req) => ok(await deps.calendarSync.receive(req.params.provider, req.body, req.query.room)),
  );
}
