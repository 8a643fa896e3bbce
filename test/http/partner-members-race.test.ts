/**
 * Concurrent PUTs of one externalUserId through two service instances over one
 * database: one member, one link, created exactly once, the app's groups granted once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET, partnerSite } from '../support/partner-members.js';

let a: TestService;
let b: TestService;

beforeAll(async () => {
  a = await startTestService({ noWorkers: true, keepDatabase: true });
  await applySite(a, partnerSite());
  b = await startTestService({ noWorkers: true, database: a.database });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('concurrent PUTs of one externalUserId', () => {
  it('create one member, once', async () => {
    const token = (await appToken(a, PARTNER_APP_ID, PARTNER_SECRET)).access_token;
    const clients = [new PartnerClient(a, token), new PartnerClient(b, token)];
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        clients[i % 2]!.put('race-1', { firstName: 'Race', lastName: 'One', email: 'race@example.com', employeeId: 'R-1' }),
      ),
    );
    for (const r of results) expect(r.status, r.text).toBe(200);
    const ids = new Set(results.map((r) => r.body.data.memberId));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.body.data.created)).toHaveLength(1);
    const db = a.services.storage.db;
    const [memberId] = [...ids];
    expect(await db.selectFrom('app_links').select('id').where('external_user_id', '=', 'race-1').execute()).toHaveLength(1);
    const changes = await db.selectFrom('access_changes').select('reason').where('user_id', '=', memberId!).execute();
    expect(changes).toEqual([{ reason: 'groups' }]);
  });
});
