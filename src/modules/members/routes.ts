/** PUT, GET, DELETE /partner/members/{externalUserId}: the partner member surface. */
import type { App } from '../../platform/http/types.js';
import type { Config } from '../../platform/config.js';
import { Type } from 'typebox';
import { ok } from '../../platform/http/envelope.js';
import { bodyLimit } from '../../platform/http/body-limits.js';
import { errors } from '../../platform/errors.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { MemberParams, PartnerMember, PutMemberBody, PutMemberResult } from '../../contract/members.js';
import { partnerContext, type MemberService } from './member-service.js';
import type { CredentialService } from './credential-service.js';
import { CredentialsBody, CredentialsResult } from '../../contract/member-credentials.js';

const errorResponses = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  429: ErrorEnvelope,
  503: ErrorEnvelope,
};

/** The partner rate limit as the routes use it. */
export interface PartnerRateLimit {
  hit(key: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
}

export interface MemberRoutesDeps {
  members: MemberService;
  credentials: CredentialService;
  partnerRateLimit: PartnerRateLimit;
  /** The body limits (the credentials route takes the upload limit: the face photo travels in the body). */
  config: Pick<Config, 'bodyLimitBytes' | 'applyBodyLimitBytes'>;
}

/** Registers the partner routes in their own scope (inside the bearer-auth scope). */
export async function memberRoutes(app: App, services: MemberRoutesDeps): Promise<void> {
  await app.register(async (scope: App) => {
    // Every partner request: the access rules, then the app's rate limit.
    scope.addHook('onRequest', async (req) => {
      const ctx = partnerContext(req.principal);
      const rate = await services.partnerRateLimit.hit(`partner:${ctx.appId}`);
      if (!rate.allowed) {
        throw errors.tooManyRequests(
          'Partner rate limit reached (30 requests per 60 s per app); retry after the Retry-After seconds',
          rate.retryAfterSeconds,
        );
      }
    });
    const members = services.members;

    scope.put(
      '/partner/members/:externalUserId',
      {
        schema: {
          tags: ['partner members'],
          summary: 'Create or update a member (idempotent)',
          params: MemberParams,
          body: PutMemberBody,
          response: { 200: Envelope(PutMemberResult), ...errorResponses },
        },
      },
      async (req) => ok(await members.put(partnerContext(req.principal), req.params.externalUserId, req.body)),
    );

    scope.get(
      '/partner/members/:externalUserId',
      {
        schema: {
          tags: ['partner members'],
          summary: 'The member this app manages under externalUserId',
          params: MemberParams,
          response: { 200: Envelope(PartnerMember), ...errorResponses },
        },
      },
      async (req) => ok(await members.get(partnerContext(req.principal), req.params.externalUserId)),
    );

    scope.put(
      '/partner/members/:externalUserId/credentials',
      {
        // The face photo travels in the body (base64): BODY_LIMIT_BYTES, not the ordinary JSON limit.
        bodyLimit: bodyLimit('upload', services.config),
        schema: {
          tags: ['partner members'],
          summary: "Set the member's access cards and face photo (each field independent; omitted fields untouched)",
          params: MemberParams,
          body: CredentialsBody,
          response: { 200: Envelope(CredentialsResult), ...errorResponses },
        },
      },
      async (req) => {
        const member = await members.reach(partnerContext(req.principal), req.params.externalUserId);
        return ok(await services.credentials.set(member, req.body));
      },
    );

    scope.delete(
      '/partner/members/:externalUserId',
      {
        schema: {
          tags: ['partner members'],
          summary: "Offboard the member (idempotent): deactivated, cards revoked, out of the app's groups",
          params: MemberParams,
          response: { 204: Type.Null({ description: 'Offboarded, no body' }), ...errorResponses },
        },
      },
      async (req, reply) => {
        await members.remove(partnerContext(req.principal), req.params.externalUserId);
        return reply.status(204).send(null);
      },
    );
  });
}
