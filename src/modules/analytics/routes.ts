/**
 * The analytics routes of the ops surface (operator-api.md "Analytics"): utilisation figures
 * (JSON, or CSV with `Accept: text/csv`), the per-organizer report a project may turn on, and
 * what the figures have not taken in yet.
 */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { AnalyticsStatus, OrganizerRow, OrganizersQuery, UtilisationQuery, UtilisationRow } from '../../contract/analytics.js';
import { ObjectId } from '../../contract/common.js';
import type { AnalyticsService } from './analytics-service.js';
import { utilisationCsv } from './rules/utilisation-csv.js';

const security = [{ opsToken: [] }];

/** Whether the client asked for CSV (text/csv listed in Accept, ahead of or without JSON). */
function wantsCsv(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase());
  const csv = types.indexOf('text/csv');
  const json = types.indexOf('application/json');
  return csv >= 0 && (json < 0 || csv < json);
}

export async function opsAnalyticsRoutes(app: App, deps: { analytics: AnalyticsService }): Promise<void> {
  const { analytics } = deps;

  app.get(
    '/ops/v1/analytics/utilisation',
    {
      schema: {
        tags: ['analytics'],
        security,
        summary: 'Utilisation figures of a project’s rooms or desks over local days, grouped (docs/analytics.md defines each figure)',
        description:
          'from and to are local dates of the property (to included, at most 366 days). With Accept: text/csv the same rows come as ' +
          'CSV: the group fields, then one column per figure. Figures lag booking changes by about a second (see /ops/v1/analytics/status).',
        querystring: UtilisationQuery,
        produces: ['application/json', 'text/csv'],
        response: { 200: Envelope(Type.Array(UtilisationRow)), 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const rows = await analytics.utilisation(req.query);
      if (!wantsCsv(req.headers.accept)) return ok(rows);
      const name = `utilisation-${req.query.groupBy ?? 'project'}-${req.query.from}-${req.query.to}.csv`;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(utilisationCsv(req.query.groupBy ?? 'project', rows) as never); // text, not the JSON envelope
    },
  );

  app.get(
    '/ops/v1/analytics/organizers',
    {
      schema: {
        tags: ['analytics'],
        security,
        summary: 'Per organizer: bookings, no-shows and ghost meetings (only when the project turns on analytics.namedReports)',
        description:
          'Most no-shows first. 403 KS003 unless the project’s site document sets analytics: {namedReports: true}: by default the ' +
          'service answers aggregates only.',
        querystring: OrganizersQuery,
        response: {
          200: Envelope(Type.Array(OrganizerRow)),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
          404: ErrorEnvelope,
        },
      },
    },
    async (req) => ok(await analytics.organizers(req.query)),
  );

  app.get(
    '/ops/v1/analytics/status',
    {
      schema: {
        tags: ['analytics'],
        security,
        summary: 'What the figures have not taken in yet: bookings changed and walk-ins since the analytics job’s last pass',
        querystring: Type.Object({ project: ObjectId('The project (_id)') }, { additionalProperties: false }),
        response: { 200: Envelope(AnalyticsStatus), 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => ok(await analytics.status(req.query.project)),
  );
}
