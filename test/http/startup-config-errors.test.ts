/**
 * A production start with several missing or invalid variables stops once, naming
 * each of them (not one problem per attempt).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/test-database.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('production start-up with a bad configuration', () => {
  it('exits 2 with one error listing every missing or invalid variable', async () => {
    const db = await createTestDatabase();
    try {
      const env: Record<string, string | undefined> = {
        ...process.env,
        DATABASE_URL: db.url,
        HOST: '127.0.0.1',
        BOOKING_ENV: 'production',
        PORT: 'http',
        OPS_TOKEN: '',
        SECRETS_KEY: '',
        DEVICE_TRANSPORT: 'zigbee',
        ACCESS_TOKEN_TTL_SECONDS: '0',
        CORS_ORIGINS: '*',
      };
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let stdout = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(2);
      expect(stdout).not.toMatch(/listening on/);
      expect(stderr.match(/configuration error/g)).toHaveLength(1);
      for (const name of ['PORT', 'OPS_TOKEN', 'SECRETS_KEY', 'DEVICE_TRANSPORT', 'ACCESS_TOKEN_TTL_SECONDS', 'CORS_ORIGINS']) {
        expect(stderr, name).toMatch(new RegExp(`- ${name}\\b`));
      }
      expect(stderr).toMatch(/6 problems/);
    } finally {
      await db.drop();
    }
  }, 40_000);
});
