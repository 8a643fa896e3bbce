/**
 * How much SQL a device delivery round costs, counted on the real service (background
 * workers off, sandbox clock stopped, so every statement seen while the sync job drains
 * belongs to the deliveries): the face pictures (and visitors' codes) of a round's
 * commands are read in one statement per round, not one per command, and each command
 * still carries its own member's picture.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { quietService, statementCounter } from '../support/statements.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from '../support/partner-members.js';
import { deviceSite, deviceView, face } from '../support/devices.js';
import { DEVICE_RECONCILE_JOB, DEVICE_SYNC_JOB } from '../../src/modules/devices/index.js';
import type { DeviceTarget, WireCommand } from '../../src/modules/devices/transport.js';

const MEMBERS = 6;
const FACE_READ = /\bfrom\s+"?face_variants"?/i;
/** The read of planned subjects' targets, and the insert of commands. */
const TARGETS_READ = /\bfrom\s+"?device_targets"?\s+where\s+"?subject_kind"?\s*=\s*(\$\d+|\?)\s+and\s+"?subject_id"?\s+in\b/i;
const COMMANDS_INSERT = /^\s*insert\s+into\s+"?device_commands"?/i;

describe('SQL per device delivery round', () => {
  let svc: TestService;
  let ids: SiteIds;
  let api: PartnerClient;
  const { record, counted } = statementCounter();
  /** What the transport was given, by device. */
  const sent = new Map<string, WireCommand[]>();

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true, onQuery: record });
    ids = await applySite(svc, deviceSite());
    api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
    await quietService(svc);
    // A credentials PUT pokes the sync job, which would deliver each member on its own, and a site apply the reconcile:
    // here the drains run them, counted.
    const jobs = svc.services.jobs;
    const poke = jobs.poke.bind(jobs);
    jobs.poke = (name: string) => (name === DEVICE_SYNC_JOB || name === DEVICE_RECONCILE_JOB ? Promise.resolve() : poke(name));
    const transport = svc.services.deviceTransport;
    const deliver = transport.deliver.bind(transport);
    transport.deliver = (target: DeviceTarget, commands: WireCommand[]) => {
      sent.set(target.id, [...(sent.get(target.id) ?? []), ...commands]);
      return deliver(target, commands);
    };
  });
  afterAll(async () => {
    await svc?.close();
  });

  const members: string[] = [];

  it(`${MEMBERS} members with faces: one read of the pictures per face reader's round; each command carries its member's picture`, async () => {
    for (let i = 0; i < MEMBERS; i++) {
      const ext = `stmt-${i}`;
      members.push((await api.putOk(ext, { firstName: ext, lastName: 'Member' })).memberId);
      const res = await api.credentials(ext, {
        cards: [{ cardNo: String(4_000_000_000 + i) }],
        face: face(10 + i),
        faceConsentAt: '2026-01-01T00:00:00Z',
      });
      expect(res.status, res.text).toBe(200);
    }
    const { statements } = await counted(() => svc.services.jobs.drain(DEVICE_SYNC_JOB));

    // Three devices of the app's groups (t1 and g1 take faces, t2 only cards), one round each.
    const faceDevices = ['t1', 'g1'].map((k) => idOf(ids, k));
    for (const key of ['t1', 't2', 'g1']) {
      const view = await deviceView(svc, idOf(ids, key));
      expect(view.pendingChanges).toBe(0);
      for (const m of members) expect(view.enrollments.some((e: any) => e.memberId === m)).toBe(true);
    }
    expect(statements.filter((s) => FACE_READ.test(s))).toHaveLength(faceDevices.length);

    const variants = await svc.services.storage.db.selectFrom('face_variants').select(['user_id', 'sha256']).execute();
    const pictureOf = new Map(variants.map((v) => [v.user_id, v.sha256]));
    for (const deviceId of faceDevices) {
      const upserts = (sent.get(deviceId) ?? []).filter((c) => c.op === 'upsert' && members.includes(c.subject.id));
      expect(upserts.map((c) => c.subject.id).sort()).toEqual([...members].sort());
      for (const c of upserts) {
        if (c.op !== 'upsert') continue;
        expect(c.face?.sha256).toBe(pictureOf.get(c.subject.id));
        expect(createHash('sha256').update(Buffer.from(c.face!.data, 'base64')).digest('hex')).toBe(c.face!.sha256);
      }
    }
    expect(new Set(members.map((m) => pictureOf.get(m))).size).toBe(MEMBERS);
    // The card reader's commands carry no picture, and reading none was needed.
    for (const c of sent.get(idOf(ids, 't2')) ?? []) if (c.op === 'upsert') expect(c.face).toBeNull();
  });

  it("a device added by a site apply: its reconcile reads the members' targets in one statement and queues their commands in one", async () => {
    const doc = deviceSite();
    doc.accessGroups[0]!.devices.push({ key: 't3', name: 'Turnstile 3', kind: 'face-card-reader' });
    ids = await applySite(svc, doc);
    const { statements } = await counted(() => svc.services.jobs.drain(DEVICE_RECONCILE_JOB));
    expect(statements.filter((s) => TARGETS_READ.test(s))).toHaveLength(1);
    expect(statements.filter((s) => COMMANDS_INSERT.test(s))).toHaveLength(1);

    await svc.services.jobs.drain(DEVICE_SYNC_JOB);
    const view = await deviceView(svc, idOf(ids, 't3'));
    expect(view.pendingChanges).toBe(0);
    const held = view.enrollments.filter((e: any) => e.face && e.cardNos.length === 1).map((e: any) => e.memberId);
    expect(held.sort()).toEqual([...members].sort());
  });
});
