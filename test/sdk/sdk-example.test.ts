/**
 * sdk/examples/book-and-check-in.ts end to end against the real service: the
 * listener points at the example's own receiver; the example books a room,
 * receives ROOM_BOOK (verified by the SDK), moves the sandbox clock to the
 * check-in window, checks in and ends the booking.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, OPS_TOKEN, type TestService } from '../support/test-service.js';
import { applySite, idOf, PORTAL_APP_ID, PORTAL_SECRET } from '../support/fixtures.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { webhookSite, TZ } from '../support/webhook-site.js';
import { bookAndCheckIn, startReceiver, type ExampleReceiver } from '../../sdk/examples/book-and-check-in.js';

const SECRET = 'sdk-example-secret-0123456789abcdef0123456789';

describe('SDK example: book, wait for ROOM_BOOK, check in, end', () => {
  let svc: TestService;
  let receiver: ExampleReceiver;
  let projectId: string;

  beforeAll(async () => {
    receiver = await startReceiver(SECRET);
    svc = await startTestService();
    const ids = await applySite(
      svc,
      webhookSite({
        rooms: [{ key: 'orchid', name: 'Orchid' }],
        hooks: [{ key: 'example', url: receiver.url, events: ['ROOM_BOOK', 'ROOM_CANCEL'], secret: SECRET }],
      }),
    );
    projectId = idOf(ids, 'tower');
    const D = await dayAhead(svc, TZ, 1);
    await setClock(svc, at(D, '09:00'));
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.close();
  });

  it('runs end to end', async () => {
    const lines: string[] = [];
    const result = await bookAndCheckIn({
      baseUrl: svc.url,
      appId: PORTAL_APP_ID,
      appSecret: PORTAL_SECRET,
      member: 'ext-alice',
      projectId,
      receiver,
      opsToken: OPS_TOKEN,
      log: (l) => lines.push(l),
    });
    expect(result.statuses).toEqual(['active', 'checked-in', 'done']);
    expect(result.bookEvent).toMatchObject({ type: 'ROOM_BOOK', version: 1, projectId, data: { roomName: 'Orchid', floorName: '12F' } });
    expect(lines.some((l) => l.includes('moving the sandbox clock'))).toBe(true);
    // The service agrees: the booking ended by check-out, with its history.
    const res = await svc.request('GET', `/meetings/${result.meeting._id}`, {
      token: (
        await svc.request('POST', '/auth/accessToken', {
          body: { grant_type: 'act_as', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET, subject: 'ext-alice' },
        })
      ).body.access_token,
    });
    expect(res.body.data.status).toBe('done');
    expect(res.body.data.histories.map((h: any) => h.action)).toEqual(['create', 'check-in', 'check-out']);
    // The ROOM_BOOK delivery was received once.
    expect(receiver.events.filter((e) => e.type === 'ROOM_BOOK')).toHaveLength(1);
  });
});
