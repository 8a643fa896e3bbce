/**
 * Retry-After on every 503 and 429, from the one error mapping; the job runner's
 * poll backoff after failed polls.
 */
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from '../../src/platform/http/error-mapping.js';
import { ServiceError, errors } from '../../src/platform/errors.js';
import { MAX_POLL_BACKOFF_MS, pollBackoffMs } from '../../src/platform/jobs/runner.js';

const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('Retry-After', () => {
  it.each([
    ['KS234 (token store unreachable)', errors.authUnavailable(), 503],
    ['KS004 upstream', errors.upstreamUnavailable(), 503],
    ['KS036', errors.tooManyRequests(), 429],
    ['MEETING_039', new ServiceError(429, 'MEETING_039', 'locked'), 429],
    ['a pg connection error', Object.assign(new Error('Connection terminated unexpectedly'), {}), 503],
    ['ECONNREFUSED', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 503],
    ['SQLITE_BUSY', sqliteError('SQLITE_BUSY', 'database is locked'), 503],
    ['SQLITE_FULL', sqliteError('SQLITE_FULL', 'database or disk is full'), 503],
    ['pg admin shutdown (57P01)', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), 503],
  ])('%s → %i with a whole number of seconds', (_name, err, status) => {
    const res = toErrorResponse(err);
    expect(res.status).toBe(status);
    expect(res.headers?.['retry-after']).toMatch(/^[1-9]\d*$/);
  });

  it('an explicit retryAfterSeconds wins (rounded up, at least 1)', () => {
    expect(toErrorResponse(errors.tooManyRequests('slow down', 42.2)).headers).toEqual({ 'retry-after': '43' });
    expect(toErrorResponse(errors.tooManyRequests('slow down', 0)).headers).toEqual({ 'retry-after': '1' });
  });

  it('a full disk asks for a longer wait than a lost connection, and says nothing of the disk', () => {
    const full = toErrorResponse(sqliteError('SQLITE_FULL', 'database or disk is full'));
    const lost = toErrorResponse(new Error('Connection terminated unexpectedly'));
    expect(Number(full.headers!['retry-after'])).toBeGreaterThan(Number(lost.headers!['retry-after']));
    expect(full.body).toEqual({ code: 'KS004', success: false, message: expect.stringMatching(/temporarily unavailable/) });
  });

  it('no Retry-After on other errors', () => {
    expect(toErrorResponse(errors.notFound()).headers).toBeUndefined();
    expect(toErrorResponse(new Error('boom')).headers).toBeUndefined();
    expect(toErrorResponse(new Error('boom')).status).toBe(500);
  });
});

describe('job runner poll backoff', () => {
  it('doubles the interval per failed poll up to the cap, never below the interval', () => {
    expect(pollBackoffMs(250, 0)).toBe(0);
    expect([1, 2, 3, 4, 5, 6].map((n) => pollBackoffMs(250, n))).toEqual([500, 1000, 2000, 4000, MAX_POLL_BACKOFF_MS, MAX_POLL_BACKOFF_MS]);
    expect(pollBackoffMs(60_000, 3)).toBe(60_000);
  });
});
