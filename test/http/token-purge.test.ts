/** Expired tokens are purged from the token store; live ones are never touched. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite } from '../support/fixtures.js';

describe('token store purge', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    await applySite(svc);
  });
  afterAll(async () => {
    await svc.close();
  });

  const count = async (table: 'tokens' | 'token_families') =>
    Number(
      (
        await svc.services.storage.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('keeps live tokens and removes expired ones with their families', async () => {
    const t = await appToken(svc);
    const whoami = () => svc.request('GET', '/auth/whoami', { token: t.access_token });
    expect(await svc.services.tokens.purgeExpired()).toBe(0);
    expect((await whoami()).status).toBe(200);
    expect(await count('tokens')).toBe(2);

    // As if the refresh lifetime (30 days) had passed.
    expect(await svc.services.tokens.repo.purgeExpired(Date.now() + 31 * 86_400_000)).toBe(2);
    expect(await count('tokens')).toBe(0);
    expect(await count('token_families')).toBe(0);
    // 31 days on, the caller cache (seconds) would long have let the token go; empty it as that time would have.
    svc.services.tokens.forgetCallers();
    expect((await whoami()).status).toBe(401);
  });
});
