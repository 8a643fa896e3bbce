/** POST /auth/accessToken (the three grants) and POST /auth/revoke. */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { Envelope, ErrorEnvelope, ok } from '../../platform/http/envelope.js';
import { GRANT_TYPES, SUBJECT_TYPES } from './token-service.js';
import { bearerAuth } from '../../platform/http/authenticate.js';

const TokenRequest = Type.Object({
  grant_type: Type.String({ description: `One of ${GRANT_TYPES.join(', ')}` }),
  app_id: Type.Optional(Type.String({ description: 'Client id issued by the operator (app_credentials, act_as)' })),
  app_secret: Type.Optional(Type.String({ description: 'Client secret (app_credentials, act_as)' })),
  refresh_token: Type.Optional(Type.String({ description: 'The newest refresh token (refresh_token grant)' })),
  subject: Type.Optional(Type.String({ description: 'act_as: the member to act for' })),
  subject_type: Type.Optional(Type.String({ description: `act_as: ${SUBJECT_TYPES.join(' (default) or ')}` })),
});

const TokenResponse = Type.Object(
  {
    access_token: Type.String(),
    expires_in: Type.Integer({ description: 'Access-token lifetime in seconds' }),
    refresh_token: Type.Optional(Type.String({ description: 'Absent on delegated (act_as) tokens' })),
    refresh_token_expires_in: Type.Optional(Type.Integer()),
  },
  { description: 'Token response; not enveloped' },
);

export async function tokenRoutes(app: App, services: Services): Promise<void> {
  app.post('/auth/accessToken', {
    schema: {
      tags: ['auth'],
      summary: 'Obtain an access token (app_credentials, refresh_token or act_as)',
      // The token endpoint needs no bearer token; without this it inherits the global bearer requirement in OpenAPI.
      security: [],
      body: TokenRequest,
      response: { 201: TokenResponse, 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 503: ErrorEnvelope },
    },
  }, async (req, reply) => {
    const token = await services.tokens.grant(req.body);
    reply.header('cache-control', 'no-store');
    return reply.status(201).send(token);
  });

  app.post('/auth/revoke', {
    onRequest: bearerAuth(services.tokens),
    schema: {
      tags: ['auth'],
      summary: 'Revoke the calling token and every token issued with it (its refresh chain)',
      security: [{ bearer: [] }],
      response: { 200: Envelope(Type.Object({ revoked: Type.Boolean() })), 401: ErrorEnvelope, 503: ErrorEnvelope },
    },
  }, async (req) => {
    await services.tokens.revoke(req.principal);
    return ok({ revoked: true });
  });

  app.get('/auth/whoami', {
    onRequest: bearerAuth(services.tokens),
    schema: {
      tags: ['auth'],
      summary: 'Describe the calling token: the app, the member it acts for, and its project scope',
      security: [{ bearer: [] }],
      response: {
        200: Envelope(
          Type.Object({
            kind: Type.Union([Type.Literal('app'), Type.Literal('member')], { description: 'app: plain app token; member: delegated act_as token' }),
            appId: Type.String({ description: 'The app_id (client id) the token was issued to' }),
            userId: Type.Union([Type.String(), Type.Null()], { description: 'The member acted for, on a delegated token' }),
            projects: Type.Array(
              Type.Object({ projectId: Type.String(), permissions: Type.Array(Type.String()) }),
              { description: 'Projects in scope and the permissions held on each' },
            ),
          }),
        ),
        401: ErrorEnvelope,
        503: ErrorEnvelope,
      },
    },
  }, async (req) => {
    const p = req.principal;
    return ok({
      kind: p.kind,
      appId: p.clientId,
      userId: p.userId,
      projects: [...p.projects].map(([projectId, scope]) => ({ projectId, permissions: [...scope.permissions].sort() })),
    });
  });
}
