/**
 * SECRETS_KEY rotation (docs/operations.md "Secrets rotation"): a service restarted with a new
 * SECRETS_KEY and the old one in SECRETS_KEY_PREVIOUS still opens everything sealed before and
 * still finds what it looks up by keyed tag (visitor codes, feed tokens); `resealSecrets` (npm run
 * reseal-secrets) moves every stored secret under the new key, after which the old key can go.
 * A start with a key that sealed nothing cannot read them: the check can fail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { startTestService, type TestService } from '../support/test-service.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { applySite, appToken, idOf, type SiteIds } from '../support/fixtures.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { visitorSite } from '../support/visitors.js';
import { PARTNER_APP_ID, PARTNER_SECRET, PartnerClient } from '../support/partner-members.js';
import { createVerifier } from '../../src/modules/webhooks/receiver-kit.js';
import { secretFor } from '../support/webhook-site.js';

const KEY_A = 'a1'.repeat(32);
const KEY_B = 'b2'.repeat(32);
const KEY_C = 'c3'.repeat(32);

describe('SECRETS_KEY rotation', () => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let ids: SiteIds;
  let firstCode: string;
  let firstInvite: string;
  let feedPath: string;
  const start = (env: Record<string, string>) => startTestService({ database, keepDatabase: true, env });
  const id = (key: string) => idOf(ids, key);

  const invite = async (svc: TestService, name: string) => {
    const res = await svc.ops('POST', '/ops/v1/visitors/invites', {
      projectId: id('tower'),
      hostUserId: id('alice'),
      visitorName: name,
      startDateTime: new Date(svc.services.clock.now() - 3_600_000).toISOString(),
      endDateTime: new Date(svc.services.clock.now() + 6 * 3_600_000).toISOString(),
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data as { _id: string; qrCardCode: string };
  };
  /** Everything sealed reads back: the invite shows its code, a scan of the code finds it, the feed answers, a delivery verifies. */
  const expectReadable = async (svc: TestService, code: string, inviteId: string) => {
    const got = await svc.ops('GET', `/ops/v1/visitors/invites/${inviteId}`);
    expect(got.status, got.text).toBe(200);
    expect(got.body.data.qrCardCode).toBe(code);
    const scan = await svc.ops('POST', `/ops/v1/devices/${id('t1')}/scans`, { cardCode: code });
    expect(scan.status, scan.text).toBe(200);
    expect(scan.body.data).toEqual({ granted: true, inviteId });
    const feed = await svc.request('GET', feedPath);
    expect(feed.status, feed.text).toBe(200);
  };
  const expectVerifiedDelivery = async (svc: TestService, name: string) => {
    const before = receiver.on('/vms').length;
    await invite(svc, name);
    await receiver.waitFor(() => receiver.on('/vms').length > before, 10_000, `VMS delivery for ${name}`);
    const delivery = receiver.on('/vms').at(-1)!;
    expect(createVerifier(secretFor('vms')).verify(delivery.headers, delivery.raw).ok).toBe(true);
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await WebhookReceiver.start();
    const svc = await start({ SECRETS_KEY: KEY_A });
    try {
      ids = await applySite(svc, visitorSite(receiver));
      const first = await invite(svc, 'First Visitor');
      firstCode = first.qrCardCode;
      firstInvite = first._id;
      const feed = await svc.ops('GET', `/ops/v1/calendar-sync/rooms/${id('uA101')}/feed`);
      expect(feed.status, feed.text).toBe(200);
      feedPath = new URL(feed.body.data.url as string).pathname;
      const partner = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
      await partner.putOk('rot-1', { firstName: 'Rot', lastName: 'One' });
      const face = await sharp({ create: { width: 320, height: 320, channels: 3, background: '#8a7' } })
        .jpeg()
        .toBuffer();
      const creds = await partner.credentials('rot-1', { face: face.toString('base64'), faceConsentAt: '2026-11-20T09:00:00Z' });
      expect(creds.status, creds.text).toBe(200);
      await expectReadable(svc, firstCode, firstInvite);
    } finally {
      await svc.close();
    }
  });

  afterAll(async () => {
    await receiver?.close();
    await database?.drop();
  });

  it('with the old key in SECRETS_KEY_PREVIOUS everything still reads, new secrets seal under the new key, and a reseal moves the rest', async () => {
    const svc = await start({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A });
    try {
      await expectReadable(svc, firstCode, firstInvite);
      await expectVerifiedDelivery(svc, 'During Rotation');
      const report = await svc.services.resealSecrets();
      expect(report.unreadable).toEqual({});
      for (const column of [
        'webhooks.secret_enc',
        'webhooks.auth_enc',
        'visitor_invites.qr_enc',
        'visitor_invites.qr_tag',
        'room_feeds.token_enc',
        'room_feeds.token_tag',
        'faces.image_enc',
      ]) {
        expect(report.resealed[column] ?? 0, column).toBeGreaterThan(0);
      }
      // Everything is under the new key now: a second pass has nothing to do.
      const again = await svc.services.resealSecrets();
      expect(again.resealed).toEqual({});
    } finally {
      await svc.close();
    }
  });

  it('after the reseal the old key can go: the new key alone reads everything', async () => {
    const svc = await start({ SECRETS_KEY: KEY_B });
    try {
      await expectReadable(svc, firstCode, firstInvite);
      await expectVerifiedDelivery(svc, 'After Rotation');
      const report = await svc.services.resealSecrets();
      expect(report).toMatchObject({ resealed: {}, unreadable: {} });
    } finally {
      await svc.close();
    }
  });

  it('a key that sealed nothing reads nothing (the checks above can fail)', async () => {
    const svc = await start({ SECRETS_KEY: KEY_C });
    try {
      const got = await svc.ops('GET', `/ops/v1/visitors/invites/${firstInvite}`);
      expect(got.status).toBeGreaterThanOrEqual(500);
      const scan = await svc.ops('POST', `/ops/v1/devices/${id('t1')}/scans`, { cardCode: firstCode });
      expect(scan.body?.data).not.toEqual({ granted: true, inviteId: firstInvite });
      const report = await svc.services.resealSecrets();
      expect(Object.keys(report.unreadable).length).toBeGreaterThan(0);
    } finally {
      await svc.close();
    }
  });

  it('every sealed column and keyed tag of the schema is covered by a module (a new one must join the rotation)', async () => {
    const schema = readFileSync(new URL('../../src/platform/db/schema.ts', import.meta.url), 'utf8');
    // table name → row interface, from `export interface Database { table: RowTable; … }`
    const database = /export interface Database \{([\s\S]*?)\n\}/.exec(schema)![1]!;
    const tableOf = new Map([...database.matchAll(/^\s+(\w+): (\w+);/gm)].map(([, table, row]) => [row!, table!]));
    const declared: string[] = [];
    for (const [, row, body] of schema.matchAll(/^export interface (\w+Table)\b[^{]*\{([\s\S]*?)^\}/gm)) {
      for (const [, column] of body!.matchAll(/^\s+(\w+_(?:enc|tag)):/gm)) declared.push(`${tableOf.get(row!)}.${column}`);
    }
    expect(declared).toContain('meetings.pin_enc');
    const svc = await start({ SECRETS_KEY: KEY_B });
    try {
      expect([...svc.services.sealedColumns()].sort()).toEqual([...new Set(declared)].sort());
    } finally {
      await svc.close();
    }
  });
});
