/**
 * The SDK quick start (the first ts block of sdk/README.md), run as written against
 * a service holding the demo site, with only what `npm start` prints (the demo app's
 * secret) and the service address: it books a room and exits 0.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { expectQuickStartBooks, quickStartCode } from '../support/quick-start.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The quick start with its package import pointed at the SDK's sources. */
function quickStartFromSources(): string {
  return quickStartCode().replace(/from '@booking\/sdk'/g, `from '${pathToFileURL(join(ROOT, 'sdk/src/index.ts')).href}'`);
}

describe('sdk/README.md quick start', () => {
  let svc: TestService;
  let appSecret: string;
  let dir: string;
  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
    const demo = JSON.parse(readFileSync(join(ROOT, 'src/modules/sandbox/demo-site.json'), 'utf8'));
    const applied = await svc.ops('POST', '/ops/v1/apply', demo);
    expect(applied.status, applied.text).toBe(200);
    appSecret = demo.apps[0].appSecret;
    dir = mkdtempSync(join(tmpdir(), 'quick-start-'));
  });
  afterAll(async () => {
    await svc?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('books a room in the demo site within its limits and exits 0', async () => {
    const file = join(dir, 'quick-start.mts');
    writeFileSync(file, quickStartFromSources());
    const env: Record<string, string | undefined> = { ...process.env, BOOKING_URL: svc.url, APP_SECRET: appSecret };
    delete env.APP_ID;
    delete env.PROJECT_ID;
    delete env.MEMBER;
    const meeting = await expectQuickStartBooks(svc, ['--import', 'tsx', file], ROOT, env);
    // The service holds that booking, for the demo member, tomorrow or later.
    expect(Date.parse(meeting.startDateTime)).toBeGreaterThan(Date.now());
  }, 60_000);
});
