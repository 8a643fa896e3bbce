/**
 * The site and helpers of the visitor tests: the partner-members site (units,
 * partner app) plus access devices with and without a display location, a
 * licence-plate camera, an annex device, and two listeners on a loopback
 * receiver: one subscribed to the visitor events, one to booking events only.
 */
import { expect } from 'vitest';
import { type DateTime } from 'luxon';
import { startTestService, type HttpResult, type TestService } from './test-service.js';
import { appToken, applySite, idOf, type SiteIds } from './fixtures.js';
import { PARTNER_APP_ID, PARTNER_SECRET, PartnerClient, partnerSite } from './partner-members.js';
import { WebhookReceiver } from './webhook-receiver.js';
import { ALL_BOOKING_EVENTS, secretFor } from './webhook-site.js';
import { at, dayAhead, serviceNow, setClock } from './catalogue.js';

export const TZ = 'Asia/Bangkok';
export const VMS_EVENTS = ['VMS_INVITE_SENT', 'VMS_VISITOR_CHECKED_IN', 'VMS_HOST_CANCELLED'];
export const HOUR = 3_600_000;

export function visitorSite(receiver: WebhookReceiver) {
  const doc = partnerSite();
  doc.accessGroups = [
    {
      key: 'lobby',
      project: 'tower',
      name: 'Lobby turnstiles',
      devices: [
        { key: 't1', name: 'Turnstile 1', kind: 'face-card-reader', location: { en: 'Main lobby', th: 'ล็อบบี้หลัก' } },
        { key: 'side', name: 'Side door reader', kind: 'card-reader' },
      ],
    },
    { key: 'gym', project: 'tower', name: 'Gym door' },
    {
      key: 'carpark',
      project: 'tower',
      name: 'Car park',
      devices: [{ key: 'cam', name: 'Gate camera', kind: 'lpr-camera', location: { en: 'Car park gate', th: 'ประตูลานจอดรถ' } }],
    },
    { key: 'annexGate', project: 'annex', name: 'Annex gate', devices: [{ key: 'ax1', name: 'Annex reader', kind: 'card-reader' }] },
  ];
  doc.webhooks = [
    // Also subscribed to the two reserved types, which the service accepts but never sends.
    {
      key: 'vms',
      project: 'tower',
      url: receiver.url('/vms'),
      secret: secretFor('vms'),
      events: [...VMS_EVENTS, 'VMS_VISITOR_CHECKED_OUT', 'VMS_HOST_NOTIFICATION'],
    },
    { key: 'bookings', project: 'tower', url: receiver.url('/bookings'), secret: secretFor('bookings'), events: ALL_BOOKING_EVENTS },
  ];
  return doc;
}

export interface VisitorCtx {
  svc: TestService;
  receiver: WebhookReceiver;
  ids: SiteIds;
  id(key: string): string;
  /** Local midnight of day D (two days after the service's local today); the clock is parked at D 06:00. */
  D: DateTime;
  t(hhmm: string, plusDays?: number): string;
  now(): Promise<number>;
  invite(body: Record<string, unknown>): Promise<HttpResult>;
  /** Creates an invite (tower, host alice unless given); asserts 201 and returns data. */
  inviteOk(body: Record<string, unknown>): Promise<any>;
  get(inviteId: string): Promise<HttpResult>;
  cancel(inviteId: string): Promise<HttpResult>;
  scan(deviceKeyOrId: string, body: Record<string, unknown>): Promise<HttpResult>;
  scanOk(deviceKey: string, body: Record<string, unknown>): Promise<any>;
  /** Deliveries queued for a listener (the outbox writes them with the change). */
  deliveryCount(listenerKey: string): Promise<number>;
  /** Waits for, then returns, the data of the `type` events received on /vms whose visitorName is `name`. */
  received(type: string, name: string, n?: number): Promise<any[]>;
  partner(): Promise<PartnerClient>;
  close(): Promise<void>;
}

export async function startVisitorService(): Promise<VisitorCtx> {
  const receiver = await WebhookReceiver.start();
  const svc = await startTestService();
  const ids = await applySite(svc, visitorSite(receiver));
  const D = await dayAhead(svc, TZ, 2);
  await setClock(svc, at(D, '06:00'));
  const id = (key: string) => idOf(ids, key);
  const invite = (body: Record<string, unknown>) =>
    svc.ops('POST', '/ops/v1/visitors/invites', { projectId: id('tower'), hostUserId: id('alice'), ...body });
  const ctx: VisitorCtx = {
    svc,
    receiver,
    ids,
    id,
    D,
    invite,
    t: (hhmm, plusDays = 0) => at(D, hhmm, plusDays),
    now: () => serviceNow(svc),
    inviteOk: async (body) => {
      const res = await invite(body);
      expect(res.status, res.text).toBe(201);
      expect(res.body.code).toBe('KS000');
      return res.body.data;
    },
    get: (inviteId) => svc.ops('GET', `/ops/v1/visitors/invites/${inviteId}`),
    cancel: (inviteId) => svc.ops('POST', `/ops/v1/visitors/invites/${inviteId}/cancel`),
    scan: (device, body) => svc.ops('POST', `/ops/v1/devices/${/^[0-9a-f]{24}$/.test(device) ? device : id(device)}/scans`, body),
    scanOk: async (device, body) => {
      const res = await ctx.scan(device, body);
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    },
    deliveryCount: async (key) => {
      const res = await svc.ops('GET', `/ops/v1/webhooks/${id(key)}/deliveries?limit=1000`);
      expect(res.status, res.text).toBe(200);
      return res.body.data.length;
    },
    received: async (type, name, n = 1) => {
      const match = () => receiver.on('/vms').filter((r) => r.body?.type === type && r.body?.data?.visitorName === name);
      await receiver.waitFor(() => match().length >= n, 10_000, `${n} ${type} for ${name}`);
      return match().map((r) => r.body.data);
    },
    partner: async () => new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token),
    close: async () => {
      await svc.close();
      await receiver.close();
    },
  };
  return ctx;
}
