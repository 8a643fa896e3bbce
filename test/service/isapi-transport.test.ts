/**
 * The ISAPI transport against the ISAPI terminal stand-in (tools/device-sim), over loopback: enrollment with
 * cards, face and window in the device's local time, read back exactly; card changes; removal; wrong
 * credentials and an unreachable device stop delivery for a retry; a full device refuses; an inventory of a
 * terminal restarted empty holds nothing; the same command twice changes nothing; and a notification the
 * terminal posts arrives as a door event.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { toErrorResponse } from '../../src/platform/http/error-mapping.js';
import sharp from 'sharp';
import { IsapiTerminal } from '../../tools/device-sim/isapi-terminal.js';
import { IsapiTransport } from '../../src/modules/devices/vendors/isapi-transport.js';
import { isapiRoutes } from '../../src/modules/devices/vendors/isapi-routes.js';
import type { DeviceTarget, DoorEvent, InventoryReport, TransportEvents, WireCommand } from '../../src/modules/devices/transport.js';
import type { App } from '../../src/platform/http/types.js';

const MEMBER = 'a1b2c3d4e5f6a1b2c3d4e5f6';
const OTHER = 'b1b2c3d4e5f6a1b2c3d4e5f6';
const ZONE = 'Asia/Bangkok';
const TOKEN = 'tok-0123456789';

describe('ISAPI transport against the terminal stand-in', () => {
  const terminal = new IsapiTerminal({ capacity: 5 });
  let url = '';
  let face = '';
  let seq = 0;
  const inventories: { deviceId: string; report: InventoryReport }[] = [];
  const events: TransportEvents = {
    reachability: () => undefined,
    inventory: (deviceId, report) => {
      inventories.push({ deviceId, report });
      return Promise.resolve(report.holds.length);
    },
    gatewayOnline: () => undefined,
    access: () => Promise.resolve(),
  };
  let transport: IsapiTransport;
  let target: DeviceTarget;

  const upsert = (id: string, extra: Partial<WireCommand> = {}): WireCommand => ({
    v: 1,
    deviceId: 'dev-1',
    seq: ++seq,
    op: 'upsert',
    subject: { kind: 'member', id },
    stateHash: 'h',
    cards: [],
    face: null,
    qrCode: null,
    plates: [],
    validFrom: null,
    validUntil: null,
    ...extra,
  });
  const remove = (id: string): WireCommand => ({
    v: 1,
    deviceId: 'dev-1',
    seq: ++seq,
    op: 'remove',
    subject: { kind: 'member', id },
    stateHash: '',
  });
  const card = (cardNo: string) => ({ uid: 'AABBCCDD', cardNo, format: 'decimal-reversed' });

  beforeAll(async () => {
    ({ url } = await terminal.start());
    const jpeg = await sharp({ create: { width: 240, height: 320, channels: 3, background: '#8a7' } })
      .jpeg({ quality: 80 })
      .toBuffer();
    face = jpeg.toString('base64');
    transport = new IsapiTransport({ publicBaseUrl: 'http://127.0.0.1:1', timeoutMs: 2000, hostToken: () => TOKEN });
    await transport.start(events);
    target = {
      id: 'dev-1',
      kind: 'face-card-reader',
      online: true,
      timeZone: ZONE,
      connection: { kind: 'isapi', baseUrl: url, username: terminal.username, password: terminal.currentPassword },
    };
  });

  afterEach(() => {
    terminal.setOffline(false);
  });

  afterAll(async () => {
    await transport.stop();
    await terminal.stop();
  });

  it('enrolls a member with cards, a face and a window in local time, and reads it back exactly', async () => {
    const validFrom = '2026-12-01T02:30:00.000Z'; // 09:30 in Bangkok
    const validUntil = '2026-12-01T04:00:00.000Z'; // 11:00
    const report = await transport.deliver(target, [
      upsert(MEMBER, {
        cards: [card('1234567890'), card('2233445566')],
        face: { mime: 'image/jpeg', sha256: 'x', data: face },
        validFrom,
        validUntil,
      }),
    ]);
    expect(report).toEqual({ answered: [{ seq, ok: true }] });
    const [user] = terminal.users();
    expect(user).toEqual({
      employeeNo: `m${MEMBER}`,
      name: `m${MEMBER}`,
      Valid: { enable: true, beginTime: '2026-12-01T09:30:00', endTime: '2026-12-01T11:00:00', timeType: 'local' },
      cards: ['1234567890', '2233445566'],
      face: true,
    });
    inventories.length = 0;
    expect(await transport.requestInventory([target])).toBe(1);
    expect(inventories[0]!.report.holds).toEqual([
      {
        subject: { kind: 'member', id: MEMBER },
        observed: {
          cardNos: ['1234567890', '2233445566'],
          face: true,
          validFrom: Date.parse(validFrom),
          validUntil: Date.parse(validUntil),
        },
      },
    ]);
    // The inventory pass registered the events URL as the terminal's HTTP host.
    expect(terminal.httpHosts()[0]).toMatchObject({
      url: `/devices/isapi/dev-1/events/${TOKEN}`,
      ipAddress: '127.0.0.1',
      portNo: 1,
      parameterFormatType: 'JSON',
    });
  });

  it('sending the same command twice leaves the same state; cards change to exactly the new set; face removed', async () => {
    const cmd = upsert(MEMBER, { cards: [card('1234567890')], face: { mime: 'image/jpeg', sha256: 'x', data: face } });
    await transport.deliver(target, [cmd]);
    const once = terminal.users();
    expect((await transport.deliver(target, [{ ...cmd, seq: ++seq }])).answered).toEqual([{ seq, ok: true }]);
    expect(terminal.users()).toEqual(once);
    expect(once[0]).toMatchObject({ cards: ['1234567890'], face: true, Valid: { enable: false } });
    await transport.deliver(target, [upsert(MEMBER, { cards: [card('9988776655')], face: null })]);
    expect(terminal.users()[0]).toMatchObject({ cards: ['9988776655'], face: false });
  });

  it('removes the user with its cards and face', async () => {
    expect((await transport.deliver(target, [remove(MEMBER)])).answered).toEqual([{ seq, ok: true }]);
    expect(terminal.users()).toEqual([]);
  });

  it('wrong password: delivery stops as temporary, nothing applied; after the fix it arrives', async () => {
    const wrong = { ...target, connection: { kind: 'isapi' as const, baseUrl: url, username: terminal.username, password: 'nope' } };
    const report = await transport.deliver(wrong, [upsert(MEMBER, { cards: [card('1234567890')] })]);
    expect(report.answered).toEqual([]);
    expect(report.stopped).toEqual({ kind: 'temporary', message: expect.stringContaining('username/password') as string });
    expect(terminal.users()).toEqual([]);
    expect((await transport.deliver(target, [upsert(MEMBER, { cards: [card('1234567890')] })])).answered).toEqual([{ seq, ok: true }]);
    expect(terminal.users()).toHaveLength(1);
  });

  it('an unreachable terminal stops delivery as offline', async () => {
    terminal.setOffline(true);
    const report = await transport.deliver(target, [upsert(OTHER)]);
    expect(report).toEqual({ answered: [], stopped: { kind: 'offline', message: expect.any(String) as string } });
    inventories.length = 0;
    expect(await transport.requestInventory([target])).toBe(0);
    expect(inventories).toEqual([]);
  });

  it('a full terminal refuses a new user as bad input and the next command goes on', async () => {
    const full = new IsapiTerminal({ capacity: 1 });
    const { url: fullUrl } = await full.start();
    try {
      const t = {
        ...target,
        id: 'dev-full',
        connection: { kind: 'isapi' as const, baseUrl: fullUrl, username: full.username, password: full.currentPassword },
      };
      const a = upsert(MEMBER);
      const b = upsert(OTHER);
      const c = upsert(MEMBER, { cards: [card('5555')] });
      const report = await transport.deliver(t, [a, b, c]);
      expect(report.answered).toEqual([
        { seq: a.seq, ok: true },
        { seq: b.seq, ok: false, message: 'the device holds its maximum of 1 users' },
        { seq: c.seq, ok: true },
      ]);
      expect(full.users().map((u) => u.employeeNo)).toEqual([`m${MEMBER}`]);
    } finally {
      await full.stop();
    }
  });

  it('refused data (a card number the terminal cannot take) is answered bad input', async () => {
    const report = await transport.deliver(target, [upsert(MEMBER, { cards: [card('12-34')] })]);
    expect(report.stopped).toBeUndefined();
    expect(report.answered[0]).toMatchObject({ ok: false, message: expect.stringContaining('cardNoError') as string });
  });

  it("a terminal restarted empty reports no holds (so the sync sends everything again); installers' users are ignored", async () => {
    terminal.restartEmpty();
    terminal.addLocalUser('1001', ['4444']);
    inventories.length = 0;
    await transport.requestInventory([target]);
    expect(inventories).toEqual([{ deviceId: 'dev-1', report: { lastSeq: 0, holds: [] } }]);
  });

  it('a granted access the terminal posts arrives as a door event for the member (JSON and multipart)', async () => {
    const received: DoorEvent[] = [];
    const app = Fastify() as unknown as App;
    // The service's one error mapping, as app.ts installs it: refusals leave as envelopes.
    app.setErrorHandler((err, _req, reply) => {
      const res = toErrorResponse(err);
      void reply.status(res.status).send(res.body);
    });
    await isapiRoutes(app, {
      verify: (id, token) => id === 'dev-1' && token === TOKEN,
      device: (id) => Promise.resolve(id === 'dev-1' ? { timeZone: ZONE } : null),
      onEvent: (e) => {
        received.push(e);
        return Promise.resolve();
      },
    });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const t2 = new IsapiTransport({ publicBaseUrl: base, hostToken: () => TOKEN });
      expect(await t2.registerHost(target)).toBe(true);
      expect(
        await terminal.emitAccess({
          employeeNo: `m${MEMBER}`,
          granted: true,
          verifyMode: 'face',
          serialNo: 41,
          dateTime: '2026-12-01T09:45:00+07:00',
        }),
      ).toBe(200);
      expect(
        await terminal.emitAccess({
          cardNo: '777',
          granted: false,
          verifyMode: 'card',
          serialNo: 42,
          dateTime: '2026-12-01T09:46:00',
          multipart: true,
        }),
      ).toBe(200);
      expect(received).toEqual([
        {
          deviceId: 'dev-1',
          eventKey: 'serial:41',
          at: Date.parse('2026-12-01T02:45:00Z'),
          granted: true,
          credentialKind: 'face',
          subject: { kind: 'member', id: MEMBER },
          cardNo: null,
        },
        {
          deviceId: 'dev-1',
          eventKey: 'serial:42',
          at: Date.parse('2026-12-01T02:46:00Z'),
          granted: false,
          credentialKind: 'card',
          subject: null,
          cardNo: '777',
        },
      ]);
      const bad = new IsapiTransport({ publicBaseUrl: base, hostToken: () => 'wrong' });
      await bad.registerHost(target);
      expect(await terminal.emitAccess({ employeeNo: `m${MEMBER}`, granted: true, verifyMode: 'card' })).toBe(404);
      expect(received).toHaveLength(2);
    } finally {
      await app.close();
    }
  });
});
