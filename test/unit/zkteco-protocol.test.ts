import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { WireCommand } from '../../src/contract/device-wire.js';
import {
  commandLines,
  commandsFor,
  decodeZkTime,
  encodeZkTime,
  handshakeText,
  parseAttlog,
  parseCommand,
  parseRecords,
  parseResults,
  parseRtlog,
  returnOutcome,
  utcOffsetHours,
} from '../../src/modules/devices/rules/zkteco-protocol.js';

const TZ = 'Asia/Bangkok';

const upsert = (over: Partial<WireCommand> = {}): WireCommand => ({
  v: 1,
  deviceId: 'd1',
  seq: 7,
  op: 'upsert',
  subject: { kind: 'member', id: 'm1' },
  stateHash: 'h',
  cards: [
    { uid: 'u1', cardNo: '0001234567', format: 'dec10' },
    { uid: 'u2', cardNo: '3000000001', format: 'dec10' },
  ],
  face: { mime: 'image/jpeg', sha256: 'x', data: 'AAEC/w==' },
  validFrom: '2026-11-27T02:45:00.000Z',
  validUntil: '2026-11-27T05:00:00.000Z',
  ...over,
});

describe('ZKTeco packed local time', () => {
  it('encodes in the device zone (Asia/Bangkok, UTC+7) with 31-day months', () => {
    // 2026-11-27 09:45:00 in Bangkok
    const want = ((26 * 12 * 31 + 10 * 31 + 26) * 86400 + 9 * 3600 + 45 * 60) as number;
    expect(encodeZkTime(Date.parse('2026-11-27T02:45:00Z'), TZ)).toBe(want);
    expect(encodeZkTime(null, TZ)).toBe(0);
    expect(decodeZkTime(0, TZ)).toBeNull();
    expect(decodeZkTime(want, TZ)).toBe(Date.parse('2026-11-27T02:45:00Z'));
    expect(decodeZkTime((26 * 12 * 31 + 1 * 31 + 30) * 86400, TZ)).toBeNull(); // 31 February
  });

  it('round-trips every second from 2001 to 2099 (seconds kept, milliseconds dropped)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.parse('2001-01-01T00:00:00Z'), max: Date.parse('2099-12-31T00:00:00Z') }), (ms) => {
        expect(decodeZkTime(encodeZkTime(ms, TZ), TZ)).toBe(Math.floor(ms / 1000) * 1000);
      }),
    );
  });

  it('gives the zone offset for the handshake', () => {
    expect(utcOffsetHours(TZ, Date.parse('2026-06-01T00:00:00Z'))).toBe(7);
  });
});

describe('commands', () => {
  it('an upsert is user, card list, authorization and face, with ids seq*100+k and the window in local time', () => {
    const cmds = commandsFor(upsert(), 42, TZ);
    expect(cmds.map((c) => c.id)).toEqual([700, 701, 702, 703, 704]);
    const parsed = commandLines(cmds)
      .split('\n')
      .map((l) => parseCommand(l)!);
    expect(parsed.map((p) => `${p.action} ${p.table}`)).toEqual([
      'UPDATE user',
      'DELETE mulcarduser',
      'UPDATE mulcarduser',
      'UPDATE userauthorize',
      'UPDATE biophoto',
    ]);
    expect(parsed[0]!.keys).toEqual(['CardNo', 'Pin', 'Password', 'Group', 'StartTime', 'EndTime', 'Name', 'Privilege']);
    expect(parsed[0]!.fields).toMatchObject({ CardNo: '0001234567', Pin: '42', Name: '' });
    expect(decodeZkTime(Number(parsed[0]!.fields.StartTime), TZ)).toBe(Date.parse('2026-11-27T02:45:00Z'));
    expect(decodeZkTime(Number(parsed[0]!.fields.EndTime), TZ)).toBe(Date.parse('2026-11-27T05:00:00Z'));
    expect(parsed[2]!.fields).toMatchObject({ Pin: '42', CardNo: '3000000001' });
    expect(parsed[4]!.fields).toMatchObject({ PIN: '42', Type: '9', Size: '8', Content: 'AAEC/w==' });
    expect(parsed[0]!.id).toBe('700');
  });

  it('no window is 0; no face deletes the photo; a remove deletes authorization and user', () => {
    const [user, , auth, photo] = commandsFor(upsert({ cards: [], face: null, validFrom: null, validUntil: null }), 5, TZ).map((c) =>
      parseCommand(`C:${c.id}:${c.text}`)!,
    );
    expect(user!.fields).toMatchObject({ CardNo: '', StartTime: '0', EndTime: '0' });
    expect(auth!.table).toBe('userauthorize');
    expect(photo!.text).toBe('DATA DELETE biophoto PIN=5\tType=9');
    const removed = commandsFor({ v: 1, deviceId: 'd', seq: 3, op: 'remove', subject: { kind: 'member', id: 'm' }, stateHash: '' }, 5, TZ);
    expect(removed).toEqual([
      { id: 300, text: 'DATA DELETE userauthorize Pin=5' },
      { id: 301, text: 'DATA DELETE user Pin=5' },
    ]);
  });

  it('tabs, newlines, = and & in values can never add a field or a command', () => {
    const nasty = fc.string({ unit: fc.constantFrom('1', 'a', '\t', '\n', '\r', '=', '&', ' ', 'C', ':', 'Z') });
    fc.assert(
      fc.property(fc.array(nasty, { maxLength: 4 }), nasty, fc.integer({ min: 1, max: 1e6 }), (cardNos, data, seq) => {
        const wire = upsert({
          seq,
          cards: cardNos.map((cardNo, i) => ({ uid: `u${i}`, cardNo, format: 'dec10' })),
          face: { mime: 'x', sha256: 'y', data },
        });
        const cmds = commandsFor(wire, 9, TZ);
        const lines = commandLines(cmds).split('\n');
        expect(lines).toHaveLength(cmds.length);
        for (const [i, line] of lines.entries()) {
          const p = parseCommand(line)!;
          expect(p.id).toBe(String(cmds[i]!.id));
          expect(new Set(p.keys).size).toBe(p.keys.length);
          for (const v of Object.values(p.fields)) expect(v).not.toMatch(/[\t\r\n&]/);
        }
        expect(parseCommand(lines[0]!)!.keys).toHaveLength(8);
      }),
    );
  });
});

describe('results, records and logs', () => {
  it('parses several results per body and maps the documented codes', () => {
    expect(parseResults('ID=700&Return=0&CMD=DATA\r\nID=701&Return=-1001&CMD=DATA\nnoise\n')).toEqual([
      { id: '700', code: 0, cmd: 'DATA' },
      { id: '701', code: -1001, cmd: 'DATA' },
    ]);
    expect(returnOutcome(0)).toEqual({ kind: 'ok' });
    expect(returnOutcome(3)).toEqual({ kind: 'ok' });
    expect(returnOutcome(-1001)).toMatchObject({ kind: 'bad-input', message: expect.stringContaining('capacity') });
    expect(returnOutcome(-1005)).toMatchObject({ kind: 'transient' });
    expect(returnOutcome(-77)).toMatchObject({ kind: 'bad-input', message: expect.stringContaining('-77') });
  });

  it('reads table rows with their table word', () => {
    expect(parseRecords('user uid=1\tpin=5\tcardno=77\n\nmulcarduser pin=5\tcardno=88\r\n')).toEqual([
      { table: 'user', fields: { uid: '1', pin: '5', cardno: '77' } },
      { table: 'mulcarduser', fields: { pin: '5', cardno: '88' } },
    ]);
  });

  it('an rtlog line is granted or refused by its event code, in the device zone; door events are not people', () => {
    const f = (event: number, verifytype: number) =>
      parseRecords(
        `time=2026-11-27 10:00:05\tpin=42\tcardno=0001234567\teventaddr=1\tevent=${event}\tinoutstatus=0\tverifytype=${verifytype}\tindex=9`,
      )[0]!.fields;
    expect(parseRtlog(f(0, 4), TZ)).toEqual({
      key: 'rtlog|2026-11-27 10:00:05|42|0|0001234567|1|9',
      at: Date.parse('2026-11-27T03:00:05Z'),
      granted: true,
      credential: 'card',
      pin: 42,
      cardNo: '0001234567',
    });
    expect(parseRtlog(f(23, 15), TZ)).toMatchObject({ granted: false, credential: 'face' });
    expect(parseRtlog(f(27, 4), TZ)).toMatchObject({ granted: false });
    expect(parseRtlog(f(200, 0), TZ)).toBeNull();
    expect(parseRtlog({ ...f(0, 4), time: 'yesterday' }, TZ)).toBeNull();
  });

  it('an ATTLOG line is a granted punch', () => {
    expect(parseAttlog('42\t2026-11-27 10:00:05\t0\t2\t0\t0', TZ)).toMatchObject({
      granted: true,
      credential: 'card',
      pin: 42,
      at: Date.parse('2026-11-27T03:00:05Z'),
    });
    expect(parseAttlog('garbage', TZ)).toBeNull();
  });

  it('the handshake answer carries the stamps, the delay and the UTC offset', () => {
    const text = handshakeText({ serialNumber: 'ZK-01\nX=1', stamps: { rtlog: '12', ATTLOG: '5\t' }, delaySeconds: 10, timeZoneHours: 7 });
    expect(text.split('\n')).toEqual(
      expect.arrayContaining([
        'GET OPTION FROM: ZK-01X1',
        'Stamp=12',
        'ATTLOGStamp=5',
        'OPERLOGStamp=0',
        'Delay=10',
        'TimeZone=7',
        'Realtime=1',
      ]),
    );
  });
});
