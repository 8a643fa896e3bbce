/**
 * The members module's front door: partner member provisioning (member and credential services), the members'
 * AccessSource for the devices module, the factory, and the partner routes (api guard, partner rate limit).
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Config } from '../../platform/config.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import { RateLimitRepository } from '../../platform/db/rate-limit-repository.js';
import { RateLimiter } from '../../platform/rate-limit.js';
import type { App } from '../../platform/http/types.js';
import { guarded, type RouteGuards } from '../../platform/http/module.js';
import type { AccessChangeLog } from '../devices/index.js';
import { MembersRepository } from './members-repository.js';
import { CredentialRepository, sealedMemberColumns } from './credential-repository.js';
import { FaceVariants } from './face-variants.js';
import { CredentialService } from './credential-service.js';
import { MemberService } from './member-service.js';
import { MemberAccessSource, type DoorWindowsReader } from './member-access.js';
import { memberRoutes, type PartnerRateLimit } from './routes.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';

export { MemberService, partnerContext, type PartnerCaller, type PartnerContext } from './member-service.js';
export { CredentialService, type ReachedMember } from './credential-service.js';
export { MemberAccessSource, type DoorWindowsReader } from './member-access.js';
export type { PartnerRateLimit } from './routes.js';

export interface MembersDeps {
  db: Kysely<Database>;
  engine: Engine;
  secretBox: SecretBox;
  /** Service time (sandbox offset included). */
  clock: Clock;
  /** Real time: the partner rate limit's windows. */
  realClock: Clock;
  /** The devices module's enrollment log: access changes are recorded in the members' own transactions. */
  access: AccessChangeLog;
  /** Partner requests per app per 60 s (PARTNER_RATE_LIMIT_PER_MINUTE). */
  partnerRateLimitPerMinute: number;
  /** The door windows booking participants hold (the devices module's DoorWindows); none: group access only. */
  doorWindows?: DoorWindowsReader;
  /** Told after a member's memberships changed (callers resolved earlier may carry an old scope). */
  onMembershipsChanged?: () => void;
}

export interface MembersModule {
  members: MemberService;
  credentials: CredentialService;
  /** What a member holds on a device: the devices module's AccessSource for kind `member`. */
  accessSource: MemberAccessSource;
  /** Which member holds a card (decoded UID) in a project: the devices' entry log names a card's holder with it. */
  cardHolders: { memberOfCard(projectId: string, uid: string): Promise<string | null> };
  /** 30 requests per 60 s per app across the partner member routes (real time). */
  partnerRateLimit: RateLimiter;
  /** Sealed columns (face photos and derived pictures), for a SECRETS_KEY rotation. */
  sealed: SealedTable[];
}

export function createMembers(deps: MembersDeps): MembersModule {
  const { db, engine, secretBox, clock, access } = deps;
  const repo = new MembersRepository(db, engine);
  const credentialRepo = new CredentialRepository(db);
  const faces = new FaceVariants({ db, engine, repo: credentialRepo, secretBox, now: () => clock.now() });
  const credentials = new CredentialService({ db, engine, repo: credentialRepo, members: repo, secretBox, access, faces, clock });
  const members = new MemberService({ db, engine, repo, credentials, access, clock, onMembershipsChanged: deps.onMembershipsChanged });
  return {
    members,
    credentials,
    accessSource: new MemberAccessSource(repo, credentialRepo, secretBox, faces, deps.doorWindows ?? null, () => clock.now()),
    cardHolders: { memberOfCard: (projectId, uid) => credentialRepo.holderOfCard(projectId, uid) },
    partnerRateLimit: new RateLimiter(new RateLimitRepository(db), deps.realClock, deps.partnerRateLimitPerMinute, 60_000),
    sealed: sealedMemberColumns(db),
  };
}

export interface MembersRouteDeps {
  guards: RouteGuards;
  members: MemberService;
  credentials: CredentialService;
  partnerRateLimit: PartnerRateLimit;
  /** The body limits (the credentials route takes BODY_LIMIT_BYTES: the face photo travels in the body). */
  config: Pick<Config, 'bodyLimitBytes' | 'applyBodyLimitBytes'>;
}

/** The partner member routes (behind the api guard). */
export async function register(app: App, deps: MembersRouteDeps): Promise<void> {
  await guarded(app, deps.guards.api, async (api) => memberRoutes(api, deps));
}
