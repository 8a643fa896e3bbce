/**
 * PUT/GET/DELETE /partner/members/{externalUserId} over HTTP (api-spec "Partner member",
 * "Partner member status", "Partner member endpoints", Errors KS003/KS005/KS006/KS221,
 * Limits): resolution and matchedBy, conflicts that write nothing, unit binding,
 * access rules, offboarding and re-activation, the device-enrollment outbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { actAsToken, appToken, applySite, expectError, HUB_APP_ID, HUB_SECRET, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET, partnerSite, memberPath, BURST_APP_ID } from '../support/partner-members.js';
import { RateLimiter } from '../../src/platform/rate-limit.js';
import { RateLimitRepository } from '../../src/platform/db/rate-limit-repository.js';
import { systemClock } from '../../src/platform/clock/clock.js';

let svc: TestService;
let ids: SiteIds;
let api: PartnerClient;
let token: string;
let lobby: string;
let gym: string;
let tower: string;

const db = () => svc.services.storage.db;

async function accessChanges(userId: string): Promise<string[]> {
  const rows = await db()
    .selectFrom('access_changes')
    .select(['reason', 'processed_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  // The devices module plans each change in the transaction that records it.
  for (const r of rows) expect(r.processed_at).not.toBeNull();
  return rows.map((r) => r.reason);
}

beforeAll(async () => {
  svc = await startTestService({ noWorkers: true });
  ids = await applySite(svc, partnerSite());
  token = (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token;
  api = new PartnerClient(svc, token);
  lobby = idOf(ids, 'lobby');
  gym = idOf(ids, 'gym');
  tower = idOf(ids, 'tower');
  // Only the burst app (the rate-limit test) counts against the real 30/min limit here.
  const real = svc.services.partnerRateLimit;
  const generous = new RateLimiter(new RateLimitRepository(db()), systemClock, 1_000_000, 60_000);
  const burstKey = `partner:${idOf(ids, 'burst')}`;
  svc.services.partnerRateLimit = { hit: (key: string) => (key === burstKey ? real.hit(key) : generous.hit(key)) } as RateLimiter;
});

afterAll(async () => {
  await svc?.close();
});

describe('PUT resolution', () => {
  it("provisions a new member, joins the app's groups and links it; a re-PUT matches by link", async () => {
    const data = await api.putOk('crm-1', { firstName: 'Nina', lastName: 'New', email: 'nina@example.com', phone: '02 555 0101' });
    expect(data).toMatchObject({
      externalUserId: 'crm-1',
      projectId: tower,
      created: true,
      matchedBy: 'provisioned',
      employeeId: null,
      unit: null,
    });
    expect(data.memberId).toMatch(/^[0-9a-f]{24}$/);
    expect(data.accessGroupIds).toEqual([lobby, gym].sort());
    const again = await api.putOk('crm-1', { firstName: 'Nina', lastName: 'New', email: 'nina@example.com', phone: '02 555 0101' });
    expect(again).toMatchObject({ memberId: data.memberId, created: false, matchedBy: 'link', accessGroupIds: data.accessGroupIds });

    const member = await api.getOk('crm-1');
    expect(member).toEqual({
      memberId: data.memberId,
      externalUserId: 'crm-1',
      projectId: tower,
      status: 'active',
      source: 'partner',
      userType: 'member',
      accessGroupIds: [lobby, gym].sort(),
      employeeId: null,
      unit: null,
      profile: { firstName: 'Nina', lastName: 'New', profileName: null, email: 'nina@example.com', phone: '+6625550101' },
      credentials: { cards: [], face: { present: false } },
    });
    // One outbox row for the group grant, none for the idempotent re-PUT.
    expect(await accessChanges(data.memberId)).toEqual(['groups']);
  });

  it('matches an existing user by email, case-insensitively, and makes them a member of the project', async () => {
    const data = await api.putOk('crm-erin', { firstName: 'Erin', lastName: 'Annex', email: 'ERIN@Example.COM' });
    expect(data).toMatchObject({ memberId: idOf(ids, 'erin'), created: false, matchedBy: 'email' });
    const member = await api.getOk('crm-erin');
    expect(member).toMatchObject({ status: 'active', source: 'partner', userType: 'member', accessGroupIds: [lobby, gym].sort() });
  });

  it('matches by phone after normalization (081-234-5600 is +66812345600)', async () => {
    const data = await api.putOk('crm-frank', { firstName: 'Frank', lastName: '', phone: '081-234-5600' });
    expect(data).toMatchObject({ memberId: idOf(ids, 'frank'), created: false, matchedBy: 'phone' });
    expect((await api.getOk('crm-frank')).profile).toMatchObject({ phone: '+66812345600', lastName: '' });
  });

  it('matches by employeeId within the project', async () => {
    const data = await api.putOk('crm-gina', { firstName: 'Gina', lastName: 'Staff', employeeId: 'E-200' });
    expect(data).toMatchObject({ memberId: idOf(ids, 'gina'), created: false, matchedBy: 'employeeId', employeeId: 'E-200' });
    // The member keeps the source she had (admin origin).
    expect((await api.getOk('crm-gina')).source).toBe('admin');
  });

  it('employeeId alone creates a member without a login, username {projectId}_{employeeId}', async () => {
    const data = await api.putOk('crm-emp', { firstName: 'Emil', lastName: 'Only', employeeId: 'E-900' });
    expect(data).toMatchObject({ created: true, matchedBy: 'provisioned', employeeId: 'E-900' });
    const user = await db().selectFrom('users').selectAll().where('id', '=', data.memberId).executeTakeFirstOrThrow();
    expect(user).toMatchObject({ username: `${tower}_E-900`, email: null, phone: null });
  });

  it('a PUT carrying only a unit (and names) always creates a new member', async () => {
    const a = await api.putOk('crm-unit-only-1', { firstName: 'U', lastName: 'One', unit: { addressNo: '202' } });
    const b = await api.putOk('crm-unit-only-2', { firstName: 'U', lastName: 'Two', unit: { addressNo: '202' } });
    expect(a.created && b.created).toBe(true);
    expect(a.memberId).not.toBe(b.memberId);
  });

  it('firstName and lastName are needed to create; omitted fields of an existing member are left untouched', async () => {
    const res = await api.put('crm-nameless', { email: 'nameless@example.com' });
    expectError(res, 400, 'KS001');
    expectError(await api.get('crm-nameless'), 403, 'KS221');

    await api.putOk('crm-keep', {
      firstName: 'Kim',
      lastName: 'Keep',
      profileName: 'Kimmy',
      email: 'kim@example.com',
      phone: '0812340001',
      employeeId: 'E-301',
    });
    const before = await api.getOk('crm-keep');
    const data = await api.putOk('crm-keep', { firstName: 'Kimberly' });
    expect(data).toMatchObject({ matchedBy: 'link', employeeId: 'E-301' });
    const after = await api.getOk('crm-keep');
    expect(after).toEqual({ ...before, profile: { ...before.profile, firstName: 'Kimberly' } });
  });

  it('validates the path and body: 129-character externalUserId, employeeId length, unknown fields', async () => {
    expectError(await api.put('x'.repeat(129), { firstName: 'A', lastName: 'B' }), 400, 'KS001');
    expectError(await api.get('x'.repeat(129)), 400, 'KS001');
    expect((await api.put('y'.repeat(128), { firstName: 'A', lastName: 'B' })).status).toBe(200);
    expectError(await api.put('crm-bad', { firstName: 'A', lastName: 'B', employeeId: '' }), 400, 'KS001');
    expectError(await api.put('crm-bad', { firstName: 'A', lastName: 'B', employeeId: 'e'.repeat(65) }), 400, 'KS001');
    expectError(await api.put('crm-bad', { firstName: 'A', lastName: 'B', nickname: 'x' }), 400, 'KS001');
    expectError(await api.put('crm-bad', { firstName: 'A', lastName: 'B', phone: 'call me' }), 400, 'KS001');
    expectError(await api.get('crm-bad'), 403, 'KS221');
  });
});

describe('PUT conflicts: 409 KS006 with data.conflictKey, nothing written', () => {
  const conflict = (res: any, conflictKey: string, linkedExternalUserId?: string) => {
    expectError(res, 409, 'KS006', { allowData: true });
    expect(res.body.data).toEqual(linkedExternalUserId === undefined ? { conflictKey } : { conflictKey, linkedExternalUserId });
  };

  it('a body key naming a different member than the linked one', async () => {
    await api.putOk('crm-c1', { firstName: 'Cee', lastName: 'One', email: 'c1@example.com', employeeId: 'E-401' });
    const before = await api.getOk('crm-c1');
    const changes = await accessChanges(before.memberId);
    // carol and ivy are not managed by the app; gina is (as crm-gina).
    conflict(await api.put('crm-c1', { firstName: 'Changed', email: 'Carol@example.com' }), 'email');
    conflict(await api.put('crm-c1', { firstName: 'Changed', phone: '081 234 5670' }), 'phone');
    conflict(await api.put('crm-c1', { firstName: 'Changed', employeeId: 'E-500' }), 'employeeId');
    conflict(await api.put('crm-c1', { firstName: 'Changed', employeeId: 'E-200' }), 'employeeId', 'crm-gina');
    expect(await api.getOk('crm-c1')).toEqual(before);
    expect(await accessChanges(before.memberId)).toEqual(changes);
  });

  it('a key of a member the app manages under another externalUserId names that id', async () => {
    await api.putOk('crm-c2', { firstName: 'Cee', lastName: 'Two', email: 'c2@example.com', phone: '0899990002', employeeId: 'E-402' });
    conflict(await api.put('crm-c2-dup', { firstName: 'Dup', lastName: 'X', email: 'C2@example.com' }), 'email', 'crm-c2');
    conflict(await api.put('crm-c2-dup', { firstName: 'Dup', lastName: 'X', phone: '089-999-0002' }), 'phone', 'crm-c2');
    conflict(await api.put('crm-c2-dup', { firstName: 'Dup', lastName: 'X', employeeId: 'E-402' }), 'employeeId', 'crm-c2');
    // Linked member crm-c1 trying to take crm-c2's email.
    conflict(await api.put('crm-c1', { email: 'c2@example.com' }), 'email', 'crm-c2');
    expectError(await api.get('crm-c2-dup'), 403, 'KS221');
    const users = await db().selectFrom('users').select('id').where('first_name', '=', 'Dup').execute();
    expect(users).toEqual([]);
  });

  it('keys naming two different people', async () => {
    // email is hank's, employeeId is ivy's: resolved to hank by email, ivy's employeeId conflicts.
    conflict(
      await api.put('crm-c3', { firstName: 'Two', lastName: 'People', email: 'hank@example.com', employeeId: 'E-500' }),
      'employeeId',
    );
    expectError(await api.get('crm-c3'), 403, 'KS221');
    const hankMembership = await db().selectFrom('app_links').select('id').where('user_id', '=', idOf(ids, 'hank')).execute();
    expect(hankMembership).toEqual([]);
  });

  it('an addressNo in several zones without zoneId; a unit the project lacks is 404 KS005', async () => {
    await api.putOk('crm-c4', { firstName: 'Cee', lastName: 'Four' });
    const before = await api.getOk('crm-c4');
    conflict(await api.put('crm-c4', { firstName: 'Moved', unit: { addressNo: '101' } }), 'unit.addressNo');
    expectError(await api.put('crm-c4', { firstName: 'Moved', unit: { addressNo: '999' } }), 404, 'KS005');
    expect(await api.getOk('crm-c4')).toEqual(before);
    // A new member is not created by a refused PUT either.
    conflict(await api.put('crm-c4-new', { firstName: 'N', lastName: 'N', unit: { addressNo: '101' } }), 'unit.addressNo');
    expectError(await api.get('crm-c4-new'), 403, 'KS221');
  });
});

describe('unit binding', () => {
  it('first resident owns, later ones participate; zoneId and unitId pick the unit; moving and unbinding', async () => {
    const zB = idOf(ids, 'zB');
    const uA101 = idOf(ids, 'uA101');
    const uB101 = idOf(ids, 'uB101');
    const owner = await api.putOk('res-1', { firstName: 'Res', lastName: 'One', unit: { addressNo: '101', zoneId: zB } });
    expect(owner.unit).toEqual({ roomId: uB101, addressNo: '101', groupId: 'U-B-101', role: 'owner' });
    const second = await api.putOk('res-2', { firstName: 'Res', lastName: 'Two', unit: { unitId: 'U-B-101' } });
    expect(second.unit).toEqual({ roomId: uB101, addressNo: '101', groupId: 'U-B-101', role: 'participant' });
    // Re-PUT of the same unit keeps the role.
    expect((await api.putOk('res-1', { unit: { addressNo: '101', zoneId: zB } })).unit.role).toBe('owner');
    // An omitted unit is untouched.
    expect((await api.putOk('res-2', { firstName: 'Res2' })).unit.roomId).toBe(uB101);

    // The owner moves to A101 (empty): owner there; the participant left behind takes over B101.
    const moved = await api.putOk('res-1', { unit: { addressNo: '101', unitId: 'U-A-101' } });
    expect(moved.unit).toEqual({ roomId: uA101, addressNo: '101', groupId: 'U-A-101', role: 'owner' });
    expect((await api.getOk('res-2')).unit).toMatchObject({ roomId: uB101, role: 'owner' });
    const rows = await db().selectFrom('unit_residents').select('room_id').where('user_id', '=', owner.memberId).execute();
    expect(rows).toEqual([{ room_id: uA101 }]);

    // null unbinds.
    const unbound = await api.putOk('res-1', { unit: null });
    expect(unbound.unit).toBeNull();
    expect((await api.getOk('res-1')).unit).toBeNull();
  });
});

describe('access rules', () => {
  it('an act_as token is 403 KS003', async () => {
    const delegated = await actAsToken(svc, { subject: 'ext-alice' });
    const res = await svc.request('GET', memberPath('ext-alice'), { token: delegated.access_token });
    expectError(res, 403, 'KS003');
    expectError(
      await svc.request('PUT', memberPath('ext-alice'), { token: delegated.access_token, body: { firstName: 'A', lastName: 'B' } }),
      403,
      'KS003',
    );
  });

  it('a multi-project app is 403 KS221', async () => {
    const hub = (await appToken(svc, HUB_APP_ID, HUB_SECRET)).access_token;
    expectError(await svc.request('PUT', memberPath('hub-new'), { token: hub, body: { firstName: 'A', lastName: 'B' } }), 403, 'KS221');
    expectError(await svc.request('GET', memberPath('hub-alice'), { token: hub }), 403, 'KS221');
  });

  it('no token is 401 KS002', async () => {
    expectError(await svc.request('GET', memberPath('crm-1'), {}), 401, 'KS002');
  });

  it('an externalUserId the app has no link for is 403 KS221 on GET and DELETE, and is never created', async () => {
    expectError(await api.get('nobody'), 403, 'KS221');
    expectError(await api.del('nobody'), 403, 'KS221');
    // Another app's link is foreign too.
    expectError(await api.get('ext-alice'), 403, 'KS221');
    const links = await db()
      .selectFrom('app_links')
      .select('id')
      .where('external_user_id', 'in', ['nobody', 'ext-alice'])
      .where('app_id', '=', idOf(ids, 'partner'))
      .execute();
    expect(links).toEqual([]);
  });
});

describe('DELETE (offboarding) and re-activation', () => {
  it("deactivates, revokes every card, leaves the app's groups, keeps the link; twice is 204; re-PUT restores", async () => {
    const data = await api.putOk('crm-off', { firstName: 'Otto', lastName: 'Off', email: 'otto@example.com' });
    const userId = data.memberId;
    const now = Date.now();
    await db()
      .insertInto('cards')
      .values([
        {
          id: 'card-real-1',
          project_id: tower,
          user_id: userId,
          uid: '04A32B1C',
          label: 'Blue fob',
          type: 'real',
          generated: 0,
          status: 'active',
          created_at: now,
          revoked_at: null,
        },
        {
          id: 'card-virt-1',
          project_id: tower,
          user_id: userId,
          uid: '0000002A',
          label: 'Virtual',
          type: 'virtual',
          generated: 1,
          status: 'active',
          created_at: now + 1,
          revoked_at: null,
        },
      ])
      .execute();
    await db()
      .insertInto('faces')
      .values({
        project_id: tower,
        user_id: userId,
        image_enc: 'sealed',
        mime: 'image/jpeg',
        sha256: 'x',
        consent_at: now,
        consent_text: 'ok',
        updated_at: now,
      })
      .execute();
    const before = await api.getOk('crm-off');
    expect(before.credentials).toEqual({
      cards: [
        { cardId: 'card-real-1', cardNo: '0472621828', label: 'Blue fob', type: 'real', generated: false },
        { cardId: 'card-virt-1', cardNo: '0704643072', label: 'Virtual', type: 'virtual', generated: true },
      ],
      face: { present: true },
    });
    expect(JSON.stringify(before)).not.toContain('sealed');

    const first = await api.del('crm-off');
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    const second = await api.del('crm-off');
    expect(second.status).toBe(204);

    const off = await api.getOk('crm-off');
    expect(off).toMatchObject({ memberId: userId, status: 'deactivated', accessGroupIds: [] });
    expect(off.credentials.cards).toEqual([]);
    const cards = await db().selectFrom('cards').select(['status', 'revoked_at']).where('user_id', '=', userId).execute();
    expect(cards.every((c) => c.status === 'revoked' && c.revoked_at !== null)).toBe(true);
    expect(await accessChanges(userId)).toEqual(['groups', 'offboarded']);

    const back = await api.putOk('crm-off', { firstName: 'Otto' });
    expect(back).toMatchObject({ memberId: userId, created: false, matchedBy: 'link', accessGroupIds: [lobby, gym].sort() });
    expect((await api.getOk('crm-off')).status).toBe('active');
    expect(await accessChanges(userId)).toEqual(['groups', 'offboarded', 'reactivated']);
  });
});

describe('partner rate limit', () => {
  it('the 31st request of an app in a window is 429 KS036 with Retry-After', async () => {
    // Keep the 31 requests inside one 60-second window.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 15_000) await new Promise((r) => setTimeout(r, left + 100));
    const burst = new PartnerClient(svc, (await appToken(svc, BURST_APP_ID, 'burst-secret-0123456789abcdef-0123456789')).access_token);
    expect((await burst.putOk('b-1', { firstName: 'B', lastName: 'One' })).created).toBe(true);
    for (let i = 2; i <= 30; i++) {
      const res = await burst.get('b-1');
      expect(res.status, `request ${i}`).toBe(200);
    }
    const refused = await burst.get('b-1');
    expectError(refused, 429, 'KS036');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Other apps are not affected.
    expect((await api.get('crm-1')).status).toBe(200);
  }, 90_000);
});
