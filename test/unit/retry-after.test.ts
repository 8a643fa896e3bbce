/**
 * Retry-After on every 503 and 429, from the one error mapping; the job runner's
 * poll backoff after failed polls.
 */
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from '../../src/platform/http/error-mapping.js';
import { ServiceError, errors } from '../../src/platform/errors.js';
import { MAX_POLL_BACKOFF_MS, pollBackoffMs } from '../../src/platform/jobs/runner.js';

const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { code });
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

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
    ['pg crash shutdown (57P02)', pgError('57P02', 'terminating connection because of crash of another server process'), 503],
    ['pg cannot connect now (57P03)', pgError('57P03', 'the database system is in recovery mode'), 503],
    ['pg too many connections for a role (53300)', pgError('53300', 'too many connections for role "booking"'), 503],
    ['pg connection failure (08006)', pgError('08006', 'connection failure'), 503],
    ['pg connection does not exist (08003)', pgError('08003', 'connection does not exist'), 503],
    ['pg database not accepting connections (55000)', pgError('55000', 'database "booking" is not currently accepting connections'), 503],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 503],
    ['EPIPE', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }), 503],
    ['ETIMEDOUT', Object.assign(new Error('connect ETIMEDOUT 10.0.0.1:5432'), { code: 'ETIMEDOUT' }), 503],
    [
      'a refused connection to several addresses (AggregateError, empty message)',
      Object.assign(new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })], ''), {}),
      503,
    ],
    [
      'a wrapped refusal (cause)',
      new Error('query failed', { cause: pgError('57P01', 'terminating connection due to administrator command') }),
      503,
    ],
    ['pg pool: connect timeout', new Error('timeout exceeded when trying to connect'), 503],
    ['pg pool: Connection terminated due to connection timeout', new Error('Connection terminated due to connection timeout'), 503],
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

  it('55000 other than a refused connection is a fault of the statement: 500, no Retry-After', () => {
    const res = toErrorResponse(pgError('55000', 'currval of sequence "s" is not yet defined in this session'));
    expect(res.status).toBe(500);
    expect(res.headers).toBeUndefined();
  });

  it('a SQLSTATE names what happened: its message is not second-guessed', () => {
    expect(toErrorResponse(pgError('23505', 'duplicate key value violates unique constraint "x" (terminating connection)')).status).toBe(
      500,
    );
    expect(toErrorResponse(pgError('42P01', 'relation "too many clients" does not exist')).status).toBe(500);
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
