/**
 * Repository methods that write several statements, called with the caller's
 * transaction: they join it (no nested BEGIN, also on SQLite's single connection
 * inside writeTransaction) and roll back with it; called without one they commit
 * on their own, as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, PLAIN_APP_ID, PORTAL_APP_ID } from '../support/fixtures.js';
import { writeTransaction } from '../../src/platform/db/transactions.js';
import { TokenRepository } from '../../src/modules/auth/token-repository.js';
import { PeopleRepository } from '../../src/modules/booking/people-repository.js';

class Abort extends Error {}

describe('repositories in a caller transaction', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
    await applySite(svc);
  });
  afterAll(async () => {
    await svc?.close();
  });

  const storage = () => svc.services.storage;
  const appIdOf = async (clientId: string) =>
    (await storage().db.selectFrom('apps').select('id').where('client_id', '=', clientId).executeTakeFirstOrThrow()).id;

  it('token writes join the caller transaction and roll back with it', async () => {
    const { db, engine } = storage();
    const repo = new TokenRepository(db);
    const appId = await appIdOf(PORTAL_APP_ID);
    const now = svc.services.clock.now();
    const family = { id: 'fam-in-trx', appId, userId: null, env: 'test', grantType: 'app_credentials', now };
    const token = { id: 'tok-in-trx', kind: 'access' as const, secretHash: 'h', expiresAt: now + 60_000 };

    await expect(
      writeTransaction(db, engine, async (trx) => {
        await repo.createFamily(family, [token], trx);
        await repo.revokeFamily(family.id, now, 'test', trx);
        expect((await repo.findToken(token.id, trx))?.familyRevokedAt).toBe(now);
        throw new Abort();
      }),
    ).rejects.toBeInstanceOf(Abort);
    expect(await repo.findToken(token.id)).toBeUndefined();

    await repo.createFamily(family, [token]);
    await db.transaction().execute((trx) => repo.revokeFamily(family.id, now, 'test', trx));
    expect(await repo.findToken(token.id)).toMatchObject({ familyRevokedAt: now, revokedAt: now });
    expect(await repo.purgeExpired(now + 120_000)).toBe(1);
    expect(await repo.findToken(token.id)).toBeUndefined();
  });

  it('appServiceUser in a caller transaction: created once, rolled back with it', async () => {
    const { db, engine } = storage();
    const people = new PeopleRepository(db);
    const appId = await appIdOf(PLAIN_APP_ID);
    const now = svc.services.clock.now();

    await expect(
      writeTransaction(db, engine, async (trx) => {
        const id = await people.appServiceUser(appId, now, trx);
        expect(await people.appServiceUser(appId, now, trx)).toBe(id);
        expect(await people.user(id, trx)).toMatchObject({ name: 'Plain integration' });
        throw new Abort();
      }),
    ).rejects.toBeInstanceOf(Abort);
    const app = await db.selectFrom('apps').select('service_user_id').where('id', '=', appId).executeTakeFirstOrThrow();
    expect(app.service_user_id).toBeNull();

    const id = await people.appServiceUser(appId, now);
    expect(await people.appServiceUser(appId, now)).toBe(id);
  });

  it('appServiceUser in a caller transaction that lost the race: drops its user, returns the winner', async () => {
    const { db, engine } = storage();
    const people = new PeopleRepository(db);
    const appId = await appIdOf(PORTAL_APP_ID);
    const now = svc.services.clock.now();
    // The first read of the app sees no service user yet, though a rival has already stored one.
    let stale = true;
    const staleRead: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult: async ({ result }) => {
        const first = result.rows[0] as Record<string, unknown> | undefined;
        if (!stale || !first || !('service_user_id' in first)) return result;
        stale = false;
        return { ...result, rows: result.rows.map((r) => ({ ...(r as object), service_user_id: null })) };
      },
    };

    await expect(
      writeTransaction(db, engine, async (trx) => {
        const rival = 'rival-service-user';
        await trx
          .insertInto('users')
          .values({
            id: rival,
            key: null,
            email: null,
            email_lower: null,
            phone: null,
            username: null,
            name: 'rival',
            first_name: null,
            last_name: null,
            profile_name: 'rival',
            blocked_from_booking: 0,
            brand_staff: '[]',
            created_at: now,
            updated_at: now,
          })
          .execute();
        await trx.updateTable('apps').set({ service_user_id: rival }).where('id', '=', appId).execute();
        const users = async () =>
          Number(
            (
              await trx
                .selectFrom('users')
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          );
        const before = await users();

        expect(await people.appServiceUser(appId, now, trx.withPlugin(staleRead))).toBe(rival);
        expect(stale).toBe(false);
        expect(await users()).toBe(before);
        throw new Abort();
      }),
    ).rejects.toBeInstanceOf(Abort);
  });
});
