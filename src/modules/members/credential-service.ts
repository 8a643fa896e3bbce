/**
 * PUT /partner/members/{externalUserId}/credentials: cards and face, declaratively
 * and independently. Cards are matched on their decoded UID; a face is sealed
 * (encrypted) at rest and never returned or logged; a member with a face and no
 * physical card gets one virtual card, once. Every change also writes an
 * access-change row (the device-enrollment outbox) in the same transaction.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock/clock.js';
import type { Database } from '../../platform/db/schema.js';
import type { Engine } from '../../platform/db/database.js';
import { writeTransaction } from '../../platform/db/transactions.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { CredentialsBody, CredentialsResult, MemberCard } from '../../contract/member-credentials.js';
import { cardNoOf, decodeCard, defaultCardLabel } from './rules/card-codec.js';
import { decodeFace, needsVirtualCard, newVirtualUid, planCards, type SubmittedCard } from './rules/credentials.js';
import type { CardRow, CredentialRepository } from './credential-repository.js';
import type { MembersRepository } from './members-repository.js';
import type { FaceVariants } from './face-variants.js';
import type { AccessChangeLog } from '../devices/index.js';
import { parseInstant } from '../../platform/time/instant.js';

/** The member a partner call reaches (access rules already applied). */
export interface ReachedMember {
  appId: string;
  projectId: string;
  userId: string;
  status: string;
}

export interface CredentialServiceDeps {
  db: Kysely<Database>;
  engine: Engine;
  repo: CredentialRepository;
  /** Partner writes of one app are serialized (the same lock the member PUT and DELETE take). */
  members: MembersRepository;
  secretBox: SecretBox;
  /** Where access changes go (the devices module): recorded in the same transaction. */
  access: AccessChangeLog;
  /** The pictures devices take, derived from a new face before the write. */
  faces: FaceVariants;
  clock: Clock;
}

export function cardView(c: Pick<CardRow, 'id' | 'uid' | 'label' | 'type' | 'generated'>): MemberCard {
  return { cardId: c.id, cardNo: cardNoOf(c.uid), label: c.label, type: c.type, generated: c.generated };
}

export class CredentialService {
  constructor(private readonly deps: CredentialServiceDeps) {}

  /** The member's active cards and whether a face is stored (never its bytes). */
  async current(projectId: string, userId: string): Promise<{ cards: MemberCard[]; face: { present: boolean } }> {
    const [cards, face] = await Promise.all([this.deps.repo.activeCards(projectId, userId), this.deps.repo.hasFace(projectId, userId)]);
    return { cards: cards.map(cardView), face: { present: face } };
  }

  async set(member: ReachedMember, body: CredentialsBody): Promise<CredentialsResult> {
    const { submitted, face } = checkCredentials(body);
    const offboarded = () => errors.conflict('This member is offboarded; PUT the member first to reactivate it', { conflictKey: 'status' });
    if (member.status !== 'active') throw offboarded();

    // Derived before the transaction (image work takes a while and holds no lock); stored with the original.
    const faceSha256 = face ? createHash('sha256').update(face.bytes).digest('hex') : null;
    const variants = face ? await this.deps.faces.derive(face.bytes, faceSha256!) : [];

    const now = this.deps.clock.now();
    const { projectId, userId } = member;
    await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
      // Under the app's lock, so a concurrent credentials PUT or DELETE cannot interleave with this one.
      await this.deps.members.lockApp(member.appId, trx);
      if ((await this.deps.members.membership(userId, projectId, trx))?.status !== 'active') throw offboarded();
      const changed = new Set<string>();
      if (body.cards !== undefined && (await this.replaceCards(member, submitted, now, trx))) changed.add('cards');
      if (body.face === null) {
        if (await this.deps.repo.deleteFace(projectId, userId, trx)) changed.add('face');
      } else if (face) {
        await this.storeFace(member, face, faceSha256!, body.faceConsentAt!, now, trx);
        await this.deps.faces.store(trx, projectId, userId, variants, now);
        changed.add('face');
      }
      if (await this.mintVirtualCardIfNeeded(member, now, trx)) changed.add('cards');
      for (const reason of changed)
        await this.deps.access.record(trx, { projectId, subject: { kind: 'member', id: userId }, reason, at: now });
    });
    this.deps.access.poke();
    const result = await this.current(projectId, userId);
    return { memberId: userId, ...result };
  }

  /** The submitted card set replaces the member's real cards: revoke, enroll, relabel. True when the set changed. */
  private async replaceCards(member: ReachedMember, submitted: SubmittedCard[], now: number, trx: Trx): Promise<boolean> {
    const { repo } = this.deps;
    const { projectId, userId } = member;
    const current = await repo.activeCards(projectId, userId, trx);
    const plan = planCards(
      current.map((c) => ({ id: c.id, uid: c.uid, type: c.type, generated: c.generated, status: c.status, label: c.label })),
      submitted,
    );
    await repo.revokeCards(plan.revoke, now, trx);
    await repo.insertCards(
      plan.enroll.map((e) => newCard(member, e.uid, e.label || defaultCardLabel(e.uid), 'real', now)),
      trx,
    );
    for (const r of plan.relabel) await repo.relabel(r.id, r.label, trx);
    return plan.revoke.length > 0 || plan.enroll.length > 0;
  }

  /** The face photo, sealed, with the consent it was given under. */
  private async storeFace(
    member: ReachedMember,
    face: DecodedFace,
    sha256: string,
    consentAt: string,
    now: number,
    trx: Trx,
  ): Promise<void> {
    await this.deps.repo.putFace(
      {
        project_id: member.projectId,
        user_id: member.userId,
        image_enc: this.deps.secretBox.seal(face.bytes.toString('base64')),
        mime: face.mime,
        sha256,
        consent_at: parseInstant(consentAt, 'body.faceConsentAt'),
        consent_text: consentAt,
        updated_at: now,
      },
      trx,
    );
  }

  /** A member with a face and no physical card gets one virtual card, never a second. True when one was minted. */
  private async mintVirtualCardIfNeeded(member: ReachedMember, now: number, trx: Trx): Promise<boolean> {
    const { repo } = this.deps;
    const { projectId, userId } = member;
    const after = await repo.activeCards(projectId, userId, trx);
    const mint = needsVirtualCard({
      hasFace: await repo.hasFace(projectId, userId, trx),
      activePhysicalCount: after.filter((c) => c.type === 'real').length,
      hasActiveVirtual: after.some((c) => c.type === 'virtual'),
    });
    if (!mint) return false;
    // A random UID never used in the project (a handful of tries is plenty in a 32-bit space).
    for (let attempt = 0; attempt < 8; attempt++) {
      const uid = newVirtualUid(
        (n) => randomBytes(n),
        () => false,
      );
      if (!uid || (await repo.uidEverUsed(projectId, uid, trx))) continue;
      await repo.insertCards([newCard(member, uid, defaultCardLabel(uid, 'virtual'), 'virtual', now)], trx);
      return true;
    }
    return false;
  }
}

type Trx = Kysely<Database>;
type DecodedFace = { bytes: Buffer; mime: string };

/** Everything checked before anything is written: one message per problem (400 KS001). */
function checkCredentials(body: CredentialsBody): { submitted: SubmittedCard[]; face: DecodedFace | null } {
  const problems: string[] = [];
  const submitted: SubmittedCard[] = [];
  (body.cards ?? []).forEach((c, i) => {
    const decoded = decodeCard(c.cardNo, c.cardCodeFormat);
    if (!decoded.ok) problems.push(`body.cards[${i}].cardNo ${JSON.stringify(c.cardNo)}: ${decoded.reason}`);
    else submitted.push({ uid: decoded.uid, ...(c.label?.trim() ? { label: c.label.trim() } : {}) });
  });
  let face: DecodedFace | null = null;
  if (typeof body.face === 'string') {
    if (body.faceConsentAt === undefined) problems.push('body.faceConsentAt is required when body.face is given');
    const decoded = decodeFace(body.face);
    if (!decoded.ok) problems.push(`body.face: ${decoded.reason}`);
    else face = decoded;
  }
  if (problems.length) throw errors.validation(problems);
  return { submitted, face };
}

/** A new active card row of the member. */
function newCard(member: ReachedMember, uid: string, label: string, type: 'real' | 'virtual', now: number) {
  return {
    id: newId(now),
    project_id: member.projectId,
    user_id: member.userId,
    uid,
    label,
    type,
    generated: type === 'virtual',
    status: 'active' as const,
    created_at: now,
    revoked_at: null,
  };
}
