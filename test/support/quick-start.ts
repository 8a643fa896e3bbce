/**
 * The SDK quick start (the first ts block after "## Quick start" in sdk/README.md), and a run of it
 * against a test service: it must exit 0 having booked a room the service then holds.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { TestService } from './test-service.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The quick start's code, as the README shows it. */
export function quickStartCode(): string {
  const readme = readFileSync(join(ROOT, 'sdk/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const block = /```ts\n([\s\S]*?)\n```/.exec(section);
  expect(block, 'the quick start code block').not.toBeNull();
  return block![1];
}

/** Runs `node ...args` in `cwd`; expects exit 0 and a booking the service holds; answers the stored booking. */
export async function expectQuickStartBooks(
  svc: TestService,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<{ title: string; startDateTime: string }> {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, output).toBe(0);
  const booked = /booked (.+): meeting ([0-9a-f]{24}), (\S+)/.exec(output);
  expect(booked, output).not.toBeNull();
  const meeting = await svc.ops('GET', `/ops/v1/meetings/${booked![2]}`);
  expect(meeting.status).toBe(200);
  expect(meeting.body.data.title).toBe('Standup');
  return meeting.body.data as { title: string; startDateTime: string };
}
