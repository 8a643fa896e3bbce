/**
 * SQL cost of a paid create, counted like test/http/meetings-statements.test.ts
 * (statement counter on the real service, background work off): booking a paid
 * room (payment opened in the same transaction) runs at most 1.5× the statements
 * of the same booking of a free room, on the engine under test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { quietService, statementCounter } from '../support/statements.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { ROOM_EVENTS, webhookSite } from '../support/webhook-site.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { TEST_ENGINE } from '../support/test-database.js';

const RATIO = 1.5;

describe('SQL per paid create', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  const { record, counted } = statementCounter();

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true, onQuery: record });
    ids = await applySite(
      svc,
      webhookSite({
        rooms: [
          { key: 'free', name: 'Free Room' },
          { key: 'paid', name: 'Paid Room', chargeRate: { perHour: 250, perDay: 0, amount: 50 } },
        ],
        hooks: [{ key: 'all', url: 'http://127.0.0.1:9/hook', events: ROOM_EVENTS }],
        promoCodes: [{ key: 'half', code: 'HALF', name: 'Half price', percentOff: 50 }],
      }),
    );
    D = await dayAhead(svc, 'Asia/Bangkok', 2);
    await setClock(svc, at(D, '06:00'));
    await quietService(svc);
  });
  afterAll(async () => {
    await svc?.close();
  });

  it(`a paid room booking runs at most ${RATIO}× the statements of a free one`, async () => {
    const token = (await appToken(svc)).access_token;
    const book = (key: string, from: string, to: string, extra: Record<string, unknown> = {}) =>
      svc.request('POST', '/meetings', {
        token,
        body: {
          meetingRoomId: idOf(ids, key),
          title: key,
          startDateTime: at(D, from),
          endDateTime: at(D, to),
          attendees: [{ email: 'guest@example.com' }],
          ...extra,
        },
      });
    // Warm up: the app's service user, and the project's first invoice number.
    expect((await book('free', '07:00', '08:00')).status).toBe(201);
    expect((await book('paid', '07:00', '08:00')).status).toBe(201);

    const free = await counted(() => book('free', '10:00', '11:00'));
    expect(free.result.status, free.result.text).toBe(201);
    expect(free.result.body.data.status).toBe('active');
    const paid = await counted(() => book('paid', '10:00', '11:00'));
    expect(paid.result.status, paid.result.text).toBe(201);
    expect(paid.result.body.data.status).toBe('unpaid');
    const promo = await counted(() => book('paid', '13:00', '14:00', { promoCode: 'HALF' }));
    expect(promo.result.status, promo.result.text).toBe(201);
    expect(promo.result.body.data.payment.summary.discounts).toHaveLength(1);
    // A back-office hold: a quote plus *_PAYMENT_DUE and its delivery.
    const office = await counted(() => book('paid', '15:00', '16:00', { organizerId: idOf(ids, 'alice'), paymentDueMinutes: 60 }));
    expect(office.result.status, office.result.text).toBe(201);
    expect(office.result.body.data.billingSummaries[0].kind).toBe('quote');

    const list = (s: string[]) => s.map((x) => x.slice(0, 110)).join('\n  ');
    console.log(
      `[${TEST_ENGINE}] POST /meetings free: ${free.statements.length}, paid: ${paid.statements.length}, paid with promo: ${promo.statements.length}, back-office quote: ${office.statements.length} statements` +
        `\n free:\n  ${list(free.statements)}\n paid:\n  ${list(paid.statements)}\n paid with promo:\n  ${list(promo.statements)}\n back-office quote:\n  ${list(office.statements)}`,
    );
    expect(free.statements.length).toBeGreaterThan(5);
    // The counter sees the payment's work (and a checkout sends no event at create).
    for (const s of [paid.statements, promo.statements]) {
      expect(s.some((x) => /^\s*insert into "payments"/i.test(x))).toBe(true);
      expect(s.some((x) => /^\s*insert into "events"/i.test(x))).toBe(false);
    }
    expect(paid.statements.length).toBeLessThanOrEqual(RATIO * free.statements.length);
    expect(promo.statements.length).toBeLessThanOrEqual(RATIO * free.statements.length);
    expect(office.statements.length).toBeLessThanOrEqual(RATIO * free.statements.length);
  });
});
