/**
 * Partner member provisioning (api-spec "Partner member endpoints"): PUT resolves
 * and writes a member, GET reads it, DELETE offboards it.
 *
 * Decisions:
 * - memberId is the user id; it survives offboarding and re-activation.
 * - firstName and lastName are required only when the PUT creates a member
 *   (400 KS001 otherwise); on an existing member every omitted field is left as is.
 * - Every PUT makes sure the member holds the app's preconfigured groups (of the
 *   app's project); a grant writes an access change `groups`, a re-activation one
 *   `reactivated`, an offboarding one `offboarded`.
 * - Writes run in one write transaction that first locks the app (PostgreSQL: the
 *   app row; SQLite: BEGIN IMMEDIATE), so partner writes of one app are serialized
 *   across instances. Every conflict is decided before anything is written. A
 *   unique violation from a concurrent writer outside the lock (act_as, site apply)
 *   re-runs the whole call, which then sees the winner's rows.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Database } from '../../platform/db/schema.js';
import type { Engine } from '../../platform/db/database.js';
import type { Db } from '../../platform/db/db.js';
import { writeTransaction } from '../../platform/db/transactions.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { PartnerMember, PutMemberBody, PutMemberResult, UnitView } from '../../contract/members.js';
import type { MembershipRow, MembersRepository, ResidentRow, UserRow } from './members-repository.js';
import { normalizePhone } from './rules/phone.js';
import { pickUnit, residentRole, resolveMember, type IdentityKey, type Resolution } from './rules/resolution.js';
import type { CredentialService } from './credential-service.js';
import type { AccessChangeLog } from '../devices/index.js';

export interface PartnerContext {
  appId: string;
  projectId: string;
}

/** What the partner routes need of the caller (the auth module's Principal has these). */
export interface PartnerCaller {
  kind: string;
  grant: string;
  appId: string;
  projects: ReadonlyMap<string, unknown>;
}

/** The access rules of every partner route: a plain app token of a single-project app. */
export function partnerContext(p: PartnerCaller): PartnerContext {
  if (p.kind !== 'app' || p.grant !== 'app_credentials') {
    throw errors.forbidden("Partner member routes accept only the app's own app_credentials token");
  }
  if (p.projects.size !== 1) throw errors.actAsForbidden('Partner member routes are open only to single-project apps');
  return { appId: p.appId, projectId: [...p.projects.keys()][0]! };
}

const notManaged = () => errors.actAsForbidden('This app manages no member under that externalUserId');

const KEY_TEXT: Record<IdentityKey, string> = { email: 'email', phone: 'phone', employeeId: 'employeeId' };

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** The key a unique violation that survived the retries is about. */
function violatedKey(err: unknown): string {
  const text = `${(err as Error)?.message ?? ''} ${(err as { constraint?: string })?.constraint ?? ''}`;
  if (/email/.test(text)) return 'email';
  if (/phone/.test(text)) return 'phone';
  if (/employee|username/.test(text)) return 'employeeId';
  return 'externalUserId';
}

function displayName(first: string | null, last: string | null, profile: string | null, fallback: string): string {
  return (
    [first, last]
      .filter((s) => s && s.trim())
      .join(' ')
      .trim() ||
    profile ||
    fallback
  );
}

function unitView(r: ResidentRow | undefined): UnitView | null {
  if (!r) return null;
  return {
    roomId: r.room_id,
    addressNo: r.address_no ?? '',
    groupId: r.unit_id ?? r.room_id,
    role: r.role === 'owner' ? 'owner' : 'participant',
  };
}

const PHONE_SHAPE = /^\+?\d{6,15}$/;

export interface MemberServiceDeps {
  db: Kysely<Database>;
  engine: Engine;
  repo: MembersRepository;
  /** The member's cards and face, as the credentials route keeps them. */
  credentials: CredentialService;
  /** Where access changes go (the devices module): recorded in the same transaction. */
  access: AccessChangeLog;
  clock: Clock;
  /** Told after a member's memberships changed (callers resolved earlier may carry an old scope). */
  onMembershipsChanged?: () => void;
}

export class MemberService {
  constructor(private readonly deps: MemberServiceDeps) {}

  async put(ctx: PartnerContext, externalUserId: string, body: PutMemberBody): Promise<PutMemberResult> {
    const input = this.checkBody(body);
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await writeTransaction(this.deps.db, this.deps.engine, (trx) => this.putIn(trx, ctx, externalUserId, input));
        this.deps.onMembershipsChanged?.();
        this.deps.access.poke();
        return result;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        if (attempt >= 2)
          throw errors.partnerConflict("A concurrent change took one of this member's keys", { conflictKey: violatedKey(err) });
      }
    }
  }

  async get(ctx: PartnerContext, externalUserId: string): Promise<PartnerMember> {
    const { repo } = this.deps;
    const userId = await repo.linkedUser(ctx.appId, externalUserId);
    if (!userId) throw notManaged();
    const [user, membership] = await Promise.all([repo.user(userId), repo.membership(userId, ctx.projectId)]);
    if (!user || !membership) throw notManaged();
    const [groups, residence, credentials] = await Promise.all([
      repo.memberGroupIds(userId, ctx.projectId),
      repo.residence(ctx.projectId, userId),
      this.deps.credentials.current(ctx.projectId, userId),
    ]);
    return {
      memberId: userId,
      externalUserId,
      projectId: ctx.projectId,
      status: membership.status === 'deactivated' ? 'deactivated' : 'active',
      source: membership.source,
      userType: membership.user_type,
      accessGroupIds: groups,
      employeeId: membership.employee_id,
      unit: unitView(residence),
      profile: {
        firstName: user.first_name,
        lastName: user.last_name,
        profileName: user.profile_name,
        email: user.email,
        phone: user.phone,
      },
      credentials,
    };
  }

  /** The name of the unit the user lives in within the project (a room bound as their unit), or undefined. */
  unitName(projectId: string, userId: string): Promise<string | undefined> {
    return this.deps.repo.unitName(projectId, userId);
  }

  /** The member this app manages under `externalUserId` (403 KS221 otherwise); never creates. */
  async reach(ctx: PartnerContext, externalUserId: string): Promise<{ appId: string; projectId: string; userId: string; status: string }> {
    const userId = await this.deps.repo.linkedUser(ctx.appId, externalUserId);
    const membership = userId ? await this.deps.repo.membership(userId, ctx.projectId) : undefined;
    if (!userId || !membership) throw notManaged();
    return { appId: ctx.appId, projectId: ctx.projectId, userId, status: membership.status };
  }

  /** Offboards the member: deactivated, cards revoked, out of the app's groups; the link stays. Idempotent. */
  async remove(ctx: PartnerContext, externalUserId: string): Promise<void> {
    const { repo, clock } = this.deps;
    await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      await repo.lockApp(ctx.appId, trx);
      const userId = await repo.linkedUser(ctx.appId, externalUserId, trx);
      if (!userId) throw notManaged();
      const membership = await repo.membership(userId, ctx.projectId, trx);
      if (!membership) throw notManaged();
      const now = clock.now();
      const revoked = await repo.revokeActiveCards(userId, ctx.projectId, now, trx);
      const appGroups = new Set(await repo.appGroupIds(ctx.appId, ctx.projectId, trx));
      const leaving = (await repo.memberGroupIds(userId, ctx.projectId, trx)).filter((g) => appGroups.has(g));
      await repo.removeMemberGroups(userId, leaving, trx);
      const deactivating = membership.status !== 'deactivated';
      if (deactivating) await repo.updateMembership(membership.id, { status: 'deactivated', updated_at: now }, trx);
      if (deactivating || revoked > 0 || leaving.length > 0) {
        await this.deps.access.record(trx, {
          projectId: ctx.projectId,
          subject: { kind: 'member', id: userId },
          reason: 'offboarded',
          at: now,
        });
      }
    });
    this.deps.onMembershipsChanged?.();
    this.deps.access.poke();
  }

  private checkBody(body: PutMemberBody): PutMemberBody {
    const problems: string[] = [];
    let phone = body.phone;
    if (phone !== undefined) {
      phone = normalizePhone(phone);
      if (!PHONE_SHAPE.test(phone))
        problems.push('body.phone must be a phone number (digits, optionally with +, spaces, dashes, dots or parentheses)');
    }
    if (body.unit && body.unit.addressNo === undefined && body.unit.unitId === undefined)
      problems.push('body.unit needs addressNo or unitId');
    if (problems.length) throw errors.validation(problems);
    return { ...body, ...(phone !== undefined ? { phone } : {}) };
  }

  /** One PUT inside the app's lock: resolve and refuse every conflict, then write the user, membership, link, groups and unit. */
  private async putIn(trx: Db, ctx: PartnerContext, externalUserId: string, body: PutMemberBody): Promise<PutMemberResult> {
    await this.deps.repo.lockApp(ctx.appId, trx);
    const plan = await this.resolvePut(trx, ctx, externalUserId, body);
    const now = this.deps.clock.now();
    const userId = await this.writeUser(trx, plan, now);
    const membership = plan.creating ? undefined : await this.deps.repo.membership(userId, ctx.projectId, trx);
    const reactivated = await this.writeMembership(trx, plan, userId, membership, now);
    if (!plan.linked) {
      await this.deps.repo.insertLink(
        { id: newId(now), app_id: ctx.appId, user_id: userId, external_user_id: externalUserId, created_at: now },
        trx,
      );
    }
    const groups = await this.grantAppGroups(trx, plan, userId, reactivated, now);
    const residence = await this.moveResidence(trx, plan, userId, now);
    return {
      memberId: userId,
      externalUserId,
      projectId: ctx.projectId,
      created: plan.creating,
      matchedBy: plan.resolution.matchedBy,
      accessGroupIds: groups,
      employeeId: body.employeeId ?? membership?.employee_id ?? null,
      unit: unitView(residence),
    };
  }

  /** Step 1: which member the PUT is about, and every conflict refused before anything is written. */
  private async resolvePut(trx: Db, ctx: PartnerContext, externalUserId: string, body: PutMemberBody): Promise<PutPlan> {
    const { repo } = this.deps;
    const { appId, projectId } = ctx;
    const linked = await repo.linkedUser(appId, externalUserId, trx);
    const emailLower = body.email?.toLowerCase();
    const byKey: Partial<Record<IdentityKey, string>> = {};
    if (emailLower !== undefined) byKey.email = await repo.userIdByEmail(emailLower, trx);
    if (body.phone !== undefined) byKey.phone = await repo.userIdByPhone(body.phone, trx);
    if (body.employeeId !== undefined) byKey.employeeId = await repo.userIdByEmployee(projectId, body.employeeId, trx);
    for (const k of Object.keys(byKey) as IdentityKey[]) if (byKey[k] === undefined) delete byKey[k];
    const linkOf = await repo.linksOf(appId, [...new Set(Object.values(byKey))], trx);
    const resolution = resolveMember({ externalUserId, linked, byKey, linkOf });
    if (resolution.kind === 'conflict') {
      const { conflictKey, linkedExternalUserId } = resolution.conflict;
      throw errors.partnerConflict(
        linkedExternalUserId !== undefined
          ? `${KEY_TEXT[conflictKey]} belongs to a member this app manages under another externalUserId`
          : `${KEY_TEXT[conflictKey]} is already taken by another member`,
        linkedExternalUserId !== undefined ? { conflictKey, linkedExternalUserId } : { conflictKey },
      );
    }
    const creating = resolution.kind === 'new';
    if (creating) {
      const missing = (['firstName', 'lastName'] as const).filter((f) => body[f] === undefined);
      if (missing.length) throw errors.validation(missing.map((f) => `body.${f} is required to create a member`));
    }
    const loginless = creating && body.email === undefined && body.phone === undefined && body.employeeId !== undefined;
    const username = loginless ? `${projectId}_${body.employeeId}` : null;
    if (username && (await repo.userIdByUsername(username, trx))) {
      throw errors.partnerConflict('employeeId is already taken by another member', { conflictKey: 'employeeId' });
    }
    const room = await this.pickRoom(trx, projectId, body);
    return { ctx, externalUserId, body, linked, emailLower, resolution, creating, username, room };
  }

  /** The unit room a PUT binds the member to (none when the body names no unit). */
  private async pickRoom(trx: Db, projectId: string, body: PutMemberBody): Promise<{ id: string } | undefined> {
    if (!body.unit) return undefined;
    const pick = pickUnit(await this.deps.repo.unitRooms(projectId, body.unit, trx));
    if (pick.kind === 'none') throw errors.notFound('The project has no unit with that addressNo');
    if (pick.kind === 'ambiguous') {
      const key = body.unit.addressNo !== undefined ? 'unit.addressNo' : 'unit.unitId';
      throw errors.partnerConflict('That unit exists in several zones; send unit.zoneId', { conflictKey: key });
    }
    return pick.room;
  }

  /** Step 2: the user, created or with the profile fields the body changes; its id. */
  private async writeUser(trx: Db, plan: PutPlan, now: number): Promise<string> {
    const { repo } = this.deps;
    const { body, resolution, emailLower } = plan;
    if (resolution.kind !== 'new') {
      const user = await repo.user(resolution.userId, trx);
      if (user) await repo.updateUser(resolution.userId, profileChanges(user, body, emailLower, now), trx);
      return resolution.userId;
    }
    const userId = newId(now);
    const first = body.firstName ?? null;
    const last = body.lastName ?? null;
    const profile = body.profileName ?? null;
    await repo.insertUser(
      {
        id: userId,
        key: null,
        email: body.email ?? null,
        email_lower: emailLower ?? null,
        phone: body.phone ?? null,
        username: plan.username,
        name: displayName(first, last, profile, body.employeeId ?? plan.externalUserId),
        first_name: first,
        last_name: last,
        profile_name: profile,
        created_at: now,
        updated_at: now,
      },
      trx,
    );
    return userId;
  }

  /** Step 3: the membership in the project, created, re-activated or given the new employeeId; whether it was re-activated. */
  private async writeMembership(
    trx: Db,
    plan: PutPlan,
    userId: string,
    membership: MembershipRow | undefined,
    now: number,
  ): Promise<boolean> {
    const { repo } = this.deps;
    const { body } = plan;
    if (!membership) {
      await repo.insertMembership(
        {
          id: newId(now),
          user_id: userId,
          project_id: plan.ctx.projectId,
          role: 'member',
          user_type: 'member',
          source: 'partner',
          status: 'active',
          employee_id: body.employeeId ?? null,
          created_at: now,
          updated_at: now,
        },
        trx,
      );
      return false;
    }
    const reactivated = membership.status === 'deactivated';
    const employeeChanged = body.employeeId !== undefined && body.employeeId !== membership.employee_id;
    if (reactivated || employeeChanged) {
      await repo.updateMembership(
        membership.id,
        {
          ...(reactivated ? { status: 'active' } : {}),
          ...(employeeChanged ? { employee_id: body.employeeId } : {}),
          updated_at: now,
        },
        trx,
      );
    }
    return reactivated;
  }

  /** Step 4: the app's groups the member lacks, granted (an access change when anything changed); every group held, sorted. */
  private async grantAppGroups(trx: Db, plan: PutPlan, userId: string, reactivated: boolean, now: number): Promise<string[]> {
    const { repo } = this.deps;
    const { appId, projectId } = plan.ctx;
    const held = plan.creating ? [] : await repo.memberGroupIds(userId, projectId, trx);
    const granted = (await repo.appGroupIds(appId, projectId, trx)).filter((g) => !held.includes(g));
    await repo.addMemberGroups(userId, projectId, granted, now, trx);
    if (reactivated || granted.length) {
      await this.deps.access.record(trx, {
        projectId,
        subject: { kind: 'member', id: userId },
        reason: reactivated ? 'reactivated' : 'groups',
        at: now,
      });
    }
    return [...held, ...granted].sort();
  }

  /** Step 5: the unit binding, moved when the body names another unit (or null); the residence after the PUT. */
  private async moveResidence(trx: Db, plan: PutPlan, userId: string, now: number): Promise<ResidentRow | undefined> {
    const { repo } = this.deps;
    const { projectId } = plan.ctx;
    const { body, room } = plan;
    let residence = plan.creating ? undefined : await repo.residence(projectId, userId, trx);
    if (body.unit !== undefined && (body.unit === null || residence?.room_id !== room?.id)) {
      if (residence) {
        await repo.deleteResident(projectId, userId, trx);
        await repo.promoteOldestResident(residence.room_id, trx);
      }
      if (room) {
        const others = await repo.residentCount(room.id, userId, trx);
        await repo.insertResident(
          { project_id: projectId, user_id: userId, room_id: room.id, role: residentRole(others), created_at: now },
          trx,
        );
      }
      residence = room ? await repo.residence(projectId, userId, trx) : undefined;
    }
    return residence;
  }
}

/** What step 1 of a PUT decided: the member it is about and what the writes need. */
interface PutPlan {
  ctx: PartnerContext;
  externalUserId: string;
  body: PutMemberBody;
  /** The user already linked under externalUserId, if any. */
  linked: string | undefined;
  emailLower: string | undefined;
  resolution: Exclude<Resolution, { kind: 'conflict' }>;
  creating: boolean;
  /** The login-less member's username (employeeId only), or null. */
  username: string | null;
  room: { id: string } | undefined;
}

/** The user columns a PUT changes on an existing member (omitted fields are left as they are). */
function profileChanges(user: UserRow, body: PutMemberBody, emailLower: string | undefined, now: number): Partial<UserRow> {
  const set: Partial<UserRow> = {};
  if (body.firstName !== undefined && body.firstName !== user.first_name) set.first_name = body.firstName;
  if (body.lastName !== undefined && body.lastName !== user.last_name) set.last_name = body.lastName;
  if (body.profileName !== undefined && body.profileName !== user.profile_name) set.profile_name = body.profileName;
  if (body.email !== undefined && body.email !== user.email) {
    set.email = body.email;
    set.email_lower = emailLower ?? null;
  }
  if (body.phone !== undefined && body.phone !== user.phone) set.phone = body.phone;
  if (set.first_name !== undefined || set.last_name !== undefined) {
    set.name = displayName(set.first_name ?? user.first_name, set.last_name ?? user.last_name, user.profile_name, user.name);
  }
  if (!Object.keys(set).length) return set;
  set.updated_at = now;
  return set;
}
