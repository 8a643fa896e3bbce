import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, startTestService, type TestService } from '../support/test-service.js';
import { applyDemoSiteIfEmpty, demoSiteDocument } from '../../src/modules/sandbox/apply-demo.js';

const HEX24 = /^[0-9a-f]{24}$/;
const APP_SECRET = 'at-least-32-characters-of-secret!!';
const HOOK_SECRET = 'at-least-32-characters-long-secret-value';

/** The operator-api.md example document. */
function exampleDocument(): any {
  return {
    brands: [{ key: 'acme', name: 'Acme Estates' }],
    projects: [
      {
        key: 'tower',
        brand: 'acme',
        name: 'Acme Tower',
        timezone: 'Asia/Bangkok',
        currency: 'THB',
        defaultCleanupMinutes: 10,
        bookingGridMinutes: 15,
        backofficePaymentDueMinutes: 1440,
      },
    ],
    zones: [{ key: 'a', project: 'tower', name: 'Tower A' }],
    floors: [{ key: 'a12', zone: 'a', name: '12F' }],
    rooms: [
      {
        key: 'orchid',
        floor: 'a12',
        name: 'Orchid',
        email: 'orchid@rooms.example',
        capacity: 8,
        status: 'active',
        type: 'normal',
        isPublic: true,
        cleanupMinutes: 15,
        chargeRate: { perHour: 0, perDay: 0 },
        equipmentsAvailability: { camera: true, display: true, mic: true, projector: false, speaker: true },
        facilities: ['whiteboard'],
        pictureUrls: [],
        polygon: [
          { xPct: 10, yPct: 10 },
          { xPct: 30, yPct: 10 },
          { xPct: 30, yPct: 25 },
        ],
        config: {
          dayConfig: {
            Mon: { availableTime: { start: '08:00:00', end: '20:00:00' }, breakTimes: [{ start: '12:00:00', end: '13:00:00' }] },
          },
          minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
          maxAdvanceBookingDays: 90,
          maxDurationMinutes: 480,
          bookMultipleDayRoom: false,
          meetingConfig: { preStartMinutes: 15, postStartWarnMinutes: 10, postStartExpireMinutes: 15, preEndMinutes: 15 },
        },
      },
    ],
    desks: [
      {
        key: 'd1',
        floor: 'a12',
        name: 'Desk 1',
        index: 1,
        email: 'd1@desks.example',
        status: 'active',
        isPublic: true,
        capacity: 1,
        chargeRate: { perHour: 50, perDay: 300 },
        config: {},
      },
    ],
    users: [
      {
        key: 'alice',
        email: 'alice@example.com',
        name: 'Alice Example',
        phone: '+66812345678',
        memberships: [{ project: 'tower', role: 'member' }],
        blockedFromBooking: false,
      },
    ],
    apps: [
      {
        key: 'portal',
        appId: 'portal-dev',
        appSecret: APP_SECRET,
        name: 'Tenant portal',
        projects: ['tower'],
        projectRoles: [{ project: 'tower', permissions: ['MEETING_UPDATE'] }],
        actAs: true,
        links: [{ user: 'alice', externalUserId: 'ext-alice' }],
        accessGroups: ['lobby'],
      },
    ],
    accessGroups: [
      { key: 'lobby', project: 'tower', name: 'Lobby turnstiles', devices: [{ key: 't1', name: 'Turnstile 1', kind: 'face-card-reader' }] },
    ],
    webhooks: [
      {
        key: 'hook',
        project: 'tower',
        url: 'http://127.0.0.1:9999/events',
        secret: HOOK_SECRET,
        events: ['ROOM_BOOK', 'ROOM_CANCEL'],
        auth: { scheme: 'signature-only' },
      },
    ],
    promoCodes: [{ key: 'half', project: 'tower', code: 'HALF', name: 'Half price', percentOff: 50 }],
  };
}

const EXAMPLE_KEYS: Record<string, string[]> = {
  brands: ['acme'],
  projects: ['tower'],
  zones: ['a'],
  floors: ['a12'],
  rooms: ['orchid'],
  desks: ['d1'],
  users: ['alice'],
  apps: ['portal'],
  accessGroups: ['lobby'],
  devices: ['t1'],
  webhooks: ['hook'],
  promoCodes: ['half'],
};

const TABLES = [
  'brands',
  'projects',
  'zones',
  'floors',
  'rooms',
  'desks',
  'users',
  'memberships',
  'apps',
  'app_projects',
  'app_links',
  'app_access_groups',
  'access_groups',
  'devices',
  'webhooks',
  'promo_codes',
] as const;

/** Every row of every site table, order-independent. */
async function snapshot(svc: TestService): Promise<Record<string, string[]>> {
  const db = svc.services.storage.db;
  const out: Record<string, string[]> = {};
  for (const t of TABLES) out[t] = (await db.selectFrom(t).selectAll().execute()).map((r) => JSON.stringify(r)).sort();
  return out;
}

function expectKs001(res: { status: number; body: any }): string[] {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'KS001', success: false });
  expect(Array.isArray(res.body.message)).toBe(true);
  return res.body.message as string[];
}

describe('POST /ops/v1/apply', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('needs the ops token (401 KS002, enveloped)', async () => {
    for (const token of [null, 'wrong-token']) {
      const res = await httpRequest(svc.url, 'POST', '/ops/v1/apply', { body: exampleDocument(), token });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'KS002', success: false, message: expect.any(String) });
    }
    expect(await svc.services.storage.db.selectFrom('brands').selectAll().execute()).toEqual([]);
  });

  it('applies the operator-api example and returns an id for every key', async () => {
    const res = await svc.ops('POST', '/ops/v1/apply', exampleDocument());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ code: 'KS000', success: true });
    const { ids, idsByKind } = res.body.data;
    const allKeys = Object.values(EXAMPLE_KEYS).flat();
    expect(Object.keys(ids).sort()).toEqual([...allKeys].sort());
    for (const key of allKeys) expect(ids[key]).toMatch(HEX24);
    for (const [kind, keys] of Object.entries(EXAMPLE_KEYS)) {
      expect(Object.keys(idsByKind[kind])).toEqual(keys);
    }

    const db = svc.services.storage.db;
    const app = await db.selectFrom('apps').selectAll().where('key', '=', 'portal').executeTakeFirstOrThrow();
    expect(app).toMatchObject({ id: ids.portal, env: 'development', client_id: 'portal-dev', act_as: 1 });
    const room = await db.selectFrom('rooms').selectAll().where('id', '=', ids.orchid).executeTakeFirstOrThrow();
    expect(room).toMatchObject({
      brand_id: ids.acme,
      project_id: ids.tower,
      zone_id: ids.a,
      floor_id: ids.a12,
      capacity: 8,
      cleanup_minutes: 15,
    });
    const floor = await db.selectFrom('floors').selectAll().where('id', '=', ids.a12).executeTakeFirstOrThrow();
    expect(floor.project_id).toBe(ids.tower);
    const user = await db.selectFrom('users').selectAll().where('id', '=', ids.alice).executeTakeFirstOrThrow();
    expect(user).toMatchObject({
      email: 'alice@example.com',
      email_lower: 'alice@example.com',
      blocked_from_booking: 0,
      brand_staff: '[]',
    });
    expect(await db.selectFrom('memberships').selectAll().where('user_id', '=', ids.alice).execute()).toEqual([
      expect.objectContaining({ project_id: ids.tower, role: 'member', user_type: 'member', source: 'admin', status: 'active' }),
    ]);
    expect(await db.selectFrom('app_projects').selectAll().execute()).toEqual([
      { app_id: ids.portal, project_id: ids.tower, permissions: '["MEETING_UPDATE"]' },
    ]);
    expect(await db.selectFrom('app_links').select(['app_id', 'user_id', 'external_user_id']).execute()).toEqual([
      { app_id: ids.portal, user_id: ids.alice, external_user_id: 'ext-alice' },
    ]);
    expect(await db.selectFrom('app_access_groups').selectAll().execute()).toEqual([{ app_id: ids.portal, access_group_id: ids.lobby }]);
    const hook = await db.selectFrom('webhooks').selectAll().where('id', '=', ids.hook).executeTakeFirstOrThrow();
    expect(hook).toMatchObject({ enabled: 1, consecutive_failures: 0, events: '["ROOM_BOOK","ROOM_CANCEL"]' });
  });

  it('is idempotent: the same document again returns the same ids and rewrites nothing', async () => {
    const before = await snapshot(svc);
    const first = await svc.ops('POST', '/ops/v1/apply', exampleDocument());
    const second = await svc.ops('POST', '/ops/v1/apply', exampleDocument());
    expect(first.status).toBe(200);
    expect(second.body.data.ids).toEqual(first.body.data.ids);
    expect(await snapshot(svc)).toEqual(before);
  });

  it('updates a changed entity under the same id and leaves the rest alone', async () => {
    const db = svc.services.storage.db;
    const before = await db.selectFrom('rooms').selectAll().where('key', '=', 'orchid').executeTakeFirstOrThrow();
    const deskBefore = await db.selectFrom('desks').selectAll().where('key', '=', 'd1').executeTakeFirstOrThrow();
    const doc = exampleDocument();
    doc.rooms[0].capacity = 10;
    const res = await svc.ops('POST', '/ops/v1/apply', doc);
    expect(res.status).toBe(200);
    expect(res.body.data.ids.orchid).toBe(before.id);
    const after = await db.selectFrom('rooms').selectAll().where('id', '=', before.id).executeTakeFirstOrThrow();
    expect(after.capacity).toBe(10);
    expect(after.updated_at).toBeGreaterThanOrEqual(before.updated_at);
    expect(after.created_at).toBe(before.created_at);
    expect(await db.selectFrom('desks').selectAll().where('key', '=', 'd1').executeTakeFirstOrThrow()).toEqual(deskBefore);
  });

  it('resolves references to entities applied earlier, and never deletes', async () => {
    const res = await svc.ops('POST', '/ops/v1/apply', {
      rooms: [{ key: 'lotus', floor: 'a12', name: 'Lotus' }],
      desks: [{ key: 'd2', floor: 'a12', name: 'Desk 2' }],
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data.ids).sort()).toEqual(['d2', 'lotus']);
    const db = svc.services.storage.db;
    const tower = await db.selectFrom('projects').select('id').where('key', '=', 'tower').executeTakeFirstOrThrow();
    const lotus = await db.selectFrom('rooms').selectAll().where('key', '=', 'lotus').executeTakeFirstOrThrow();
    // Spec defaults for omitted fields.
    expect(lotus).toMatchObject({
      project_id: tower.id,
      status: 'active',
      type: 'normal',
      is_public: 1,
      capacity: 1,
      cleanup_minutes: null,
      charge_rate: '{"perDay":0,"perHour":0}',
      config: '{}',
      facilities: '[]',
      picture_urls: '[]',
      polygon: null,
    });
    const d2 = await db.selectFrom('desks').selectAll().where('key', '=', 'd2').executeTakeFirstOrThrow();
    expect(d2).toMatchObject({ capacity: 1, status: 'active', is_public: 1, desk_index: 1 });
    // orchid was not in this document and is still there.
    expect(await db.selectFrom('rooms').select('key').where('key', '=', 'orchid').executeTakeFirst()).toBeDefined();
  });

  it('rejects unknown references with one message each and writes nothing', async () => {
    const before = await snapshot(svc);
    const res = await svc.ops('POST', '/ops/v1/apply', {
      brands: [{ key: 'fresh-brand', name: 'Fresh' }],
      projects: [{ key: 'p2', brand: 'ghost-brand', name: 'P2', timezone: 'Asia/Bangkok', currency: 'THB' }],
      rooms: [{ key: 'orchid2', floor: 'a13', name: 'Orchid 2' }],
      desks: [{ key: 'd9', floor: 'nowhere', name: 'Desk 9' }],
      apps: [
        {
          key: 'app2',
          appId: 'app-two',
          appSecret: APP_SECRET,
          name: 'Two',
          projects: ['tower'],
          links: [{ user: 'bob', externalUserId: 'ext-bob' }],
        },
      ],
    });
    const messages = expectKs001(res);
    expect(messages.sort()).toEqual([
      'apps[app2].links[bob] references unknown user "bob"',
      'desks[d9].floor references unknown floor "nowhere"',
      'projects[p2].brand references unknown brand "ghost-brand"',
      'rooms[orchid2].floor references unknown floor "a13"',
    ]);
    const db = svc.services.storage.db;
    expect(await db.selectFrom('brands').select('id').where('key', '=', 'fresh-brand').executeTakeFirst()).toBeUndefined();
    expect(await snapshot(svc)).toEqual(before);
  });

  it('rejects duplicate keys', async () => {
    const doc = exampleDocument();
    doc.rooms.push({ ...doc.rooms[0], name: 'Orchid again' });
    doc.desks.push({ ...doc.desks[0] }, { ...doc.desks[0] });
    const messages = expectKs001(await svc.ops('POST', '/ops/v1/apply', doc));
    expect(messages).toEqual(['rooms: key "orchid" is used more than once', 'desks: key "d1" is used more than once']);
  });

  it('rejects an invalid time zone', async () => {
    const doc = exampleDocument();
    doc.projects[0].timezone = 'Asia/Atlantis';
    const messages = expectKs001(await svc.ops('POST', '/ops/v1/apply', doc));
    expect(messages).toEqual(['projects[tower].timezone "Asia/Atlantis" is not a valid IANA time zone']);
  });

  it('rejects a short app secret, a short webhook secret and a non-http url (schema)', async () => {
    const doc = exampleDocument();
    doc.apps[0].appSecret = 'too-short';
    doc.webhooks[0].secret = 'also-short';
    doc.webhooks[0].url = 'ftp://example.com/x';
    const messages = expectKs001(await svc.ops('POST', '/ops/v1/apply', doc));
    expect(messages.some((m) => m.startsWith('body.apps[0].appSecret'))).toBe(true);
    expect(messages.some((m) => m.startsWith('body.webhooks[0].secret'))).toBe(true);
    expect(messages.some((m) => m.startsWith('body.webhooks[0].url'))).toBe(true);
  });

  it('rejects unknown fields (typos)', async () => {
    const doc = exampleDocument();
    doc.rooms[0].capcity = 3;
    doc.rooms[0].config.meetingConfig.preStartMinute = 3;
    const messages = expectKs001(await svc.ops('POST', '/ops/v1/apply', doc));
    expect(messages).toEqual(
      expect.arrayContaining([
        'body.rooms[0].capcity is not an allowed field',
        'body.rooms[0].config.meetingConfig.preStartMinute is not an allowed field',
      ]),
    );
  });

  it('rejects inconsistent apps: roles outside projects, links to non-members', async () => {
    const res = await svc.ops('POST', '/ops/v1/apply', {
      projects: [{ key: 'annex', brand: 'acme', name: 'Annex', timezone: 'Asia/Bangkok', currency: 'THB' }],
      users: [{ key: 'carol', name: 'Carol', email: 'carol@example.com' }],
      apps: [
        {
          key: 'app3',
          appId: 'app-three',
          appSecret: APP_SECRET,
          name: 'Three',
          projects: ['tower'],
          projectRoles: [{ project: 'annex', permissions: ['MEETING_UPDATE'] }],
          links: [{ user: 'carol', externalUserId: 'ext-carol' }],
        },
      ],
    });
    expect(expectKs001(res)).toEqual([
      'apps[app3].projectRoles names project "annex", which is not listed in apps[app3].projects',
      'apps[app3].links[carol]: user "carol" is not a member of any project of the app',
    ]);
  });

  it('rejects bad webhook auth, ambiguous promo codes and shared identities', async () => {
    const res = await svc.ops('POST', '/ops/v1/apply', {
      users: [
        { key: 'u1', name: 'U1', email: 'Same@Example.com' },
        { key: 'u2', name: 'U2', email: 'same@example.com' },
      ],
      webhooks: [
        {
          key: 'h2',
          project: 'tower',
          url: 'https://example.com/a',
          secret: HOOK_SECRET,
          events: ['ROOM_BOOK'],
          auth: { scheme: 'bearer' },
        },
        {
          key: 'h3',
          project: 'tower',
          url: 'https://example.com/b',
          secret: HOOK_SECRET,
          events: ['DESK_BOOK'],
          auth: { scheme: 'custom-header', headers: { 'X-Service-Event': 'x' } },
        },
      ],
      promoCodes: [{ key: 'both', project: 'tower', code: 'BOTH', name: 'Both', percentOff: 10, amountOff: 5 }],
    });
    expect(expectKs001(res).sort()).toEqual(
      [
        'webhooks[h2].auth.token is required for the bearer scheme',
        'webhooks[h3].auth.headers: "X-Service-Event" is set by the service and cannot be overridden',
        'promoCodes[both] must give exactly one of percentOff or amountOff',
        'users[u2].email "same@example.com" is also used by users[u1]',
      ].sort(),
    );
  });

  it('keeps fractional values stable across applies (no rewrite)', async () => {
    const doc = {
      promoCodes: [{ key: 'third', project: 'tower', code: 'THIRD', name: 'A third off', percentOff: 33.3 }],
      desks: [{ key: 'd3', floor: 'a12', name: 'Desk 3', index: 3, chargeRate: { perHour: 12.35, perDay: 99.99 } }],
    };
    expect((await svc.ops('POST', '/ops/v1/apply', doc)).status).toBe(200);
    const before = await snapshot(svc);
    expect((await svc.ops('POST', '/ops/v1/apply', doc)).status).toBe(200);
    expect(await snapshot(svc)).toEqual(before);
  });

  it('stores promo validity dates and a use limit, and never resets the use count', async () => {
    const db = svc.services.storage.db;
    const doc = {
      promoCodes: [
        {
          key: 'launch',
          project: 'tower',
          code: 'LAUNCH',
          name: 'Launch week',
          amountOff: 100,
          validFrom: '2025-07-01T00:00:00+07:00',
          validUntil: '2025-07-08T00:00:00+07:00',
          maxUses: 50,
        },
      ],
    };
    expect((await svc.ops('POST', '/ops/v1/apply', doc)).status).toBe(200);
    const row = () => db.selectFrom('promo_codes').selectAll().where('key', '=', 'launch').executeTakeFirstOrThrow();
    expect(await row()).toMatchObject({
      valid_from: Date.parse('2025-06-30T17:00:00Z'),
      valid_until: Date.parse('2025-07-07T17:00:00Z'),
      max_uses: 50,
      used_count: 0,
    });
    // Unchanged document: nothing rewritten.
    const before = await snapshot(svc);
    expect((await svc.ops('POST', '/ops/v1/apply', doc)).status).toBe(200);
    expect(await snapshot(svc)).toEqual(before);
    // Uses are counted elsewhere; an apply that lifts the limits keeps the count.
    await db.updateTable('promo_codes').set({ used_count: 7 }).where('key', '=', 'launch').execute();
    const open = { promoCodes: [{ key: 'launch', project: 'tower', code: 'LAUNCH', name: 'Launch week', amountOff: 100 }] };
    expect((await svc.ops('POST', '/ops/v1/apply', open)).status).toBe(200);
    expect(await row()).toMatchObject({ valid_from: null, valid_until: null, max_uses: null, used_count: 7 });
  });

  it('rejects promo validity that ends before it starts, and a use limit below 1', async () => {
    const bad = (extra: object) => ({
      promoCodes: [{ key: 'oops', project: 'tower', code: 'OOPS', name: 'Oops', percentOff: 5, ...extra }],
    });
    expect(
      expectKs001(
        await svc.ops(
          'POST',
          '/ops/v1/apply',
          bad({
            validFrom: '2025-07-08T00:00:00Z',
            validUntil: '2025-07-01T00:00:00Z',
          }),
        ),
      ),
    ).toEqual(['promoCodes[oops].validUntil must be after validFrom']);
    expect(expectKs001(await svc.ops('POST', '/ops/v1/apply', bad({ maxUses: 0 })))[0]).toMatch(/^body\.promoCodes\[0\]\.maxUses/);
    expect(expectKs001(await svc.ops('POST', '/ops/v1/apply', bad({ validFrom: 'next tuesday' })))[0]).toMatch(
      /^body\.promoCodes\[0\]\.validFrom/,
    );
  });

  it('adopts an unkeyed stored user with the same email instead of failing on the unique email', async () => {
    const db = svc.services.storage.db;
    const now = svc.services.clock.now();
    await db
      .insertInto('users')
      .values({
        id: 'aaaaaaaaaaaaaaaaaaaaaaaa',
        key: null,
        email: 'Dave@Example.com',
        email_lower: 'dave@example.com',
        phone: null,
        username: null,
        name: 'Dave',
        first_name: null,
        last_name: null,
        profile_name: null,
        blocked_from_booking: 0,
        brand_staff: '[]',
        created_at: now,
        updated_at: now,
      })
      .execute();
    const res = await svc.ops('POST', '/ops/v1/apply', {
      users: [{ key: 'dave', name: 'Dave Example', email: 'dave@example.com', brandStaff: ['acme'] }],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.ids.dave).toBe('aaaaaaaaaaaaaaaaaaaaaaaa');
    const dave = await db.selectFrom('users').selectAll().where('id', '=', 'aaaaaaaaaaaaaaaaaaaaaaaa').executeTakeFirstOrThrow();
    const acme = await db.selectFrom('brands').select('id').where('key', '=', 'acme').executeTakeFirstOrThrow();
    expect(dave).toMatchObject({ key: 'dave', name: 'Dave Example', brand_staff: JSON.stringify([acme.id]) });
  });

  it('moves derived columns along when a zone changes project', async () => {
    const db = svc.services.storage.db;
    const res = await svc.ops('POST', '/ops/v1/apply', {
      projects: [{ key: 'annex2', brand: 'acme', name: 'Annex 2', timezone: 'Asia/Tokyo', currency: 'JPY' }],
      zones: [{ key: 'a', project: 'annex2', name: 'Tower A' }],
    });
    expect(res.status).toBe(200);
    const annex = res.body.data.ids.annex2;
    expect((await db.selectFrom('floors').select('project_id').where('key', '=', 'a12').executeTakeFirstOrThrow()).project_id).toBe(annex);
    for (const r of await db.selectFrom('rooms').select('project_id').execute()) expect(r.project_id).toBe(annex);
    for (const d of await db.selectFrom('desks').select('project_id').execute()) expect(d.project_id).toBe(annex);
    // and back, so later tests see the original layout
    expect((await svc.ops('POST', '/ops/v1/apply', { zones: [{ key: 'a', project: 'tower', name: 'Tower A' }] })).status).toBe(200);
    const tower = await db.selectFrom('projects').select('id').where('key', '=', 'tower').executeTakeFirstOrThrow();
    for (const r of await db.selectFrom('rooms').select('project_id').execute()) expect(r.project_id).toBe(tower.id);
  });

  it('stores no secret in plain text and keeps secrets unchanged across applies', async () => {
    const db = svc.services.storage.db;
    const everything = JSON.stringify(await snapshot(svc));
    expect(everything).not.toContain(APP_SECRET);
    expect(everything).not.toContain(HOOK_SECRET);
    const app = await db.selectFrom('apps').selectAll().where('key', '=', 'portal').executeTakeFirstOrThrow();
    expect(app.secret_hash).toMatch(/^scrypt\$/);
    const hook = await db.selectFrom('webhooks').selectAll().where('key', '=', 'hook').executeTakeFirstOrThrow();
    expect(svc.services.secretBox.open(hook.secret_enc)).toBe(HOOK_SECRET);
    expect(JSON.parse(svc.services.secretBox.open(hook.auth_enc))).toEqual({ scheme: 'signature-only' });

    // A changed secret is re-hashed / re-sealed; the app keeps its id.
    const doc = exampleDocument();
    doc.apps[0].appSecret = 'a-brand-new-secret-of-sufficient-length';
    doc.webhooks[0].secret = 'another-secret-value-that-is-long-enough';
    doc.webhooks[0].auth = { scheme: 'bearer', token: 'receiver-token' };
    const res = await svc.ops('POST', '/ops/v1/apply', doc);
    expect(res.status).toBe(200);
    const app2 = await db.selectFrom('apps').selectAll().where('key', '=', 'portal').executeTakeFirstOrThrow();
    expect(app2.id).toBe(app.id);
    expect(app2.secret_hash).not.toBe(app.secret_hash);
    const hook2 = await db.selectFrom('webhooks').selectAll().where('key', '=', 'hook').executeTakeFirstOrThrow();
    expect(svc.services.secretBox.open(hook2.secret_enc)).toBe('another-secret-value-that-is-long-enough');
    expect(JSON.parse(svc.services.secretBox.open(hook2.auth_enc))).toEqual({ scheme: 'bearer', token: 'receiver-token' });
    expect(JSON.stringify(await snapshot(svc))).not.toContain('receiver-token');
  });

  it('appears in the OpenAPI document', async () => {
    const res = await svc.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.paths['/ops/v1/apply'].post).toBeDefined();
  });
});

describe('demo site', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('applies cleanly, and applyDemoSiteIfEmpty is then a no-op that still reports the credentials', async () => {
    const doc = demoSiteDocument();
    const res = await svc.ops('POST', '/ops/v1/apply', doc);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data.ids).length).toBeGreaterThan(30);
    const before = await snapshot(svc);
    expect(before.rooms.length).toBe(10);
    expect(before.desks.length).toBe(20);

    const creds = await applyDemoSiteIfEmpty(svc.services);
    expect(creds).toEqual({ appId: 'demo-portal', appSecret: doc.apps![0].appSecret });
    expect(await snapshot(svc)).toEqual(before);
  });

  it('populates an empty database, and does nothing on a database that has another site', async () => {
    const empty = await startTestService();
    try {
      const creds = await applyDemoSiteIfEmpty(empty.services);
      expect(creds?.appId).toBe('demo-portal');
      const db = empty.services.storage.db;
      expect(await db.selectFrom('rooms').select('id').execute()).toHaveLength(10);
      // The credentials work at the token endpoint.
      const token = await empty.request('POST', '/auth/accessToken', {
        body: { grant_type: 'app_credentials', app_id: creds!.appId, app_secret: creds!.appSecret },
      });
      expect([200, 201]).toContain(token.status);
    } finally {
      await empty.close();
    }

    const other = await startTestService();
    try {
      expect((await other.ops('POST', '/ops/v1/apply', exampleDocument())).status).toBe(200);
      const before = await snapshot(other);
      expect(await applyDemoSiteIfEmpty(other.services)).toBeNull();
      expect(await snapshot(other)).toEqual(before);
    } finally {
      await other.close();
    }
  });
});

/** A site with `users` users (each a member of one project) and half as many desks. */
function largeSite(users: number, prefix = 'big'): any {
  return {
    brands: [{ key: `${prefix}-brand`, name: 'Big' }],
    projects: [{ key: `${prefix}-p`, brand: `${prefix}-brand`, name: 'Big tower', timezone: 'Asia/Bangkok', currency: 'THB' }],
    zones: [{ key: `${prefix}-z`, project: `${prefix}-p`, name: 'Z' }],
    floors: [{ key: `${prefix}-f`, zone: `${prefix}-z`, name: 'F' }],
    desks: Array.from({ length: users / 2 }, (_, i) => ({ key: `${prefix}-d${i}`, floor: `${prefix}-f`, name: `Desk ${i}` })),
    users: Array.from({ length: users }, (_, i) => ({
      key: `${prefix}-u${i}`,
      name: `User ${i}`,
      email: `${prefix}-u${i}@example.com`,
      memberships: [{ project: `${prefix}-p` }],
    })),
  };
}

describe('POST /ops/v1/apply: size limits and a large document', () => {
  it('keeps answering other requests while a large document is written, and writes all of it', async () => {
    let applied = false;
    let health: Promise<{ status: number; appliedBefore: boolean }> | undefined;
    const svc: TestService = await startTestService({
      noWorkers: true,
      onQuery: (sql) => {
        // The first user row is being written: the document is parsed, checked and planned, the transaction is open.
        if (health === undefined && /^insert into "users"/.test(sql)) {
          health = httpRequest(svc.url, 'GET', '/healthz').then((res) => ({ status: res.status, appliedBefore: applied }));
        }
      },
    });
    try {
      svc.services.site.onApplied(() => {
        applied = true;
      });
      const res = await svc.ops('POST', '/ops/v1/apply', largeSite(8000));
      expect(res.status).toBe(200);
      expect(health).toBeDefined();
      // /healthz was answered while the apply was still writing, not after it committed.
      expect(await health).toEqual({ status: 200, appliedBefore: false });
      const db = svc.services.storage.db;
      const count = async (t: 'users' | 'desks' | 'memberships') =>
        Number(
          (
            await db
              .selectFrom(t)
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      expect([await count('users'), await count('desks'), await count('memberships')]).toEqual([8000, 4000, 8000]);
      // Applying it again is still idempotent.
      const before = await snapshot(svc);
      expect((await svc.ops('POST', '/ops/v1/apply', largeSite(8000))).status).toBe(200);
      expect(await snapshot(svc)).toEqual(before);
    } finally {
      await svc.close();
    }
  }, 120_000);

  it('refuses a document over APPLY_BODY_LIMIT_BYTES with 413 KS001 and changes nothing; other routes keep their own limits', async () => {
    const svc = await startTestService({ noWorkers: true, env: { APPLY_BODY_LIMIT_BYTES: String(200 * 1024) } });
    try {
      const small = await svc.ops('POST', '/ops/v1/apply', exampleDocument());
      expect(small.status).toBe(200);
      const before = await snapshot(svc);
      const big = largeSite(2000);
      expect(JSON.stringify(big).length).toBeGreaterThan(200 * 1024);
      const res = await svc.ops('POST', '/ops/v1/apply', big);
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ code: 'KS001', success: false, message: [expect.any(String)] });
      expect(await snapshot(svc)).toEqual(before);
      // A body over APPLY_BODY_LIMIT_BYTES but within an ordinary route's limit (256 KiB) is not refused there for its size.
      const other = await svc.ops('POST', '/ops/v1/clock', { set: 'x'.repeat(230 * 1024) });
      expect(other.status).toBe(400);
      // The limit is documented.
      const spec = (await svc.request('GET', '/openapi.json')).body;
      expect(spec.paths['/ops/v1/apply'].post.description).toContain('APPLY_BODY_LIMIT_BYTES');
      expect(spec.paths['/ops/v1/apply'].post.responses['413']).toBeDefined();
    } finally {
      await svc.close();
    }
  });

  it('refuses a section with more entries than one document may hold (400 KS001 naming it) and changes nothing', async () => {
    const svc = await startTestService({ noWorkers: true });
    try {
      const before = await snapshot(svc);
      const brands = Array.from({ length: 25_001 }, (_, i) => ({ key: `b${i}`, name: 'B' }));
      const msgs = expectKs001(await svc.ops('POST', '/ops/v1/apply', { brands }));
      expect(msgs).toEqual(['brands holds 25001 entries; one document may hold at most 25000 (apply the rest in another document)']);
      expect(await snapshot(svc)).toEqual(before);
    } finally {
      await svc.close();
    }
  });
});
