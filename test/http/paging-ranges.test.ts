/**
 * Paging and filters take every value the spec allows (api-spec.md: `offset`
 * integer >= 0, `minCapacity` integer >= 1), up to what a JSON number carries
 * exactly (2^53-1), on both engines: past the data a list is an empty page with
 * its total, and a capacity no room has finds nothing. Non-integers, Infinity and
 * values beyond 2^53-1 stay 400 KS001.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { expectError } from '../support/fixtures.js';
import { qs } from '../support/catalogue.js';
import { ALL_BOOKING_EVENTS, startWebhookService, type WebhookCtx } from '../support/webhook-site.js';

const MAX = '9007199254740991';
const FAR_OFFSETS = ['2000000', '2147483648', MAX];

describe('paging and filters within the spec ranges', () => {
  let rx: WebhookReceiver;
  let c: WebhookCtx;
  let meetingId: string;

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    c = await startWebhookService({
      rooms: [{ key: 'r1', name: 'Range Room' }],
      desks: [{ key: 'd1', name: 'Range Desk' }],
      hooks: [{ key: 'hk', url: rx.url('/events'), events: ALL_BOOKING_EVENTS }],
    });
    meetingId = (await c.bookRoom('r1', '10:00', '11:00'))._id;
    await c.drain();
  });
  afterAll(async () => {
    await c?.close();
    await rx?.close();
  });

  const page = async (path: string, ops = false) => {
    const res = ops ? await c.svc.ops('GET', path) : await c.svc.request('GET', path, { token: c.portal });
    expect(res.status, `${path}: ${res.text}`).toBe(200);
    return res.body as { data: any[]; meta: { limit: number; offset: number; total: number } };
  };
  const meetings = (q: Record<string, string>) => `/meetings${qs({ from: c.t('00:00'), to: c.t('23:59'), ...q })}`;

  it('GET /meetings: an offset past the data is an empty page with the total', async () => {
    expect((await page(meetings({}))).data.map((m) => m._id)).toEqual([meetingId]);
    for (const offset of FAR_OFFSETS) {
      const body = await page(meetings({ offset }));
      expect(body.data).toEqual([]);
      expect(body.meta).toEqual({ limit: 100, offset: Number(offset), total: 1 });
    }
  });

  it('GET /desks: the same', async () => {
    const all = await page(`/desks${qs({ projectId: c.projectId })}`);
    expect(all.data.length).toBeGreaterThan(0);
    for (const offset of FAR_OFFSETS) {
      const body = await page(`/desks${qs({ projectId: c.projectId, offset })}`);
      expect(body.data).toEqual([]);
      expect(body.meta).toMatchObject({ offset: Number(offset), total: all.meta.total });
    }
  });

  it('the operator lists page the same way: deliveries (a database OFFSET) and bookings', async () => {
    const hook = c.id('hk');
    const first = await page(`/ops/v1/webhooks/${hook}/deliveries`, true);
    expect(first.data.length).toBeGreaterThan(0);
    for (const offset of FAR_OFFSETS) {
      const body = await page(`/ops/v1/webhooks/${hook}/deliveries${qs({ offset })}`, true);
      expect(body.data).toEqual([]);
      expect(body.meta).toMatchObject({ offset: Number(offset), total: first.meta.total });
      const ops = await page(`/ops/v1/meetings${qs({ from: c.t('00:00'), to: c.t('23:59'), offset })}`, true);
      expect(ops.data).toEqual([]);
      expect(ops.meta).toMatchObject({ offset: Number(offset), total: 1 });
    }
  });

  it('GET /meeting-rooms: a minCapacity no room reaches finds nothing', async () => {
    const rooms = (minCapacity: string) => page(`/meeting-rooms${qs({ projectId: c.projectId, minCapacity })}`);
    expect((await rooms('1')).data.map((r) => r.name)).toContain('Range Room');
    for (const minCapacity of ['20000', '2147483648', MAX]) expect((await rooms(minCapacity)).data).toEqual([]);
  });

  it('still refused: negatives, non-integers, Infinity and values past 2^53-1', async () => {
    for (const offset of ['-1', '1.5', 'Infinity', '1e309', '9007199254740992', '99999999999999999999']) {
      expectError(await c.svc.request('GET', meetings({ offset }), { token: c.portal }), 400, 'KS001');
      expectError(await c.svc.request('GET', `/desks${qs({ projectId: c.projectId, offset })}`, { token: c.portal }), 400, 'KS001');
      expectError(await c.svc.ops('GET', `/ops/v1/webhooks/${c.id('hk')}/deliveries${qs({ offset })}`), 400, 'KS001');
    }
    for (const minCapacity of ['0', '1.5', 'Infinity', '9007199254740992']) {
      expectError(
        await c.svc.request('GET', `/meeting-rooms${qs({ projectId: c.projectId, minCapacity })}`, { token: c.portal }),
        400,
        'KS001',
      );
    }
  });
});
