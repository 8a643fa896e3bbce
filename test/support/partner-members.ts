/**
 * The site and helpers of the partner member tests: a single-project partner app
 * with preconfigured access groups, units in two zones, people to match by email,
 * phone and employee id, and request helpers for /partner/members.
 */
import { expect } from 'vitest';
import type { HttpResult, TestService } from './test-service.js';
import { siteDocument } from './fixtures.js';

export const PARTNER_APP_ID = 'partner-dev';
export const PARTNER_SECRET = 'partner-secret-0123456789abcdef-01234567';
/** A fresh app for the rate-limit test only. */
export const BURST_APP_ID = 'burst-dev';
export const BURST_SECRET = 'burst-secret-0123456789abcdef-0123456789';

/**
 * The fixtures' site plus:
 * - tower zones zA and zB; units `101` in both zones (unitIds U-A-101, U-B-101), `202` in zA only;
 * - access groups lobby and gym (tower), annexGate (annex);
 * - users erin (email, member of annex only), frank (phone +66812345600, member of tower),
 *   gina (tower, employeeId E-200), hank (tower, email hank@example.com), ivy (tower, employeeId E-500);
 * - apps partner (tower; groups lobby, gym) and burst (tower, no groups).
 */
export function partnerSite() {
  const doc = siteDocument() as any;
  doc.zones = [
    { key: 'zA', project: 'tower', name: 'Tower A' },
    { key: 'zB', project: 'tower', name: 'Tower B' },
  ];
  doc.floors = [
    { key: 'fA', zone: 'zA', name: 'A1' },
    { key: 'fB', zone: 'zB', name: 'B1' },
  ];
  doc.rooms = [
    { key: 'uA101', floor: 'fA', name: 'Unit A101', type: 'bedroom', addressNo: '101', unitId: 'U-A-101' },
    { key: 'uB101', floor: 'fB', name: 'Unit B101', type: 'bedroom', addressNo: '101', unitId: 'U-B-101' },
    { key: 'uA202', floor: 'fA', name: 'Unit A202', type: 'bedroom', addressNo: '202' },
  ];
  doc.accessGroups = [
    { key: 'lobby', project: 'tower', name: 'Lobby turnstiles', devices: [{ key: 't1', name: 'Turnstile 1', kind: 'face-card-reader' }] },
    { key: 'gym', project: 'tower', name: 'Gym door' },
    { key: 'annexGate', project: 'annex', name: 'Annex gate' },
  ];
  doc.users.push(
    { key: 'erin', name: 'Erin Annex', email: 'erin@example.com', memberships: [{ project: 'annex' }] },
    { key: 'frank', name: 'Frank Phone', phone: '+66812345600', memberships: [{ project: 'tower' }] },
    { key: 'gina', name: 'Gina Staff', memberships: [{ project: 'tower', employeeId: 'E-200' }] },
    { key: 'hank', name: 'Hank Mail', email: 'hank@example.com', memberships: [{ project: 'tower' }] },
    { key: 'ivy', name: 'Ivy Staff', memberships: [{ project: 'tower', employeeId: 'E-500' }] },
  );
  doc.apps.push(
    {
      key: 'partner',
      appId: PARTNER_APP_ID,
      appSecret: PARTNER_SECRET,
      name: 'Partner CRM',
      projects: ['tower'],
      accessGroups: ['lobby', 'gym'],
    },
    { key: 'burst', appId: BURST_APP_ID, appSecret: BURST_SECRET, name: 'Burst client', projects: ['tower'] },
  );
  return doc;
}

export const memberPath = (ext: string) => `/partner/members/${encodeURIComponent(ext)}`;

export class PartnerClient {
  constructor(
    private readonly svc: TestService,
    private readonly token: string,
  ) {}
  put(ext: string, body: unknown): Promise<HttpResult> {
    return this.svc.request('PUT', memberPath(ext), { body, token: this.token });
  }
  get(ext: string): Promise<HttpResult> {
    return this.svc.request('GET', memberPath(ext), { token: this.token });
  }
  credentials(ext: string, body: unknown): Promise<HttpResult> {
    return this.svc.request('PUT', `${memberPath(ext)}/credentials`, { body, token: this.token });
  }
  del(ext: string): Promise<HttpResult> {
    return this.svc.request('DELETE', memberPath(ext), { token: this.token });
  }
  async putOk(ext: string, body: unknown): Promise<any> {
    const res = await this.put(ext, body);
    expect(res.status, res.text).toBe(200);
    expect(res.body.code).toBe('KS000');
    return res.body.data;
  }
  async getOk(ext: string): Promise<any> {
    const res = await this.get(ext);
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }
}
