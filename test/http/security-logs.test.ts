/**
 * Log hygiene (platform/logging.ts): the service's own logger (createLogger, as
 * `npm start` builds it) at trace level, captured, through a full flow: tokens
 * (a refused secret too), act_as, a meeting with its PIN, a partner member with a
 * card and a face, a webhook apply with its secret and bearer token, a room feed
 * address and its fetch, a payment page, the ops token, a query string carrying a
 * token, and an error log with a database error quoting a value. No secret value
 * may appear anywhere in the captured log, while the log does record the requests.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/logging.js';
import { OPS_TOKEN, startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf, PORTAL_APP_ID, PORTAL_SECRET, type SiteIds } from '../support/fixtures.js';
import { webhookSite, TZ } from '../support/webhook-site.js';
import { at, dayAhead } from '../support/catalogue.js';
import { seedPaidBooking } from '../support/payments.js';

const WEBHOOK_SECRET = 'whsec-logs-SECRET-0123456789abcdef0123456789';
const WEBHOOK_BEARER = 'hook-bearer-TOKEN-9f8e7d6c5b4a';
const CARD_NO = '0472621828';
const FACE = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('FACE-BYTES-'.repeat(400))]).toString('base64');
const WRONG_SECRET = 'wrong-secret-guess-1234567890abcdef';

describe('secrets never reach the log', () => {
  let svc: TestService;
  let ids: SiteIds;
  const lines: string[] = [];
  const secrets = new Map<string, string>();
  const remember = (what: string, value: unknown) => {
    expect(typeof value === 'string' && value.length >= 6, `${what} is a value`).toBe(true);
    secrets.set(what, value as string);
  };

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    svc = await startTestService({ logger: createLogger({ level: 'trace' }, sink) });
    const doc = webhookSite({
      rooms: [
        { key: 'lotus', name: 'Lotus', chargeRate: { perHour: 100, perDay: 800 } },
        { key: 'orchid', name: 'Orchid' },
      ],
      hooks: [
        {
          key: 'hk',
          url: 'http://127.0.0.1:9/hook',
          events: ['ROOM_BOOK'],
          secret: WEBHOOK_SECRET,
          auth: { scheme: 'bearer', token: WEBHOOK_BEARER },
        },
      ],
    }) as any;
    doc.accessGroups = [{ key: 'lobby', project: 'tower', name: 'Lobby gates' }];
    doc.apps[0].accessGroups = ['lobby'];
    ids = await applySite(svc, doc);
    remember('ops token', OPS_TOKEN);
    remember('app_secret', PORTAL_SECRET);
    remember('webhook secret', WEBHOOK_SECRET);
    remember('webhook bearer token', WEBHOOK_BEARER);
    remember('wrong app_secret', WRONG_SECRET);
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('a full flow logs its requests but none of its secrets', async () => {
    // Tokens: app_credentials (JSON and form-encoded), a refused secret, refresh, act_as.
    expect(
      (
        await svc.request('POST', '/auth/accessToken', {
          body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: WRONG_SECRET },
        })
      ).status,
    ).toBe(401);
    const form = await svc.request('POST', '/auth/accessToken', {
      raw: `grant_type=app_credentials&app_id=${PORTAL_APP_ID}&app_secret=${encodeURIComponent(PORTAL_SECRET)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status, form.text).toBe(201);
    const tok = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'app_credentials', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET },
    });
    expect(tok.status).toBe(201);
    remember('access token', tok.body.access_token);
    remember('refresh token', tok.body.refresh_token);
    remember('form access token', form.body.access_token);
    const refreshed = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'refresh_token', refresh_token: tok.body.refresh_token },
    });
    expect(refreshed.status).toBe(201);
    remember('refreshed access token', refreshed.body.access_token);
    const actAs = await svc.request('POST', '/auth/accessToken', {
      body: { grant_type: 'act_as', app_id: PORTAL_APP_ID, app_secret: PORTAL_SECRET, subject: 'ext-alice' },
    });
    expect(actAs.status, actAs.text).toBe(201);
    const alice = actAs.body.access_token as string;
    remember('act_as token', alice);
    const portal = tok.body.access_token as string;

    // A meeting with its PIN, read back.
    const D = await dayAhead(svc, TZ, 2);
    const created = await svc.request('POST', '/meetings', {
      token: alice,
      body: { meetingRoomId: idOf(ids, 'orchid'), title: 'logs', startDateTime: at(D, '09:00'), endDateTime: at(D, '10:00') },
    });
    expect(created.status, created.text).toBe(201);
    remember('PIN', created.body.data.pinCode);
    expect((await svc.request('GET', `/meetings/${created.body.data._id}`, { token: alice })).status).toBe(200);

    // A partner member with a card and a face.
    const put = await svc.request('PUT', '/partner/members/log-member', {
      token: portal,
      body: { firstName: 'Dao', lastName: 'Log', email: 'dao.log@example.com' },
    });
    expect(put.status, put.text).toBe(200);
    const creds = await svc.request('PUT', '/partner/members/log-member/credentials', {
      token: portal,
      body: { cards: [{ cardNo: CARD_NO }], face: FACE, faceConsentAt: '2026-11-20T09:00:00Z' },
    });
    expect(creds.status, creds.text).toBe(200);
    remember('card number', CARD_NO);
    remember('face image', FACE.slice(0, 64));
    remember('face image bytes', FACE.slice(200, 264));
    expect((await svc.request('GET', '/partner/members/log-member', { token: portal })).status).toBe(200);

    // A room feed: its secret address, and a fetch of it.
    const feed = await svc.ops('GET', `/ops/v1/calendar-sync/rooms/${idOf(ids, 'orchid')}/feed`);
    expect(feed.status, feed.text).toBe(200);
    const feedPath = new URL(feed.body.data.url).pathname;
    const feedToken = feedPath.slice('/calendar-feeds/'.length).replace(/\.ics$/, '');
    remember('feed token', feedToken);
    expect((await svc.request('GET', feedPath)).status).toBe(200);

    // A payment page: its token is in the path.
    const paid = await seedPaidBooking(svc, {
      projectId: idOf(ids, 'tower'),
      assetKind: 'room',
      assetId: idOf(ids, 'lotus'),
      organizerUserId: idOf(ids, 'alice'),
      appId: idOf(ids, 'portal'),
      title: 'paid',
      start: at(D, '14:00'),
      end: at(D, '15:00'),
      redirectUrl: 'https://app.example/done',
    });
    const payUrl = new URL(paid.payment.webPaymentUrl!);
    remember('payment page token', decodeURIComponent(payUrl.pathname.slice('/pay/'.length)));
    expect((await svc.request('GET', payUrl.pathname + payUrl.search)).status).toBe(200);

    // A token in a query string (clients do that), and a 401 with a bearer token.
    expect((await svc.request('GET', `/meetings?access_token=${encodeURIComponent(portal)}`)).status).toBe(401);
    expect(
      (await svc.request('GET', '/meetings', { token: 'kat_000000000000000000000000_not-a-real-token-but-secret-looking-xx' })).status,
    ).toBe(401);
    remember('bogus bearer', 'kat_000000000000000000000000_not-a-real-token-but-secret-looking-xx');

    // An error log of a database error that quotes a value (PostgreSQL's detail).
    const dbError = Object.assign(new Error('duplicate key value violates unique constraint "cards_uid"'), {
      code: '23505',
      detail: `Key (card_no)=(${CARD_NO}) already exists.`,
      parameters: [PORTAL_SECRET],
    });
    svc.app.log.error({ err: dbError }, 'request failed');

    await svc.services.jobs.drain('webhook-delivery');
    const log = lines.join('');
    // The log is not empty: it records the requests it was given (with their paths masked where needed).
    expect(log).toContain('"msg":"incoming request"');
    expect(log).toContain('/auth/accessToken');
    expect(log).toContain('/partner/members/log-member/credentials');
    expect(log).toContain('/calendar-feeds/[redacted]');
    expect(log).toContain('/pay/[redacted]');
    expect(log).toContain('access_token=[redacted]');
    expect(log).toContain('duplicate key value');
    for (const [what, value] of secrets) {
      expect(log.includes(value), `${what} appears in the log`).toBe(false);
      expect(log.includes(encodeURIComponent(value)), `${what} (URL-encoded) appears in the log`).toBe(false);
    }
  });
});
