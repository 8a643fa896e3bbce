/**
 * The site document's `calendarConnections` section: a Microsoft 365 or Google Workspace connection per
 * provider per project, its secret (client secret or private key) sealed at rest and never returned
 * (GET /ops/v1/site shows only that it is stored, and the webhook URL), a re-apply keeping ids and rows,
 * every bad entry refused with 400 KS001 (one message per problem, nothing written, a key never echoed),
 * the section as the whole list (a connection it leaves out is deleted; a document without it deletes
 * nothing), and `apiBaseUrl` / `tokenUrl` accepted in development, refused in production.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf, siteDocument, type SiteIds } from '../support/fixtures.js';

const pem = (type: 'rsa' | 'ec') =>
  type === 'rsa'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
    : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

const CLIENT_SECRET = 'ms~client-secret-0123456789abcdefghij';
const PRIVATE_KEY = pem('rsa');
/** What a private key's body looks like in any text that echoes it. */
const keyBody = (key: string) => key.split('\n')[1]!;

const microsoft = (over: Record<string, unknown> = {}) => ({
  key: 'tower-m365',
  project: 'tower',
  provider: 'microsoft',
  tenantId: '11111111-2222-3333-4444-555555555555',
  clientId: '66666666-7777-8888-9999-000000000000',
  clientSecret: CLIENT_SECRET,
  ...over,
});
const google = (over: Record<string, unknown> = {}) => ({
  key: 'annex-google',
  project: 'annex',
  provider: 'google',
  serviceAccountEmail: 'rooms-sync@acme-rooms.iam.gserviceaccount.com',
  privateKey: PRIVATE_KEY,
  subject: 'calendar-admin@acme.example',
  ...over,
});

function expectKs001(res: { status: number; body: { code?: string; message?: unknown }; text: string }): string[] {
  expect(res.status, res.text).toBe(400);
  expect(res.body.code).toBe('KS001');
  expect(Array.isArray(res.body.message), res.text).toBe(true);
  return res.body.message as string[];
}

async function connectionRows(svc: TestService) {
  return svc.services.storage.db.selectFrom('calendar_connections').selectAll().orderBy('key').execute();
}

interface ConsoleConnection {
  _id: string;
  key: string | null;
  projectId: string;
  provider: string;
  tenantId: string | null;
  clientId: string | null;
  serviceAccountEmail: string | null;
  subject: string | null;
  hasSecret: boolean;
  apiBaseUrl: string | null;
  tokenUrl: string | null;
  webhookUrl: string;
}

async function consoleConnections(svc: TestService): Promise<{ list: ConsoleConnection[]; text: string }> {
  const res = await svc.ops('GET', '/ops/v1/site');
  expect(res.status, res.text).toBe(200);
  return { list: res.body.data.calendarConnections as ConsoleConnection[], text: res.text };
}

function expectNoSecret(text: string): void {
  expect(text).not.toContain(CLIENT_SECRET);
  expect(text).not.toContain(keyBody(PRIVATE_KEY));
}

describe('site document: calendarConnections', () => {
  let svc: TestService;
  let ids: SiteIds;
  const both = () => ({ calendarConnections: [microsoft(), google()] });

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
    ids = await applySite(svc, { ...siteDocument(), ...both() });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('applies a Microsoft and a Google connection: data.ids, the view without secrets, the secrets sealed at rest', async () => {
    const msId = idOf(ids, 'tower-m365', 'calendarConnections');
    const gId = idOf(ids, 'annex-google', 'calendarConnections');
    expect(msId).not.toBe(gId);

    const { list, text } = await consoleConnections(svc);
    expect(list).toEqual([
      {
        _id: gId,
        key: 'annex-google',
        projectId: idOf(ids, 'annex'),
        provider: 'google',
        tenantId: null,
        clientId: null,
        serviceAccountEmail: 'rooms-sync@acme-rooms.iam.gserviceaccount.com',
        subject: 'calendar-admin@acme.example',
        hasSecret: true,
        apiBaseUrl: null,
        tokenUrl: null,
        webhookUrl: `${svc.url}/calendar/webhooks/${gId}`,
      },
      {
        _id: msId,
        key: 'tower-m365',
        projectId: idOf(ids, 'tower'),
        provider: 'microsoft',
        tenantId: '11111111-2222-3333-4444-555555555555',
        clientId: '66666666-7777-8888-9999-000000000000',
        serviceAccountEmail: null,
        subject: null,
        hasSecret: true,
        apiBaseUrl: null,
        tokenUrl: null,
        webhookUrl: `${svc.url}/calendar/webhooks/${msId}`,
      },
    ]);
    expectNoSecret(text);

    // At rest: the row holds neither secret in clear, yet the service's box opens each to what was given.
    const rows = await connectionRows(svc);
    expect(rows.map((r) => r.id)).toEqual([gId, msId]);
    for (const row of rows) expectNoSecret(JSON.stringify(row));
    const box = svc.services.secretBox;
    expect(box.open(rows.find((r) => r.id === msId)!.secret_enc)).toBe(CLIENT_SECRET);
    expect(box.open(rows.find((r) => r.id === gId)!.secret_enc)).toBe(PRIVATE_KEY);
  });

  it('a re-apply of the same section keeps the ids and changes no row (sealed values and updated_at stay)', async () => {
    const before = await connectionRows(svc);
    await svc.services.sandboxClock.advanceBy(60_000);
    const again = await applySite(svc, both());
    expect(idOf(again, 'tower-m365', 'calendarConnections')).toBe(idOf(ids, 'tower-m365', 'calendarConnections'));
    expect(idOf(again, 'annex-google', 'calendarConnections')).toBe(idOf(ids, 'annex-google', 'calendarConnections'));
    expect(await connectionRows(svc)).toEqual(before);
  });

  it('a changed client secret is sealed anew under the same id and still never returned', async () => {
    const before = (await connectionRows(svc)).find((r) => r.key === 'tower-m365')!;
    const NEW_SECRET = 'ms~rotated-client-secret-9876543210zyx';
    await svc.services.sandboxClock.advanceBy(60_000);
    await applySite(svc, { calendarConnections: [microsoft({ clientSecret: NEW_SECRET }), google()] });
    const after = (await connectionRows(svc)).find((r) => r.key === 'tower-m365')!;
    expect(after.id).toBe(before.id);
    expect(after.secret_enc).not.toBe(before.secret_enc);
    expect(JSON.stringify(after)).not.toContain(NEW_SECRET);
    expect(svc.services.secretBox.open(after.secret_enc)).toBe(NEW_SECRET);
    expect((await consoleConnections(svc)).text).not.toContain(NEW_SECRET);
    await applySite(svc, both()); // back as it was
  });

  it('names every missing field and every field of the other provider, one message each, nothing written', async () => {
    const before = await connectionRows(svc);
    const { clientSecret: _s, ...noSecret } = microsoft();
    const { subject: _u, privateKey: _k, ...noSubjectNoKey } = google();
    const messages = expectKs001(
      await svc.ops('POST', '/ops/v1/apply', {
        calendarConnections: [
          { ...noSecret, privateKey: PRIVATE_KEY },
          { ...noSubjectNoKey, tenantId: 't', clientSecret: 'x' },
          microsoft({ key: 'elsewhere', project: 'nowhere' }),
        ],
      }),
    );
    expect(messages).toEqual([
      'calendarConnections[tower-m365].clientSecret is required for a microsoft connection',
      'calendarConnections[tower-m365].privateKey belongs to a google connection, not a microsoft one',
      'calendarConnections[annex-google].privateKey is required for a google connection',
      'calendarConnections[annex-google].subject is required for a google connection',
      'calendarConnections[annex-google].tenantId belongs to a microsoft connection, not a google one',
      'calendarConnections[annex-google].clientSecret belongs to a microsoft connection, not a google one',
      'calendarConnections[elsewhere].project references unknown project "nowhere"',
    ]);
    expectNoSecret(JSON.stringify(messages));

    const schema = expectKs001(
      await svc.ops('POST', '/ops/v1/apply', {
        calendarConnections: [
          microsoft({ provider: 'apple' }),
          google({ subject: 'not an email' }),
          microsoft({ key: 'm2', clientId: '' }),
          google({ key: 'g2', apiBaseUrl: 'ftp://127.0.0.1/x' }),
          microsoft({ key: 'm3', extra: 1 }),
        ],
      }),
    );
    expect(schema, JSON.stringify(schema)).toHaveLength(5);
    expect(schema[0]).toMatch(/^body\.calendarConnections\[0\]\.provider /);
    expect(schema[1]).toMatch(/^body\.calendarConnections\[1\]\.subject /);
    expect(schema[2]).toMatch(/^body\.calendarConnections\[2\]\.clientId /);
    expect(schema[3]).toMatch(/^body\.calendarConnections\[3\]\.apiBaseUrl /);
    expect(schema[4]).toMatch(/^body\.calendarConnections\[4\]/);
    expectNoSecret(JSON.stringify(schema));
    expect(await connectionRows(svc)).toEqual(before);
  });

  it('refuses a private key that does not open, or is not RSA, without echoing it', async () => {
    const before = await connectionRows(svc);
    const broken = PRIVATE_KEY.replace(keyBody(PRIVATE_KEY), 'A'.repeat(64));
    const ec = pem('ec');
    const res = await svc.ops('POST', '/ops/v1/apply', {
      calendarConnections: [microsoft(), google({ privateKey: broken }), google({ key: 'g-ec', project: 'tower', privateKey: ec })],
    });
    const messages = expectKs001(res);
    expect(messages).toEqual([
      expect.stringMatching(/^calendarConnections\[annex-google\]\.privateKey is not an RSA private key in PEM form/),
      expect.stringMatching(/^calendarConnections\[g-ec\]\.privateKey is not an RSA private key in PEM form/),
    ]);
    expect(res.text).not.toContain('A'.repeat(64));
    expect(res.text).not.toContain(keyBody(ec));
    expect(await connectionRows(svc)).toEqual(before);
  });

  it('refuses two connections of one provider for one project, naming both keys; one of each provider is fine', async () => {
    const before = await connectionRows(svc);
    const two = expectKs001(
      await svc.ops('POST', '/ops/v1/apply', {
        calendarConnections: [microsoft(), google(), microsoft({ key: 'tower-m365-b', tenantId: 'another-tenant' })],
      }),
    );
    expect(two).toEqual([
      'calendarConnections[tower-m365-b].project "tower" already has a microsoft connection, calendarConnections[tower-m365]; a project has at most one per provider',
    ]);
    const dupKey = expectKs001(
      await svc.ops('POST', '/ops/v1/apply', { calendarConnections: [microsoft(), google({ key: 'tower-m365' })] }),
    );
    expect(dupKey).toEqual(['calendarConnections: key "tower-m365" is used more than once']);
    expect(await connectionRows(svc)).toEqual(before);

    const ok = await applySite(svc, {
      calendarConnections: [...both().calendarConnections, google({ key: 'tower-google', project: 'tower' })],
    });
    const rows = await connectionRows(svc);
    expect(rows.map((r) => [r.key, r.provider])).toEqual([
      ['annex-google', 'google'],
      ['tower-google', 'google'],
      ['tower-m365', 'microsoft'],
    ]);
    expect(rows.find((r) => r.key === 'tower-google')!.id).toBe(idOf(ok, 'tower-google', 'calendarConnections'));
  });

  it('the section is the whole list: a connection it leaves out is deleted, a document without it deletes nothing', async () => {
    const kept = (await connectionRows(svc)).find((r) => r.key === 'tower-m365')!;
    await applySite(svc, { projects: siteDocument().projects, brands: siteDocument().brands });
    expect((await connectionRows(svc)).map((r) => r.key)).toEqual(['annex-google', 'tower-google', 'tower-m365']);

    await applySite(svc, { calendarConnections: [microsoft(), google()] });
    const rows = await connectionRows(svc);
    expect(rows.map((r) => r.key)).toEqual(['annex-google', 'tower-m365']);
    expect(rows.find((r) => r.key === 'tower-m365')).toEqual(kept);
    expect((await consoleConnections(svc)).list.map((c) => c.key)).toEqual(['annex-google', 'tower-m365']);

    // A removed key applied again is a new connection (a new id); an empty section removes every one.
    const googleId = rows.find((r) => r.key === 'annex-google')!.id;
    await applySite(svc, { calendarConnections: [microsoft()] });
    const back = await applySite(svc, both());
    expect(idOf(back, 'annex-google', 'calendarConnections')).not.toBe(googleId);
    await applySite(svc, { calendarConnections: [] });
    expect(await connectionRows(svc)).toEqual([]);
    await applySite(svc, both());
  });

  it('accepts apiBaseUrl and tokenUrl in development and shows them', async () => {
    await applySite(svc, {
      calendarConnections: [
        microsoft({ apiBaseUrl: 'http://127.0.0.1:9/graph', tokenUrl: 'http://127.0.0.1:9/token' }),
        google({ apiBaseUrl: 'http://127.0.0.1:9/calendar/v3' }),
      ],
    });
    const { list } = await consoleConnections(svc);
    expect(list.map((c) => [c.key, c.apiBaseUrl, c.tokenUrl])).toEqual([
      ['annex-google', 'http://127.0.0.1:9/calendar/v3', null],
      ['tower-m365', 'http://127.0.0.1:9/graph', 'http://127.0.0.1:9/token'],
    ]);
  });
});

describe('site document: calendarConnections in production', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true, env: { BOOKING_ENV: 'production', SECRETS_KEY: 'a'.repeat(64) } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('refuses apiBaseUrl and tokenUrl (400 KS001 naming each, nothing written) and accepts the connections without them', async () => {
    const res = await svc.ops('POST', '/ops/v1/apply', {
      ...siteDocument(),
      calendarConnections: [microsoft({ apiBaseUrl: 'http://127.0.0.1:9/graph' }), google({ tokenUrl: 'http://127.0.0.1:9/token' })],
    });
    expect(expectKs001(res)).toEqual([
      "calendarConnections[tower-m365].apiBaseUrl is not allowed in production (the provider's own endpoints are always used there)",
      "calendarConnections[annex-google].tokenUrl is not allowed in production (the provider's own endpoints are always used there)",
    ]);
    expect(await connectionRows(svc)).toEqual([]);
    expect(await svc.services.storage.db.selectFrom('projects').select('id').execute()).toEqual([]);

    const ids = await applySite(svc, { ...siteDocument(), calendarConnections: [microsoft(), google()] });
    const { list, text } = await consoleConnections(svc);
    expect(list.map((c) => c._id).sort()).toEqual(
      [idOf(ids, 'tower-m365', 'calendarConnections'), idOf(ids, 'annex-google', 'calendarConnections')].sort(),
    );
    expectNoSecret(text);
    const rows = await connectionRows(svc);
    for (const row of rows) expectNoSecret(JSON.stringify(row));
  });
});
