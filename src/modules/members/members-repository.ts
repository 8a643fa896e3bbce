/**
 * The members module's tables (member_groups, unit_residents, access_changes, the
 * partner's app_links, and users/memberships as partner PUTs write them) plus the
 * reads of cards and faces GET and DELETE need.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database, MembershipTable, RoomTable, UnitResidentTable, UserTable } from '../../platform/db/schema.js';

/** A user as partner provisioning reads and writes it (booking's flags and brand staff roles are not its business). */
export type UserRow = Omit<UserTable, 'blocked_from_booking' | 'brand_staff'>;
const USER_COLUMNS = [
  'id',
  'key',
  'email',
  'email_lower',
  'phone',
  'username',
  'name',
  'first_name',
  'last_name',
  'profile_name',
  'created_at',
  'updated_at',
] as const;
export type MembershipRow = MembershipTable;
export type RoomRef = Pick<RoomTable, 'id' | 'address_no' | 'unit_id' | 'zone_id'>;
export type ResidentRow = UnitResidentTable & { address_no: string | null; unit_id: string | null };

export class MembersRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
  ) {}

  /**
   * Serializes partner writes of one app: a row lock on the app on PostgreSQL; on
   * SQLite the write transaction (BEGIN IMMEDIATE) already holds the database lock.
   */
  async lockApp(appId: string, db: Db = this.db): Promise<void> {
    if (this.engine !== 'postgres') return;
    await db.selectFrom('apps').select('id').where('id', '=', appId).forUpdate().execute();
  }

  async linkedUser(appId: string, externalUserId: string, db: Db = this.db): Promise<string | undefined> {
    const row = await db
      .selectFrom('app_links')
      .select('user_id')
      .where('app_id', '=', appId)
      .where('external_user_id', '=', externalUserId)
      .executeTakeFirst();
    return row?.user_id;
  }

  /** externalUserId under which the app manages each of `userIds`. */
  async linksOf(appId: string, userIds: string[], db: Db = this.db): Promise<Map<string, string>> {
    if (!userIds.length) return new Map();
    const rows = await db
      .selectFrom('app_links')
      .select(['user_id', 'external_user_id'])
      .where('app_id', '=', appId)
      .where('user_id', 'in', userIds)
      .execute();
    return new Map(rows.map((r) => [r.user_id, r.external_user_id]));
  }

  async userIdByEmail(emailLower: string, db: Db = this.db): Promise<string | undefined> {
    return (await db.selectFrom('users').select('id').where('email_lower', '=', emailLower).executeTakeFirst())?.id;
  }

  async userIdByPhone(phone: string, db: Db = this.db): Promise<string | undefined> {
    return (await db.selectFrom('users').select('id').where('phone', '=', phone).executeTakeFirst())?.id;
  }

  async userIdByEmployee(projectId: string, employeeId: string, db: Db = this.db): Promise<string | undefined> {
    return (
      await db
        .selectFrom('memberships')
        .select('user_id')
        .where('project_id', '=', projectId)
        .where('employee_id', '=', employeeId)
        .executeTakeFirst()
    )?.user_id;
  }

  async userIdByUsername(username: string, db: Db = this.db): Promise<string | undefined> {
    return (await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst())?.id;
  }

  async user(userId: string, db: Db = this.db): Promise<UserRow | undefined> {
    return db.selectFrom('users').select(USER_COLUMNS).where('id', '=', userId).executeTakeFirst();
  }

  async membership(userId: string, projectId: string, db: Db = this.db): Promise<MembershipRow | undefined> {
    return db.selectFrom('memberships').selectAll().where('user_id', '=', userId).where('project_id', '=', projectId).executeTakeFirst();
  }

  /** A partner member's user: never blocked from booking, no brand staff roles. */
  async insertUser(row: UserRow, db: Db = this.db): Promise<void> {
    await db
      .insertInto('users')
      .values({ ...row, blocked_from_booking: 0, brand_staff: '[]' })
      .execute();
  }

  async updateUser(userId: string, set: Partial<Omit<UserRow, 'id'>>, db: Db = this.db): Promise<void> {
    if (!Object.keys(set).length) return;
    await db.updateTable('users').set(set).where('id', '=', userId).execute();
  }

  async insertMembership(row: MembershipRow, db: Db = this.db): Promise<void> {
    await db.insertInto('memberships').values(row).execute();
  }

  async updateMembership(id: string, set: Partial<Omit<MembershipRow, 'id'>>, db: Db = this.db): Promise<void> {
    if (!Object.keys(set).length) return;
    await db.updateTable('memberships').set(set).where('id', '=', id).execute();
  }

  async insertLink(
    row: { id: string; app_id: string; user_id: string; external_user_id: string; created_at: number },
    db: Db = this.db,
  ): Promise<void> {
    await db.insertInto('app_links').values(row).execute();
  }

  /** The app's preconfigured access groups that belong to the project. */
  async appGroupIds(appId: string, projectId: string, db: Db = this.db): Promise<string[]> {
    const rows = await db
      .selectFrom('app_access_groups')
      .innerJoin('access_groups', 'access_groups.id', 'app_access_groups.access_group_id')
      .select('access_groups.id')
      .where('app_access_groups.app_id', '=', appId)
      .where('access_groups.project_id', '=', projectId)
      .orderBy('access_groups.id')
      .execute();
    return rows.map((r) => r.id);
  }

  async memberGroupIds(userId: string, projectId: string, db: Db = this.db): Promise<string[]> {
    const rows = await db
      .selectFrom('member_groups')
      .select('access_group_id')
      .where('user_id', '=', userId)
      .where('project_id', '=', projectId)
      .orderBy('access_group_id')
      .execute();
    return rows.map((r) => r.access_group_id);
  }

  /** Members holding any access group of the project. */
  async groupedMembers(projectId: string, db: Db = this.db): Promise<string[]> {
    const rows = await db.selectFrom('member_groups').select('user_id').distinct().where('project_id', '=', projectId).execute();
    return rows.map((r) => r.user_id);
  }

  async addMemberGroups(userId: string, projectId: string, groupIds: string[], now: number, db: Db = this.db): Promise<void> {
    if (!groupIds.length) return;
    await db
      .insertInto('member_groups')
      .values(groupIds.map((g) => ({ user_id: userId, access_group_id: g, project_id: projectId, created_at: now })))
      .execute();
  }

  async removeMemberGroups(userId: string, groupIds: string[], db: Db = this.db): Promise<void> {
    if (!groupIds.length) return;
    await db.deleteFrom('member_groups').where('user_id', '=', userId).where('access_group_id', 'in', groupIds).execute();
  }

  /** Rooms of the project a unit binding names. */
  async unitRooms(projectId: string, by: { addressNo?: string; unitId?: string; zoneId?: string }, db: Db = this.db): Promise<RoomRef[]> {
    let q = db.selectFrom('rooms').select(['id', 'address_no', 'unit_id', 'zone_id']).where('project_id', '=', projectId);
    if (by.addressNo !== undefined) q = q.where('address_no', '=', by.addressNo);
    if (by.unitId !== undefined) q = q.where('unit_id', '=', by.unitId);
    if (by.zoneId !== undefined) q = q.where('zone_id', '=', by.zoneId);
    return q.orderBy('id').execute();
  }

  async residence(projectId: string, userId: string, db: Db = this.db): Promise<ResidentRow | undefined> {
    return db
      .selectFrom('unit_residents')
      .innerJoin('rooms', 'rooms.id', 'unit_residents.room_id')
      .selectAll('unit_residents')
      .select(['rooms.address_no', 'rooms.unit_id'])
      .where('unit_residents.project_id', '=', projectId)
      .where('unit_residents.user_id', '=', userId)
      .executeTakeFirst();
  }

  /** The name of the unit (room) the user lives in within the project, if any. */
  async unitName(projectId: string, userId: string, db: Db = this.db): Promise<string | undefined> {
    const row = await db
      .selectFrom('unit_residents')
      .innerJoin('rooms', 'rooms.id', 'unit_residents.room_id')
      .select('rooms.name')
      .where('unit_residents.project_id', '=', projectId)
      .where('unit_residents.user_id', '=', userId)
      .executeTakeFirst();
    return row?.name;
  }

  async residentCount(roomId: string, exceptUserId: string, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('unit_residents')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('room_id', '=', roomId)
      .where('user_id', '<>', exceptUserId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insertResident(row: UnitResidentTable, db: Db = this.db): Promise<void> {
    await db.insertInto('unit_residents').values(row).execute();
  }

  async deleteResident(projectId: string, userId: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom('unit_residents').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
  }

  /** A unit left without an owner passes ownership to its longest resident. */
  async promoteOldestResident(roomId: string, db: Db = this.db): Promise<void> {
    const owner = await db
      .selectFrom('unit_residents')
      .select('user_id')
      .where('room_id', '=', roomId)
      .where('role', '=', 'owner')
      .executeTakeFirst();
    if (owner) return;
    const next = await db
      .selectFrom('unit_residents')
      .select(['project_id', 'user_id'])
      .where('room_id', '=', roomId)
      .orderBy('created_at')
      .orderBy('user_id')
      .executeTakeFirst();
    if (!next) return;
    await db
      .updateTable('unit_residents')
      .set({ role: 'owner' })
      .where('project_id', '=', next.project_id)
      .where('user_id', '=', next.user_id)
      .execute();
  }

  /** Revokes every active card (physical and virtual); the number revoked. */
  async revokeActiveCards(userId: string, projectId: string, now: number, db: Db = this.db): Promise<number> {
    const res = await db
      .updateTable('cards')
      .set({ status: 'revoked', revoked_at: now })
      .where('user_id', '=', userId)
      .where('project_id', '=', projectId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }
}
