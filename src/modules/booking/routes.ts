/** The booking lifecycle routes: /meetings and the cancel, check-in and check-out actions. */
import type { Principal } from '../auth/index.js';
import type { MeetingView } from './meeting-view.js';
import type { App } from '../../platform/http/types.js';
import type { MeetingService } from './meeting-service.js';
import type { OpsBookings } from './ops-bookings.js';
import { optionalBody } from '../../platform/http/json-body.js';
import { ok, okPage } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope, PagedEnvelope } from '../../contract/envelope.js';
import { IdParams } from '../../contract/common.js';
import {
  AssetDay,
  AssetIdParams,
  DayQuery,
  FloorIdParams,
  FloorNow,
  OpsListMeetingsQuery,
  OpsMeeting,
  OpsMeetingDetail,
  StaffCancelBody,
} from '../../contract/ops-console.js';
import {
  CancelBody,
  CreateMeetingBody,
  DraftResult,
  ListMeetingsQuery,
  MeetingSchema,
  PinBody,
  UpdateMeetingBody,
} from '../../contract/meetings.js';

const errorResponses = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  422: ErrorEnvelope,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
  503: ErrorEnvelope,
};

export async function meetingRoutes(app: App, deps: { meetings: MeetingService }): Promise<void> {
  const meetings = deps.meetings;

  app.post(
    '/meetings',
    {
      schema: {
        tags: ['meetings'],
        summary: 'Book a room or a desk (or, with draft, check availability without booking)',
        body: CreateMeetingBody,
        response: { 201: Envelope(MeetingSchema), 200: Envelope(DraftResult), ...errorResponses },
      },
    },
    async (req, reply) => {
      const result = await meetings.create(req.principal, req.body);
      if (result.draft) return reply.status(200).send(ok(result.data));
      return reply
        .status(201)
        .header('location', `/meetings/${encodeURIComponent(result.data._id)}`)
        .send(ok(result.data));
    },
  );

  app.get(
    '/meetings',
    {
      schema: {
        tags: ['meetings'],
        summary: 'List bookings overlapping a window (a recurring series gives one row per occurrence)',
        querystring: ListMeetingsQuery,
        response: { 200: PagedEnvelope(MeetingSchema), ...errorResponses },
      },
    },
    async (req) => {
      const page = await meetings.list(req.principal, req.query);
      return okPage(page.items, page.meta);
    },
  );

  app.get(
    '/meetings/:id',
    {
      schema: {
        tags: ['meetings'],
        summary: 'One booking with its history',
        params: IdParams,
        response: { 200: Envelope(MeetingSchema), ...errorResponses },
      },
    },
    async (req) => ok(await meetings.get(req.principal, req.params.id)),
  );

  app.patch(
    '/meetings/:id',
    {
      schema: {
        tags: ['meetings'],
        summary: 'Move, extend or edit a booking',
        params: IdParams,
        body: UpdateMeetingBody,
        response: { 200: Envelope(MeetingSchema), ...errorResponses },
      },
    },
    async (req) => ok(await meetings.update(req.principal, req.params.id, req.body)),
  );

  await meetingActionRoutes(app, deps);
}

/** POST /meetings/{id}/cancel, /check-in and /check-out: an optional body, 202 with the booking. */
async function meetingActionRoutes(app: App, deps: { meetings: MeetingService }): Promise<void> {
  const meetings = deps.meetings;
  const action = (
    path: string,
    summary: string,
    body: typeof PinBody | typeof CancelBody,
    run: (p: Principal, id: string, b: { pinCode?: string }) => Promise<MeetingView>,
  ) =>
    app.post(
      `/meetings/:id/${path}`,
      {
        // The body is optional: an absent one means {}.
        preValidation: optionalBody,
        schema: { tags: ['meetings'], summary, params: IdParams, body, response: { 202: Envelope(MeetingSchema), ...errorResponses } },
      },
      async (req, reply) => reply.status(202).send(ok(await run(req.principal, req.params.id, req.body ?? {}))),
    );

  action('cancel', 'Cancel a booking (organizer, project admin or PIN holder)', CancelBody, (p, id, b) => meetings.cancel(p, id, b));
  action('check-in', 'Check in (organizer, attendee or PIN holder, inside the check-in window)', PinBody, (p, id, b) =>
    meetings.checkIn(p, id, b),
  );
  action('check-out', 'Check out: ends the booking now and releases the asset', PinBody, (p, id, b) => meetings.checkOut(p, id, b));
}

/** The operator console's booking routes (ops scope): list, detail and staff cancel, a floor now, an asset's day. */
const security = [{ opsToken: [] }];
const opsErrors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  422: ErrorEnvelope,
  429: ErrorEnvelope,
};

export async function opsMeetingRoutes(app: App, deps: { opsBookings: OpsBookings }): Promise<void> {
  const ops = deps.opsBookings;

  app.get(
    '/ops/v1/meetings',
    {
      schema: {
        tags: ['ops'],
        summary: 'Bookings across every project (the GET /meetings filters, plus assetId and search); never a PIN',
        security,
        querystring: OpsListMeetingsQuery,
        response: { 200: PagedEnvelope(OpsMeeting), ...opsErrors },
      },
    },
    async (req) => {
      const page = await ops.list(req.query);
      return okPage(page.items, page.meta);
    },
  );

  app.get(
    '/ops/v1/meetings/:id',
    {
      schema: {
        tags: ['ops'],
        summary: 'One booking (no PIN) with its history and payment state',
        security,
        params: IdParams,
        response: { 200: Envelope(OpsMeetingDetail), ...opsErrors },
      },
    },
    async (req) => ok(await ops.detail(req.params.id)),
  );

  app.post(
    '/ops/v1/meetings/:id/cancel',
    {
      preValidation: optionalBody,
      schema: {
        tags: ['ops'],
        summary: "Staff cancel (actor ops, source console): the spec's state rules and CANCEL event apply",
        security,
        params: IdParams,
        body: StaffCancelBody,
        response: { 202: Envelope(OpsMeetingDetail), ...opsErrors },
      },
    },
    async (req, reply) => reply.status(202).send(ok(await ops.cancel(req.params.id, req.body ?? {}))),
  );

  await opsFloorRoutes(app, deps);
}

/** The console's live views: a floor now, an asset's day. */
async function opsFloorRoutes(app: App, deps: { opsBookings: OpsBookings }): Promise<void> {
  const ops = deps.opsBookings;
  app.get(
    '/ops/v1/floors/:floorId/now',
    {
      schema: {
        tags: ['ops'],
        summary: 'Every room and desk of a floor with its state now (service time) and current and next booking',
        security,
        params: FloorIdParams,
        response: { 200: Envelope(FloorNow), ...opsErrors },
      },
    },
    async (req) => ok(await ops.floorNow(req.params.floorId)),
  );

  app.get(
    '/ops/v1/assets/:assetId/day',
    {
      schema: {
        tags: ['ops'],
        summary: "A room's or desk's property-local day: hours, breaks, bookings with their cleaning time",
        security,
        params: AssetIdParams,
        querystring: DayQuery,
        response: { 200: Envelope(AssetDay), ...opsErrors },
      },
    },
    async (req) => ok(await ops.assetDay(req.params.assetId, req.query.date)),
  );
}
