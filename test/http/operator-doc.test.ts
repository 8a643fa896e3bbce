/**
 * The project's own operator reference (docs/operator-api.md) stands on its own:
 * its second-building document applies as printed and its rooms are then bookable
 * through the public API; README.md and docs/ point only at files a clone has.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OPERATOR_DOC = join(ROOT, 'docs/operator-api.md');

/** The first ```json block under the heading that starts with `heading`. */
function jsonBlockUnder(markdown: string, heading: string): any {
  const start = markdown.indexOf(`\n## ${heading}`);
  expect(start, `heading "${heading}"`).toBeGreaterThan(-1);
  const block = /```json\n([\s\S]*?)\n```/.exec(markdown.slice(start));
  expect(block, 'a json block').not.toBeNull();
  return JSON.parse(block![1]);
}

function markdownFiles(): string[] {
  const out = ['README.md', 'sdk/README.md'];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.md')) out.push(join(dir, e.name));
    }
  };
  walk('docs');
  return out;
}

describe('docs/operator-api.md: the second building', () => {
  let svc: TestService;
  let doc: any;
  beforeAll(async () => {
    doc = jsonBlockUnder(readFileSync(OPERATOR_DOC, 'utf8'), 'A second building');
    svc = await startTestService({ noWorkers: true });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('applies as printed (twice: the second time changes nothing), and its rooms and desks are found through the public API', async () => {
    for (const section of [
      'brands',
      'projects',
      'zones',
      'floors',
      'rooms',
      'desks',
      'users',
      'apps',
      'accessGroups',
      'webhooks',
      'promoCodes',
    ]) {
      expect(doc[section]?.length, section).toBeGreaterThan(0);
    }
    const applied = await svc.ops('POST', '/ops/v1/apply', doc);
    expect(applied.status, applied.text).toBe(200);
    const again = await svc.ops('POST', '/ops/v1/apply', doc);
    expect(again.status).toBe(200);
    expect(again.body.data.ids).toEqual(applied.body.data.ids);

    const projectKey = doc.projects[0].key;
    const projectId = applied.body.data.idsByKind.projects[projectKey];
    const app = doc.apps[0];
    const token = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'act_as', app_id: app.appId, app_secret: app.appSecret, subject: app.links[0].externalUserId },
    });
    expect(token.status, token.text).toBe(201);

    const rooms = await svc.request('GET', `/meeting-rooms?projectId=${projectId}`, { token: token.body.access_token });
    expect(rooms.status, rooms.text).toBe(200);
    const names = rooms.body.data.map((r: { name: string }) => r.name);
    for (const room of doc.rooms.filter((r: { isPublic?: boolean }) => r.isPublic !== false)) expect(names).toContain(room.name);
    for (const room of rooms.body.data) expect(Object.values(applied.body.data.idsByKind.rooms)).toContain(room._id);

    const desks = await svc.request('GET', `/desks?projectId=${projectId}`, { token: token.body.access_token });
    expect(desks.status, desks.text).toBe(200);
    expect(desks.body.data.map((d: { name: string }) => d.name)).toEqual(
      expect.arrayContaining(doc.desks.map((d: { name: string }) => d.name)),
    );

    const devices = await svc.ops('GET', '/ops/v1/devices');
    const deviceIds = devices.body.data.map((d: { _id: string }) => d._id);
    for (const key of Object.keys(applied.body.data.idsByKind.devices))
      expect(deviceIds).toContain(applied.body.data.idsByKind.devices[key]);
  });
});

describe('README.md and docs/ refer only to files the repository has', () => {
  it('no file points outside the repository (../shared)', () => {
    for (const file of markdownFiles()) expect(readFileSync(join(ROOT, file), 'utf8'), file).not.toMatch(/\.\.\/shared/);
  });

  it('every linked or named .md file exists', () => {
    const missing: string[] = [];
    for (const file of markdownFiles()) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const named = new Set<string>();
      for (const m of text.matchAll(/\]\(([^)#\s]+\.md)(#[^)]*)?\)/g)) named.add(m[1]);
      for (const m of text.matchAll(/(?<![\w/.-])((?:docs|sdk)\/[\w./-]+\.md|[A-Za-z][\w-]*\.md)\b/g)) named.add(m[1]);
      for (const ref of named) {
        const candidates = [join(ROOT, dirname(file), ref), join(ROOT, ref), join(ROOT, 'docs', ref)];
        if (!candidates.some((c) => existsSync(c))) missing.push(`${file} → ${ref}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
