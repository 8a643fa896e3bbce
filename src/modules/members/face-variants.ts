/**
 * A member's face as devices take it: for every device profile
 * (devices/rules/face-limits.ts) a picture derived from the original (face-images.ts),
 * sealed like the original, or the reason none could be made. Derived when a face
 * is PUT (before the write transaction, which stores them with the original) and,
 * for faces stored before a profile existed, by `prepare` ahead of each reconcile.
 * The original is never changed; derived pictures leave the module only inside a
 * command sent to a device.
 */
import { createHash } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Engine } from '../../platform/db/database.js';
import type { Database, FaceVariantTable } from '../../platform/db/schema.js';
import { writeTransaction } from '../../platform/db/transactions.js';
import { FACE_PROFILES } from '../devices/rules/face-limits.js';
import type { CredentialRepository } from './credential-repository.js';
import { deriveFace } from './face-images.js';

export type FaceVariantDraft = Omit<Insertable<FaceVariantTable>, 'project_id' | 'user_id' | 'created_at'>;

export class FaceVariants {
  constructor(
    private readonly deps: { db: Kysely<Database>; engine: Engine; repo: CredentialRepository; secretBox: SecretBox; now: () => number },
  ) {}

  /** One derived picture (or refusal) per profile, sealed; `sourceSha256` names the original. */
  async derive(original: Buffer, sourceSha256: string): Promise<FaceVariantDraft[]> {
    const out: FaceVariantDraft[] = [];
    for (const limits of FACE_PROFILES) {
      const d = await deriveFace(original, limits);
      out.push(
        d.ok
          ? {
              profile: limits.profile,
              source_sha256: sourceSha256,
              image_enc: this.deps.secretBox.seal(d.bytes.toString('base64')),
              mime: d.mime,
              sha256: createHash('sha256').update(d.bytes).digest('hex'),
              refused: null,
            }
          : { profile: limits.profile, source_sha256: sourceSha256, image_enc: null, mime: null, sha256: null, refused: d.reason },
      );
    }
    return out;
  }

  /** Stores drafts for the member, in the caller's transaction. */
  async store(trx: Kysely<Database>, projectId: string, userId: string, drafts: FaceVariantDraft[], now: number): Promise<void> {
    await this.deps.repo.putVariants(
      projectId,
      userId,
      drafts.map((d) => ({ ...d, project_id: projectId, user_id: userId, created_at: now })),
      trx,
    );
  }

  /** Derives what is missing for the project's faces (stored before a profile existed). Returns how many faces it derived. */
  async prepare(projectId: string): Promise<number> {
    const { repo, secretBox } = this.deps;
    let done = 0;
    for (const userId of await repo.facesWithoutVariants(
      projectId,
      FACE_PROFILES.map((p) => p.profile),
    )) {
      const face = await repo.sealedFace(projectId, userId);
      if (!face) continue;
      const drafts = await this.derive(Buffer.from(secretBox.open(face.image_enc), 'base64'), face.sha256);
      await writeTransaction(this.deps.db, this.deps.engine, async (trx) => {
        // The face may have changed meanwhile; its own PUT derived its pictures then.
        if ((await repo.faceDigest(projectId, userId, trx)) !== face.sha256) return;
        await this.store(trx, projectId, userId, drafts, this.deps.now());
      });
      done++;
    }
    return done;
  }
}
