/** Access cards and face photos of members, and the device-enrollment outbox rows their changes write. */
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { CardTable, Database, FaceTable } from '../../platform/db/schema.js';
import type { Db } from '../../platform/db/db.js';

export type CardRow = Selectable<CardTable>;

export class CredentialRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async activeCards(projectId: string, userId: string, db: Db = this.db): Promise<CardRow[]> {
    return db
      .selectFrom('cards')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .where('status', '=', 'active')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async insertCards(rows: Insertable<CardTable>[], db: Db = this.db): Promise<void> {
    if (rows.length) await db.insertInto('cards').values(rows).execute();
  }

  async revokeCards(ids: string[], now: number, db: Db = this.db): Promise<void> {
    if (!ids.length) return;
    await db.updateTable('cards').set({ status: 'revoked', revoked_at: now }).where('id', 'in', ids).where('status', '=', 'active').execute();
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
    const row = await db.selectFrom('faces').select('user_id').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
    return row !== undefined;
  }

  async putFace(row: Insertable<FaceTable>, db: Db = this.db): Promise<void> {
    await db.deleteFrom('faces').where('project_id', '=', row.project_id).where('user_id', '=', row.user_id).execute();
    await db.insertInto('faces').values(row).execute();
  }

  async deleteFace(projectId: string, userId: string, db: Db = this.db): Promise<boolean> {
    const res = await db.deleteFrom('faces').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }


  /** SHA-256 of the member's face image, or null. */
  async faceDigest(projectId: string, userId: string, db: Db = this.db): Promise<string | null> {
    const row = await db.selectFrom('faces').select('sha256').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
    return row?.sha256 ?? null;
  }

  async sealedFace(projectId: string, userId: string, db: Db = this.db): Promise<Pick<FaceTable, 'image_enc' | 'mime' | 'sha256'> | undefined> {
    return db.selectFrom('faces').select(['image_enc', 'mime', 'sha256']).where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
  }
}
