/** Users and memberships as the booking flows need them. */
import type { Kysely } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Database, MembershipTable, UserTable } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import { PreparedStatements, slot } from '../../platform/db/statements.js';

/** A user as the booking flows read it: the 0/1 flag as a boolean, the brand-staff list parsed. */
export type UserRow = Omit<UserTable, 'blocked_from_booking' | 'brand_staff'> & { blocked_from_booking: boolean; brand_staff: string[] };
export type MembershipRow = MembershipTable;

function userRecord(u: UserTable): UserRow {
  return { ...u, blocked_from_booking: u.blocked_from_booking === 1, brand_staff: JSON.parse(u.brand_staff) as string[] };
}

export class PeopleRepository {
  private readonly statements: PreparedStatements;

  constructor(private readonly db: Kysely<Database>) {
    this.statements = new PreparedStatements(db);
  }

  async user(id: string, db: Db = this.db): Promise<UserRow | undefined> {
    const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && userRecord(row);
  }

  async membership(userId: string, projectId: string, db: Db = this.db): Promise<MembershipRow | undefined> {
    return db.selectFrom('memberships').selectAll().where('user_id', '=', userId).where('project_id', '=', projectId).executeTakeFirst();
  }

  async usersByEmail(emails: string[], db: Db = this.db): Promise<Map<string, UserRow>> {
    const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
    if (!lower.length) return new Map();
    const rows = await db.selectFrom('users').selectAll().where('email_lower', 'in', lower).execute();
    return new Map(rows.map((r) => [r.email_lower!, userRecord(r)]));
  }

  /** One user by id and others by email (case-insensitive), in one read. */
  async userAndEmails(id: string, emails: string[], db: Db = this.db): Promise<UserAndEmails> {
    const q = userAndEmailsQuery(id, emails);
    return q.found(await this.statements.rows(db, q.name, q.build, q.values));
  }

  /**
   * The same read, started on `db` to ride with its next statement on PostgreSQL
   * (platform/db/pg-driver.ts); resolves once started, with the users to come.
   */
  async userAndEmailsAhead(id: string, emails: string[], db: Db): Promise<{ found: Promise<UserAndEmails> }> {
    const q = userAndEmailsQuery(id, emails);
    const started = await this.statements.rowsAhead(db, q.name, q.build, q.values);
    return { found: started.rows.then(q.found) };
  }

  /**
   * The names of ids found as a history entry's `by`: users (an app's service user
   * marked as the app, under the app's name) and apps by client id (an app that
   * acted before it had a service user).
   */
  async actorNames(ids: string[], db: Db = this.db): Promise<Map<string, { name: string; app: boolean }>> {
    const out = new Map<string, { name: string; app: boolean }>();
    const wanted = [...new Set(ids)];
    if (!wanted.length) return out;
    const users = await db
      .selectFrom('users')
      .leftJoin('apps', 'apps.service_user_id', 'users.id')
      .select(['users.id as id', 'users.name as name', 'apps.name as appName'])
      .where('users.id', 'in', wanted)
      .execute();
    for (const u of users) out.set(u.id, u.appName !== null ? { name: u.appName, app: true } : { name: u.name, app: false });
    const rest = wanted.filter((id) => !out.has(id));
    if (rest.length) {
      const apps = await db.selectFrom('apps').select(['client_id', 'name']).where('client_id', 'in', rest).execute();
      for (const a of apps) out.set(a.client_id, { name: a.name, app: true });
    }
    return out;
  }

  /**
   * The user an app books as when it uses its own token: created on first use,
   * named after the app, never a project member. Its own transaction rolls back
   * the new user when a concurrent call claimed the app first; in a caller's
   * transaction the losing user row is deleted instead, so the caller's work survives.
   */
  async appServiceUser(appId: string, now: number, db: Db = this.db): Promise<string> {
    const app = await db.selectFrom('apps').select(['service_user_id', 'name']).where('id', '=', appId).executeTakeFirstOrThrow();
    if (app.service_user_id) return app.service_user_id;
    const userId = newId(now);
    const claim = async (trx: Db): Promise<boolean> => {
      await trx
        .insertInto('users')
        .values({
          id: userId,
          key: null,
          email: null,
          email_lower: null,
          phone: null,
          username: null,
          name: app.name,
          first_name: null,
          last_name: null,
          profile_name: app.name,
          blocked_from_booking: 0,
          brand_staff: '[]',
          created_at: now,
          updated_at: now,
        })
        .execute();
      const res = await trx
        .updateTable('apps')
        .set({ service_user_id: userId })
        .where('id', '=', appId)
        .where('service_user_id', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    };
    let claimed: boolean;
    if (db === this.db) {
      claimed = await this.db
        .transaction()
        .execute(async (trx) => {
          if (!(await claim(trx))) throw new RaceLost();
          return true;
        })
        .catch((err) => {
          if (err instanceof RaceLost) return false;
          throw err;
        });
    } else {
      claimed = await claim(db);
      if (!claimed) await db.deleteFrom('users').where('id', '=', userId).execute();
    }
    if (claimed) return userId;
    const again = await db.selectFrom('apps').select('service_user_id').where('id', '=', appId).executeTakeFirstOrThrow();
    return again.service_user_id!;
  }
}

class RaceLost extends Error {}

/** One user by id and the users with any of `emails`. */
export interface UserAndEmails {
  user: UserRow | undefined;
  byEmail: Map<string, UserRow>;
}

/** The statement of `userAndEmails` (its shape depends on how many distinct emails) and how its rows are read. */
function userAndEmailsQuery(id: string, emails: string[]) {
  const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
  const n = lower.length;
  const wanted = new Set(lower);
  return {
    name: `userAndEmails:${n}`,
    build: (root: Kysely<Database>) =>
      root
        .selectFrom('users')
        .selectAll()
        .where((eb) =>
          n
            ? eb.or([
                eb('id', '=', slot(0)),
                eb(
                  'email_lower',
                  'in',
                  lower.map((_, i) => slot(i + 1)),
                ),
              ])
            : eb('id', '=', slot(0)),
        )
        .compile(),
    values: [id, ...lower],
    found: (stored: UserTable[]): UserAndEmails => {
      const rows = stored.map(userRecord);
      return {
        user: rows.find((r) => r.id === id),
        byEmail: new Map(rows.filter((r) => r.email_lower !== null && wanted.has(r.email_lower)).map((r) => [r.email_lower!, r])),
      };
    },
  };
}
