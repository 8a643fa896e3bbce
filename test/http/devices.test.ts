/**
 * Access devices over HTTP (operator-api.md "Access devices"; api-spec partner
 * member rules): enrollment after a credentials PUT on every device of the app's
 * groups and none elsewhere, card removal, offboarding, offline → pending → online
 * catch-up in order, coalescing, a restart mid-queue, bad input recorded and not
 * retried, repair of drift, devices added by a site apply.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { deviceSite, deviceView, face, phonePhoto, settled, undecodableFace, waitForDevice } from '../support/devices.js';
import { cardNoOf, decodeCard } from '../../src/modules/members/rules/card-codec.js';
import { createTestDatabase } from '../support/test-database.js';

let svc: TestService;
let ids: SiteIds;
let api: PartnerClient;
const dev = (key: string) => idOf(ids, key);
const CONSENT = '2026-01-01T00:00:00Z';

beforeAll(async () => {
  svc = await startTestService();
  ids = await applySite(svc, deviceSite());
  api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
});

afterAll(async () => {
  await svc?.close();
});

const uidOf = (cardNo: string) => {
  const d = decodeCard(cardNo);
  if (!d.ok) throw new Error(d.reason);
  return d.uid;
};

async function member(ext: string, cards: string[], withFace = true): Promise<string> {
  const m = await api.putOk(ext, { firstName: ext, lastName: 'Member' });
  const res = await api.credentials(ext, {
    cards: cards.map((cardNo) => ({ cardNo })),
    ...(withFace ? { face: face(ext.length), faceConsentAt: CONSENT } : {}),
  });
  expect(res.status, res.text).toBe(200);
  return m.memberId;
}

const enrollmentOf = (view: any, memberId: string) => view.enrollments.find((e: any) => e.memberId === memberId);

describe('enrollment', () => {
  it("a credentials PUT reaches every device of the app's groups, and no other", async () => {
    const id = await member('dev-1', ['0001234567', '3000000001']);
    for (const key of ['t1', 't2', 'g1']) {
      const view = await waitForDevice(svc, dev(key), (v) => settled(v) && !!enrollmentOf(v, id)?.cardNos.length);
      expect(view).toMatchObject({ _id: dev(key), online: true, pendingChanges: 0 });
      expect(Date.parse(view.lastSyncedAt)).toBeGreaterThan(0);
      expect(enrollmentOf(view, id).cardNos.sort()).toEqual(['0001234567', '3000000001']);
    }
    expect(enrollmentOf(await deviceView(svc, dev('t1')), id).face).toBe(true);
    // A plain card reader takes no face.
    expect(enrollmentOf(await deviceView(svc, dev('t2')), id).face).toBe(false);
    for (const key of ['s1', 'a1']) expect(enrollmentOf(await deviceView(svc, dev(key)), id)).toBeUndefined();
  });

  it('the device view shows the contract fields, never face bytes', async () => {
    const view = await deviceView(svc, dev('g1'));
    expect(Object.keys(view)).toEqual(
      expect.arrayContaining(['_id', 'name', 'kind', 'online', 'pendingChanges', 'lastSyncedAt', 'enrollments']),
    );
    expect(view).toMatchObject({ name: 'Gym reader', kind: 'face-card-reader', location: { en: 'Gym, 5th floor', th: 'ฟิตเนส ชั้น 5' } });
    for (const e of view.enrollments) {
      expect(Object.keys(e).sort()).toEqual(['cardNos', 'face', 'faceRefused', 'memberId', 'validFrom', 'validUntil']);
      for (const c of e.cardNos) expect(c).toMatch(/^\d{10}$/);
    }
    expect(JSON.stringify(view)).not.toContain(face('dev-1'.length).slice(0, 40));
  });

  it('one card in two formats is one card on the device', async () => {
    const uid = uidOf('0007654321');
    const m = await api.putOk('dev-fmt', { firstName: 'F', lastName: 'Mt' });
    const res = await api.credentials('dev-fmt', { cards: [{ cardNo: '0007654321' }, { cardNo: uid, cardCodeFormat: 'hex' }] });
    expect(res.status, res.text).toBe(200);
    const view = await waitForDevice(svc, dev('t1'), (v) => settled(v) && enrollmentOf(v, m.memberId)?.cardNos.length === 1);
    expect(enrollmentOf(view, m.memberId).cardNos).toEqual([cardNoOf(uid)]);
  });

  it('removing a card withdraws it from the devices; offboarding withdraws the member', async () => {
    const id = await member('dev-2', ['0000000101', '0000000102']);
    await waitForDevice(svc, dev('t1'), (v) => settled(v) && enrollmentOf(v, id)?.cardNos.length === 2);
    const res = await api.credentials('dev-2', { cards: [{ cardNo: '0000000102' }] });
    expect(res.status).toBe(200);
    const view = await waitForDevice(svc, dev('t1'), (v) => settled(v) && enrollmentOf(v, id)?.cardNos.length === 1);
    expect(enrollmentOf(view, id).cardNos).toEqual(['0000000102']);

    expect((await api.del('dev-2')).status).toBe(204);
    for (const key of ['t1', 't2', 'g1']) {
      await waitForDevice(svc, dev(key), (v) => settled(v) && !enrollmentOf(v, id));
    }
  });
});

describe('members without credentials', () => {
  it('a member with no credential holds no entry on any device; removing the last one removes the entry', async () => {
    const bare = await api.putOk('dev-bare', { firstName: 'No', lastName: 'Credentials' });
    const id = await member('dev-last', ['0000000111']);
    for (const key of ['t1', 't2', 'g1']) await waitForDevice(svc, dev(key), (v) => settled(v) && !!enrollmentOf(v, id));
    // Both members are in the groups; only the one with a credential is on the devices.
    for (const key of ['t1', 't2', 'g1']) expect(enrollmentOf(await deviceView(svc, dev(key)), bare.memberId)).toBeUndefined();

    // The last card and the face go: the member leaves every device (not an empty entry).
    const res = await api.credentials('dev-last', { cards: [], face: null });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.cards.filter((c: any) => c.type === 'real')).toEqual([]);
    // A face-only member had been given a virtual card; with a physical card there is none, so nothing is left.
    expect(res.body.data.cards).toEqual([]);
    for (const key of ['t1', 't2', 'g1']) {
      const view = await waitForDevice(svc, dev(key), (v) => settled(v) && !enrollmentOf(v, id));
      expect(view.enrollments.filter((e: any) => e.cardNos.length === 0 && !e.face)).toEqual([]);
    }
    expect(await svc.services.deviceSync.reconcileAll()).toBe(0);
  });
});

describe('an unreachable device', () => {
  it('keeps changes pending while offline and catches up in order when back; superseded changes are coalesced', async () => {
    const t1 = dev('t1');
    expect((await svc.ops('POST', `/ops/v1/devices/${t1}/offline`)).body.data.online).toBe(false);
    const a = await member('dev-off-a', ['0000000201']);
    const b = await member('dev-off-b', ['0000000301']);
    for (const cards of [['0000000202'], ['0000000203'], ['0000000204']]) {
      const res = await api.credentials('dev-off-a', { cards: cards.map((cardNo) => ({ cardNo })) });
      expect(res.status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 300));
    const offline = await deviceView(svc, t1);
    expect(offline.online).toBe(false);
    expect(enrollmentOf(offline, a)).toBeUndefined();
    expect(enrollmentOf(offline, b)).toBeUndefined();
    // One pending command per member: a's four changes collapsed into its latest state.
    expect(offline.pendingChanges).toBe(2);
    expect(offline.lastError).toMatch(/offline/);
    // Other devices were not held up.
    await waitForDevice(svc, dev('g1'), (v) => settled(v) && enrollmentOf(v, a)?.cardNos[0] === '0000000204');

    expect((await svc.ops('POST', `/ops/v1/devices/${t1}/online`)).body.data.online).toBe(true);
    const back = await waitForDevice(svc, t1, settled);
    expect(enrollmentOf(back, a).cardNos).toEqual(['0000000204']);
    expect(enrollmentOf(back, b).cardNos).toEqual(['0000000301']);
    const done = await svc.services.storage.db
      .selectFrom('device_commands')
      .select(['seq', 'subject_id', 'done_at'])
      .where('device_id', '=', t1)
      .where('subject_id', 'in', [a, b])
      .where('status', '=', 'done')
      .orderBy('seq')
      .execute();
    expect(done.map((d) => d.subject_id)).toEqual([b, a]);
    for (let i = 1; i < done.length; i++) expect(Number(done[i]!.done_at)).toBeGreaterThanOrEqual(Number(done[i - 1]!.done_at));
  });

  it('unknown devices are 404', async () => {
    for (const path of ['/ops/v1/devices/ffffffffffffffffffffffff', '/ops/v1/devices/nope']) {
      const res = await svc.ops('GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'KS005', success: false });
    }
    expect((await svc.ops('POST', '/ops/v1/devices/ffffffffffffffffffffffff/offline')).status).toBe(404);
  });
});

describe('bad input and repair', () => {
  it("a phone photo well over the device's limit reaches the face reader as a picture it takes, with the member's cards", async () => {
    const m = await api.putOk('dev-bigface', { firstName: 'Big', lastName: 'Face' });
    const photo = await phonePhoto(3);
    expect(Buffer.from(photo, 'base64').length).toBeGreaterThan(300 * 1024);
    const res = await api.credentials('dev-bigface', { cards: [{ cardNo: '0000000401' }], face: photo, faceConsentAt: CONSENT });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.face).toEqual({ present: true });
    // The sandbox device takes only a baseline JPEG within 480x640 and 200 KB (the rule a terminal applies).
    const view = await waitForDevice(svc, dev('t1'), (v) => settled(v) && !!enrollmentOf(v, m.memberId)?.cardNos.length);
    expect(enrollmentOf(view, m.memberId)).toEqual({
      memberId: m.memberId,
      cardNos: ['0000000401'],
      face: true,
      faceRefused: null,
      validFrom: null,
      validUntil: null,
    });
    expect(view.problems.filter((p: any) => p.subject.id === m.memberId)).toEqual([]);
    const cardOnly = await waitForDevice(svc, dev('t2'), (v) => settled(v) && !!enrollmentOf(v, m.memberId));
    expect(enrollmentOf(cardOnly, m.memberId)).toMatchObject({ cardNos: ['0000000401'], face: false, faceRefused: null });
    // Nothing returns the picture: the view and the member read carry no image bytes.
    const text = JSON.stringify(view) + JSON.stringify((await api.get('dev-bigface')).body);
    expect(text).not.toContain(photo.slice(100, 160));
    expect(text).not.toMatch(/\/9j\/|iVBORw0/); // base64 of a JPEG or PNG start
    expect(await svc.services.deviceSync.reconcileAll()).toBe(0);
    // A face stored before its pictures existed (an upgrade) gets them from the next repair pass, and the device keeps it.
    const variants = () =>
      svc.services.storage.db.selectFrom('face_variants').select(['profile', 'sha256']).where('user_id', '=', m.memberId).execute();
    const before = await variants();
    expect(before).toHaveLength(1);
    await svc.services.storage.db.deleteFrom('face_variants').where('user_id', '=', m.memberId).execute();
    expect(await svc.services.deviceSync.reconcileAll()).toBe(0);
    expect(await variants()).toEqual(before);
  }, 90_000); // a 12-megapixel photo is made and decoded: slow on a loaded machine

  it('a face no picture can be made of stays off the face reader, is reported there, and keeps no card off', async () => {
    const m = await api.putOk('dev-badface', { firstName: 'Bad', lastName: 'Face' });
    const res = await api.credentials('dev-badface', {
      cards: [{ cardNo: '0000000402' }],
      face: undecodableFace(),
      faceConsentAt: CONSENT,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.face).toEqual({ present: true });
    const view = await waitForDevice(svc, dev('t1'), (v) => settled(v) && !!enrollmentOf(v, m.memberId)?.cardNos.length);
    expect(enrollmentOf(view, m.memberId)).toEqual({
      memberId: m.memberId,
      cardNos: ['0000000402'],
      face: false,
      faceRefused: expect.stringMatching(/could not be decoded/),
      validFrom: null,
      validUntil: null,
    });
    // Not a device refusal: nothing was refused, nothing is retried.
    expect(view.problems.filter((p: any) => p.subject.id === m.memberId)).toEqual([]);
    await svc.services.deviceSync.reconcileAll();
    expect((await deviceView(svc, dev('t1'))).pendingChanges).toBe(0);
    // A good face later replaces the refusal.
    expect((await api.credentials('dev-badface', { face: face(11), faceConsentAt: CONSENT })).status).toBe(200);
    const fixed = await waitForDevice(svc, dev('t1'), (v) => settled(v) && enrollmentOf(v, m.memberId)?.face === true);
    expect(enrollmentOf(fixed, m.memberId)).toEqual({
      memberId: m.memberId,
      cardNos: ['0000000402'],
      face: true,
      faceRefused: null,
      validFrom: null,
      validUntil: null,
    });
  });

  it('a device that lost an enrollment gets it back on the next repair', async () => {
    const id = await member('dev-drift', ['0000000501']);
    await waitForDevice(svc, dev('g1'), (v) => settled(v) && !!enrollmentOf(v, id));
    await svc.services.storage.db
      .deleteFrom('device_enrollments')
      .where('device_id', '=', dev('g1'))
      .where('subject_id', '=', id)
      .execute();
    expect(enrollmentOf(await deviceView(svc, dev('g1')), id)).toBeUndefined();
    expect(await svc.services.deviceSync.reconcileAll()).toBeGreaterThan(0);
    const view = await waitForDevice(svc, dev('g1'), (v) => settled(v) && !!enrollmentOf(v, id));
    expect(enrollmentOf(view, id).cardNos).toEqual(['0000000501']);
    expect(await svc.services.deviceSync.reconcileAll()).toBe(0);
  });

  it("a device added to a group by a site apply receives the group's members", async () => {
    const id = await member('dev-newdev', ['0000000601']);
    const doc = deviceSite();
    doc.accessGroups[0].devices.push({ key: 't3', name: 'Turnstile 3', kind: 'face-card-reader' });
    ids = await applySite(svc, doc);
    const view = await waitForDevice(svc, dev('t3'), (v) => settled(v) && !!enrollmentOf(v, id), 10_000);
    expect(enrollmentOf(view, id)).toMatchObject({ cardNos: ['0000000601'], face: true });
  });
});

describe('the sandbox switches outside the sandbox', () => {
  it('are 404 in production; the device view is still served', async () => {
    const prod = await startTestService({ env: { BOOKING_ENV: 'production', SECRETS_KEY: 'ab'.repeat(32) } });
    try {
      const prodIds = await applySite(prod, deviceSite());
      const t1 = idOf(prodIds, 't1');
      for (const path of ['offline', 'online']) {
        const res = await prod.ops('POST', `/ops/v1/devices/${t1}/${path}`);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('KS005');
      }
      expect((await deviceView(prod, t1)).online).toBe(true);
    } finally {
      await prod.close();
    }
  });
});

describe('durability', () => {
  it('a restart mid-queue loses nothing: the queue is delivered by the next run', async () => {
    const database = await createTestDatabase();
    const first = await startTestService({ database, keepDatabase: true });
    const siteIds = await applySite(first, deviceSite());
    const t1 = idOf(siteIds, 't1');
    const token = (await appToken(first, PARTNER_APP_ID, PARTNER_SECRET)).access_token;
    expect((await first.ops('POST', `/ops/v1/devices/${t1}/offline`)).status).toBe(200);
    const put = await first.request('PUT', '/partner/members/restart-1', { token, body: { firstName: 'Re', lastName: 'Start' } });
    const memberId = put.body.data.memberId;
    await first.request('PUT', '/partner/members/restart-1/credentials', { token, body: { cards: [{ cardNo: '0000000701' }] } });
    expect((await deviceView(first, t1)).pendingChanges).toBe(1);
    await first.close();

    const second = await startTestService({ database });
    try {
      expect((await deviceView(second, t1)).pendingChanges).toBe(1);
      await second.ops('POST', `/ops/v1/devices/${t1}/online`);
      const view = await waitForDevice(second, t1, settled);
      expect(enrollmentOf(view, memberId)?.cardNos, JSON.stringify(view)).toEqual(['0000000701']);
    } finally {
      await second.close();
    }
  });
});
