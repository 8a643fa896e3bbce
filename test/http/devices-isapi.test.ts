/**
 * A HikVision terminal spoken to over ISAPI, through the whole service: a site document names the ISAPI
 * terminal stand-in as the gym reader's transport; a partner member's cards and face arrive on it as a
 * device user; offboarding removes it; a terminal restarted empty gets everything back from a reconcile;
 * a wrong password is shown on the device view and nothing is lost (after the fix everything arrives);
 * the service registers its events URL on the terminal and a notification the terminal posts there is
 * taken (the entry log is not on main yet: only the answer is checked).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { deviceSite, deviceView, face, settled, waitForDevice } from '../support/devices.js';
import { IsapiTerminal } from '../../tools/device-sim/isapi-terminal.js';

const CONSENT = '2026-01-01T00:00:00Z';
const terminal = new IsapiTerminal();
let svc: TestService;
let ids: SiteIds;
let api: PartnerClient;
let url = '';

/** The device site with the gym reader (g1) reached over ISAPI with `password`. */
function isapiSite(password: string) {
  const doc = deviceSite();
  const gym = doc.accessGroups.find((g: { key: string }) => g.key === 'gym') as { devices: Record<string, unknown>[] };
  gym.devices[0] = { ...gym.devices[0], transport: { kind: 'isapi', baseUrl: url, username: terminal.username, password } };
  return doc;
}

async function until<T>(what: string, read: () => T | Promise<T>, done: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const userOf = (memberId: string) => terminal.users().find((u) => u.employeeNo === `m${memberId}`);

async function member(ext: string, cards: string[]): Promise<string> {
  const m = await api.putOk(ext, { firstName: ext, lastName: 'Member' });
  const res = await api.credentials(ext, { cards: cards.map((cardNo) => ({ cardNo })), face: face(ext.length), faceConsentAt: CONSENT });
  expect(res.status, res.text).toBe(200);
  return m.memberId as string;
}

beforeAll(async () => {
  ({ url } = await terminal.start());
  svc = await startTestService();
  ids = await applySite(svc, isapiSite(terminal.currentPassword));
  api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
});

afterAll(async () => {
  await svc?.close();
  await terminal.stop();
});

describe('ISAPI terminal through the service', () => {
  it('enrolls a member with cards and face, and removes it when offboarded', async () => {
    const id = await member('isapi-1', ['0001234567', '3000000001']);
    const user = await until(
      'the terminal holds the member',
      () => userOf(id),
      (u) => !!u && u.face && u.cards.length === 2,
    );
    expect(user).toMatchObject({ name: `m${id}`, cards: ['0001234567', '3000000001'], face: true, Valid: { enable: false } });
    await waitForDevice(svc, idOf(ids, 'g1'), settled);
    expect((await api.del('isapi-1')).status).toBe(204);
    await until(
      'the member is gone',
      () => userOf(id),
      (u) => u === undefined,
    );
  });

  it('a terminal restarted empty gets its users back from a reconcile', async () => {
    const id = await member('isapi-2', ['0007654321']);
    await until(
      'enrolled',
      () => userOf(id),
      (u) => !!u && u.cards.length === 1 && u.face,
    );
    terminal.restartEmpty();
    await svc.services.deviceSync.reconcileAll();
    const back = await until(
      'back after reconcile',
      () => userOf(id),
      (u) => !!u && u.cards.length === 1 && u.face,
    );
    expect(back!.cards).toEqual(['0007654321']);
    // The inventory pass registered the service's events URL on the terminal again.
    expect(String(terminal.httpHosts()[0]?.url)).toMatch(new RegExp(`^/devices/isapi/${idOf(ids, 'g1')}/events/[A-Za-z0-9_-]+$`));
  });

  it('a wrong password is reported on the device and nothing is lost: after the fix everything arrives', async () => {
    const g1 = idOf(ids, 'g1');
    terminal.setPassword('changed-on-the-device');
    const id = await member('isapi-3', ['0001111111']);
    const view = await waitForDevice(svc, g1, (v) => v.pendingChanges > 0 && /username\/password/.test(v.lastError ?? ''));
    expect(view.lastError).toMatch(/^temporary: /);
    expect(userOf(id)).toBeUndefined();
    await applySite(svc, isapiSite('changed-on-the-device'));
    // Retried with backoff: the reconcile after the site apply (or the next retry) delivers.
    await svc.services.deviceSync.reconcileAll();
    await until(
      'arrived after the fix',
      () => userOf(id),
      (u) => !!u && u.cards.length === 1 && u.face,
      15_000,
    );
    const after = await waitForDevice(svc, g1, settled, 10_000);
    expect(after.pendingChanges).toBe(0);
  });

  it('a notification the terminal posts to the registered URL is taken; a wrong token is 404', async () => {
    await svc.services.deviceSync.reconcileAll(); // registers the events URL
    const [anyUser] = terminal.users();
    expect(await terminal.emitAccess({ employeeNo: anyUser!.employeeNo, granted: true, verifyMode: 'face', serialNo: 9001 })).toBe(200);
    const res = await svc.request('POST', `/devices/isapi/${idOf(ids, 'g1')}/events/not-the-token`, {
      body: { eventType: 'AccessControllerEvent' },
    });
    expect(res.status).toBe(404);
    const other = await svc.request('POST', `/devices/isapi/${idOf(ids, 't1')}/events/x`, { body: {} });
    expect(other.status).toBe(404);
    expect((await deviceView(svc, idOf(ids, 'g1'))).transport).toBe('isapi');
  });
});
