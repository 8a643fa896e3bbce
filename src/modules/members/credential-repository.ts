/** Access cards and face photos of members, and the device-enrollment outbox rows their changes write. */
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { CardTable, Database, FaceTable, FaceVariantTable } from '../../platform/db/schema.js';
import type { Db } from '../../platform/db/db.js';
import { readInChunks } from '../../platform/db/in-chunks.js';
import { sealedTable } from '../../platform/db/sealed-table-repository.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';

/** A card as the module uses it: `generated` (a virtual card the service minted) as a boolean. */
export type CardRow = Omit<Selectable<CardTable>, 'generated'> & { generated: boolean };
export type FaceVariantRow = Selectable<FaceVariantTable>;

export class CredentialRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async activeCards(projectId: string, userId: string, db: Db = this.db): Promise<CardRow[]> {
    const rows = await db
      .selectFrom('cards')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .where('status', '=', 'active')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ ...r, generated: r.generated === 1 }));
  }

  /** The member holding an active card with this UID in the project (the door entry log's card look-up). */
  async holderOfCard(projectId: string, uid: string, db: Db = this.db): Promise<string | null> {
    const row = await db
      .selectFrom('cards')
      .select('user_id')
      .where('project_id', '=', projectId)
      .where('uid', '=', uid)
      .where('status', '=', 'active')
      .orderBy('created_at')
      .executeTakeFirst();
    return row?.user_id ?? null;
  }

  async insertCards(cards: CardRow[], db: Db = this.db): Promise<void> {
    if (cards.length)
      await db
        .insertInto('cards')
        .values(cards.map((c) => ({ ...c, generated: c.generated ? 1 : 0 })))
        .execute();
  }

  async revokeCards(ids: string[], now: number, db: Db = this.db): Promise<void> {
    if (!ids.length) return;
    await db
      .updateTable('cards')
      .set({ status: 'revoked', revoked_at: now })
      .where('id', 'in', ids)
      .where('status', '=', 'active')
      .execute();
  }

  async relabel(id: string, label: string, db: Db = this.db): Promise<void> {
    await db.updateTable('cards').set({ label }).where('id', '=', id).execute();
  }

  /** Whether a UID was ever used by a card of the project (a virtual number is never handed out twice). */
  async uidEverUsed(projectId: string, uid: string, db: Db = this.db): Promise<boolean> {
    const row = await db.selectFrom('cards').select('id').where('project_id', '=', projectId).where('uid', '=', uid).executeTakeFirst();
    return row !== undefined;
  }

  async hasFace(projectId: string, userId: string, db: Db = this.db): Promise<boolean> {
    const row = await db
      .selectFrom('faces')
      .select('user_id')
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async putFace(row: Insertable<FaceTable>, db: Db = this.db): Promise<void> {
    await db.deleteFrom('faces').where('project_id', '=', row.project_id).where('user_id', '=', row.user_id).execute();
    await db.insertInto('faces').values(row).execute();
  }

  /** Replaces the member's derived pictures (one row per profile). */
  async putVariants(projectId: string, userId: string, rows: Insertable<FaceVariantTable>[], db: Db = this.db): Promise<void> {
    await db.deleteFrom('face_variants').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
    if (rows.length) await db.insertInto('face_variants').values(rows).execute();
  }

  /** The member's derived pictures without their bytes: profile, what they were derived from, digest or refusal. */
  async variantDigests(
    projectId: string,
    userId: string,
    db: Db = this.db,
  ): Promise<Pick<FaceVariantRow, 'profile' | 'source_sha256' | 'sha256' | 'refused'>[]> {
    return db
      .selectFrom('face_variants')
      .select(['profile', 'source_sha256', 'sha256', 'refused'])
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .execute();
  }

  /** The sealed pictures of `profile` of these members (one statement per IN_CHUNK members). */
  async sealedVariants(
    projectId: string,
    userIds: readonly string[],
    profile: string,
    db: Db = this.db,
  ): Promise<Pick<FaceVariantRow, 'user_id' | 'image_enc' | 'mime' | 'sha256'>[]> {
    return readInChunks(userIds, (ids) =>
      db
        .selectFrom('face_variants')
        .select(['user_id', 'image_enc', 'mime', 'sha256'])
        .where('project_id', '=', projectId)
        .where('user_id', 'in', ids)
        .where('profile', '=', profile)
        .execute(),
    );
  }

  /** Members of the project whose face has no derived picture for one of `profiles` (stored before derivation existed, or the limits changed). */
  async facesWithoutVariants(projectId: string, profiles: readonly string[], db: Db = this.db): Promise<string[]> {
    if (!profiles.length) return [];
    const rows = await db
      .selectFrom('faces')
      .select('faces.user_id')
      .where('faces.project_id', '=', projectId)
      .where((eb) =>
        eb.or(
          profiles.map((profile) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('face_variants')
                  .select('face_variants.user_id')
                  .whereRef('face_variants.project_id', '=', 'faces.project_id')
                  .whereRef('face_variants.user_id', '=', 'faces.user_id')
                  .whereRef('face_variants.source_sha256', '=', 'faces.sha256')
                  .where('face_variants.profile', '=', profile),
              ),
            ),
          ),
        ),
      )
      .orderBy('faces.user_id')
      .execute();
    return rows.map((r) => r.user_id);
  }

  async deleteFace(projectId: string, userId: string, db: Db = this.db): Promise<boolean> {
    await db.deleteFrom('face_variants').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
    const res = await db.deleteFrom('faces').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** SHA-256 of the member's face image, or null. */
  async faceDigest(projectId: string, userId: string, db: Db = this.db): Promise<string | null> {
    const row = await db
      .selectFrom('faces')
      .select('sha256')
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.sha256 ?? null;
  }

  async sealedFace(
    projectId: string,
    userId: string,
    db: Db = this.db,
  ): Promise<Pick<FaceTable, 'image_enc' | 'mime' | 'sha256'> | undefined> {
    return db
      .selectFrom('faces')
      .select(['image_enc', 'mime', 'sha256'])
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }
}

/** Members' sealed columns (SECRETS_KEY rotation): face photos and the pictures derived from them. */
export function sealedMemberColumns(db: Kysely<Database>): SealedTable[] {
  return [
    sealedTable(db, { table: 'faces', key: ['project_id', 'user_id'], sealed: ['image_enc'] }),
    sealedTable(db, { table: 'face_variants', key: ['project_id', 'user_id', 'profile'], sealed: ['image_enc'] }),
  ];
}
