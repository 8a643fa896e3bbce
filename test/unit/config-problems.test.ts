/** loadConfig reports every missing or invalid variable in one ConfigError. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/platform/config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('loadConfig problems', () => {
  it('production without OPS_TOKEN and SECRETS_KEY names both', () => {
    const problems = problemsOf({ BOOKING_ENV: 'production' });
    expect(problems).toEqual(['OPS_TOKEN is required in production', 'SECRETS_KEY is required in production']);
  });

  it('every invalid variable is named once, in one error', () => {
    const problems = problemsOf({
      BOOKING_ENV: 'production',
      OPS_TOKEN: 'short',
      SECRETS_KEY: 'abcd',
      PORT: 'eighty',
      CALLER_CACHE_MS: '99999',
      DEVICE_TRANSPORT: 'pigeon',
      CORS_ORIGINS: 'https://ok.example.com,*',
      WEBHOOK_TIMEOUT_MS: '5',
    });
    expect(problems).toHaveLength(7);
    for (const name of ['OPS_TOKEN', 'SECRETS_KEY', 'PORT', 'CALLER_CACHE_MS', 'DEVICE_TRANSPORT', 'CORS_ORIGINS', 'WEBHOOK_TIMEOUT_MS']) {
      expect(
        problems.filter((p) => p.startsWith(name)),
        name,
      ).toHaveLength(1);
    }
    expect(() => loadConfig({ BOOKING_ENV: 'production', PORT: 'x' })).toThrow(/3 problems:\n {2}- PORT[\s\S]*OPS_TOKEN[\s\S]*SECRETS_KEY/);
  });

  it("an unknown BOOKING_ENV is named, and production's requirements are checked as well", () => {
    const problems = problemsOf({ BOOKING_ENV: 'prod' });
    expect(problems[0]).toMatch(/^BOOKING_ENV must be development, uat or production, got "prod"/);
    expect(problems).toContain('OPS_TOKEN is required in production');
  });

  it('a valid configuration still loads; one problem reads as before', () => {
    expect(loadConfig({ BOOKING_ENV: 'development' }).env).toBe('development');
    expect(() => loadConfig({ PORT: '-1' })).toThrow(/^PORT must be an integer >= 0, got "-1"$/);
  });
});
