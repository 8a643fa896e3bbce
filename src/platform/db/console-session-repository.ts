/** The console's stored sessions (table console_sessions), shared by every instance. */
import type { Kysely } from 'kysely';
import type { Db } from './db.js';
import type { Database } from './schema.js';

export interface StoredSession {
  idHash: string;
  env: string;
  expiresAt: number;
  revokedAt: number | null;
}

export class ConsoleSessionRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(s: { idHash: string; env: string; createdAt: number; expiresAt: number }, db: Db = this.db): Promise<void> {
    await db
      .insertInto('console_sessions')
      .values({ id_hash: s.idHash, env: s.env, created_at: s.createdAt, expires_at: s.expiresAt, revoked_at: null })
      .execute();
  }

  async find(idHash: string, db: Db = this.db): Promise<StoredSession | null> {
    const row = await db
      .selectFrom('console_sessions')
      .select(['id_hash', 'env', 'expires_at', 'revoked_at'])
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    if (!row) return null;
    return {
      idHash: row.id_hash,
      env: row.env,
      expiresAt: Number(row.expires_at),
      revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    };
  }

  /** Marks the session revoked (kept until it expires, then purged). */
  async revoke(idHash: string, at: number, db: Db = this.db): Promise<void> {
    await db
      .updateTable('console_sessions')
      .set({ revoked_at: at })
      .where('id_hash', '=', idHash)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Drops sessions that ended before `before` (revoked or not: an expired session is refused either way). */
  async purgeExpired(before: number, db: Db = this.db): Promise<void> {
    await db.deleteFrom('console_sessions').where('expires_at', '<', before).execute();
  }
}
