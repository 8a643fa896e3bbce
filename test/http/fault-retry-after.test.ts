/**
 * Every 429 carries Retry-After: a PIN locked after wrong attempts (MEETING_039).
 * (The partner rate limit's KS036 is checked in partner-members.test.ts; every
 * 503 in fault-db-outage.test.ts and health.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/fixtures.js';
import { startMeetingService, type MeetingCtx } from '../support/meetings.js';

describe('Retry-After on 429', () => {
  let c: MeetingCtx;
  beforeAll(async () => {
    c = await startMeetingService({ rooms: [{ key: 'r1' }] });
  });
  afterAll(async () => {
    await c.close();
  });

  it('a locked PIN (429 MEETING_039) says when to retry', async () => {
    const m = await c.bookRoom('alice', 'r1', '09:00', '10:00');
    expect((await c.patch('alice', m._id, { pinCode: '1357' })).status).toBe(200);
    for (let i = 0; i < 5; i++) expectError(await c.patch('viewer', m._id, { title: 'guess', pinCode: `999${i}` }), 404, 'MEETING_042');
    const locked = await c.patch('viewer', m._id, { title: 'right', pinCode: '1357' });
    expectError(locked, 429, 'MEETING_039');
    expect(locked.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  });
});
