/**
 * OAuth token grants (app_credentials, refresh_token with rotation, act_as) and
 * the resolution of a bearer token to a Principal.
 *
 * Tokens are opaque: `<prefix>_<24-hex id>_<secret>`. Only a SHA-256 of the
 * secret is stored; the id locates the row and the hash is compared in constant
 * time. Each token is bound to the BOOKING_ENV it was issued in.
 *
 * Lifetimes run on the real clock, not the sandbox clock (see docs/decisions.md).
 *
 * Any failure to reach the token store becomes 503 KS234: the token was not
 * checked, it was not rejected.
 */
import { mayBookPrivately } from '../booking/rules/private-access.js';
import type { Clock } from '../../platform/clock/clock.js';
import type { BookingEnv, TokenLifetimes } from '../../platform/config.js';
import { ServiceError, errors } from '../../platform/errors.js';
import { isObjectId, newId } from '../../platform/ids.js';
import { ALL_PERMISSIONS, intersectPermissions, type Principal, type ProjectScope } from './principal.js';
import { randomSecret, safeEqual, sha256Hex, verifyPassword } from '../../platform/crypto/secrets.js';
import { CallerCache } from './caller-cache.js';
import type { AppRecord, NewToken, TokenRecord, TokenRepository } from './token-repository.js';
import {
  GRANT_ACT_AS,
  GRANT_APP_CREDENTIALS,
  GRANT_REFRESH,
  GRANT_TOKEN_EXCHANGE,
  GRANT_TYPES,
  SUBJECT_TYPES,
  type TokenRequest,
  type TokenResponse,
} from '../../contract/auth.js';

export const MAX_EXTERNAL_USER_ID = 128;

const ACCESS_PREFIX = 'kat';
const REFRESH_PREFIX = 'krt';
const REFRESH_UNKNOWN = 'Refresh token is invalid, expired or revoked';
const TOKEN_RE = /^(kat|krt)_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

/** How long a resolved caller is reused by default (real time): the bound on unseen revocations across instances. */
export const DEFAULT_CALLER_CACHE_MS = 2000;

/** How long a token-store call may take before we answer KS234. */
const STORE_TIMEOUT_MS = 5000;

export interface TokenServiceDeps {
  repo: TokenRepository;
  env: BookingEnv;
  lifetimes: TokenLifetimes;
  /** Real time; token lifetimes do not follow the sandbox clock. */
  clock: Clock;
  /** How long a resolved caller is reused without reading the store (CALLER_CACHE_MS); 0 turns the cache off. */
  callerCacheMs?: number;
}

class StoreTimeout extends Error {}

export class TokenService {
  /** Replaceable so tests can inject a failing store. */
  repo: TokenRepository;

  private readonly callers: CallerCache;

  constructor(private readonly deps: TokenServiceDeps) {
    this.repo = deps.repo;
    this.callers = new CallerCache(deps.callerCacheMs ?? DEFAULT_CALLER_CACHE_MS);
  }

  /**
   * Scopes may have changed (a site apply, a membership change): callers are
   * resolved from the store again on their next request in this instance.
   */
  forgetCallers(): void {
    this.callers.clear();
  }

  /** Runs a token-store operation; a failure or timeout becomes 503 KS234. */
  private async store<T>(op: (repo: TokenRepository) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        op(this.repo),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new StoreTimeout()), STORE_TIMEOUT_MS);
        }),
      ]);
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      throw errors.authUnavailable();
    } finally {
      clearTimeout(timer);
    }
  }

  async grant(req: TokenRequest): Promise<TokenResponse> {
    const grantType = req.grant_type;
    if (grantType === GRANT_APP_CREDENTIALS) return this.appCredentials(req);
    if (grantType === GRANT_REFRESH) return this.refresh(req);
    if (grantType === GRANT_ACT_AS || grantType === GRANT_TOKEN_EXCHANGE) return this.actAs(req);
    throw errors.validation([`grant_type must be one of: ${GRANT_TYPES.join(', ')}`]);
  }

  private requireFields(req: TokenRequest, fields: (keyof TokenRequest)[]): void {
    const missing = fields.filter((f) => typeof req[f] !== 'string' || req[f] === '');
    if (missing.length) throw errors.validation(missing.map((f) => `body.${f} is required for grant_type ${req.grant_type}`));
  }

  private async authenticateApp(req: TokenRequest): Promise<AppRecord> {
    const app = await this.store((r) => r.findApp(this.deps.env, req.app_id!));
    // Verify against a dummy hash when the app is unknown so timing does not reveal which app ids exist.
    const ok = await verifyPassword(req.app_secret!, app?.secretHash ?? DUMMY_HASH);
    if (!app || !ok) throw errors.unauthorized('Invalid app_id or app_secret');
    return app;
  }

  /** Whether an app with this client id exists in this environment and `secret` is its secret. */
  async appSecretMatches(appId: string, secret: string): Promise<boolean> {
    const app = await this.store((r) => r.findApp(this.deps.env, appId));
    return !!app && (await verifyPassword(secret, app.secretHash));
  }

  private async appCredentials(req: TokenRequest): Promise<TokenResponse> {
    this.requireFields(req, ['app_id', 'app_secret']);
    const app = await this.authenticateApp(req);
    return this.issueFamily(app.id, null, GRANT_APP_CREDENTIALS, true);
  }

  private async refresh(req: TokenRequest): Promise<TokenResponse> {
    this.requireFields(req, ['refresh_token']);
    const token = await this.lookup(req.refresh_token!, REFRESH_PREFIX);
    const now = this.deps.clock.now();
    if (token.rotatedAt !== null) return this.rotatedTokenPresented(token, now);
    const successors = this.newPair(now, true);
    const rotated = await this.store((r) => r.rotate(token.id, token.familyId, this.deps.env, now, successors.rows));
    // Lost a race with a concurrent refresh of the same token: benign, the client retries.
    if (!rotated) throw errors.authUnavailable('This refresh token was just rotated; retry shortly');
    return successors.response;
  }

  /**
   * A retired refresh token came back. Inside the grace window it is most likely a
   * client retrying after a lost response: answer KS234 and revoke nothing. After
   * the window it is treated as theft (OAuth 2.0 Security BCP): the whole family is
   * revoked, so both the thief's and the client's tokens stop working.
   */
  private async rotatedTokenPresented(token: TokenRecord, now: number): Promise<never> {
    const graceMs = this.deps.lifetimes.refreshReuseGraceSeconds * 1000;
    if (now - token.rotatedAt! <= graceMs) {
      throw errors.authUnavailable('This refresh token was just rotated; retry shortly or use the newest refresh token');
    }
    await this.store((r) => r.revokeFamily(token.familyId, now, 'refresh token reuse'));
    this.callers.forgetFamily(token.familyId);
    throw errors.unauthorized('Refresh token was already used; the token family has been revoked');
  }

  private async actAs(req: TokenRequest): Promise<TokenResponse> {
    this.requireFields(req, ['app_id', 'app_secret', 'subject']);
    const subjectType = req.subject_type ?? 'external_user_id';
    if (!(SUBJECT_TYPES as readonly string[]).includes(subjectType)) {
      throw errors.validation([`body.subject_type must be one of: ${SUBJECT_TYPES.join(', ')}`]);
    }
    const subject = req.subject!;
    if (subject.length > MAX_EXTERNAL_USER_ID) throw errors.validation([`body.subject must be at most ${MAX_EXTERNAL_USER_ID} characters`]);
    const app = await this.authenticateApp(req);
    if (!app.actAs) throw errors.actAsForbidden('This app is not provisioned for act_as');
    const appProjects = await this.store((r) => r.appProjects(app.id));

    const userId =
      subjectType === 'external_user_id'
        ? await this.resolveExternalUser(
            app,
            appProjects.map((p) => p.projectId),
            subject,
          )
        : await this.resolveServiceMember(app, subject);

    const scope = await this.delegatedScope(app.id, userId);
    if (scope.size === 0) throw errors.actAsForbidden("The member is outside the app's project scope");
    return this.issueFamily(app.id, userId, GRANT_ACT_AS, false);
  }

  private async resolveExternalUser(app: AppRecord, projectIds: string[], subject: string): Promise<string> {
    if (projectIds.length !== 1) {
      throw errors.actAsForbidden('subject_type external_user_id needs a single-project app; use service_member_id');
    }
    const existing = await this.store((r) => r.linkedUserByExternalId(app.id, subject));
    if (existing) return existing;
    const now = this.deps.clock.now();
    try {
      await this.store((r) =>
        r.createFederatedMember({
          userId: newId(now),
          membershipId: newId(now),
          linkId: newId(now),
          appId: app.id,
          projectId: projectIds[0],
          externalUserId: subject,
          now,
        }),
      );
    } catch (err) {
      // A concurrent first use created the link: fall through to read it.
      if (!(err instanceof ServiceError) || err.code !== 'KS234') throw err;
    }
    const created = await this.store((r) => r.linkedUserByExternalId(app.id, subject));
    if (!created) throw errors.authUnavailable();
    return created;
  }

  private async resolveServiceMember(app: AppRecord, subject: string): Promise<string> {
    if (!isObjectId(subject) || !(await this.store((r) => r.userExists(subject)))) {
      throw errors.subjectUnresolved('subject does not name a known member');
    }
    if (!(await this.store((r) => r.isLinked(app.id, subject)))) {
      throw errors.actAsForbidden("subject is not one of this app's linked members");
    }
    return subject;
  }

  private newToken(prefix: string, kind: 'access' | 'refresh', expiresAt: number): { row: NewToken; value: string } {
    const id = newId(this.deps.clock.now());
    const secret = randomSecret(32);
    return { row: { id, kind, secretHash: sha256Hex(secret), expiresAt }, value: `${prefix}_${id}_${secret}` };
  }

  private newPair(now: number, withRefresh: boolean, accessSeconds = this.deps.lifetimes.accessSeconds) {
    const access = this.newToken(ACCESS_PREFIX, 'access', now + accessSeconds * 1000);
    const response: TokenResponse = { access_token: access.value, expires_in: accessSeconds };
    const rows = [access.row];
    if (withRefresh) {
      const refreshSeconds = this.deps.lifetimes.refreshSeconds;
      const refresh = this.newToken(REFRESH_PREFIX, 'refresh', now + refreshSeconds * 1000);
      rows.push(refresh.row);
      response.refresh_token = refresh.value;
      response.refresh_token_expires_in = refreshSeconds;
    }
    return { rows, response };
  }

  private async issueFamily(appId: string, userId: string | null, grantType: string, withRefresh: boolean): Promise<TokenResponse> {
    const now = this.deps.clock.now();
    const seconds = grantType === GRANT_ACT_AS ? this.deps.lifetimes.actAsSeconds : this.deps.lifetimes.accessSeconds;
    const pair = this.newPair(now, withRefresh, seconds);
    const family = { id: newId(now), appId, userId, env: this.deps.env, grantType, now };
    await this.store((r) => r.createFamily(family, pair.rows));
    return pair.response;
  }

  /** Finds a live token of the expected kind or throws 401 KS002 (503 KS234 when the store is down). */
  private async lookup(value: string, prefix: string): Promise<TokenRecord> {
    const m = TOKEN_RE.exec(value);
    if (!m || m[1] !== prefix) throw errors.unauthorized(REFRESH_UNKNOWN);
    return this.lookupParsed(m[2], sha256Hex(m[3]), 'refresh');
  }

  private async lookupParsed(tokenId: string, secretHash: string, kind: 'access' | 'refresh' = 'access'): Promise<TokenRecord> {
    const refresh = kind === 'refresh';
    const token = await this.store((r) => r.findToken(tokenId));
    if (!token || !safeEqual(token.secretHash, secretHash)) throw errors.unauthorized(refresh ? REFRESH_UNKNOWN : undefined);
    if (token.env !== this.deps.env) throw errors.unauthorized('This token was issued for another environment');
    if (token.revokedAt !== null || token.familyRevokedAt !== null)
      throw errors.unauthorized(refresh ? 'Refresh token has been revoked' : 'Token has been revoked');
    if (token.expiresAt <= this.deps.clock.now()) throw errors.unauthorized(refresh ? 'Refresh token has expired' : 'Token has expired');
    return token;
  }

  /** Resolves `Authorization: Bearer …` to a Principal (from the caller cache when fresh). */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    return this.caller(authorization);
  }

  /**
   * `authenticate` without a promise when the caller cache answers: the Principal
   * itself on a fresh hit (the presented secret's hash compared in constant time
   * with the cached one), else the promise of the store's answer. A malformed
   * header throws 401 at once.
   */
  caller(authorization: string | undefined): Principal | Promise<Principal> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) throw errors.unauthorized('Missing bearer token');
    const t = TOKEN_RE.exec(m[1]);
    if (!t || t[1] !== ACCESS_PREFIX) throw errors.unauthorized();
    const secretHash = sha256Hex(t[3]);
    const now = this.deps.clock.now();
    return this.callers.get(t[2], secretHash, now) ?? this.resolveCaller(t[2], secretHash, now);
  }

  private async resolveCaller(tokenId: string, secretHash: string, now: number): Promise<Principal> {
    const mark = this.callers.mark();
    const token = await this.lookupParsed(tokenId, secretHash);
    const principal = await this.resolvePrincipal(token);
    this.callers.set(token.id, { principal, secretHash, expiresAt: token.expiresAt }, now, mark);
    return principal;
  }

  private async resolvePrincipal(token: TokenRecord): Promise<Principal> {
    const projects = token.userId ? await this.delegatedScope(token.appId, token.userId) : await this.appScope(token.appId);
    return {
      kind: token.userId ? 'member' : 'app',
      grant: token.userId ? 'act_as' : 'app_credentials',
      appId: token.appId,
      clientId: token.clientId,
      userId: token.userId,
      tokenId: token.id,
      familyId: token.familyId,
      appServiceUserId: token.appServiceUserId,
      projects,
    };
  }

  private async appScope(appId: string): Promise<Map<string, ProjectScope>> {
    const rows = await this.store((r) => r.appProjects(appId));
    return new Map(
      rows.map((p) => [
        p.projectId,
        {
          permissions: new Set(p.permissions ?? []),
          hasRole: p.permissions !== null,
          canBookPrivate: privateAccess({ appHasRole: p.permissions !== null }),
        },
      ]),
    );
  }

  /**
   * The member's scope (active memberships, plus the projects of brands they are
   * staff of) intersected with the app's projects and roles.
   */
  private async delegatedScope(appId: string, userId: string): Promise<Map<string, ProjectScope>> {
    const [app, member] = await Promise.all([this.appScope(appId), this.store((r) => r.memberScope(userId))]);
    const scope = new Map<string, ProjectScope>();
    const staffOf = new Set(member.brandStaffProjectIds);
    for (const m of member.memberships) {
      const appProject = app.get(m.projectId);
      if (!appProject || m.status !== 'active') continue;
      const memberPermissions = new Set(m.role === 'admin' ? [ALL_PERMISSIONS] : []);
      scope.set(m.projectId, {
        permissions: intersectPermissions(memberPermissions, appProject.permissions),
        hasRole: false,
        canBookPrivate: privateAccess({
          membership: m.userType === 'visitor' ? 'visitor' : 'member',
          brandStaff: staffOf.has(m.projectId),
        }),
      });
    }
    for (const projectId of staffOf) {
      const appProject = app.get(projectId);
      if (!appProject || scope.has(projectId)) continue;
      scope.set(projectId, { permissions: new Set(), hasRole: false, canBookPrivate: privateAccess({ brandStaff: true }) });
    }
    return scope;
  }

  /**
   * Removes tokens that expired more than a day ago (and their emptied families),
   * so the token store does not grow without bound. Returns how many were removed.
   */
  async purgeExpired(): Promise<number> {
    return this.repo.purgeExpired(this.deps.clock.now() - 86_400_000);
  }

  /** Revokes every token of the family the principal's token belongs to. */
  async revoke(principal: Principal): Promise<void> {
    await this.store((r) => r.revokeFamily(principal.familyId, this.deps.clock.now(), 'revoked by holder'));
    this.callers.forgetFamily(principal.familyId);
  }
}

// A real scrypt hash of a random string: verifying against it costs the same as a real app.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** Whether a caller may book (and see) a project's private assets: the one private-asset rule, asked for a non-public asset. */
function privateAccess(f: { membership?: 'member' | 'visitor'; brandStaff?: boolean; appHasRole?: boolean }): boolean {
  return mayBookPrivately({
    assetIsPublic: false,
    membership: f.membership ?? null,
    brandStaff: f.brandStaff ?? false,
    appHasRole: f.appHasRole,
  });
}
