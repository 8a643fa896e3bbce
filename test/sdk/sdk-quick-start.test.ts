/**
 * The SDK quick start (the first ts block of sdk/README.md), run as written against
 * a service holding the demo site, with only what `npm start` prints (the demo app's
 * secret) and the service address: it books a room and exits 0.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function quickStartCode(): string {
  const readme = readFileSync(join(ROOT, 'sdk/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const block = /```ts\n([\s\S]*?)\n```/.exec(section);
  expect(block, 'the quick start code block').not.toBeNull();
  return block![1].replace(/from '@booking\/sdk'/g, `from '${pathToFileURL(join(ROOT, 'sdk/src/index.ts')).href}'`);
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
    writeFileSync(file, quickStartCode());
    const env: Record<string, string | undefined> = { ...process.env, BOOKING_URL: svc.url, APP_SECRET: appSecret };
    delete env.APP_ID;
    delete env.PROJECT_ID;
    delete env.MEMBER;
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(0);
    const booked = /booked (.+): meeting ([0-9a-f]{24}), (\S+)/.exec(output);
    expect(booked, output).not.toBeNull();
    // The service holds that booking, for the demo member, tomorrow or later.
    const meeting = await svc.ops('GET', `/ops/v1/meetings/${booked![2]}`);
    expect(meeting.status).toBe(200);
    expect(meeting.body.data.title).toBe('Standup');
    expect(Date.parse(meeting.body.data.startDateTime)).toBeGreaterThan(Date.now());
  }, 60_000);
});
