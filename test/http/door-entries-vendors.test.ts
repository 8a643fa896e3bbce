/**
 * Presence from vendor doors (issue 28 §3): the board room's door d1 is an ISAPI terminal stand-in (its
 * notifications posted to the URL the service registered), the hot desk's gate d2 a ZKTeco PUSH terminal
 * stand-in (its rtlog lines uploaded while it polls). A booked member holds each door only through the
 * booking's window (no access group grants the doors). On each: a granted event inside the check-in window
 * checks the booking in (history source `device`); the same event resent is one entry; an older event after
 * a newer one is recorded once each; an event before the window is recorded only; an unknown card is a
 * refused entry of an unknown subject; an entry with no booking there is a walk-in. Read through
 * GET /ops/v1/access-entries.
 */
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { actAsToken, appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { doorSite } from '../support/doors.js';
import { settled, waitForDevice } from '../support/devices.js';
import { PARTNER_APP_ID, PARTNER_SECRET, PartnerClient } from '../support/partner-members.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { TZ } from '../support/meetings.js';
import { IsapiTerminal } from '../../tools/device-sim/isapi-terminal.js';
import { ZktecoTerminal } from '../../tools/device-sim/zkteco-terminal.js';

const CARD = '0001234567';
const SN = 'ZKENTRY001';
const isapi = new IsapiTerminal();
let zk: ZktecoTerminal;
let svc: TestService;
let ids: SiteIds;
let D: DateTime;
let alice: string;
let pin: string;
let token: string;
const booking: { board: string; desk: string } = { board: '', desk: '' };

const d1 = () => idOf(ids, 'd1');
const d2 = () => idOf(ids, 'd2');
const t = (hhmm: string) => at(D, hhmm);
const ms = (hhmm: string) => Date.parse(t(hhmm));
/** An ISAPI dateTime with the property's offset (as a terminal in Bangkok writes it). */
const isapiTime = (hhmm: string) => DateTime.fromISO(t(hhmm)).setZone(TZ).toFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
const iso = (hhmm: string) => new Date(ms(hhmm)).toISOString();

async function until<T>(what: string, read: () => T | Promise<T>, done: (v: T) => boolean, timeoutMs = 8_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function entries(deviceId: string): Promise<any[]> {
  const qs = new URLSearchParams({ project: idOf(ids, 'tower'), deviceId, limit: '100' }).toString();
  const res = await svc.ops('GET', `/ops/v1/access-entries?${qs}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The device's entries with this device time, once judged (waits for `count` of them). */
async function judgedAt(deviceId: string, hhmm: string, count = 1): Promise<any[]> {
  return until(
    `entries of ${deviceId} at ${hhmm}`,
    async () => (await entries(deviceId)).filter((e) => e.deviceAt === iso(hhmm)),
    (list) => list.length >= count && list.every((e) => e.outcome !== 'pending'),
  );
}

const meeting = async (id: string) => {
  const res = await svc.request('GET', `/meetings/${id}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

async function book(body: Record<string, unknown>): Promise<string> {
  const res = await svc.request('POST', '/meetings', {
    token,
    body: { title: 'Vendor door check-in', startDateTime: t('09:00'), endDateTime: t('10:00'), ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id;
}

beforeAll(async () => {
  await isapi.start();
  svc = await startTestService();
  const doc = doorSite({
    devices: {
      d1: { transport: { kind: 'isapi', baseUrl: isapi.url, username: isapi.username, password: isapi.currentPassword } },
      d2: { transport: { kind: 'zkteco-push', serialNumber: SN } },
    },
  }) as any;
  Object.assign(
    doc.apps.find((a: any) => a.appId === PARTNER_APP_ID),
    { actAs: true },
  );
  ids = await applySite(svc, doc);
  zk = new ZktecoTerminal({ serverUrl: svc.url, serialNumber: SN, pollMs: 50 });
  zk.start();
  const api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
  alice = (await api.putOk('door-alice', { firstName: 'Alice', lastName: 'Example', email: 'alice@example.com' })).memberId;
  expect((await api.credentials('door-alice', { cards: [{ cardNo: CARD }] })).status).toBe(200);
  pin = String(await svc.services.deviceSync['deps'].repo.userNumber({ kind: 'member', id: alice }));
  token = (await actAsToken(svc, { appId: PARTNER_APP_ID, secret: PARTNER_SECRET, subject: 'door-alice' })).access_token;
  D = await dayAhead(svc, TZ, 2);
  await setClock(svc, t('08:00'));
  booking.board = await book({ meetingRoomId: idOf(ids, 'board') });
  booking.desk = await book({ deskId: idOf(ids, 'hot1') });
  // Each door holds Alice only through her booking's window (08:45–10:00).
  const held = (v: any) => {
    const e = v.enrollments.find((x: any) => x.memberId === alice);
    return settled(v) && !!e && Date.parse(e.validFrom) === ms('08:45') && Date.parse(e.validUntil) === ms('10:00');
  };
  await waitForDevice(svc, d1(), held, 10_000);
  await waitForDevice(svc, d2(), held, 10_000);
  const user = await until(
    'the ISAPI terminal holds Alice',
    () => isapi.users().find((u) => u.employeeNo === `m${alice}`),
    (u) => !!u?.Valid.enable,
  );
  expect(user!.cards).toEqual([CARD]);
  await until(
    'the ZKTeco terminal holds Alice',
    () => zk.users().find((u) => u.pin === pin),
    (u) => !!u && u.startTime > 0,
  );
  await svc.services.deviceSync.reconcileAll(); // registers the ISAPI events URL
  expect(isapi.httpHosts()).toHaveLength(1);
});

afterAll(async () => {
  zk?.stop();
  await svc?.close();
  await isapi.stop();
});

/** Alice at the ISAPI door at `hhmm` (device time), with a serial number. */
const atIsapi = (hhmm: string, serialNo: number, granted = true) =>
  isapi.emitAccess({ employeeNo: `m${alice}`, cardNo: CARD, granted, verifyMode: 'card', serialNo, dateTime: isapiTime(hhmm) });
/** Alice at the ZKTeco gate at `hhmm` (device time); the uploaded log line comes back. */
const atZk = (hhmm: string, granted = true) => zk.emitAccess({ pin, cardNo: CARD, granted, verifyType: 4, at: ms(hhmm) });

describe('badge check-in at vendor doors', () => {
  it('before the check-in window: recorded only (booked), both bookings untouched', async () => {
    expect(await atIsapi('08:00', 100)).toBe(200);
    await atZk('08:00');
    const [a] = await judgedAt(d1(), '08:00');
    const [b] = await judgedAt(d2(), '08:00');
    expect(a).toMatchObject({
      subject: { kind: 'member', id: alice },
      credentialKind: 'card',
      granted: true,
      outcome: 'booked',
      meetingId: booking.board,
    });
    expect(b).toMatchObject({
      subject: { kind: 'member', id: alice },
      credentialKind: 'card',
      granted: true,
      outcome: 'booked',
      meetingId: booking.desk,
    });
    for (const id of [booking.board, booking.desk]) {
      const m = await meeting(id);
      expect(m.status).toBe('active');
      expect(m.histories.map((h: any) => h.action)).not.toContain('check-in');
    }
  });

  it('an ISAPI notification inside the window checks the room booking in (source device); resent, it is one entry', async () => {
    await setClock(svc, t('08:50'));
    expect(await atIsapi('08:50', 101)).toBe(200);
    const [e] = await judgedAt(d1(), '08:50');
    expect(e).toMatchObject({ outcome: 'check-in', meetingId: booking.board, granted: true, assetKind: 'room' });
    const m = await meeting(booking.board);
    expect(m.status).toBe('checked-in');
    expect(m.histories.find((h: any) => h.action === 'check-in')).toMatchObject({ source: 'device', sourceDetail: d1() });
    expect(await atIsapi('08:50', 101)).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(await judgedAt(d1(), '08:50')).toHaveLength(1);
    expect((await meeting(booking.board)).histories.filter((h: any) => h.action === 'check-in')).toHaveLength(1);
  });

  it('a ZKTeco log line inside the window checks the desk booking in (source device); uploaded again, it is one entry', async () => {
    const line = await atZk('08:50');
    const [e] = await judgedAt(d2(), '08:50');
    expect(e).toMatchObject({ outcome: 'check-in', meetingId: booking.desk, granted: true, assetKind: 'desk' });
    const m = await meeting(booking.desk);
    expect(m.status).toBe('checked-in');
    expect(m.histories.find((h: any) => h.action === 'check-in')).toMatchObject({ source: 'device', sourceDetail: d2() });
    expect((await zk.uploadLog(line)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(await judgedAt(d2(), '08:50')).toHaveLength(1);
    expect((await meeting(booking.desk)).histories.filter((h: any) => h.action === 'check-in')).toHaveLength(1);
  });

  it('an older event after a newer one: each recorded once, on both terminals', async () => {
    await setClock(svc, t('08:58'));
    expect(await atIsapi('08:56', 103)).toBe(200);
    expect(await atIsapi('08:53', 102)).toBe(200);
    const newer = await atZk('08:56');
    const older = await atZk('08:53');
    expect((await zk.uploadLog(newer, older)).status).toBe(200);
    expect(await atIsapi('08:56', 103)).toBe(200);
    for (const id of [d1(), d2()]) {
      for (const hhmm of ['08:53', '08:56']) {
        const list = await judgedAt(id, hhmm);
        expect(list).toHaveLength(1);
        expect(list[0]).toMatchObject({ granted: true, outcome: 'booked', subject: { kind: 'member', id: alice } });
      }
      const listed = (await entries(id)).filter((e) => [iso('08:53'), iso('08:56')].includes(e.deviceAt));
      expect(listed.map((e) => e.deviceAt)).toEqual([iso('08:56'), iso('08:53')]);
    }
  });

  it('an unknown card is refused and recorded as unknown, on both terminals', async () => {
    expect(
      await isapi.emitAccess({ cardNo: '0009999999', granted: false, verifyMode: 'card', serialNo: 104, dateTime: isapiTime('08:59') }),
    ).toBe(200);
    await zk.emitAccess({ cardNo: '0009999999', granted: false, verifyType: 4, at: ms('08:59') });
    for (const id of [d1(), d2()]) {
      const [e] = await judgedAt(id, '08:59');
      expect(e).toMatchObject({ granted: false, outcome: 'refused', subject: { kind: 'unknown', id: null }, credentialKind: 'card' });
    }
  });

  it('no booking at the door: a walk-in on each terminal, and no booking is made', async () => {
    await setClock(svc, t('11:00'));
    expect(await atIsapi('11:00', 105)).toBe(200);
    await atZk('11:00');
    for (const id of [d1(), d2()]) {
      const [e] = await judgedAt(id, '11:00');
      expect(e).toMatchObject({ outcome: 'walk-in', meetingId: null, granted: true, subject: { kind: 'member', id: alice } });
    }
    const made = await svc.services.storage.db
      .selectFrom('meetings')
      .select('id')
      .where('asset_id', 'in', [idOf(ids, 'board'), idOf(ids, 'hot1')])
      .execute();
    expect(made.map((r) => r.id).sort()).toEqual([booking.board, booking.desk].sort());
  });
});
