/**
 * 013: `face_variants`, the face picture derived from a member's original for each
 * device profile (devices/rules/face-limits.ts): sealed like the original, with its
 * SHA-256, or the reason no picture within the profile's limits could be made.
 * `source_sha256` names the original it was derived from.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('face_variants')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('profile', 'text', (c) => c.notNull())
    .addColumn('source_sha256', 'text', (c) => c.notNull())
    /** The derived picture, sealed with the secrets key; null when it was refused. */
    .addColumn('image_enc', 'text')
    .addColumn('mime', 'text')
    .addColumn('sha256', 'text')
    .addColumn('refused', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('face_variants_pk', ['project_id', 'user_id', 'profile'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('face_variants').execute();
}
