/**
 * U+0000 in any path parameter, query value or body field is refused with 400 KS001
 * naming the field, on both engines. On PostgreSQL it used to reach the database
 * and fail the statement: 500 on most routes, 503 KS234 ("authentication is
 * temporarily unavailable") on the token endpoint. Found by the route fuzzer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_TOKEN, startTestService, type HttpResult, type TestService } from '../support/test-service.js';
import { appToken, actAsToken, applySite, expectError, idOf, PORTAL_APP_ID, PORTAL_SECRET, type SiteIds } from '../support/fixtures.js';
import { PARTNER_APP_ID, PARTNER_SECRET, partnerSite } from '../support/partner-members.js';

describe('the NUL character is refused everywhere', () => {
  let svc: TestService;
  let ids: SiteIds;
  let alice: string;
  let partner: string;
  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, partnerSite());
    alice = (await actAsToken(svc, { subject: 'ext-alice' })).access_token;
    partner = (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token;
  });
  afterAll(async () => {
    await svc.close();
  });

  const refused = (res: HttpResult, field: string) => {
    expectError(res, 400, 'KS001');
    expect(res.body.message).toEqual([`${field} must not contain the NUL character (U+0000)`]);
  };

  it('in the token request: 400, not 503 KS234', async () => {
    refused(
      await svc.request('POST', '/auth/accessToken', {
        body: { grant_type: 'act_as', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET, subject: 'a\u0000b' },
      }),
      'body.subject',
    );
    refused(
      await svc.request('POST', '/auth/accessToken', {
        body: { grant_type: 'app_credentials', app_id: 'a\u0000b', app_secret: PORTAL_SECRET },
      }),
      'body.app_id',
    );
  });

  it('in a body field, nested or not', async () => {
    const res = await svc.request('POST', '/meetings', {
      token: alice,
      body: {
        meetingRoomId: idOf(ids, 'uA101'),
        title: 'a\u0000b',
        startDateTime: '2030-01-01T10:00:00+07:00',
        endDateTime: '2030-01-01T11:00:00+07:00',
      },
    });
    refused(res, 'body.title');
    refused(
      await svc.ops('POST', '/ops/v1/apply', {
        brands: [
          { key: 'acme', name: 'x' },
          { key: 'a\u0000b', name: 'x' },
        ],
      }),
      'body.brands[1].key',
    );
  });

  it('in a path parameter and a query value', async () => {
    refused(await svc.request('GET', '/partner/members/a%00b', { token: partner }), 'params.externalUserId');
    refused(await svc.request('GET', '/ops/v1/calendar-sync/rooms/a%00b/feed', { token: OPS_TOKEN }), 'params.roomId');
    refused(await svc.request('GET', '/desks?email=a%00b', { token: alice }), 'query.email');
  });

  it('in a text/calendar body', async () => {
    const res = await svc.request('POST', '/ops/v1/calendar-sync/google/messages', {
      raw: 'BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:a\u0000b\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n',
      token: OPS_TOKEN,
      headers: { 'content-type': 'text/calendar' },
    });
    refused(res, 'body');
  });

  it('nothing else changes: a field without NUL still passes, and the service keeps answering', async () => {
    const res = await svc.request('GET', '/partner/members/nobody-here', { token: partner });
    expect(res.status, res.text).not.toBe(400);
    expect((await svc.request('GET', '/healthz')).status).toBe(200);
  });
});
