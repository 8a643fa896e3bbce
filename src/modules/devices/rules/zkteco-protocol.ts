/**
 * The ZKTeco PUSH (ADMS) protocol of access-control terminals, as text (pure): the device polls
 * the service over HTTP; records are lines of tab-separated `key=value` fields; commands are
 * `C:<id>:<command>` lines; results come back as `ID=<id>&Return=<code>&CMD=<verb>` lines.
 *
 * What the service sends per subject (one WireCommand → several protocol commands, ids seq*100+k):
 * - upsert: `DATA UPDATE user` (PIN, first card, StartTime/EndTime: the validity window in the
 *   device's local time), `DATA DELETE mulcarduser` + one `DATA UPDATE mulcarduser` per further card,
 *   `DATA UPDATE userauthorize` (time zone 1, door 1), and the face photo (`DATA UPDATE biophoto`
 *   Type=9, base64) or its removal;
 * - remove: `DATA DELETE userauthorize`, `DATA DELETE user` (the device drops the user's cards and photos).
 * Names are never sent. Every value is reduced to the characters its field can hold, so no value can
 * start a second field (tab) or a second command (newline).
 */
import { DateTime } from 'luxon';
import type { WireCommand } from '../../../contract/device-wire.js';

/** Command ids: seq*PARTS_PER_SEQ + part; parts QUERY_PART.. are inventory queries. */
export const PARTS_PER_SEQ = 100;
export const QUERY_PART = 90;
/** The tables an inventory reads back, in query order (their ids end in 90, 91, 92). */
export const INVENTORY_TABLES = ['user', 'mulcarduser', 'biophoto'] as const;
export type InventoryTable = (typeof INVENTORY_TABLES)[number];
/** The biophoto type of a visible-light face photo. */
export const FACE_PHOTO_TYPE = 9;

export type Fields = Record<string, string>;

// ----- time -----------------------------------------------------------------------

/**
 * ZKTeco's packed local time: ((year-2000)*12*31 + (month-1)*31 + day-1)*86400 + h*3600 + m*60 + s,
 * in the device's local time zone; 0 means "no limit". Epoch ms → packed (seconds truncated).
 */
export function encodeZkTime(ms: number | null, timeZone: string): number {
  if (ms === null) return 0;
  const t = DateTime.fromMillis(ms, { zone: timeZone });
  const days = (t.year - 2000) * 12 * 31 + (t.month - 1) * 31 + (t.day - 1);
  return days * 86400 + t.hour * 3600 + t.minute * 60 + t.second;
}

/** Packed local time → epoch ms (null for 0 or anything that is not a valid date). */
export function decodeZkTime(value: number, timeZone: string): number | null {
  if (!Number.isInteger(value) || value <= 0) return null;
  const secs = value % 86400;
  const days = Math.floor(value / 86400);
  const t = DateTime.fromObject(
    {
      year: 2000 + Math.floor(days / 372),
      month: Math.floor((days % 372) / 31) + 1,
      day: (days % 31) + 1,
      hour: Math.floor(secs / 3600),
      minute: Math.floor((secs % 3600) / 60),
      second: secs % 60,
    },
    { zone: timeZone },
  );
  return t.isValid ? t.toMillis() : null;
}

/** A log line's `YYYY-MM-DD HH:mm:ss` in the device's local time → epoch ms, or null. */
export function parseLocalTime(text: string, timeZone: string): number | null {
  const t = DateTime.fromFormat(text.trim(), 'yyyy-MM-dd HH:mm:ss', { zone: timeZone });
  return t.isValid ? t.toMillis() : null;
}

/** Epoch ms → `YYYY-MM-DD HH:mm:ss` in the device's local time (what the terminal writes in its logs). */
export function formatLocalTime(ms: number, timeZone: string): string {
  return DateTime.fromMillis(ms, { zone: timeZone }).toFormat('yyyy-MM-dd HH:mm:ss');
}

/** The zone's UTC offset in hours at `ms` (the handshake's TimeZone option). */
export function utcOffsetHours(timeZone: string, ms: number): number {
  return DateTime.fromMillis(ms, { zone: timeZone }).offset / 60;
}

// ----- values and records ----------------------------------------------------------

/** Only what a card number, PIN or base64 photo can hold: never a tab, newline, `=` outside base64, or `&`. */
export const cleanDigits = (v: string) => v.replace(/[^0-9A-Za-z]/g, '');
const cleanBase64 = (v: string) => v.replace(/[^A-Za-z0-9+/=]/g, '');

/** `key=value` fields separated by `sep` (the first `=` splits). */
export function parseFields(text: string, sep: string | RegExp = '\t'): Fields {
  const out: Fields = {};
  for (const part of text.split(sep)) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    out[part.slice(0, i).trim()] = part.slice(i + 1).replace(/\r$/, '');
  }
  return out;
}

/** A body's records: one per non-empty line. A leading table word (`user uid=1\t…`) is returned as `table`. */
export function parseRecords(body: string): { table: string | null; fields: Fields }[] {
  const out: { table: string | null; fields: Fields }[] = [];
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const m = /^([A-Za-z_]+) (.*)$/s.exec(line);
    const head = m && !m[1]!.includes('=') ? m : null;
    out.push({ table: head ? head[1]! : null, fields: parseFields(head ? head[2]! : line) });
  }
  return out;
}

// ----- commands ----------------------------------------------------------------------

/** One protocol command of a WireCommand: its id and text (without the `C:<id>:` prefix). */
export interface ZkCommand {
  id: number;
  text: string;
}

const fieldsText = (fields: [string, string | number][]) => fields.map(([k, v]) => `${k}=${v}`).join('\t');

/** The protocol commands that bring a device to `wire` for the user numbered `pin`. */
export function commandsFor(wire: WireCommand, pin: number, timeZone: string): ZkCommand[] {
  const texts: string[] = [];
  if (wire.op === 'remove') {
    texts.push(`DATA DELETE userauthorize ${fieldsText([['Pin', pin]])}`, `DATA DELETE user ${fieldsText([['Pin', pin]])}`);
  } else {
    const cards = (wire.cards ?? []).map((c) => cleanDigits(c.cardNo)).filter((c) => c.length > 0);
    const from = wire.validFrom ? Date.parse(wire.validFrom) : null;
    const until = wire.validUntil ? Date.parse(wire.validUntil) : null;
    texts.push(
      `DATA UPDATE user ${fieldsText([
        ['CardNo', cards[0] ?? ''],
        ['Pin', pin],
        ['Password', ''],
        ['Group', 0],
        ['StartTime', encodeZkTime(from, timeZone)],
        ['EndTime', encodeZkTime(until, timeZone)],
        ['Name', ''],
        ['Privilege', 0],
      ])}`,
      `DATA DELETE mulcarduser ${fieldsText([['Pin', pin]])}`,
      ...cards.slice(1).map(
        (c) =>
          `DATA UPDATE mulcarduser ${fieldsText([
            ['Pin', pin],
            ['CardNo', c],
            ['LossCardFlag', 0],
            ['CardType', 1],
          ])}`,
      ),
      `DATA UPDATE userauthorize ${fieldsText([
        ['Pin', pin],
        ['AuthorizeTimezoneId', 1],
        ['AuthorizeDoorId', 1],
      ])}`,
      wire.face
        ? faceCommand(pin, cleanBase64(wire.face.data))
        : `DATA DELETE biophoto ${fieldsText([
            ['PIN', pin],
            ['Type', FACE_PHOTO_TYPE],
          ])}`,
    );
  }
  return texts.map((text, k) => ({ id: wire.seq * PARTS_PER_SEQ + k, text }));
}

function faceCommand(pin: number, base64: string): string {
  return `DATA UPDATE biophoto ${fieldsText([
    ['PIN', pin],
    ['Type', FACE_PHOTO_TYPE],
    ['No', 0],
    ['Index', 0],
    ['Format', 0],
    ['Size', base64.length],
    ['Content', base64],
  ])}`;
}

/** The query that reads one of the inventory tables back (answered through /iclock/querydata). */
export function inventoryQuery(table: InventoryTable): string {
  return `DATA QUERY tablename=${table},fielddesc=*,filter=*`;
}

/** `C:<id>:<text>` lines, as a getrequest answer. */
export function commandLines(commands: ZkCommand[]): string {
  return commands.map((c) => `C:${c.id}:${c.text}`).join('\n');
}

/** A parsed command line (what a terminal reads). */
export interface ParsedCommand {
  id: string;
  verb: string;
  action: string;
  /** The table (DATA UPDATE/DELETE) or null. */
  table: string | null;
  fields: Fields;
  /** Field names in order (duplicates kept), for strict checks. */
  keys: string[];
  /** The raw text after `C:<id>:`. */
  text: string;
}

/** Parses one `C:<id>:<command>` line; null when it is not one. */
export function parseCommand(line: string): ParsedCommand | null {
  const m = /^C:([^:\r\n]+):([A-Z]+) ([A-Z]+)(?: (.*))?$/.exec(line.replace(/\r$/, ''));
  if (!m) return null;
  const [, id, verb, action, rest = ''] = m;
  if (action === 'QUERY') {
    return { id: id!, verb: verb!, action, table: null, fields: parseFields(rest, ','), keys: [], text: line.slice(id!.length + 3) };
  }
  const sp = rest.indexOf(' ');
  const table = sp < 0 ? rest : rest.slice(0, sp);
  const body = sp < 0 ? '' : rest.slice(sp + 1);
  const parts = body ? body.split('\t') : [];
  return {
    id: id!,
    verb: verb!,
    action: action!,
    table: table || null,
    fields: parseFields(body),
    keys: parts.map((p) => p.slice(0, Math.max(0, p.indexOf('=')))),
    text: line.slice(id!.length + 3),
  };
}

// ----- results ---------------------------------------------------------------------

export interface CommandResult {
  id: string;
  code: number;
  cmd: string;
}

/** A devicecmd body: one `ID=…&Return=…&CMD=…` per line (several per body). */
export function parseResults(body: string): CommandResult[] {
  const out: CommandResult[] = [];
  for (const line of body.split(/\r?\n/)) {
    const f = parseFields(line.trim(), '&');
    if (f.ID === undefined || f.Return === undefined) continue;
    const code = Number.parseInt(f.Return, 10);
    if (Number.isNaN(code)) continue;
    out.push({ id: f.ID, code, cmd: f.CMD ?? '' });
  }
  return out;
}

/** Return codes: what the device said (documented codes of the Security PUSH protocol). */
const RETURN_CODES: Record<number, { message: string; transient: boolean }> = {
  [-1]: { message: 'parameter error', transient: false },
  [-2]: { message: 'photo data does not match its size', transient: false },
  [-3]: { message: 'read or write error', transient: true },
  [-9]: { message: 'template data does not match its size', transient: false },
  [-10]: { message: 'no user with that PIN', transient: false },
  [-11]: { message: 'illegal template format', transient: false },
  [-12]: { message: 'illegal template', transient: false },
  [-1001]: { message: 'capacity exhausted', transient: false },
  [-1002]: { message: 'not supported by the device', transient: false },
  [-1003]: { message: 'command timed out', transient: true },
  [-1004]: { message: 'data inconsistent with the device configuration', transient: false },
  [-1005]: { message: 'device busy', transient: true },
  [-1006]: { message: 'data too long', transient: false },
  [-1007]: { message: 'memory error', transient: true },
  [-1008]: { message: 'could not get the server data', transient: true },
};

/** What a Return code means: applied, refused for bad input (with a message), or worth sending again. */
export function returnOutcome(code: number): { kind: 'ok' } | { kind: 'bad-input' | 'transient'; message: string } {
  if (code >= 0) return { kind: 'ok' };
  const known = RETURN_CODES[code];
  if (!known) return { kind: 'bad-input', message: `the device answered Return=${code}` };
  return { kind: known.transient ? 'transient' : 'bad-input', message: `the device answered Return=${code}: ${known.message}` };
}

// ----- access logs --------------------------------------------------------------------

/** Access events the terminal logs as a door opened for a person (rtlog `event`). */
export const GRANTED_EVENTS = new Set([0, 1, 2, 3, 4, 14, 15, 16, 17, 18, 19]);
/** Access events the terminal logs as a person refused. */
export const REFUSED_EVENTS = new Set([20, 21, 22, 23, 24, 25, 27, 29, 30, 33, 34, 35, 36, 41, 42, 44, 45]);

export type ZkCredential = 'card' | 'face' | 'pin' | 'fingerprint' | 'other';

/** rtlog `verifytype` → how the person showed who they are (combinations: the leading factor). */
export function credentialOfVerify(verify: number): ZkCredential {
  if ([4, 6, 7, 11].includes(verify)) return 'card';
  if (verify >= 15 && verify <= 20) return 'face';
  if ([1, 5, 8, 9, 10, 12, 13, 14].includes(verify)) return 'fingerprint';
  if (verify === 3) return 'pin';
  return 'other';
}

/** ATTLOG's verify field (attendance variant): 0 password, 1 fingerprint, 2 card, 15 face. */
function credentialOfAttVerify(verify: number): ZkCredential {
  if (verify === 2) return 'card';
  if (verify === 15) return 'face';
  if (verify === 1) return 'fingerprint';
  if (verify === 0) return 'pin';
  return 'other';
}

/** One person at the door, as a log line says (before the PIN is resolved to a subject). */
export interface RawAccess {
  key: string;
  at: number;
  granted: boolean;
  credential: ZkCredential;
  pin: number | null;
  cardNo: string | null;
}

const pinOf = (v: string | undefined) => (v && /^[0-9]+$/.test(v) && Number(v) > 0 ? Number(v) : null);
const cardOf = (v: string | undefined) => (v && v !== '0' ? cleanDigits(v) || null : null);

/** An rtlog line (`time=…\tpin=…\tcardno=…\teventaddr=…\tevent=…\tinoutstatus=…\tverifytype=…\tindex=…`); null when not a person's access. */
export function parseRtlog(fields: Fields, timeZone: string): RawAccess | null {
  const event = Number(fields.event);
  const granted = GRANTED_EVENTS.has(event) ? true : REFUSED_EVENTS.has(event) ? false : null;
  const at = parseLocalTime(fields.time ?? '', timeZone);
  if (granted === null || at === null) return null;
  const key = ['rtlog', fields.time, fields.pin ?? '', event, fields.cardno ?? '', fields.eventaddr ?? '', fields.index ?? ''].join('|');
  return {
    key,
    at,
    granted,
    credential: credentialOfVerify(Number(fields.verifytype)),
    pin: pinOf(fields.pin),
    cardNo: cardOf(fields.cardno),
  };
}

/** An ATTLOG line (attendance variant, positional: PIN, time, status, verify, workcode, …): always a granted punch. */
export function parseAttlog(line: string, timeZone: string): RawAccess | null {
  const [pin, time, status = '', verify = ''] = line.replace(/\r$/, '').split('\t');
  const at = parseLocalTime(time ?? '', timeZone);
  if (at === null || !pin) return null;
  const key = ['attlog', time, pin, status, verify].join('|');
  return { key, at, granted: true, credential: credentialOfAttVerify(Number(verify)), pin: pinOf(pin), cardNo: null };
}

// ----- handshake -----------------------------------------------------------------------

export interface HandshakeOptions {
  serialNumber: string;
  stamps: Record<string, string>;
  /** Seconds between polls. */
  delaySeconds: number;
  timeZoneHours: number;
}

/** The option answer to `GET /iclock/cdata?SN=…&options=all`. */
export function handshakeText(o: HandshakeOptions): string {
  const stamp = (t: string) => cleanDigits(o.stamps[t] ?? '0') || '0';
  return [
    `GET OPTION FROM: ${o.serialNumber.replace(/[^A-Za-z0-9_-]/g, '')}`,
    `Stamp=${stamp('rtlog')}`,
    `ATTLOGStamp=${stamp('ATTLOG')}`,
    `OPERLOGStamp=${stamp('OPERLOG')}`,
    `ATTPHOTOStamp=${stamp('ATTPHOTO')}`,
    'ErrorDelay=30',
    `Delay=${Math.max(1, Math.round(o.delaySeconds))}`,
    'TransTimes=00:00;14:05',
    'TransInterval=1',
    'TransFlag=TransData AttLog OpLog EnrollUser ChgUser',
    `TimeZone=${o.timeZoneHours}`,
    'Realtime=1',
    'Encrypt=None',
    'ServerVer=2.4.1',
    'PushProtVer=2.4.1',
  ].join('\n');
}
