/**
 * PUT /partner/members/{externalUserId}/credentials over HTTP: cards in every
 * reader format (matched on the decoded UID), the face photo (size, type, consent,
 * never returned), the one virtual card, offboarded members, and the service's
 * logs holding no face bytes, secrets, tokens or PINs through the whole flow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, expectError, siteDocument, PORTAL_SECRET } from '../support/fixtures.js';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG_MAGIC = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);
const MB10 = 10 * 1024 * 1024;
/** A "photo" of `size` bytes: the format's magic bytes, then a recognisable filler. */
const image = (magic: Buffer, size: number) => Buffer.concat([magic, Buffer.alloc(size - magic.length, 0x5a)]);
const CONSENT = '2026-11-20T09:00:00Z';

describe('partner member credentials', () => {
  let svc: TestService;
  let token: string;
  const logs: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(String(chunk));
        done();
      },
    });
    svc = await startTestService({ logger: pino({ level: 'debug' }, sink) });
    const doc = siteDocument() as any;
    doc.accessGroups = [{ key: 'lobby', project: 'tower', name: 'Lobby gates' }];
    doc.apps[0].accessGroups = ['lobby'];
    await applySite(svc, doc);
    token = (await appToken(svc)).access_token;
    // These tests make more than 30 partner calls a minute; the limit has its own test (partner-members).
    svc.services.partnerRateLimit = {
      hit: async () => ({ allowed: true, retryAfterSeconds: 0 }),
    } as unknown as typeof svc.services.partnerRateLimit;
  });
  afterAll(async () => {
    await svc?.close();
  });

  const putMember = async (ext: string, body: Record<string, unknown> = { firstName: 'Dao', lastName: 'Test' }) => {
    const res = await svc.request('PUT', `/partner/members/${ext}`, { token, body });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  };
  const putCreds = (ext: string, body: Record<string, unknown>) =>
    svc.request('PUT', `/partner/members/${ext}/credentials`, { token, body });
  const getMember = async (ext: string) => {
    const res = await svc.request('GET', `/partner/members/${ext}`, { token });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  };

  it('one card in several formats is one card; cardNo is always decimal-reversed', async () => {
    await putMember('cred-formats');
    const res = await putCreds('cred-formats', {
      cards: [
        { cardNo: '0472621828' }, // decimal-reversed (default) of UID 04A32B1C
        { cardNo: '0077802268', cardCodeFormat: 'decimal' },
        { cardNo: '1c2ba304', cardCodeFormat: 'hex-reversed', label: 'Blue fob' },
        { cardNo: '04A32B1C', cardCodeFormat: 'hex' },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.cards).toHaveLength(1);
    expect(res.body.data.cards[0]).toMatchObject({ cardNo: '0472621828', type: 'real', generated: false });
    expect(res.body.data.face).toEqual({ present: false });
  });

  it('the set is declarative: missing cards enrolled, absent ones revoked, common ones kept; [] revokes all', async () => {
    await putMember('cred-set');
    const first = await putCreds('cred-set', { cards: [{ cardNo: '0472621828' }, { cardNo: '0000000001' }] });
    expect(first.status, first.text).toBe(200);
    const kept = first.body.data.cards.find((c: any) => c.cardNo === '0472621828');
    const second = await putCreds('cred-set', { cards: [{ cardNo: '04A32B1C', cardCodeFormat: 'hex' }, { cardNo: '0000000002' }] });
    expect(second.body.data.cards.map((c: any) => c.cardNo).sort()).toEqual(['0000000002', '0472621828']);
    expect(second.body.data.cards.find((c: any) => c.cardNo === '0472621828').cardId).toBe(kept.cardId);
    const none = await putCreds('cred-set', { cards: [] });
    expect(none.body.data.cards).toEqual([]);
  });

  it('bad card numbers and too many cards: 400 naming the card, nothing changed', async () => {
    await putMember('cred-bad');
    await putCreds('cred-bad', { cards: [{ cardNo: '0000000007' }] });
    const bad = await putCreds('cred-bad', {
      cards: [{ cardNo: '0000000008' }, { cardNo: '12AB', cardCodeFormat: 'decimal' }, { cardNo: '1', cardCodeFormat: 'base64' }],
    });
    expectError(bad, 400, 'KS001');
    expect(bad.body.message.join(' ')).toContain('cards[1]');
    expect(bad.body.message.join(' ')).toContain('cards[2]');
    const tooMany = await putCreds('cred-bad', { cards: Array.from({ length: 21 }, (_, i) => ({ cardNo: String(100 + i) })) });
    expectError(tooMany, 400, 'KS001');
    expect((await getMember('cred-bad')).credentials.cards.map((c: any) => c.cardNo)).toEqual(['0000000007']);
  });

  it('a face needs consent, JPEG or PNG by its bytes, at most 10 MB; it is never returned; null erases it', async () => {
    await putMember('cred-face');
    expectError(await putCreds('cred-face', { face: image(PNG_MAGIC, 100).toString('base64') }), 400, 'KS001');
    expectError(
      await putCreds('cred-face', { face: Buffer.from('GIF89a-not-a-photo').toString('base64'), faceConsentAt: CONSENT }),
      400,
      'KS001',
    );
    expectError(await putCreds('cred-face', { face: image(PNG_MAGIC, MB10 + 1).toString('base64'), faceConsentAt: CONSENT }), 400, 'KS001');
    const ok = await putCreds('cred-face', {
      face: `data:image/jpeg;base64,${image(JPEG_MAGIC, MB10).toString('base64')}`,
      faceConsentAt: CONSENT,
    });
    expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    expect(ok.body.data.face).toEqual({ present: true });
    expect(ok.text.length).toBeLessThan(2_000);
    const member = await getMember('cred-face');
    expect(member.credentials.face).toEqual({ present: true });
    expect(JSON.stringify(member)).not.toContain('WlpaWlpa'); // base64 of the filler
    const erased = await putCreds('cred-face', { face: null });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body.data.face).toEqual({ present: false });
  });

  it('a face and no physical card mints one virtual card, once; physical cards do not retire it; offboarding revokes it and re-onboarding gets a fresh one', async () => {
    await putMember('cred-virtual');
    const withFace = await putCreds('cred-virtual', { face: image(PNG_MAGIC, 2048).toString('base64'), faceConsentAt: CONSENT });
    const virtual = withFace.body.data.cards;
    expect(virtual).toHaveLength(1);
    expect(virtual[0]).toMatchObject({ type: 'virtual', generated: true });
    expect(virtual[0].cardNo).toMatch(/^\d{10}$/);
    // Setting the face again mints nothing more.
    const again = await putCreds('cred-virtual', { face: image(PNG_MAGIC, 4096).toString('base64'), faceConsentAt: CONSENT });
    expect(again.body.data.cards.map((c: any) => c.cardId)).toEqual([virtual[0].cardId]);
    // A physical card joins it; the virtual card stays.
    const physical = await putCreds('cred-virtual', { cards: [{ cardNo: '0000000042' }] });
    expect(physical.body.data.cards.map((c: any) => c.type).sort()).toEqual(['real', 'virtual']);

    const del = await svc.request('DELETE', '/partner/members/cred-virtual', { token });
    expect(del.status).toBe(204);
    const offboarded = await putCreds('cred-virtual', { cards: [] });
    expectError(offboarded, 409, 'KS006', { allowData: true });
    expect((await getMember('cred-virtual')).credentials.cards).toEqual([]);

    await putMember('cred-virtual');
    const fresh = await putCreds('cred-virtual', { cards: [] });
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.body.data.cards).toHaveLength(1);
    expect(fresh.body.data.cards[0]).toMatchObject({ type: 'virtual', generated: true });
    expect(fresh.body.data.cards[0].cardNo).not.toBe(virtual[0].cardNo);
  });

  it('act_as with the same externalUserId acts as the provisioned member; an unknown one becomes a federated visitor', async () => {
    const m = await putMember('cred-actas', { firstName: 'Act', lastName: 'As' });
    const grant = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'act_as', app_id: 'portal-dev', app_secret: PORTAL_SECRET, subject: 'cred-actas' },
    });
    expect(grant.status, grant.text).toBe(201);
    const who = await svc.request('GET', '/auth/whoami', { token: grant.body.access_token });
    expect(who.status, who.text).toBe(200);
    expect(JSON.stringify(who.body.data)).toContain(m.memberId);

    const fed = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'act_as', app_id: 'portal-dev', app_secret: PORTAL_SECRET, subject: 'cred-federated' },
    });
    expect(fed.status, fed.text).toBe(201);
    const member = await getMember('cred-federated');
    expect(member).toMatchObject({ source: 'federated', userType: 'visitor', status: 'active' });
  });

  it('the logs of the whole flow hold no face bytes, app secrets, tokens or PINs', async () => {
    const face = image(JPEG_MAGIC, 4096);
    await putMember('cred-logs', { firstName: 'Log', lastName: 'Check', email: 'log.check@example.com' });
    await putCreds('cred-logs', { face: face.toString('base64'), faceConsentAt: CONSENT, cards: [{ cardNo: '0000000099' }] });
    await getMember('cred-logs');
    await svc.request('PUT', '/partner/members/cred-logs/credentials', {
      token,
      body: { face: 'not base64 at all !!!', faceConsentAt: CONSENT },
    });
    await svc.request('DELETE', '/partner/members/cred-logs', { token });
    const text = logs.join('');
    expect(text.length).toBeGreaterThan(0); // requests were logged
    expect(text).not.toContain(face.subarray(0, 600).toString('base64').slice(8, 200));
    expect(text).not.toContain(PORTAL_SECRET);
    expect(text).not.toContain(token);
    expect(text).not.toMatch(/"pinCode"/);
  });
});
