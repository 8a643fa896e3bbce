/** Schemas of the token endpoint (POST /auth/accessToken), /auth/revoke and /auth/whoami. */
import { Type, type Static } from 'typebox';

export const GRANT_APP_CREDENTIALS = 'app_credentials';
export const GRANT_REFRESH = 'refresh_token';
export const GRANT_ACT_AS = 'act_as';
export const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const GRANT_TYPES = [GRANT_APP_CREDENTIALS, GRANT_REFRESH, GRANT_ACT_AS, GRANT_TOKEN_EXCHANGE] as const;
export const SUBJECT_TYPES = ['external_user_id', 'service_member_id'] as const;

export const TokenRequest = Type.Object({
  grant_type: Type.String({ description: `One of ${GRANT_TYPES.join(', ')}` }),
  app_id: Type.Optional(Type.String({ description: 'Client id issued by the operator (app_credentials, act_as)' })),
  app_secret: Type.Optional(Type.String({ description: 'Client secret (app_credentials, act_as)' })),
  refresh_token: Type.Optional(Type.String({ description: 'The newest refresh token (refresh_token grant)' })),
  subject: Type.Optional(Type.String({ description: 'act_as: the member to act for' })),
  subject_type: Type.Optional(Type.String({ description: `act_as: ${SUBJECT_TYPES.join(' (default) or ')}` })),
});
export type TokenRequest = Static<typeof TokenRequest>;

export const TokenResponse = Type.Object(
  {
    access_token: Type.String(),
    expires_in: Type.Integer({ description: 'Access-token lifetime in seconds' }),
    refresh_token: Type.Optional(Type.String({ description: 'Absent on delegated (act_as) tokens' })),
    refresh_token_expires_in: Type.Optional(Type.Integer()),
  },
  { description: 'Token response; not enveloped' },
);
export type TokenResponse = Static<typeof TokenResponse>;

export const Revoked = Type.Object({ revoked: Type.Boolean() });
export type Revoked = Static<typeof Revoked>;

export const WhoAmI = Type.Object({
  kind: Type.Union([Type.Literal('app'), Type.Literal('member')], { description: 'app: plain app token; member: delegated act_as token' }),
  appId: Type.String({ description: 'The app_id (client id) the token was issued to' }),
  userId: Type.Union([Type.String(), Type.Null()], { description: 'The member acted for, on a delegated token' }),
  projects: Type.Array(Type.Object({ projectId: Type.String(), permissions: Type.Array(Type.String()) }), {
    description: 'Projects in scope and the permissions held on each',
  }),
});
export type WhoAmI = Static<typeof WhoAmI>;
