/**
 * Persistence for apps, token families and tokens, and the member look-ups the
 * token grants need. No rules live here: the token service decides. Each method
 * takes an optional transaction last; the multi-statement writes open their own
 * when none is given.
 */
import type { Kysely } from 'kysely';
import { inTransaction, type Db } from '../../platform/db/db.js';
import type { Database } from '../../platform/db/schema.js';

export interface AppRecord {
  id: string;
  env: string;
  clientId: string;
  secretHash: string;
  actAs: boolean;
}

export interface AppProjectRecord {
  projectId: string;
  permissions: string[] | null;
}

export interface MembershipRecord {
  projectId: string;
  role: string;
  status: string;
  userType: string;
}

export interface MemberScopeRecord {
  memberships: MembershipRecord[];
  /** Projects whose brand lists the user as staff. */
  brandStaffProjectIds: string[];
}

export interface TokenRecord {
  id: string;
  familyId: string;
  kind: 'access' | 'refresh';
  secretHash: string;
  env: string;
  expiresAt: number;
  rotatedAt: number | null;
  revokedAt: number | null;
  familyRevokedAt: number | null;
  appId: string;
  clientId: string;
  userId: string | null;
  grantType: string;
  /** The user the app books as with its own token (null until its first booking). */
  appServiceUserId: string | null;
}

export interface NewToken {
  id: string;
  kind: 'access' | 'refresh';
  secretHash: string;
  expiresAt: number;
}

export interface NewFederatedMember {
  userId: string;
  membershipId: string;
  linkId: string;
  appId: string;
  projectId: string;
  externalUserId: string;
  now: number;
}

export class TokenRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async findApp(env: string, clientId: string, db: Db = this.db): Promise<AppRecord | undefined> {
    const row = await db
      .selectFrom('apps')
      .select(['id', 'env', 'client_id', 'secret_hash', 'act_as'])
      .where('env', '=', env)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    return row && { id: row.id, env: row.env, clientId: row.client_id, secretHash: row.secret_hash, actAs: row.act_as === 1 };
  }

  async appProjects(appId: string, db: Db = this.db): Promise<AppProjectRecord[]> {
    const rows = await db.selectFrom('app_projects').select(['project_id', 'permissions']).where('app_id', '=', appId).execute();
    return rows.map((r) => ({
      projectId: r.project_id,
      permissions: r.permissions === null ? null : (JSON.parse(r.permissions) as string[]),
    }));
  }

  async memberScope(userId: string, db: Db = this.db): Promise<MemberScopeRecord> {
    // The user's brand-staff list and memberships in one read (a user with no membership gives one row of nulls).
    const rows = await db
      .selectFrom('users')
      .leftJoin('memberships', 'memberships.user_id', 'users.id')
      .select(['users.brand_staff', 'memberships.project_id', 'memberships.role', 'memberships.status', 'memberships.user_type'])
      .where('users.id', '=', userId)
      .execute();
    const brands = rows.length ? (JSON.parse(rows[0].brand_staff) as string[]) : [];
    const staffProjects = brands.length ? await db.selectFrom('projects').select('id').where('brand_id', 'in', brands).execute() : [];
    return {
      memberships: rows
        .filter((r) => r.project_id !== null)
        .map((r) => ({ projectId: r.project_id!, role: r.role!, status: r.status!, userType: r.user_type! })),
      brandStaffProjectIds: staffProjects.map((p) => p.id),
    };
  }

  async userExists(userId: string, db: Db = this.db): Promise<boolean> {
    const row = await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
    return row !== undefined;
  }

  async linkedUserByExternalId(appId: string, externalUserId: string, db: Db = this.db): Promise<string | undefined> {
    const row = await db
      .selectFrom('app_links')
      .select('user_id')
      .where('app_id', '=', appId)
      .where('external_user_id', '=', externalUserId)
      .executeTakeFirst();
    return row?.user_id;
  }

  async isLinked(appId: string, userId: string, db: Db = this.db): Promise<boolean> {
    const row = await db.selectFrom('app_links').select('id').where('app_id', '=', appId).where('user_id', '=', userId).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Creates a visitor member (source federated) linked to the app. Throws on a
   * unique violation (which, in a caller's transaction on PostgreSQL, aborts it).
   */
  async createFederatedMember(m: NewFederatedMember, db: Db = this.db): Promise<void> {
    await inTransaction(this.db, db, async (trx) => {
      await trx
        .insertInto('users')
        .values({
          id: m.userId,
          key: null,
          email: null,
          email_lower: null,
          phone: null,
          username: null,
          name: m.externalUserId,
          first_name: null,
          last_name: null,
          profile_name: null,
          blocked_from_booking: 0,
          brand_staff: '[]',
          created_at: m.now,
          updated_at: m.now,
        })
        .execute();
      await trx
        .insertInto('memberships')
        .values({
          id: m.membershipId,
          user_id: m.userId,
          project_id: m.projectId,
          role: 'member',
          user_type: 'visitor',
          source: 'federated',
          status: 'active',
          employee_id: null,
          created_at: m.now,
          updated_at: m.now,
        })
        .execute();
      await trx
        .insertInto('app_links')
        .values({ id: m.linkId, app_id: m.appId, user_id: m.userId, external_user_id: m.externalUserId, created_at: m.now })
        .execute();
    });
  }

  async createFamily(
    family: { id: string; appId: string; userId: string | null; env: string; grantType: string; now: number },
    tokens: NewToken[],
    db: Db = this.db,
  ): Promise<void> {
    await inTransaction(this.db, db, async (trx) => {
      await trx
        .insertInto('token_families')
        .values({
          id: family.id,
          app_id: family.appId,
          user_id: family.userId,
          env: family.env,
          grant_type: family.grantType,
          created_at: family.now,
          revoked_at: null,
          revoked_reason: null,
        })
        .execute();
      await trx
        .insertInto('tokens')
        .values(tokens.map((t) => ({ ...this.tokenRow(t, family.id, family.env, family.now) })))
        .execute();
    });
  }

  async findToken(id: string, db: Db = this.db): Promise<TokenRecord | undefined> {
    const row = await db
      .selectFrom('tokens')
      .innerJoin('token_families', 'token_families.id', 'tokens.family_id')
      .innerJoin('apps', 'apps.id', 'token_families.app_id')
      .select([
        'tokens.id',
        'tokens.family_id',
        'tokens.kind',
        'tokens.secret_hash',
        'tokens.env',
        'tokens.expires_at',
        'tokens.rotated_at',
        'tokens.revoked_at',
        'token_families.revoked_at as family_revoked_at',
        'token_families.app_id',
        'token_families.user_id',
        'token_families.grant_type',
        'apps.client_id',
        'apps.service_user_id',
      ])
      .where('tokens.id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      id: row.id,
      familyId: row.family_id,
      kind: row.kind as 'access' | 'refresh',
      secretHash: row.secret_hash,
      env: row.env,
      expiresAt: row.expires_at,
      rotatedAt: row.rotated_at,
      revokedAt: row.revoked_at,
      familyRevokedAt: row.family_revoked_at,
      appId: row.app_id,
      clientId: row.client_id,
      userId: row.user_id,
      grantType: row.grant_type,
      appServiceUserId: row.service_user_id,
    };
  }

  /**
   * Retires a refresh token and stores its successors, atomically. Returns false
   * when the token was already rotated (a concurrent refresh won).
   */
  async rotate(oldTokenId: string, familyId: string, env: string, now: number, successors: NewToken[], db: Db = this.db): Promise<boolean> {
    return inTransaction(this.db, db, async (trx) => {
      const res = await trx
        .updateTable('tokens')
        .set({ rotated_at: now })
        .where('id', '=', oldTokenId)
        .where('rotated_at', 'is', null)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('tokens')
        .values(successors.map((t) => this.tokenRow(t, familyId, env, now)))
        .execute();
      return true;
    });
  }

  async revokeFamily(familyId: string, now: number, reason: string, db: Db = this.db): Promise<void> {
    await inTransaction(this.db, db, async (trx) => {
      await trx
        .updateTable('token_families')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('id', '=', familyId)
        .where('revoked_at', 'is', null)
        .execute();
      await trx.updateTable('tokens').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
    });
  }

  private tokenRow(t: NewToken, familyId: string, env: string, now: number) {
    return {
      id: t.id,
      family_id: familyId,
      kind: t.kind,
      secret_hash: t.secretHash,
      env,
      created_at: now,
      expires_at: t.expiresAt,
      rotated_at: null,
      revoked_at: null,
    };
  }

  /** Deletes tokens that expired before `before`, and families left without tokens. Returns the tokens deleted. */
  async purgeExpired(before: number, db: Db = this.db): Promise<number> {
    return inTransaction(this.db, db, async (trx) => {
      const res = await trx.deleteFrom('tokens').where('expires_at', '<', before).executeTakeFirst();
      await trx
        .deleteFrom('token_families')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('tokens').select('tokens.id').whereRef('tokens.family_id', '=', 'token_families.id'))),
        )
        .execute();
      return Number(res.numDeletedRows);
    });
  }
}
