/**
 * GET /desks keeps its listings in memory (src/modules/catalogue/desk-snapshots.ts):
 * every change a site apply makes to a desk shows up on the very next call, in
 * the unwindowed listing, the windowed search and its total, whichever project
 * scope the listing was asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, HUB_APP_ID, HUB_SECRET, idOf, siteDocument, type SiteIds } from '../support/fixtures.js';
import { at, dayAhead, everyDay, okData, qs, standardHours, type QueryValue } from '../support/catalogue.js';

const TZ = 'Asia/Bangkok';

interface DeskDoc {
  key: string;
  floor: string;
  name: string;
  index: number;
  [more: string]: unknown;
}

function site(desks: DeskDoc[]) {
  const doc = siteDocument() as any;
  doc.zones = [
    { key: 'zt', project: 'tower', name: 'Tower' },
    { key: 'zx', project: 'annex', name: 'Annex' },
  ];
  doc.floors = [
    { key: 'ft', zone: 'zt', name: '1F' },
    { key: 'fx', zone: 'zx', name: '1F' },
  ];
  doc.desks = desks;
  return doc;
}

describe('desks: changes to the site show up at once', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  let portal: string;
  let hub: string;
  let desks: DeskDoc[];

  const apply = async (next: DeskDoc[]) => {
    desks = next;
    ids = await applySite(svc, site(desks));
  };
  const change = (key: string, fields: Partial<DeskDoc>) => apply(desks.map((d) => (d.key === key ? { ...d, ...fields } : d)));
  const list = async (token: string, params: Record<string, QueryValue>) => {
    const res = await svc.request('GET', `/desks${qs(params)}`, { token });
    const data = okData(res) as { name: string; capacity: number; status: string; floorId: string }[];
    return { names: data.map((d) => `${d.name}:${d.capacity}`), total: res.body.meta.total as number, data };
  };
  const tower = (params: Record<string, QueryValue> = {}, token = portal) => list(token, { projectId: idOf(ids, 'tower'), ...params });
  const win = (from: string, to: string) => ({ startDateTime: at(D, from), endDateTime: at(D, to) });

  beforeAll(async () => {
    svc = await startTestService();
    await apply([
      { key: 'a', floor: 'ft', name: 'Alpha', index: 1, capacity: 1, config: standardHours() },
      { key: 'b', floor: 'ft', name: 'Bravo', index: 2, capacity: 1, config: standardHours() },
    ]);
    D = await dayAhead(svc, TZ, 3);
    portal = (await appToken(svc)).access_token;
    hub = (await appToken(svc, HUB_APP_ID, HUB_SECRET)).access_token;
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('a desk added or changed is listed with its new values and in its new place', async () => {
    expect((await tower()).names).toEqual(['Alpha:1', 'Bravo:1']);
    expect((await tower(win('09:00', '10:00'))).names).toEqual(['Alpha:1', 'Bravo:1']);
    await apply([...desks, { key: 'c', floor: 'ft', name: 'Charlie', index: 0, capacity: 1, config: standardHours() }]);
    expect((await tower()).names).toEqual(['Charlie:1', 'Alpha:1', 'Bravo:1']);
    await change('a', { name: 'Alpha Prime', capacity: 3, index: 9 });
    expect((await tower()).names).toEqual(['Charlie:1', 'Bravo:1', 'Alpha Prime:3']);
    const windowed = await tower(win('09:00', '10:00'));
    expect(windowed.names).toEqual(['Charlie:1', 'Bravo:1', 'Alpha Prime:3']);
    expect(windowed.total).toBe(3);
  });

  it('a status change takes a desk out of (and back into) the windowed search and its total', async () => {
    await change('b', { status: 'suspended' });
    expect((await tower({ ...win('09:00', '10:00'), limit: 1 })).total).toBe(2);
    expect((await tower(win('09:00', '10:00'))).names).not.toContain('Bravo:1');
    expect((await tower()).data.find((d) => d.name === 'Bravo')?.status).toBe('suspended');
    await change('b', { status: 'active' });
    expect((await tower({ ...win('09:00', '10:00'), limit: 1 })).total).toBe(3);
  });

  it('new opening hours apply to the next windowed search', async () => {
    expect((await tower(win('07:00', '08:00'))).names).toEqual([]);
    await change('c', { config: everyDay('06:00:00', '20:00:00') });
    expect((await tower(win('07:00', '08:00'))).names).toEqual(['Charlie:1']);
  });

  it("a desk moved to another project's floor moves between the projects' listings", async () => {
    const annex = () => list(hub, { projectId: idOf(ids, 'annex') });
    const both = () => list(hub, {});
    expect((await annex()).names).toEqual([]);
    expect((await both()).total).toBe(3);
    await change('c', { floor: 'fx' });
    expect((await annex()).names).toEqual(['Charlie:1']);
    expect((await tower()).names).toEqual(['Bravo:1', 'Alpha Prime:3']);
    expect((await both()).total).toBe(3);
    expect((await list(hub, { projectId: idOf(ids, 'annex'), ...win('07:00', '08:00') })).names).toEqual(['Charlie:1']);
  });

  it('a desk made private is hidden from an app without private rights on the next call', async () => {
    const viewerDoc = site(desks);
    viewerDoc.apps.push({
      key: 'viewer',
      appId: 'desk-change-viewer',
      appSecret: 'desk-change-viewer-secret-0123456789abcd',
      name: 'Viewer',
      projects: ['tower'],
    });
    ids = await applySite(svc, viewerDoc);
    const viewer = (await appToken(svc, 'desk-change-viewer', 'desk-change-viewer-secret-0123456789abcd')).access_token;
    expect((await tower({}, viewer)).names).toEqual(['Bravo:1', 'Alpha Prime:3']);
    viewerDoc.desks = desks.map((d) => (d.key === 'b' ? { ...d, isPublic: false } : d));
    ids = await applySite(svc, viewerDoc);
    expect((await tower({}, viewer)).names).toEqual(['Alpha Prime:3']);
    expect((await tower({}, portal)).names).toEqual(['Bravo:1', 'Alpha Prime:3']);
  });
});
