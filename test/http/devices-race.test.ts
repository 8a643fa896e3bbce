/**
 * Device planning under concurrency (both engines; on PostgreSQL each request has
 * its own connection): credentials PUTs racing repair passes and deliveries never
 * leave a device holding a state older than the last PUT's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { deviceSite, settled, waitForDevice } from '../support/devices.js';

let svc: TestService;
let ids: SiteIds;
let api: PartnerClient;

beforeAll(async () => {
  svc = await startTestService({ env: { PARTNER_RATE_LIMIT_PER_MINUTE: '1000' } });
  ids = await applySite(svc, deviceSite());
  api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
});
afterAll(async () => {
  await svc?.close();
});

it('the last credentials PUT wins on every device, with repair passes running all along', async () => {
  // Widen the window between reading what a member must hold and queueing it: a planner that
  // read before another's commit and queued after it would put an old state on the devices.
  const sync = svc.services.deviceSync;
  const source = (sync as any).sources.get('member');
  sync.addSource({
    kind: 'member',
    desired: async (...args: Parameters<typeof source.desired>) => {
      const wanted = await source.desired(...args);
      await new Promise((r) => setTimeout(r, 15));
      return wanted;
    },
    subjects: (...args: Parameters<typeof source.subjects>) => source.subjects(...args),
    secrets: (...args: Parameters<typeof source.secrets>) => source.secrets(...args),
  });
  const members = await Promise.all(
    ['race-a', 'race-b', 'race-c'].map(async (ext) => ({
      ext,
      id: (await api.putOk(ext, { firstName: ext, lastName: 'R' })).memberId as string,
    })),
  );
  let stop = false;
  const repairs = (async () => {
    let passes = 0;
    while (!stop) {
      await svc.services.deviceSync.reconcileAll();
      passes++;
      await new Promise((r) => setTimeout(r, 1));
    }
    return passes;
  })();
  const last = new Map<string, string>();
  try {
    await Promise.all(
      members.map(async (m, k) => {
        for (let i = 0; i < 8; i++) {
          const cardNo = String(1_000_000 + k * 100 + i).padStart(10, '0');
          const res = await api.credentials(m.ext, { cards: [{ cardNo }] });
          expect(res.status, res.text).toBe(200);
          last.set(m.id, cardNo);
        }
      }),
    );
  } finally {
    stop = true;
  }
  expect(await repairs).toBeGreaterThan(0);
  for (const key of ['t1', 't2', 'g1']) {
    const view = await waitForDevice(
      svc,
      idOf(ids, key),
      (v) => settled(v) && members.every((m) => v.enrollments.find((e: any) => e.memberId === m.id)?.cardNos[0] === last.get(m.id)),
      15_000,
    );
    for (const m of members) expect(view.enrollments.find((e: any) => e.memberId === m.id).cardNos).toEqual([last.get(m.id)]);
  }
  // And nothing is left to repair.
  expect(await svc.services.deviceSync.reconcileAll()).toBe(0);
});
