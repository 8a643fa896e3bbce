/**
 * The site document's `paymentProviders` section: one provider account per project, its secrets
 * sealed at rest and never returned (GET /ops/v1/site shows only that they are stored, and the
 * webhook URL to give the provider), a re-apply of the same document writes nothing, and every bad
 * entry is refused with 400 KS001 (one message per problem, nothing written). `apiBaseUrl` (another
 * host for the provider's API) is accepted in development and refused in production.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf, siteDocument, type SiteIds } from '../support/fixtures.js';

const STRIPE_KEY = 'sk_test_stripe-secret-key-0123456789';
const STRIPE_WHSEC = 'whsec_stripe-signing-secret-0123456789';
const OPN_KEY = 'skey_test_opn-secret-key-0123456789';
const OPN_WHSEC = 'opn-webhook-secret-0123456789abcdef';
const ALL_SECRETS = [STRIPE_KEY, STRIPE_WHSEC, OPN_KEY, OPN_WHSEC];

const stripe = (over: Record<string, unknown> = {}) => ({
  key: 'tower-stripe',
  project: 'tower',
  provider: 'stripe',
  secretKey: STRIPE_KEY,
  webhookSecret: STRIPE_WHSEC,
  methods: ['promptpay', 'card'],
  ...over,
});
const opn = (over: Record<string, unknown> = {}) => ({
  key: 'annex-opn',
  project: 'annex',
  provider: 'opn',
  secretKey: OPN_KEY,
  webhookSecret: OPN_WHSEC,
  ...over,
});

function expectKs001(res: { status: number; body: { code?: string; message?: unknown }; text: string }): string[] {
  expect(res.status, res.text).toBe(400);
  expect(res.body.code).toBe('KS001');
  expect(Array.isArray(res.body.message), res.text).toBe(true);
  return res.body.message as string[];
}

async function providerRows(svc: TestService) {
  return svc.services.storage.db.selectFrom('payment_providers').selectAll().orderBy('key').execute();
}

interface ConsoleProvider {
  _id: string;
  key: string | null;
  projectId: string;
  provider: string;
  methods: string[];
  apiBaseUrl: string | null;
  hasSecretKey: boolean;
  hasWebhookSecret: boolean;
  webhookUrl: string;
}

async function consoleProviders(svc: TestService): Promise<{ list: ConsoleProvider[]; text: string }> {
  const res = await svc.ops('GET', '/ops/v1/site');
  expect(res.status, res.text).toBe(200);
  return { list: res.body.data.paymentProviders as ConsoleProvider[], text: res.text };
}

describe('site document: paymentProviders', () => {
  let svc: TestService;
  let ids: SiteIds;
  const base = () => ({ ...siteDocument() });

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
    ids = await applySite(svc, { ...base(), paymentProviders: [stripe(), opn()] });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('applies a Stripe and an Opn provider: data.ids, the console view without secrets, the secrets sealed in the table', async () => {
    const stripeId = idOf(ids, 'tower-stripe');
    const opnId = idOf(ids, 'annex-opn');
    expect(stripeId).not.toBe(opnId);

    const { list, text } = await consoleProviders(svc);
    expect(list).toEqual([
      {
        _id: opnId,
        key: 'annex-opn',
        projectId: idOf(ids, 'annex'),
        provider: 'opn',
        methods: ['promptpay'],
        apiBaseUrl: null,
        hasSecretKey: true,
        hasWebhookSecret: true,
        webhookUrl: `${svc.url}/payments/webhooks/${opnId}`,
      },
      {
        _id: stripeId,
        key: 'tower-stripe',
        projectId: idOf(ids, 'tower'),
        provider: 'stripe',
        methods: ['promptpay', 'card'],
        apiBaseUrl: null,
        hasSecretKey: true,
        hasWebhookSecret: true,
        webhookUrl: `${svc.url}/payments/webhooks/${stripeId}`,
      },
    ]);
    for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);

    const rows = await providerRows(svc);
    expect(rows.map((r) => r.id)).toEqual([opnId, stripeId]);
    for (const row of rows) {
      const dump = JSON.stringify(row);
      for (const secret of ALL_SECRETS) expect(dump).not.toContain(secret);
      expect(row.secret_key_enc.length).toBeGreaterThan(0);
      expect(row.webhook_secret_enc.length).toBeGreaterThan(0);
    }
    // Sealed, yet the service's own box opens them to what the document gave.
    const box = svc.services.secretBox;
    const stripeRow = rows.find((r) => r.id === stripeId)!;
    expect(box.open(stripeRow.secret_key_enc)).toBe(STRIPE_KEY);
    expect(box.open(stripeRow.webhook_secret_enc)).toBe(STRIPE_WHSEC);
    expect(JSON.parse(stripeRow.methods)).toEqual(['promptpay', 'card']);
  });

  it('a re-apply of the same document changes nothing (updated_at and sealed values stay)', async () => {
    const before = await providerRows(svc);
    await svc.services.sandboxClock.advanceBy(60_000);
    const again = await applySite(svc, { ...base(), paymentProviders: [stripe(), opn()] });
    expect(idOf(again, 'tower-stripe')).toBe(idOf(ids, 'tower-stripe'));
    expect(await providerRows(svc)).toEqual(before);
  });

  it('a changed secret is sealed anew and still never returned', async () => {
    const before = (await providerRows(svc)).find((r) => r.key === 'tower-stripe')!;
    const NEW_KEY = 'sk_test_rotated-stripe-key-9876543210';
    await svc.services.sandboxClock.advanceBy(60_000);
    await applySite(svc, { paymentProviders: [stripe({ secretKey: NEW_KEY })] });
    const after = (await providerRows(svc)).find((r) => r.key === 'tower-stripe')!;
    expect(after.secret_key_enc).not.toBe(before.secret_key_enc);
    expect(after.webhook_secret_enc).toBe(before.webhook_secret_enc);
    expect(Number(after.updated_at)).toBeGreaterThan(Number(before.updated_at));
    expect(JSON.stringify(after)).not.toContain(NEW_KEY);
    expect(svc.services.secretBox.open(after.secret_key_enc)).toBe(NEW_KEY);
    const { text } = await consoleProviders(svc);
    expect(text).not.toContain(NEW_KEY);
    await applySite(svc, { paymentProviders: [stripe()] }); // back as it was, for the tests below
  });

  it('refuses two providers for one project, in one document or against a stored one (400 KS001, nothing written)', async () => {
    const before = await providerRows(svc);
    const inDoc = expectKs001(
      await svc.ops('POST', '/ops/v1/apply', {
        projects: siteDocument().projects,
        paymentProviders: [opn({ key: 'p1', project: 'sky' }), opn({ key: 'p2', project: 'sky' })],
      }),
    );
    // `sky` is unknown: both name it, neither reaches the one-per-project rule.
    expect(inDoc).toEqual([
      'paymentProviders[p1].project references unknown project "sky"',
      'paymentProviders[p2].project references unknown project "sky"',
    ]);

    const twoInDoc = expectKs001(
      await svc.ops('POST', '/ops/v1/apply', {
        brands: siteDocument().brands,
        projects: [{ key: 'sky', brand: 'acme', name: 'Sky', timezone: 'Asia/Bangkok', currency: 'THB' }],
        paymentProviders: [opn({ key: 'sky-a', project: 'sky' }), stripe({ key: 'sky-b', project: 'sky' })],
      }),
    );
    expect(twoInDoc).toEqual([
      'paymentProviders[sky-b].project "sky" already has paymentProviders[sky-a] in this document; a project has at most one',
    ]);

    const secondKey = expectKs001(await svc.ops('POST', '/ops/v1/apply', { paymentProviders: [stripe({ key: 'tower-second' })] }));
    expect(secondKey).toEqual([
      'paymentProviders[tower-second].project "tower" already has payment provider "tower-stripe"; a project has at most one (change that entry instead)',
    ]);

    // Moving a stored provider onto a project that has one is the same refusal.
    const moved = expectKs001(await svc.ops('POST', '/ops/v1/apply', { paymentProviders: [opn({ project: 'tower' })] }));
    expect(moved).toEqual([
      'paymentProviders[annex-opn].project "tower" already has payment provider "tower-stripe"; a project has at most one (change that entry instead)',
    ]);
    expect(await providerRows(svc)).toEqual(before);
    expect(await svc.services.storage.db.selectFrom('projects').select('key').where('key', '=', 'sky').execute()).toEqual([]);
  });

  it('refuses an unknown project, a bad provider, a bad method and empty methods, one message each', async () => {
    const before = await providerRows(svc);
    const unknown = expectKs001(await svc.ops('POST', '/ops/v1/apply', { paymentProviders: [stripe({ key: 'x', project: 'nowhere' })] }));
    expect(unknown).toEqual(['paymentProviders[x].project references unknown project "nowhere"']);

    const bad = expectKs001(
      await svc.ops('POST', '/ops/v1/apply', {
        paymentProviders: [
          stripe({ key: 'a', provider: 'paypal' }),
          stripe({ key: 'b', methods: ['promptpay', 'bitcoin'] }),
          stripe({ key: 'c', methods: [] }),
        ],
      }),
    );
    expect(bad, JSON.stringify(bad)).toHaveLength(3);
    expect(bad[0]).toMatch(/^body\.paymentProviders\[0\]\.provider /);
    expect(bad[1]).toMatch(/^body\.paymentProviders\[1\]\.methods\[1\] /);
    expect(bad[2]).toMatch(/^body\.paymentProviders\[2\]\.methods /);

    const dup = expectKs001(await svc.ops('POST', '/ops/v1/apply', { paymentProviders: [stripe({ methods: ['card', 'card'] })] }));
    expect(dup).toHaveLength(1);
    expect(dup[0]).toMatch(/^body\.paymentProviders\[0\]\.methods /);

    const emptySecret = expectKs001(await svc.ops('POST', '/ops/v1/apply', { paymentProviders: [stripe({ secretKey: '' })] }));
    expect(emptySecret).toHaveLength(1);
    expect(emptySecret[0]).toMatch(/^body\.paymentProviders\[0\]\.secretKey /);
    expect(await providerRows(svc)).toEqual(before);
  });

  it('accepts apiBaseUrl in development and shows it', async () => {
    await applySite(svc, { paymentProviders: [opn({ apiBaseUrl: 'http://127.0.0.1:9/opn' })] });
    const { list } = await consoleProviders(svc);
    expect(list.find((p) => p.key === 'annex-opn')?.apiBaseUrl).toBe('http://127.0.0.1:9/opn');
    const notHttp = expectKs001(await svc.ops('POST', '/ops/v1/apply', { paymentProviders: [opn({ apiBaseUrl: 'ftp://127.0.0.1/x' })] }));
    expect(notHttp).toHaveLength(1);
    expect(notHttp[0]).toMatch(/^body\.paymentProviders\[0\]\.apiBaseUrl /);
  });
});

describe('site document: paymentProviders in production', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true, env: { BOOKING_ENV: 'production', SECRETS_KEY: 'a'.repeat(64) } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('refuses apiBaseUrl (400 KS001 naming it, nothing written) and accepts the provider without it', async () => {
    const res = await svc.ops('POST', '/ops/v1/apply', {
      ...siteDocument(),
      paymentProviders: [stripe({ apiBaseUrl: 'http://127.0.0.1:9/stripe' }), opn()],
    });
    expect(expectKs001(res)).toEqual([
      "paymentProviders[tower-stripe].apiBaseUrl is not allowed in production (the provider's own API is always used there)",
    ]);
    expect(await providerRows(svc)).toEqual([]);
    expect(await svc.services.storage.db.selectFrom('projects').select('id').execute()).toEqual([]);

    const ids = await applySite(svc, { ...siteDocument(), paymentProviders: [stripe(), opn()] });
    const { list, text } = await consoleProviders(svc);
    expect(list.map((p) => p._id).sort()).toEqual([idOf(ids, 'tower-stripe'), idOf(ids, 'annex-opn')].sort());
    for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);
  });
});
