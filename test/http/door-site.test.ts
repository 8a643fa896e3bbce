/**
 * The site document's door settings: a device's own `transport` (isapi: baseUrl, username, password;
 * zkteco-push: serialNumber, commKey) with its secret sealed and never returned (the device view shows
 * only that one is stored), and rooms' and desks' `accessDevices` (device keys of the same project).
 * Every bad entry is refused with 400 KS001, one message per problem, nothing written, no secret echoed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { applySite, idOf } from '../support/fixtures.js';
import { doorSite } from '../support/doors.js';
import { deviceView } from '../support/devices.js';

const PASSWORD = 'isapi-Pa55word-xyz';
const COMM_KEY = '8472915';
const isapi = { transport: { kind: 'isapi', baseUrl: 'http://127.0.0.1:9', username: 'admin', password: PASSWORD } };
const zkteco = { transport: { kind: 'zkteco-push', serialNumber: 'CKJU194960101', commKey: COMM_KEY } };

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

function expectKs001(res: { status: number; body: { code?: string; message?: unknown }; text: string }): string[] {
  expect(res.status, res.text).toBe(400);
  expect(res.body.code).toBe('KS001');
  expect(res.text).not.toContain(PASSWORD);
  expect(res.text).not.toContain(COMM_KEY);
  return res.body.message as string[];
}

const rows = () => svc.services.storage.db.selectFrom('devices').selectAll().where('key', 'in', ['d1', 'd2']).orderBy('key').execute();

describe('site document: device transports and access devices', () => {
  it('stores each transport with its secret sealed, shows it without the secret, and the assets their door devices', async () => {
    const ids = await applySite(svc, doorSite({ devices: { d1: isapi, d2: zkteco } }));
    const [d1, d2] = await rows();
    expect(d1!.transport_kind).toBe('isapi');
    expect(JSON.parse(d1!.transport_json!)).toEqual({ baseUrl: 'http://127.0.0.1:9', username: 'admin' });
    expect(d1!.transport_secret_enc).toBeTruthy();
    expect(d1!.transport_secret_enc).not.toContain(PASSWORD);
    expect(svc.services.secretBox.open(d1!.transport_secret_enc!)).toBe(PASSWORD);
    expect(d2!.transport_kind).toBe('zkteco-push');
    expect(JSON.parse(d2!.transport_json!)).toEqual({ serialNumber: 'CKJU194960101' });
    expect(svc.services.secretBox.open(d2!.transport_secret_enc!)).toBe(COMM_KEY);

    const res = await svc.ops('GET', `/ops/v1/devices/${idOf(ids, 'd1')}`);
    expect(res.status, res.text).toBe(200);
    expect(res.text).not.toContain(PASSWORD);
    expect(res.body.data.transport).toBe('isapi');
    expect(res.body.data.connection).toEqual({
      kind: 'isapi',
      baseUrl: 'http://127.0.0.1:9',
      username: 'admin',
      serialNumber: null,
      hasSecret: true,
      lastSeenAt: null,
    });
    const zk = await deviceView(svc, idOf(ids, 'd2'));
    expect(zk.connection).toMatchObject({ kind: 'zkteco-push', serialNumber: 'CKJU194960101', hasSecret: true, baseUrl: null });
    expect(JSON.stringify(zk)).not.toContain(COMM_KEY);
    // The sandbox switch is not for devices with their own transport.
    expect((await svc.ops('POST', `/ops/v1/devices/${idOf(ids, 'd1')}/offline`)).status).toBe(409);

    const db = svc.services.storage.db;
    const room = await db.selectFrom('rooms').select('access_devices').where('key', '=', 'board').executeTakeFirstOrThrow();
    const desk = await db.selectFrom('desks').select('access_devices').where('key', '=', 'hot1').executeTakeFirstOrThrow();
    expect(JSON.parse(room.access_devices!)).toEqual([idOf(ids, 'd1')]);
    expect(JSON.parse(desk.access_devices!)).toEqual([idOf(ids, 'd2')]);

    // Applied again: the same sealed values (nothing rewritten); then without transports: back to the default.
    await applySite(svc, doorSite({ devices: { d1: isapi, d2: zkteco } }));
    const again = await rows();
    expect(again.map((r) => r.transport_secret_enc)).toEqual([d1!.transport_secret_enc, d2!.transport_secret_enc]);
    await applySite(svc, doorSite({ roomDoors: [], deskDoors: ['d1', 'd2', 'd1'] }));
    const plain = await rows();
    expect(plain.map((r) => [r.transport_kind, r.transport_json, r.transport_secret_enc])).toEqual([
      [null, null, null],
      [null, null, null],
    ]);
    const room2 = await db.selectFrom('rooms').select('access_devices').where('key', '=', 'board').executeTakeFirstOrThrow();
    const desk2 = await db.selectFrom('desks').select('access_devices').where('key', '=', 'hot1').executeTakeFirstOrThrow();
    expect(room2.access_devices).toBeNull();
    expect(JSON.parse(desk2.access_devices!)).toEqual([idOf(ids, 'd1'), idOf(ids, 'd2')]);
    // Devices applied earlier may be named by a document that does not list them.
    const doc = doorSite();
    const later = { rooms: [{ ...doc.rooms.find((r: { key: string }) => r.key === 'board'), accessDevices: ['d2', 't1'] }] };
    await applySite(svc, later);
    const room3 = await db.selectFrom('rooms').select('access_devices').where('key', '=', 'board').executeTakeFirstOrThrow();
    expect(JSON.parse(room3.access_devices!)).toEqual([idOf(ids, 'd2'), idOf(ids, 't1')]);
  });

  it('refuses bad transports and access devices, one message each, and writes nothing', async () => {
    const before = await rows();
    const doc = doorSite({
      devices: {
        d1: { transport: { kind: 'isapi', baseUrl: 'ftp://10.0.0.5', username: 'admin', serialNumber: 'X1' } },
        d2: { transport: { kind: 'zkteco-push', password: PASSWORD } },
      },
      roomDoors: ['nope', 'a1'],
    });
    const messages = expectKs001(await svc.ops('POST', '/ops/v1/apply', doc));
    expect(messages).toEqual(
      expect.arrayContaining([
        'accessGroups[doors].devices[d1].transport.password is required for a isapi device',
        'accessGroups[doors].devices[d1].transport.serialNumber is not used by a isapi device',
        expect.stringMatching(/^accessGroups\[doors\]\.devices\[d1\]\.transport\.baseUrl must be an http or https address/),
        'accessGroups[doors].devices[d2].transport.serialNumber is required for a zkteco-push device',
        'accessGroups[doors].devices[d2].transport.password is not used by a zkteco-push device',
        'rooms[board].accessDevices references unknown device "nope"',
        'rooms[board].accessDevices: device "a1" belongs to another project',
      ]),
    );
    expect(messages).toHaveLength(7);
    expect(await rows()).toEqual(before);

    // A serial number names one device: twice in a document, or already taken by another device.
    const twice = doorSite({ devices: { d1: zkteco, d2: zkteco } });
    expect(expectKs001(await svc.ops('POST', '/ops/v1/apply', twice))).toEqual([
      'accessGroups[doors].devices[d2].transport.serialNumber "CKJU194960101" is also used by device "d1"',
    ]);
    await applySite(svc, doorSite({ devices: { d1: zkteco } }));
    const taken = {
      accessGroups: [
        {
          key: 'doors2',
          project: 'tower',
          name: 'More doors',
          devices: [{ key: 'd3', name: 'Side door', kind: 'card-reader', ...zkteco }],
        },
      ],
    };
    expect(expectKs001(await svc.ops('POST', '/ops/v1/apply', taken))).toEqual([
      'accessGroups[doors2].devices[d3].transport.serialNumber "CKJU194960101" is already used by another device',
    ]);
    // Moved from one device to another in one document: accepted.
    await applySite(svc, doorSite({ devices: { d2: zkteco } }));
    // A transport kind outside the list is a schema error.
    const odd = doorSite({ devices: { d1: { transport: { kind: 'wiegand' } } } });
    expectKs001(await svc.ops('POST', '/ops/v1/apply', odd));
  });
});
