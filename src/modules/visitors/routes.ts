/**
 * The visitor management routes of the ops surface (operator-api.md "Visitors"):
 * invites (create, cancel, read) and scans at a device. Unknown or malformed ids
 * answer 404 KS005.
 */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { CreateInviteBody, InviteView, ScanBody, ScanResult } from '../../contract/visitors.js';
import { ConsoleInvite, InvitesOfDayQuery } from '../../contract/ops-console.js';
import type { VisitorService } from './visitor-service.js';

const InviteParams = Type.Object({ inviteId: Type.String({ maxLength: 512, description: "The invite's _id" }) });
const DeviceParams = Type.Object({ deviceId: Type.String({ maxLength: 512, description: "The device's _id (site document data.ids)" }) });
const security = [{ opsToken: [] }];

export async function opsVisitorRoutes(app: App, services: { visitors: VisitorService }): Promise<void> {
  const visitors = services.visitors;

  app.post(
    '/ops/v1/visitors/invites',
    {
      schema: {
        tags: ['visitors'],
        security,
        summary: 'Invite a visitor: issues a QR card code and emits VMS_INVITE_SENT (the only event that carries the code)',
        description:
          'A null endDateTime makes the invite valid the whole property-local start day. The host must be an active member of the project ' +
          '(400 KS001 otherwise); an unknown project is 404 KS005.',
        body: CreateInviteBody,
        response: { 201: Envelope(InviteView), 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const invite = await visitors.create(req.body);
      return reply
        .status(201)
        .header('location', `/ops/v1/visitors/invites/${encodeURIComponent(invite._id)}`)
        .send(ok(invite));
    },
  );

  app.post(
    '/ops/v1/visitors/invites/:inviteId/cancel',
    {
      schema: {
        tags: ['visitors'],
        security,
        summary: 'Cancel an invite (the host cancels the visit): emits VMS_HOST_CANCELLED once; cancelling again changes nothing',
        params: InviteParams,
        response: { 200: Envelope(InviteView), 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await visitors.cancel(req.params.inviteId)),
  );

  app.get(
    '/ops/v1/visitors/invites',
    {
      schema: {
        tags: ['visitors'],
        security,
        summary: 'The invites of a property-local day (default today) whose window overlaps it, without their QR card codes',
        querystring: InvitesOfDayQuery,
        response: { 200: Envelope(Type.Array(ConsoleInvite)), 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await visitors.invitesOfDay(req.query.projectId, req.query.date)),
  );

  app.get(
    '/ops/v1/visitors/invites/:inviteId',
    {
      schema: {
        tags: ['visitors'],
        security,
        summary: 'An invite with its status (invited, checked-in, cancelled, expired) and entries',
        params: InviteParams,
        response: { 200: Envelope(InviteView), 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await visitors.get(req.params.inviteId)),
  );

  await scanRoute(app, visitors);
}

/** A code or plate read at a device: the entry decision. */
async function scanRoute(app: App, visitors: VisitorService): Promise<void> {
  app.post(
    '/ops/v1/devices/:deviceId/scans',
    {
      schema: {
        tags: ['visitors'],
        security,
        summary: 'A QR card code or a licence plate read at a device: grants entry to a visitor whose invite is valid now',
        description:
          'Exactly one of cardCode or licensePlate. A granted scan records an entry and emits VMS_VISITOR_CHECKED_IN; a refused one ' +
          '(unknown, cancelled, expired, not-yet-valid) changes nothing and emits nothing. Plates match ignoring case, spaces, dashes and dots.',
        params: DeviceParams,
        body: ScanBody,
        response: { 200: Envelope(ScanResult), 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await visitors.scan(req.params.deviceId, req.body)),
  );
}
