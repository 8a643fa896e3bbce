/**
 * Shared fixtures for HTTP tests: a small valid site document applied through the
 * operator surface (`POST /ops/v1/apply`, see shared/operator-api.md), and helpers
 * that obtain tokens from the public token endpoint.
 */
import { expect } from 'vitest';
import type { HttpResult, TestService } from './test-service.js';

/** Secrets are at least 32 characters, as the operator contract asks. */
export const PORTAL_APP_ID = 'portal-dev';
export const PORTAL_SECRET = 'portal-secret-0123456789abcdef-0123456789';
/** Multi-project app (tower + annex), provisioned for act_as. */
export const HUB_APP_ID = 'hub-dev';
export const HUB_SECRET = 'hub-secret-0123456789abcdef-0123456789abc';
/** Single-project app NOT provisioned for act_as. */
export const PLAIN_APP_ID = 'plain-dev';
export const PLAIN_SECRET = 'plain-secret-0123456789abcdef-0123456789';

export const MEETING_UPDATE = 'MEETING_UPDATE';

export interface TokenResponseBody {
  access_token: string;
  expires_in: number;
  refresh_token?: string;
  refresh_token_expires_in?: number;
  [k: string]: unknown;
}

/**
 * A small valid site document:
 * - brand `acme`, projects `tower` and `annex`;
 * - users `alice` (member of tower and annex), `bob` (admin of tower and annex),
 *   `carol` (member of tower, linked to no app);
 * - apps `portal` (single project tower, MEETING_UPDATE, act_as, links alice and bob),
 *   `hub` (multi-project tower+annex, MEETING_UPDATE on both, act_as, links alice and bob),
 *   `plain` (single project tower, no act_as).
 */
export function siteDocument() {
  return {
    brands: [{ key: 'acme', name: 'Acme Estates' }],
    projects: [
      {
        key: 'tower',
        brand: 'acme',
        name: 'Acme Tower',
        timezone: 'Asia/Bangkok',
        currency: 'THB',
        defaultCleanupMinutes: 10,
        bookingGridMinutes: 15,
        backofficePaymentDueMinutes: 1440,
      },
      {
        key: 'annex',
        brand: 'acme',
        name: 'Acme Annex',
        timezone: 'Asia/Bangkok',
        currency: 'THB',
        defaultCleanupMinutes: 10,
        bookingGridMinutes: 15,
        backofficePaymentDueMinutes: 1440,
      },
    ],
    users: [
      {
        key: 'alice',
        email: 'alice@example.com',
        name: 'Alice Example',
        phone: '+66812345678',
        memberships: [
          { project: 'tower', role: 'member' },
          { project: 'annex', role: 'member' },
        ],
        blockedFromBooking: false,
      },
      {
        key: 'bob',
        email: 'bob@example.com',
        name: 'Bob Admin',
        phone: '+66812345679',
        memberships: [
          { project: 'tower', role: 'admin' },
          { project: 'annex', role: 'admin' },
        ],
        blockedFromBooking: false,
      },
      {
        key: 'carol',
        email: 'carol@example.com',
        name: 'Carol Unlinked',
        phone: '+66812345670',
        memberships: [{ project: 'tower', role: 'member' }],
        blockedFromBooking: false,
      },
    ],
    apps: [
      {
        key: 'portal',
        appId: PORTAL_APP_ID,
        appSecret: PORTAL_SECRET,
        name: 'Tenant portal',
        projects: ['tower'],
        projectRoles: [{ project: 'tower', permissions: [MEETING_UPDATE] }],
        actAs: true,
        links: [
          { user: 'alice', externalUserId: 'ext-alice' },
          { user: 'bob', externalUserId: 'ext-bob' },
        ],
      },
      {
        key: 'hub',
        appId: HUB_APP_ID,
        appSecret: HUB_SECRET,
        name: 'Multi-site hub',
        projects: ['tower', 'annex'],
        projectRoles: [
          { project: 'tower', permissions: [MEETING_UPDATE] },
          { project: 'annex', permissions: [MEETING_UPDATE] },
        ],
        actAs: true,
        links: [
          { user: 'alice', externalUserId: 'hub-alice' },
          { user: 'bob', externalUserId: 'hub-bob' },
        ],
      },
      {
        key: 'plain',
        appId: PLAIN_APP_ID,
        appSecret: PLAIN_SECRET,
        name: 'Plain integration',
        projects: ['tower'],
        projectRoles: [{ project: 'tower', permissions: [MEETING_UPDATE] }],
        actAs: false,
      },
    ],
  };
}

export type SiteIds = Record<string, unknown>;

/** Applies a site document through the ops API and returns `data.ids`. */
export async function applySite(svc: TestService, doc: unknown = siteDocument()): Promise<SiteIds> {
  const res = await svc.ops('POST', '/ops/v1/apply', doc);
  expect(res.status, `apply failed: ${res.text}`).toBe(200);
  expect(res.body.code).toBe('KS000');
  expect(res.body.data?.ids, 'apply answers data.ids').toBeTypeOf('object');
  return res.body.data.ids as SiteIds;
}

/**
 * The `_id` of the entity with `key` in `data.ids`. Works whether the map is flat
 * (`{alice: id}`) or grouped by kind (`{users: {alice: id}}`); pass `kind` to pick
 * the group when keys could clash.
 */
export function idOf(ids: SiteIds, key: string, kind?: string): string {
  const found = (map: unknown): string | undefined => {
    if (!map || typeof map !== 'object') return undefined;
    const v = (map as Record<string, unknown>)[key];
    if (typeof v === 'string') return v;
    if (v && typeof v === 'object' && typeof (v as { _id?: unknown })._id === 'string') return (v as { _id: string })._id;
    return undefined;
  };
  const direct = (kind ? found(ids[kind]) : undefined) ?? found(ids);
  if (direct) return direct;
  for (const group of Object.values(ids)) {
    const v = found(group);
    if (v) return v;
  }
  throw new Error(`no id for key ${key} in ${JSON.stringify(ids)}`);
}

/** Raw call of the token endpoint with a JSON body. */
export function tokenRequest(svc: TestService, body: Record<string, unknown>): Promise<HttpResult> {
  return svc.request('POST', '/auth/accessToken', { body });
}

/** app_credentials grant; asserts 201 and returns the token response. */
export async function appToken(svc: TestService, appId = PORTAL_APP_ID, secret = PORTAL_SECRET): Promise<TokenResponseBody> {
  const res = await tokenRequest(svc, { grant_type: 'app_credentials', app_id: appId, app_secret: secret });
  expect(res.status, `app_credentials failed: ${res.text}`).toBe(201);
  return res.body as TokenResponseBody;
}

/** refresh_token grant (raw result). */
export function refreshRequest(svc: TestService, refreshToken: string): Promise<HttpResult> {
  return tokenRequest(svc, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

export interface ActAsOptions {
  appId?: string;
  secret?: string;
  subject: string;
  subjectType?: 'external_user_id' | 'service_member_id';
  grantType?: string;
}

/** act_as grant (raw result). */
export function actAsRequest(svc: TestService, o: ActAsOptions): Promise<HttpResult> {
  const body: Record<string, unknown> = {
    grant_type: o.grantType ?? 'act_as',
    app_id: o.appId ?? PORTAL_APP_ID,
    app_secret: o.secret ?? PORTAL_SECRET,
    subject: o.subject,
  };
  if (o.subjectType) body.subject_type = o.subjectType;
  return tokenRequest(svc, body);
}

/** act_as grant; asserts 201 and returns the token response. */
export async function actAsToken(svc: TestService, o: ActAsOptions): Promise<TokenResponseBody> {
  const res = await actAsRequest(svc, o);
  expect(res.status, `act_as failed: ${res.text}`).toBe(201);
  return res.body as TokenResponseBody;
}

/** Asserts an enveloped error: exactly `{code, success:false, message}` (plus `data` when allowed). */
export function expectError(res: HttpResult, status: number, code: string, opts: { allowData?: boolean } = {}): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body, res.text).toBeTypeOf('object');
  expect(res.body.code).toBe(code);
  expect(res.body.success).toBe(false);
  const keys = Object.keys(res.body).sort();
  if (opts.allowData && 'data' in res.body) expect(keys).toEqual(['code', 'data', 'message', 'success']);
  else expect(keys).toEqual(['code', 'message', 'success']);
  if (code === 'KS001') {
    expect(Array.isArray(res.body.message), 'KS001 message is an array').toBe(true);
    expect(res.body.message.length).toBeGreaterThan(0);
    for (const m of res.body.message) expect(m).toBeTypeOf('string');
  } else {
    expect(typeof res.body.message === 'string' || Array.isArray(res.body.message)).toBe(true);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A syntactically valid object id that names nothing. */
export const UNKNOWN_ID = 'ffffffffffffffffffffffff';
